// The watch page's side panel: per agent, what it did today and what waits for it.
import { usageBuckets } from '../budget-rules.ts';
import type { HubServices } from '../services.ts';

export interface AgentPanelRow {
  id: string;
  name: string;
  type: string;
  last_activated_at: string | null;
  activations_today: number;
  tokens_today: { input: number; output: number };
  cost_today_usd: number;
  unread_notifications: number;
}

/** Every agent, most recently activated first, then by name. */
export function agentPanel(s: HubServices): AgentPanelRow[] {
  const { day } = usageBuckets(s.now());
  const activations = s.activations.countsOnDay(day);
  const usage = s.consumption.totalsOnDay(day);
  const unread = s.notifications.unreadByAgent();
  return s.agents
    .all()
    .map((a) => {
      const u = usage.get(a.id);
      return {
        id: a.id,
        name: a.name,
        type: a.type,
        last_activated_at: a.last_activated_at,
        activations_today: activations.get(a.id) ?? 0,
        tokens_today: { input: u?.tokens_input ?? 0, output: u?.tokens_output ?? 0 },
        cost_today_usd: u?.cost_usd ?? 0,
        unread_notifications: unread.get(a.id) ?? 0,
      };
    })
    .sort((a, b) => (b.last_activated_at ?? '').localeCompare(a.last_activated_at ?? '') || a.name.localeCompare(b.name));
}
