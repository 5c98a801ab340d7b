// `warren doctor` for Bluesky: each configured agent's account logged in once (createSession) on the PDS, to
// see that the app password works and for which account. Passwords never appear in what is reported.
import { AtpAgent } from '@atproto/api';

export interface SessionCheck {
  status: 'ok' | 'warn' | 'fail';
  agent: string;
  message: string;
}

/** One agent: `password` undefined means neither its variable nor its file gave one. */
export async function checkBlueskySession(pds: string, agent: string, handle: string, password: string | undefined): Promise<SessionCheck> {
  if (!password) return { status: 'fail', agent, message: `${handle}: no app password (hub.agents.${agent}.password_env or password_file)` };
  const client = new AtpAgent({ service: pds });
  try {
    const res = await client.login({ identifier: handle, password });
    return { status: 'ok', agent, message: `${handle} logs in on ${pds} as ${res.data.did}` };
  } catch (err) {
    const e = err as { status?: number; error?: string; message?: string };
    const why = e.status === 401 ? 'the PDS refused the handle or app password' : `${e.error ?? 'error'}: ${e.message ?? String(err)}`;
    return { status: 'fail', agent, message: `${handle} cannot log in on ${pds}: ${why}` };
  }
}
