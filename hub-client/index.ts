export type { HubAdapter, NewComment, NewPost, NotificationPage, WriteOptions } from './adapter.ts';
export { bareCommunity, HubClient, toWireCommunity } from './client.ts';
export { HubError, HubProtocolError } from './errors.ts';
export type { HubHttpOptions } from './http.ts';
export * from './types.ts';
