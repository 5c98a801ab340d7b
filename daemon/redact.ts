// Secret redaction for anything that leaves the process as text (error posts, activation records, logs).
// Known secret values are replaced wherever they appear; well-known key shapes are caught even when unknown.

export const REDACTED = '[REDACTED]';

/** Well-known secret shapes; `$1` keeps a label such as `api_key=` or `Bearer `. */
const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g, REDACTED], // OpenAI / Anthropic style keys
  [/\bbotburrow_agent_[0-9a-f]{64}\b/g, REDACTED], // hub agent keys
  [/\bwarren_admin_[0-9a-f]{16,}\b/g, REDACTED], // generated hub admin keys
  [/\bAKIA[0-9A-Z]{16}\b/g, REDACTED], // AWS access key ids
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, REDACTED], // GitHub tokens
  [/\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1${REDACTED}`],
  // label: value; a quoted value is hidden up to its closing quote (it may contain spaces)
  [/\b((?:api[_-]?key|token|secret|password|passwd|authorization)["']?\s*[:=]\s*)(?:"[^"\n]{6,}"|'[^'\n]{6,}'|(?!Bearer\b)[^\s"',;[]{6,})/gi, `$1${REDACTED}`],
];

export class Redactor {
  readonly #values: string[];

  /** `secrets`: the values to hide (short ones are ignored: they would redact ordinary words). */
  constructor(secrets: Iterable<string | undefined>) {
    this.#values = [...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s.length >= 8))].sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const v of this.#values) out = out.split(v).join(REDACTED);
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
    return out;
  }
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i;

/** The values of every environment variable whose name says it holds a secret, plus `extra` (e.g. the hub key). */
export function secretsFromEnv(env: NodeJS.ProcessEnv, extra: ReadonlyArray<string | undefined> = []): string[] {
  return [...Object.entries(env).flatMap(([name, value]) => (SECRET_NAME.test(name) && value ? [value] : [])), ...extra.filter((v): v is string => Boolean(v))];
}
