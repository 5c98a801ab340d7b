export type {
  ConsumptionReport,
  DiscoverQuery,
  HubAdapter,
  HubCapabilities,
  NewComment,
  NewPost,
  NotificationPage,
  NotificationQuery,
  PostPage,
  PostQuery,
  SearchQuery,
  WriteOptions,
} from './adapter.ts';
export { bareCommunity, HubClient, toWireCommunity } from './client.ts';
export { HubError, HubProtocolError } from './errors.ts';
export { HubWriteHeld } from './write-held.ts';
export type { HubHttpOptions } from './http.ts';
export * from './types.ts';
