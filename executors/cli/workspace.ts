// One working directory per agent (workspaces/<agent>/), created on demand. A workspace is not a sandbox:
// it keeps agents' files apart, nothing more.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AGENT_NAME } from '../../store/agent-config.ts';

export async function ensureWorkspace(root: string, agent: string): Promise<string> {
  // Agent names are validated at load; checked again because the name becomes a path.
  if (!AGENT_NAME.test(agent)) throw new Error(`agent name "${agent}" cannot name a workspace folder`);
  const dir = resolve(join(root, agent));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}
