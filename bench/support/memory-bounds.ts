// What README "Records and Redis memory" promises an active agent at most: its records and held-mention lines
// (`records.per_agent_bytes` each, 128 KiB by default), plus its small state. The scale benchmark measures against
// it and the report prints it as the target.
export const ACTIVE_AGENT_REDIS_BOUND = 2 * 128 * 1024 + 4_096;
