// One remote delegation call on the wire, through the SDK's client (@a2a-js/sdk/client): find the task an earlier
// attempt of the same call started (A2A servers do not deduplicate by message id, so a new task's context id is
// derived from the call and listed), reattach to it, or send the message; follow the task over SSE or by GetTask
// until it ends or asks something; CancelTask when the caller gives up. I/O only: what the answer means is
// a2a-result.ts's. The SDK's client is loaded by the first clientFor: an agent without remote delegates never
// loads it (it and what it pulls in cost megabytes of heap for the daemon's whole life).
import { readFile } from 'node:fs/promises';
import type { Artifact, Message, Role, StreamResponse, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { RemoteDelegate } from '../store/agent-config.ts';
import type { CachedCard } from './a2a-card.ts';
import { isInterrupted, isTerminal, stateName, textOfArtifacts, textOfMessage, type RemoteReply, type RemoteState } from './a2a-result.ts';

/** How long CancelTask is given once the call itself was given up. */
const CANCEL_TIMEOUT_MS = 5_000;
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 2_000;
/** The SDK's Role.ROLE_USER, without loading the SDK to read it (the type checks the value). */
const ROLE_USER: Role.ROLE_USER = 1;

/** The delegate's bearer token could not be read. */
export class RemoteAuthError extends Error {
  override readonly name = 'RemoteAuthError';
}

/** The bearer token of `auth`, read at each call (a rotated file or secret is picked up); undefined without auth. */
export async function bearerOf(auth: RemoteDelegate['auth'], secret: (name: string) => string | undefined): Promise<string | undefined> {
  if (!auth) return undefined;
  if ('bearer_env' in auth) {
    const token = secret(auth.bearer_env);
    if (!token) throw new RemoteAuthError(`its token variable ${auth.bearer_env} (auth.bearer_env) is not set`);
    return token;
  }
  try {
    const token = (await readFile(auth.bearer_file, 'utf8')).trim();
    if (token) return token;
  } catch (err) {
    throw new RemoteAuthError(`its token file ${auth.bearer_file} (auth.bearer_file) cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  throw new RemoteAuthError(`its token file ${auth.bearer_file} (auth.bearer_file) is empty`);
}

/** A client of the SDK for one card, every request carrying the bearer token (the card's own URL gets none). */
export async function clientFor(card: CachedCard, token: string | undefined, fetchFn: typeof fetch = fetch): Promise<{ client: Client; refused: () => number | undefined }> {
  // The SDK reports a 401 on a stream as a bare "unexpected error": the status is kept here to say what it was.
  let refused: number | undefined;
  const authed: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    const res = await fetchFn(input, { ...init, headers });
    if (res.status === 401 || res.status === 403) refused = res.status;
    return res;
  };
  const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = await import('@a2a-js/sdk/client');
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authed, legacyCompat }), new RestTransportFactory({ fetchImpl: authed, legacyCompat })] }));
  return { client: await factory.createFromAgentCard(card.card), refused: () => refused };
}

export interface RemoteCallRequest {
  text: string;
  messageId: string;
  /** The context a new task is opened in (derived from the call); ignored for a follow-up. */
  newContextId: string;
  /** A follow-up: the task (and its context) the model answers a question of. */
  taskId?: string;
  contextId?: string;
  streaming: boolean;
}

/** What is known of the remote task so far (what a cancel needs, and what the call reports). */
export interface RemoteTaskState {
  taskId?: string;
  contextId?: string;
  state: RemoteState;
  statusText: string;
  artifacts: Artifact[];
  /** The call found a task an earlier attempt had started, and followed it instead of sending again. */
  reattached: boolean;
}

export class RemoteCall {
  readonly #client: Client;
  readonly #req: RemoteCallRequest;
  readonly known: RemoteTaskState;

  constructor(client: Client, req: RemoteCallRequest) {
    this.#client = client;
    this.#req = req;
    this.known = { taskId: req.taskId, contextId: req.contextId, state: 'unknown', statusText: '', artifacts: [], reattached: false };
  }

  /** Sends the task (or follows the one an earlier attempt sent) until it ends or asks something. */
  async run(signal: AbortSignal): Promise<RemoteReply> {
    const earlier = await this.#earlier(signal);
    if (earlier) {
      this.known.reattached = true;
      this.#seeTask(earlier);
      // A follow-up the remote agent has not taken up yet: the question on the task is the one it answers.
      if (this.#req.taskId && earlier.history.at(-1)?.messageId === this.#req.messageId) this.#resumed();
      if (this.#settled()) return this.#reply();
      return this.#req.streaming ? this.#follow(this.#client.resubscribeTask({ tenant: '', id: earlier.id }, { signal }), signal) : this.#poll(signal);
    }
    const message: Message = {
      messageId: this.#req.messageId,
      taskId: this.#req.taskId ?? '',
      contextId: this.#req.taskId ? (this.#req.contextId ?? '') : this.#req.newContextId,
      role: ROLE_USER,
      parts: [{ content: { $case: 'text', value: this.#req.text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: {},
      extensions: [],
      referenceTaskIds: [],
    };
    this.known.contextId = message.contextId || undefined;
    const request = { tenant: '', message, configuration: undefined, metadata: {} };
    if (this.#req.streaming) return this.#follow(this.#client.sendMessageStream(request, { signal }), signal, this.#req.taskId !== undefined);
    const result = await this.#client.sendMessage(request, { signal });
    if ('messageId' in result) return { kind: 'message', text: textOfMessage(result) };
    this.#seeTask(result);
    return this.#settled() ? this.#reply() : this.#poll(signal);
  }

  /** The task took the answer to its question: until it says more, it is working again. */
  #resumed(): void {
    this.known.state = 'working';
    this.known.statusText = '';
  }

  /**
   * CancelTask for the task this call started (found by its context when its id never arrived), on its own short
   * deadline: the call's signal is already aborted. Cooperative on the remote side; never throws.
   */
  async cancel(): Promise<{ cancelled: string[]; error?: string }> {
    const signal = AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    try {
      const ids = this.known.taskId ? [this.known.taskId] : this.#req.taskId ? [] : (await this.#listed(signal)).filter((t) => !isTerminal(stateName(t.status?.state))).map((t) => t.id);
      const cancelled: string[] = [];
      for (const id of ids) {
        const t = await this.#client.cancelTask({ tenant: '', id, metadata: {} }, { signal });
        this.#seeTask(t);
        cancelled.push(id);
      }
      return { cancelled };
    } catch (err) {
      return { cancelled: [], error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** The task an earlier attempt of this very call started, if the remote side has it. */
  async #earlier(signal: AbortSignal): Promise<Task | undefined> {
    if (this.#req.taskId) {
      // A follow-up: the task exists; it is ours to follow only if it already holds this message.
      const task = await this.#client.getTask({ tenant: '', id: this.#req.taskId }, { signal });
      return task.history.some((m) => m.messageId === this.#req.messageId) ? task : undefined;
    }
    try {
      return (await this.#listed(signal))[0];
    } catch (err) {
      if (signal.aborted) throw err;
      return undefined; // a server without ListTasks: nothing to find, the message is sent
    }
  }

  async #listed(signal: AbortSignal): Promise<Task[]> {
    const res = await this.#client.listTasks({ tenant: '', contextId: this.#req.newContextId, status: 0, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true }, { signal });
    return res.tasks.filter((t) => t.contextId === this.#req.newContextId);
  }

  /** `followUp`: the stream opens with the task as it was, still showing the question this message answers. */
  async #follow(stream: AsyncGenerator<StreamResponse>, signal: AbortSignal, followUp = false): Promise<RemoteReply> {
    let snapshot = followUp;
    for await (const { payload } of stream) {
      if (!payload) continue;
      if (payload.$case === 'message' && !this.known.taskId) return { kind: 'message', text: textOfMessage(payload.value) };
      if (payload.$case === 'task') {
        this.#seeTask(payload.value);
        if (snapshot) this.#resumed();
        snapshot = false;
      } else if (payload.$case === 'statusUpdate') {
        this.known.taskId ??= payload.value.taskId;
        this.known.contextId = payload.value.contextId || this.known.contextId;
        this.#seeStatus(payload.value.status);
      } else if (payload.$case === 'artifactUpdate' && payload.value.artifact) {
        this.known.taskId ??= payload.value.taskId;
        mergeArtifact(this.known.artifacts, payload.value.artifact, payload.value.append);
      }
      if (this.#settled()) return this.#reply();
    }
    // The stream closed before the task ended: ask for it until it does.
    return this.#poll(signal);
  }

  async #poll(signal: AbortSignal): Promise<RemoteReply> {
    const id = this.known.taskId;
    if (!id) throw new Error('the remote agent answered with neither a message nor a task');
    for (let delay = POLL_FIRST_MS; ; delay = Math.min(delay * 2, POLL_MAX_MS)) {
      this.#seeTask(await this.#client.getTask({ tenant: '', id, historyLength: 0 }, { signal }));
      if (this.#settled()) return this.#reply();
      await sleep(delay, signal);
    }
  }

  #seeTask(t: Task): void {
    this.known.taskId = t.id;
    this.known.contextId = t.contextId || this.known.contextId;
    if (t.artifacts.length) this.known.artifacts = [...t.artifacts];
    this.#seeStatus(t.status);
  }

  #seeStatus(status: Task['status']): void {
    if (!status) return;
    this.known.state = stateName(status.state);
    const said = textOfMessage(status.message);
    if (said) this.known.statusText = said;
  }

  #settled(): boolean {
    return isTerminal(this.known.state) || isInterrupted(this.known.state);
  }

  #reply(): RemoteReply {
    return { kind: 'task', taskId: this.known.taskId ?? '', contextId: this.known.contextId ?? '', state: this.known.state, statusText: this.known.statusText, artifactsText: textOfArtifacts(this.known.artifacts) };
  }
}


/** An artifact update: a new artifact, a replacement, or more parts for one (`append`: streamed text runs on). */
function mergeArtifact(list: Artifact[], a: Artifact, append: boolean): void {
  const i = list.findIndex((x) => x.artifactId === a.artifactId);
  if (i < 0) list.push(a);
  else if (!append) list[i] = a;
  else {
    const parts = [...list[i]!.parts];
    for (const p of a.parts) {
      const last = parts.at(-1);
      if (last?.content?.$case === 'text' && p.content?.$case === 'text') parts[parts.length - 1] = { ...last, content: { $case: 'text', value: last.content.value + p.content.value } };
      else parts.push(p);
    }
    list[i] = { ...list[i]!, parts };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
