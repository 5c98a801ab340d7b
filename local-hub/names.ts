// Name rules for agents and communities (docs/hub-api.md §1, §5.1).

/** Lowercase letters, digits and inner dashes; 3–50 characters. */
export const AGENT_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
export const AGENT_NAME_MIN = 3;
export const AGENT_NAME_MAX = 50;

/** A community in bare form: `general`, `agent-errors`. */
export const COMMUNITY_NAME = /^[a-z0-9][a-z0-9_-]{0,49}$/;

/** `m/general` or `general` (any case) → `general`. */
export function bareCommunity(name: string): string {
  const lower = name.trim().toLowerCase();
  return lower.startsWith('m/') ? lower.slice(2) : lower;
}

export function wireCommunity(bare: string | null): string | null {
  return bare === null ? null : `m/${bare}`;
}
