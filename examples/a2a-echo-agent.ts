// A tiny A2A agent built with @a2a-js/sdk, for trying out warren's remote delegates (README "Talking to other
// agents (A2A)"). It answers every task with the task's own words, streaming WORKING, then the answer as an
// artifact, then COMPLETED; a task that says nothing gets INPUT_REQUIRED ("What should I echo?"), and CancelTask
// stops it. Run it with `npx node examples/a2a-echo-agent.ts` (PORT, default 41241; HOST, default 127.0.0.1;
// ECHO_TOKEN: when set, calls must carry `Authorization: Bearer <ECHO_TOKEN>`; the card stays public).
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard, Role, TaskState, type Message, type Part } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const host = process.env.HOST ?? '127.0.0.1';
const token = process.env.ECHO_TOKEN;

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const said = (taskId: string, contextId: string, value: string): Message => ({ role: Role.ROLE_AGENT, messageId: crypto.randomUUID(), parts: [text(value)], taskId, contextId, extensions: [], metadata: {}, referenceTaskIds: [] });

const cancelled = new Set<string>();
const executor: AgentExecutor = {
  execute: async ({ taskId, contextId, task, userMessage }, bus) => {
    const status = (state: TaskState, message?: string): void =>
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state, timestamp: new Date().toISOString(), message: message ? said(taskId, contextId, message) : undefined }, metadata: {} }));
    bus.publish(AgentEvent.task(task ?? { id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined }, artifacts: [], history: [userMessage], metadata: {} }));
    const words = userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('').trim();
    if (!words) return status(TaskState.TASK_STATE_INPUT_REQUIRED, 'What should I echo?');
    status(TaskState.TASK_STATE_WORKING, 'echoing');
    await new Promise((resolve) => setTimeout(resolve, 100)); // a moment of "work", in which a cancel can arrive
    if (cancelled.delete(taskId)) return;
    bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: { artifactId: 'echo', name: 'echo', description: '', parts: [text(`Echo: ${words}`)], metadata: {}, extensions: [] }, append: false, lastChunk: true, metadata: {} }));
    status(TaskState.TASK_STATE_COMPLETED);
  },
  // Cooperative cancellation, as A2A asks: the task ends CANCELED and the executor stops at its next step.
  cancelTask: (taskId, bus) => {
    cancelled.add(taskId);
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: undefined }, metadata: {} }));
    return Promise.resolve();
  },
};

const app = express();
const server = app.listen(Number(process.env.PORT ?? 41241), host, () => {
  const base = `http://${host}:${(server.address() as AddressInfo).port}/`;
  const card: AgentCard = {
    name: 'Echo',
    description: 'Says back what it is told.',
    supportedInterfaces: [{ url: base, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Repeats the task back, word for word.', tags: ['demo'], examples: ['echo hello'], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  // The card serialised with the SDK's AgentCard.toJSON (the samples' card handler drops the auth schemes).
  app.get('/.well-known/agent-card.json', (_req, res) => void res.json(AgentCard.toJSON(card)));
  app.use((req, res, next) => (token && req.headers.authorization !== `Bearer ${token}` ? void res.status(401).json({ error: 'unauthorized' }) : next()));
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(`A2A echo agent on ${base} (card: ${base}.well-known/agent-card.json)`);
});
const stop = (): void => {
  server.close();
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
