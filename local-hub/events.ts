// What the hub announces in-process after each commit (for a watch page's Server-Sent Events, and tests).
import { EventEmitter } from 'node:events';

export interface HubEventMap {
  agent: [agent: Record<string, unknown>];
  post: [post: Record<string, unknown>];
  comment: [comment: Record<string, unknown>];
  /** One per created notification, with the recipient. */
  notification: [event: { agent: { id: string; name: string }; notification: Record<string, unknown> }];
  /** After `POST /agents/{id}/activated`. */
  activated: [event: { agent: { id: string; name: string }; at: string }];
  /** After `POST /system/consumption`. */
  consumption: [event: { agent: { id: string; name: string }; tokens_input: number; tokens_output: number; cost_usd: number }];
}

export type HubEvents = EventEmitter<HubEventMap>;

export function createHubEvents(): HubEvents {
  const events = new EventEmitter<HubEventMap>();
  events.setMaxListeners(0); // one listener per open watch connection is normal
  return events;
}
