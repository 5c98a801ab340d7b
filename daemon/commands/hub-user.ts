// `warren hub user <name>`: a key for a human user of the hub, whether the name is new or already taken by that
// user, so a walk-through that registers someone can be run again. Only the key goes to stdout (for `$(…)`).
import { relative } from 'node:path';
import type { Command } from 'commander';
import { loadWarrenConfig } from '../../services/config.ts';

export class HubUserError extends Error {
  override readonly name = 'HubUserError';
}

interface Answer {
  status: number;
  body: { api_key?: string; detail?: string };
}

export function registerHubUserCommand(hub: Command): void {
  hub
    .command('user')
    .description("print an API key for a human user of the hub (registered when the name is free, else given a new key)")
    .argument('<name>', 'the user name (3–50 of a-z, 0-9 and inner dashes)')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      // `--config` belongs to `warren hub`, before or after `user`.
      const config = loadWarrenConfig(cmd.optsWithGlobals<{ config: string }>().config);
      const { SecretSource } = await import('../../services/secrets.ts');
      const { findAdminKey, missingAdminKeyHint } = await import('../../services/hub-admin-key.ts');
      // The variable, else the key file the embedded hub of this warren.yaml keeps (data/hub-admin-key).
      const found = findAdminKey(config.hub, new SecretSource({ env: process.env, dir: config.secrets.dir }));
      if (!found) throw new HubUserError(`${missingAdminKeyHint(config.hub)} (\`npm start\` and \`warren hub\` keep the key they generate there)`);
      const source = found.from === 'file' ? relative(process.cwd(), found.path) || found.path : config.hub.admin_key_env;
      const { key, created } = await userKey(config.hub.url, found.key, name, source);
      console.error(created ? `registered ${name} on ${config.hub.url}` : `${name} already exists on ${config.hub.url}: issued a new key (the old one no longer works)`);
      console.log(key);
    });
}

/** Registers `name` as a human, or, when the name is taken by a human, issues it a new key. `keySource`: where the admin key came from, for messages. */
export async function userKey(hubUrl: string, adminKey: string, name: string, keySource: string): Promise<{ key: string; created: boolean }> {
  const base = `${hubUrl.replace(/\/+$/, '')}/api/v1`;
  const call = async (path: string, body?: unknown): Promise<Answer> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}), signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      throw new HubUserError(`no hub answers at ${hubUrl} (${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}): start one with \`npm start\` or \`warren hub\`, or set WARREN_HUB_URL`);
    }
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Answer['body'] };
  };
  const registered = await call('/agents/register', { name, type: 'human' });
  if (registered.status === 201 && registered.body.api_key) return { key: registered.body.api_key, created: true };
  if (registered.status !== 409) throw refused(registered, hubUrl, keySource);
  const reissued = await call(`/agents/${encodeURIComponent(name)}/key`);
  if (reissued.status === 200 && reissued.body.api_key) return { key: reissued.body.api_key, created: false };
  throw refused(reissued, hubUrl, keySource);
}

function refused(a: Answer, hubUrl: string, keySource: string): HubUserError {
  if (a.status === 401 || a.status === 403) return new HubUserError(`the hub at ${hubUrl} refused the admin key (HTTP ${a.status}) from ${keySource}: is it this hub's key? A hub started with another warren.yaml or \`--db\` keeps its key beside its own database`);
  return new HubUserError(`the hub at ${hubUrl} answered HTTP ${a.status}: ${a.body.detail ?? 'no detail'}`);
}
