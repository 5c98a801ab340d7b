// `warren memory <agent>`: what an agent remembers, searched, or erased. It opens the store warren.yaml names
// (the SQLite file or the shared PostgreSQL), so it works with or without a daemon running.
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { loadWarrenConfig, type WarrenConfig } from '../../services/config.ts';
import type { MemoryEntry } from '../../memory/memory-store.ts';

export interface MemoryCommandOptions {
  search?: string;
  recent?: number;
  forget?: string;
  forgetAll?: boolean;
  json?: boolean;
}

const DEFAULT_RECENT = 10;

function line(e: MemoryEntry): string {
  const when = new Date(e.createdAt).toISOString().slice(0, 16).replace('T', ' ');
  const whose = e.people?.length ? `[${e.people.join(', ')}]` : '[general]';
  return `${e.id}  ${when}  ${e.kind.padEnd(12)} ${whose} ${e.text.replace(/\s+/g, ' ')}`;
}

function kb(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} kB`;
}

/** Runs the command against the configured store; returns what to print and the exit code. */
export async function runMemoryCommand(config: WarrenConfig, agent: string, opts: MemoryCommandOptions): Promise<{ output: string; exitCode: number }> {
  const { openMemoryStore } = await import('../../memory/open-memory-store.ts');
  const store = await openMemoryStore(config.memory.store);
  try {
    if (opts.forgetAll) {
      const n = await store.forgetAll(agent);
      return { output: opts.json ? JSON.stringify({ agent, forgotten: n }) : `${agent}: forgot ${n} entr${n === 1 ? 'y' : 'ies'}`, exitCode: 0 };
    }
    if (opts.forget !== undefined) {
      // An entry's id, or a person: everything the agent remembers from threads they took part in.
      const what = opts.forget;
      if (await store.forget(agent, what)) return { output: opts.json ? JSON.stringify({ agent, id: what, forgotten: true }) : `${agent}: forgot ${what}`, exitCode: 0 };
      const n = await store.forgetPerson(agent, what);
      if (opts.json) return { output: JSON.stringify(n > 0 ? { agent, person: what, forgotten: n } : { agent, id: what, forgotten: false }), exitCode: n > 0 ? 0 : 1 };
      return n > 0 ? { output: `${agent}: forgot ${n} entr${n === 1 ? 'y' : 'ies'} from ${what}`, exitCode: 0 } : { output: `${agent}: no entry ${what}, and nothing remembered from a person of that name`, exitCode: 1 };
    }
    const limit = opts.recent ?? DEFAULT_RECENT;
    const hits = opts.search !== undefined ? await store.search(agent, { strategy: 'keyword', text: opts.search, limit }) : await store.search(agent, { strategy: 'recent', limit });
    const [count, size] = await Promise.all([store.count(agent), store.size(agent)]);
    const entries = hits.map((h) => h.entry);
    if (opts.json) return { output: JSON.stringify({ agent, count, bytes: size, entries }, null, 2), exitCode: 0 };
    const head = `${agent}: ${count} entr${count === 1 ? 'y' : 'ies'}, ${kb(size)}`;
    const body = entries.length ? entries.map(line) : [opts.search !== undefined ? 'nothing matches' : 'nothing remembered'];
    return { output: [head, ...body].join('\n'), exitCode: 0 };
  } finally {
    await store.close();
  }
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return n;
}

export function registerMemoryCommand(program: Command): void {
  program
    .command('memory <agent>')
    .description("what an agent remembers: the newest entries, a keyword search, or erase an entry, a person's entries, or all")
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--search <query>', 'keyword search (full-text ranking)')
    .option('--recent <n>', `how many entries to show (default ${DEFAULT_RECENT})`, positiveInt)
    .option('--forget <id|person>', "erase one entry, or every entry from a person's threads")
    .option('--forget-all', 'erase everything the agent remembers')
    .option('--json', 'print JSON')
    .action(async (agent: string, opts: MemoryCommandOptions & { config: string }) => {
      const { output, exitCode } = await runMemoryCommand(loadWarrenConfig(opts.config), agent, opts);
      console.log(output);
      process.exitCode = exitCode;
    });
}
