// At daemon start, before any agent runs: what an older warren left open to other users on this host (the memory
// database, agents' workspaces) is closed, each change said once. The hub's database is closed as it opens
// (local-hub/db.ts); the memory store opens only when an agent first remembers, too late for a CLI agent that
// runs first.
import { dirname, relative, isAbsolute } from 'node:path';
import type { Logger } from 'pino';
import { closeWorkspaces } from '../executors/cli/workspace.ts';
import { closeSqlite, describeFix, setFolderPassage } from '../local-hub/private-files.ts';
import { isPostgresUrl } from '../memory/store-location.ts';
import type { WarrenConfig } from './config.ts';

/** `isolated`: CLI agents run as their own users (they must pass through the workspaces root). */
export async function closePrivateData(config: WarrenConfig, isolated: boolean, logger: Logger): Promise<void> {
  const memory = config.memory.store;
  const fixes = [...(isPostgresUrl(memory) || memory === ':memory:' ? [] : closeSqlite(memory)), ...(await closeWorkspaces(config.executors.cli.workspaces, isolated))];
  for (const fix of fixes) logger.warn({ path: fix.path }, describeFix(fix));
  // The data folders: 0700, or 0711 when CLI agents' users keep their workspaces inside one (./data/workspaces).
  const folders = new Set([config.hub.embedded && config.hub.db !== ':memory:' ? dirname(config.hub.db) : undefined, !isPostgresUrl(memory) && memory !== ':memory:' ? dirname(memory) : undefined]);
  for (const dir of folders) if (dir) setFolderPassage(dir, isolated && holds(dir, config.executors.cli.workspaces));
}

/** Whether `path` lies inside `dir` (pure). */
function holds(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
