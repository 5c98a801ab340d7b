// Whether each remote (A2A) delegate can be reached, for the daemon's start (a clear warning per unreadable card,
// never a stop) and `warren doctor` (which also asks the agent, with the token, for a task that does not exist:
// "not found" means the call was let in, 401/403 that the token was refused).
import type { RemoteDelegate } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { AgentCardCache } from './a2a-card.ts';
import { bearerOf, clientFor } from './a2a-session.ts';

/** What doctor asks for: an id no task has, so the answer says only whether the call was let in. */
const PROBE_TASK_ID = 'warren-doctor-probe';
const PROBE_TIMEOUT_MS = 10_000;

export interface RemoteDelegateCheck {
  agent: string;
  delegate: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
}

/** The remote delegates of these agents, each with the agent that names it. */
export function remoteDelegatesOf(definitions: Iterable<AgentDefinition>): Array<{ agent: string; delegate: RemoteDelegate }> {
  return [...definitions].flatMap((def) => def.config.capabilities.delegates.flatMap((d) => (typeof d === 'string' ? [] : [{ agent: def.name, delegate: d }])));
}

/** Each remote delegate's card (and with `probeAuth`, whether it lets the token in); never throws. */
export async function checkRemoteDelegates(
  definitions: Iterable<AgentDefinition>,
  opts: { cards: AgentCardCache; secret: (name: string) => string | undefined; probeAuth?: boolean; fetch?: typeof fetch },
): Promise<RemoteDelegateCheck[]> {
  return Promise.all(
    remoteDelegatesOf(definitions).map(async ({ agent, delegate }): Promise<RemoteDelegateCheck> => {
      const at = { agent, delegate: delegate.name };
      let card;
      try {
        card = await opts.cards.get(delegate.card_url);
      } catch (err) {
        return { ...at, status: 'fail', message: `remote delegate ${delegate.name} of ${agent} cannot be reached: ${err instanceof Error ? err.message : String(err)} (its delegate_to_${delegate.name.replace(/-/g, '_')} calls fail until it can)` };
      }
      const about = `remote delegate ${delegate.name} of ${agent}: card of "${card.summary.name}" (${card.summary.skills.length} skill${card.summary.skills.length === 1 ? '' : 's'}${card.summary.streaming ? ', streaming' : ''})`;
      if (!opts.probeAuth) return { ...at, status: 'ok', message: about };
      let token: string | undefined;
      try {
        token = await bearerOf(delegate.auth, opts.secret);
      } catch (err) {
        return { ...at, status: 'fail', message: `${about}; ${err instanceof Error ? err.message : String(err)}` };
      }
      const http = await clientFor(card, token, opts.fetch);
      try {
        await http.client.getTask({ tenant: '', id: PROBE_TASK_ID }, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        return { ...at, status: 'ok', message: `${about}; calls are let in` };
      } catch (err) {
        const refused = http.refused();
        if (refused) return { ...at, status: 'fail', message: `${about}; it refuses ${token ? 'the token' : 'calls without a token'} (HTTP ${refused}): check auth in capabilities.delegates` };
        if (err instanceof Error && err.name === 'TaskNotFoundError') return { ...at, status: 'ok', message: `${about}; calls ${token ? 'with the token ' : ''}are let in` };
        return { ...at, status: 'warn', message: `${about}; a test call failed: ${err instanceof Error ? err.message : String(err)}` };
      }
    }),
  );
}
