// What `memory.store` in warren.yaml names: a postgres:// URL is the shared PostgreSQL store, anything else a
// SQLite file (the embedded default, in the data folder).
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}
