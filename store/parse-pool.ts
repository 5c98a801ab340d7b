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

/** One agent's files by path, for a thread to read (a store of local files). */
export interface AgentFilePaths {
  folder: string;
  configFile: string;
  configPath: string;
  promptFile: string;
  promptPath: string;
}

/** A batch sent to a parse thread (store/parse-worker.ts): the files' texts, or their paths for it to read. */
export type ParseRequest = { id: number; raws: RawAgentFiles[] } | { id: number; paths: AgentFilePaths[] };

/**
 * A parse thread's answer: one entry per agent of the batch, in its order; null for an agent whose config.yaml was
 * gone when the thread read it (deleted since the listing, as a read here would find it).
 */
export interface ParseReply {
  id: number;
  parsed: Array<ParsedAgent | null>;
}

interface Batch {
  size: number;
  resolve: (parsed: ParsedAgent[]) => void;
  /** The batch done on the loading thread instead, when its thread fails (settles the batch's promise). */
  here: () => Promise<void>;
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

  /** Threads this pool started (some may have failed since). */
  get threads(): number {
    return this.#lanes.length;
  }

  /** The batch's definitions and problems in its order: on a thread when one is alive, else here, now. */
  parse(raws: RawAgentFiles[]): Promise<ParsedAgent[]> {
    if (raws.length === 0) return Promise.resolve([]);
    const here = (): Promise<ParsedAgent[]> => Promise.resolve(raws.map(parseAgentSafely));
    return this.#send({ id: this.#nextId++, raws }, raws.length, here);
  }

  /**
   * The batch's agents read and parsed on a thread, in its order (an agent whose config.yaml is gone is left out);
   * when no thread is alive, or its thread fails, `readHere` reads them on this thread and they are parsed here.
   */
  readAndParse(paths: AgentFilePaths[], readHere: () => Promise<RawAgentFiles[]>): Promise<ParsedAgent[]> {
    if (paths.length === 0) return Promise.resolve([]);
    const here = async (): Promise<ParsedAgent[]> => (await readHere()).map(parseAgentSafely);
    return this.#send({ id: this.#nextId++, paths }, paths.length, here);
  }

  #send(req: ParseRequest, size: number, here: () => Promise<ParsedAgent[]>): Promise<ParsedAgent[]> {
    const lane = this.#pickLane();
    if (!lane) return here();
    return new Promise((resolve, reject) => {
      lane.waiting.set(req.id, { size, resolve, here: () => here().then(resolve, reject) });
      lane.worker.postMessage(req);
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
      this.#onThreads += batch.size;
      batch.resolve(reply.parsed.filter((p) => p !== null));
    });
    // A thread that could not start (a runtime that does not strip types there) or died: its batches are parsed
    // here, and no more go to it.
    const fail = (): void => {
      if (!lane.alive) return;
      lane.alive = false;
      const batches = [...lane.waiting.values()];
      lane.waiting.clear();
      if (this.#closing) return;
      for (const b of batches) void b.here();
    };
    lane.worker.on('error', fail);
    lane.worker.on('messageerror', fail);
    lane.worker.on('exit', fail);
    return lane;
  }
}
