// Parses agent definitions on worker threads while the loading thread reads the next files: at 100,000 agents the
// parse (YAML, schema, cross-checks, hash) is most of a load, and on a machine with two cores or more it runs beside
// the reading instead of after it. Each thread runs the same parseAgentSafely as the loading thread, so a definition
// and its problems (file:line:column) are the same wherever they were parsed (test/parse-pool.test.ts compares
// them). A thread that cannot start or dies hands its batches back to the loading thread: slower, never different.
import { Worker } from 'node:worker_threads';
import { parseAgentSafely, type ParsedAgent, type RawAgentFiles } from './parse-definition.ts';

/**
 * Below this many agents a load parses on its own thread: starting a parse thread (importing the schema and both
 * YAML parsers) costs ~0.3 s of CPU, and an agent parses in ~45 µs, so at 10,000 agents two threads cost more CPU
 * than they save time (measured side by side: 2.1 s of CPU against 1.3 s on the loading thread alone).
 */
export const MIN_AGENTS_FOR_THREADS = 20_000;
/** More threads than this add start-up time and memory for little: reading on the loading thread bounds the rest. */
const MAX_THREADS = 4;

/** How many parse threads a load of `agents` agents uses on `cores` cores (0: parse on the loading thread). */
export function parseThreadCount(agents: number, cores: number): number {
  // On one core a thread only adds the cost of sending each definition back.
  if (agents < MIN_AGENTS_FOR_THREADS || cores < 2) return 0;
  return Math.min(cores, MAX_THREADS);
}

/** A batch sent to a parse thread (store/parse-worker.ts). */
export interface ParseRequest {
  id: number;
  raws: RawAgentFiles[];
}

/** A parse thread's answer: one entry per file of the batch, in its order. */
export interface ParseReply {
  id: number;
  parsed: ParsedAgent[];
}

interface Batch {
  raws: RawAgentFiles[];
  resolve: (parsed: ParsedAgent[]) => void;
}

interface Lane {
  worker: Worker;
  /** Batches sent to this thread and not answered yet, by id. */
  waiting: Map<number, Batch>;
  alive: boolean;
}

/** Plain JavaScript first: it makes an installed warren's thread able to load TypeScript (see the file). */
const WORKER_URL = new URL('./parse-worker.js', import.meta.url);

export class ParsePool {
  readonly #lanes: Lane[];
  #nextId = 0;
  #nextLane = 0;
  #onThreads = 0;
  #closing = false;

  /** `workerUrl`: the thread's module (a test gives one that fails, to see the batches come back). */
  constructor(threads: number, workerUrl: URL = WORKER_URL) {
    this.#lanes = Array.from({ length: threads }, () => this.#start(workerUrl));
  }

  /** Agents parsed on a thread so far (the rest on the loading thread). */
  get parsedOnThreads(): number {
    return this.#onThreads;
  }

  /** The batch's definitions and problems in its order: on a thread when one is alive, else here, now. */
  parse(raws: RawAgentFiles[]): Promise<ParsedAgent[]> {
    if (raws.length === 0) return Promise.resolve([]);
    const lane = this.#pickLane();
    if (!lane) return Promise.resolve(raws.map(parseAgentSafely));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      lane.waiting.set(id, { raws, resolve });
      lane.worker.postMessage({ id, raws } satisfies ParseRequest);
    });
  }

  /** Stops the threads (after a load, or when it failed). */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(this.#lanes.map((l) => l.worker.terminate()));
  }

  #pickLane(): Lane | undefined {
    for (let tried = 0; tried < this.#lanes.length; tried++) {
      const lane = this.#lanes[this.#nextLane++ % this.#lanes.length]!;
      if (lane.alive) return lane;
    }
    return undefined;
  }

  #start(url: URL): Lane {
    const lane: Lane = { worker: new Worker(url), waiting: new Map(), alive: true };
    lane.worker.on('message', (reply: ParseReply) => {
      const batch = lane.waiting.get(reply.id);
      if (!batch) return;
      lane.waiting.delete(reply.id);
      this.#onThreads += batch.raws.length;
      batch.resolve(reply.parsed);
    });
    // A thread that could not start (a runtime that does not strip types there) or died: its batches are parsed
    // here, and no more go to it.
    const fail = (): void => {
      if (!lane.alive) return;
      lane.alive = false;
      const batches = [...lane.waiting.values()];
      lane.waiting.clear();
      if (this.#closing) return;
      for (const b of batches) b.resolve(b.raws.map(parseAgentSafely));
    };
    lane.worker.on('error', fail);
    lane.worker.on('messageerror', fail);
    lane.worker.on('exit', fail);
    return lane;
  }
}
