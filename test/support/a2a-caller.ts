// The A2A SDK's own client, as a caller of a warren agent would build it: a JSON-RPC transport and card resolver
// that send a bearer key when given one.
import { randomUUID } from 'node:crypto';
import { Role, type SendMessageRequest } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';

export async function a2aClient(baseUrl: string, key?: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (key) headers.set('authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) }));
  return factory.createFromUrl(baseUrl);
}

/** A SendMessage request of one text part; `returnImmediately` answers with the SUBMITTED task at once. */
export function textMessage(text: string, opts: { returnImmediately?: boolean } = {}): SendMessageRequest {
  return {
    tenant: '',
    message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, returnImmediately: opts.returnImmediately ?? false },
    metadata: undefined,
  };
}
