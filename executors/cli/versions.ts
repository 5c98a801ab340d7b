// The CLI versions warren was verified against (docs/executors.md), and how a `--version` answer compares.

/** Known-good versions: run against a mock model server. Goose and aider are described from source only. */
export const KNOWN_GOOD: Readonly<Record<'claude-code' | 'goose' | 'aider' | 'opencode', string | undefined>> = {
  'claude-code': '2.1.330',
  opencode: '1.18.33',
  goose: undefined,
  aider: undefined,
};

/** The first dotted version number in a `--version` output (`2.1.330 (Claude Code)`, `aider 0.86.1`). */
export function parseVersion(output: string): string | undefined {
  return /\b(\d+\.\d+(?:\.\d+)?)\b/.exec(output)?.[1];
}

export type VersionVerdict = { status: 'match' | 'differs' | 'unverified'; detail: string };

export function judgeVersion(type: keyof typeof KNOWN_GOOD, found: string | undefined): VersionVerdict {
  const good = KNOWN_GOOD[type];
  if (!found) return { status: 'differs', detail: 'version not recognised in its --version output' };
  if (!good) return { status: 'unverified', detail: `${found} (warren knows this CLI from its source and docs only; its output format is not verified live)` };
  return found === good ? { status: 'match', detail: `${found} (known good)` } : { status: 'differs', detail: `${found}, verified version is ${good}: check its flags and output format before trusting it` };
}
