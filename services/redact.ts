// Secret redaction for anything that leaves the process as text (error posts, activation records, logs, spans) and
// for everything a model or a CLI is given (the context, tool results, what a CLI reads through the hub gateway).
// Known secret values are replaced wherever they appear: as they are, encoded (base64, base64url, hex, URL, JSON)
// and split by line breaks or indentation. Well-known key shapes are caught even when the value is unknown.
// Both are also looked for with cheap disguises undone (normalised-text.ts: full-width letters, zero-width
// characters, `\u` escapes, quoted-printable soft breaks); a match is replaced in the original text, so text
// around a secret reads exactly as it was written. Deliberate encodings (rot13, base32, reversed, double
// base64…) are not caught: README "Security model" says why key scoping, not redaction, is the defence there.
import { NeedleIndex, WINDOW } from './needle-index.ts';
import { flatten, hasSoftBreak, normalise, spanOf, type Normalised, type NormaliseMode } from './normalised-text.ts';

export const REDACTED = '[REDACTED]';

/** How known values are searched for: split characters out as well (a value has none left either). */
const AS_KNOWN: NormaliseMode = { splits: true, softBreaks: false };
/** How shapes are searched for a second time: disguises undone, whitespace kept (shapes end at it). */
const AS_SHAPES: NormaliseMode = { splits: false, softBreaks: true };

/** Shorter values are not hidden: they would redact ordinary words. (8: the needle index files every form by its last 8.) */
const MIN_SECRET = WINDOW;

export interface Shape {
  /** After the gitleaks rule(s) it follows, where there is one. */
  id: string;
  pattern: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
  /**
   * What every match contains: a text without it skips the pattern (a native substring search, or a small regex
   * with no backtracking, instead of the pattern's walk from every word boundary).
   */
  hint?: string | RegExp;
}

// A token starts only where the character before could not belong to it. Each run of token characters is then
// tried from one position, not from every one of its positions, which keeps every shape linear in the input.
const START = '(?<![A-Za-z0-9_-])';
const token = (body: string, flags = ''): RegExp => new RegExp(`${START}${body}`, `g${flags}`);

/**
 * The end of a name that says it holds a secret (at most four name parts after the word), an optional quote and its
 * `:` or `=`: the secret-assignment shape's core, and its hint alone.
 */
const SECRET_NAME_END = String.raw`(?:api[_-]?key|access[_-]?key|private[_-]?key|secret|token|passw(?:or)?d|credentials?|authorization)(?:[_.-][A-Za-z0-9]+){0,4}(?:\\?["'])?\s{0,5}[:=]`;

/** Keeps the quotes of a quoted value, so redacted JSON stays JSON. */
function hideValue(_m: string, label: string, value: string): string {
  const quote = /^(?:\\?["'])/.exec(value)?.[0] ?? '';
  return `${label}${quote}${REDACTED}${quote}`;
}

/**
 * Well-known secret shapes. The list follows the default rules of gitleaks (its config/gitleaks.toml), rule ids
 * named in each `id` or comment; the expressions are written here for this use: broad enough to catch a value
 * in an error message, bounded so that none backtracks (test/security/redaction.test.ts times each on 100 kB
 * of adversarial input).
 */
export const SHAPES: readonly Shape[] = [
  // private-key: the whole block, also when it is cut off before its END line. The body stops at a dash run,
  // which PEM headers (Proc-Type, DEK-Info) do not contain, or at a quote (the end of a JSON string).
  { id: 'private-key', hint: '-----BEGIN', pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[^-"'<>]|-(?!----))*(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)?/g, replace: REDACTED },
  // url-credentials (cf. curl-auth-user): scheme://user:pass@host keeps the scheme and the host.
  { id: 'url-credentials', hint: '://', pattern: /\b([A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/)[^\s/?#@:"'<>]*:[^\s/?#"'<>]+@/g, replace: `$1${REDACTED}@` },
  // slack-webhook-url: the path is the credential.
  { id: 'slack-webhook-url', hint: 'hooks.slack.com/', pattern: /(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9+/]{20,}/g, replace: `$1${REDACTED}` },
  // jwt: header and payload are base64url JSON (`ey…`), the signature optional.
  { id: 'jwt', hint: '.ey', pattern: token('ey[A-Za-z0-9_-]{10,}\\.ey[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]*'), replace: REDACTED },
  { id: 'gcp-api-key', hint: 'AIza', pattern: token('AIza[A-Za-z0-9_-]{35}'), replace: REDACTED },
  // slack-bot-token, slack-user-token, slack-legacy-token, slack-config-access-token, slack-app-token
  { id: 'slack-token', hint: /xox[abeoprs]-|xapp-/, pattern: token('(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,}'), replace: REDACTED },
  // github-pat, github-oauth, github-app-token, github-refresh-token
  { id: 'github-token', hint: /gh[pousr]_/, pattern: token('gh[pousr]_[A-Za-z0-9]{30,}'), replace: REDACTED },
  { id: 'github-fine-grained-pat', hint: 'github_pat_', pattern: token('github_pat_[A-Za-z0-9_]{22,}'), replace: REDACTED },
  { id: 'gitlab-pat', hint: 'glpat-', pattern: token('glpat-[A-Za-z0-9_-]{20,}'), replace: REDACTED },
  { id: 'stripe-access-token', hint: 'k_', pattern: token('[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}'), replace: REDACTED },
  // huggingface-access-token, huggingface-organization-api-token
  { id: 'huggingface-access-token', hint: /hf_|api_org_/, pattern: token('(?:hf|api_org)_[A-Za-z0-9]{30,}'), replace: REDACTED },
  // openai-api-key, anthropic-api-key, anthropic-admin-api-key (and compatible providers): `sk-` and a digit
  // somewhere, so hyphenated words such as sk-learn-compatible stay.
  { id: 'openai-anthropic-key', hint: 'sk-', pattern: token('sk-(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}'), replace: REDACTED },
  { id: 'aws-access-token', pattern: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g, replace: REDACTED },
  // Moltbook agent keys (`moltbook_…`), whether or not the config names them.
  { id: 'moltbook-api-key', hint: 'moltbook_', pattern: token('moltbook_[A-Za-z0-9_]{20,}'), replace: REDACTED },
  { id: 'npm-access-token', hint: 'npm_', pattern: token('npm_[A-Za-z0-9]{36}'), replace: REDACTED },
  { id: 'sendgrid-api-token', hint: 'SG.', pattern: token('SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}'), replace: REDACTED },
  // digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token
  { id: 'digitalocean-token', hint: '_v1_', pattern: token('do[opr]_v1_[a-f0-9]{64}'), replace: REDACTED },
  { id: 'pypi-upload-token', hint: 'pypi-AgEIcHlwaS5vcmc', pattern: token('pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}'), replace: REDACTED },
  // warren's own: hub agent keys and generated hub admin keys.
  { id: 'hub-agent-key', hint: 'botburrow_agent_', pattern: /\bbotburrow_agent_[0-9a-f]{64}\b/g, replace: REDACTED },
  { id: 'hub-admin-key', hint: 'warren_admin_', pattern: /\bwarren_admin_[0-9a-f]{16,}\b/g, replace: REDACTED },
  // curl-auth-header: the credential after an auth scheme.
  { id: 'bearer', hint: /bearer/i, pattern: /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, replace: `$1${REDACTED}` },
  // generic-api-key, narrowed to names that say secret (aws_secret_access_key = …, client_secret: …,
  // DB_PASSWORD=…), at most four name parts either side. The value: quoted (kept quoted, also JSON-escaped
  // quotes), an auth scheme and its credential, or a bare word.
  {
    id: 'secret-assignment',
    // The name's end and its `:` or `=`: what every match holds, without the walk back over the name's parts that
    // makes the whole expression costly on text full of words such as input_tokens.
    hint: new RegExp(SECRET_NAME_END, 'i'),
    pattern: new RegExp(String.raw`\b((?:[A-Za-z0-9]+[_.-]){0,4}${SECRET_NAME_END}\s{0,5})("[^"\n]{6,}"|'[^'\n]{6,}'|\\"[^"\\\n]{6,}\\"|(?:Basic|Bearer|Token|Digest)\s+[A-Za-z0-9._~+/=-]{6,}|(?!Bearer\b)[^\s"',;[\\]{6,})`, 'gi'),
    replace: hideValue,
  },
];

/** The part of `value`'s base64 that is the same wherever it sits in a longer value, for each of the 3 alignments. */
function base64Cores(value: Buffer): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), value]).toString('base64');
    // Character i carries bits [6i, 6i+6): keep those made of the value's bits only.
    const from = Math.ceil((8 * offset) / 6);
    const to = Math.floor((8 * (offset + value.length)) / 6);
    cores.push(encoded.slice(from, to));
  }
  return cores;
}

/**
 * Every form a secret may be written in: as it is, JSON-escaped, URL-encoded, hex, base64 and base64url, split
 * characters removed (as the known values are searched for). Exported for the differential test and the bench.
 */
export function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const url = encodeURIComponent(secret);
  const hex = bytes.toString('hex');
  const b64 = base64Cores(bytes);
  return [
    secret,
    JSON.stringify(secret).slice(1, -1),
    url,
    url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    url.replace(/%20/g, '+'),
    hex,
    hex.toUpperCase(),
    ...b64,
    ...b64.map((c) => c.replace(/\+/g, '-').replace(/\//g, '_')),
  ].map((f) => flatten(f, AS_KNOWN));
}

export class Redactor {
  readonly #known = new Set<string>();
  /** Every form of every known secret, split characters removed. */
  readonly #needles = new NeedleIndex();

  /** `secrets`: the values to hide. */
  constructor(secrets: Iterable<string | undefined>) {
    this.learn(secrets);
  }

  /** Adds secrets (e.g. of agents loaded since); secrets already known stay hidden. Costs what the new ones add. */
  learn(secrets: Iterable<string | undefined>): void {
    for (const s of secrets) {
      if (typeof s !== 'string' || s.length < MIN_SECRET || this.#known.has(s)) continue;
      this.#known.add(s);
      for (const form of formsOf(s)) if (form.length >= MIN_SECRET) this.#needles.add(form);
    }
  }

  redact(text: string): string {
    return redactHits(text, this.#needles.size ? this.#knownHits(text) : []);
  }

  /**
   * Where every form of every known secret is in the text, found in the normalised text (one scan of it whatever
   * the number of secrets, needle-index.ts; a second pass without `=` soft breaks only when the text has one, as
   * `=` may end a value). Every occurrence counts, overlapping ones of one value too ("aaaaaaaaa" holds
   * "aaaaaaaa" twice): their spans merge, so at least what a left-to-right search that skips overlaps finds.
   */
  #knownHits(text: string): Array<[number, number]> {
    const passes = hasSoftBreak(text) ? [AS_KNOWN, { ...AS_KNOWN, softBreaks: true }] : [AS_KNOWN];
    const hits: Array<[number, number]> = [];
    for (const mode of passes) {
      // Where a hit lies in the original is worked out only when there is one (its flat text is the same).
      let placed: Normalised | undefined;
      this.#needles.find(flatten(text, mode), (start, end) => hits.push(spanOf((placed ??= normalise(text, mode)), start, end)));
    }
    return hits;
  }
}

/**
 * The text with `hits` (where known secrets are, taken over) and every secret shape redacted. Exported so the
 * differential test and the bench can put a reference search for known secrets in front of the same rest.
 */
export function redactHits(text: string, hits: Array<[number, number]>): string {
  for (const hit of disguisedShapeHits(text)) hits.push(hit);
  let out = hits.length ? replaceSpans(text, hits) : text;
  for (const { pattern, replace, hint } of SHAPES) {
    if (hint !== undefined && !holds(out, hint)) continue;
    out = typeof replace === 'string' ? out.replace(pattern, replace) : out.replace(pattern, replace);
  }
  return out;
}

/** Whether `text` holds a shape's hint. */
function holds(text: string, hint: string | RegExp): boolean {
  return typeof hint === 'string' ? text.includes(hint) : hint.test(text);
}

/**
 * Shapes that match only once disguises are undone (a zero-width space inside an AWS key id). Matches the plain
 * text holds as they are are left to the shapes' own replacement, which keeps labels and URL hosts.
 */
function disguisedShapeHits(text: string): Array<[number, number]> {
  const n = normalise(text, AS_SHAPES);
  if (!n.from) return [];
  const hits: Array<[number, number]> = [];
  for (const { pattern, hint } of SHAPES) {
    if (hint !== undefined && !holds(n.flat, hint)) continue;
    for (const m of n.flat.matchAll(pattern)) {
      const span = spanOf(n, m.index, m.index + m[0].length);
      if (text.slice(span[0], span[1]) !== m[0]) hits.push(span);
    }
  }
  return hits;
}

/** The text with each span (overlapping ones merged) replaced by REDACTED. */
function replaceSpans(text: string, hits: Array<[number, number]>): string {
  hits.sort((a, b) => a[0] - b[0]);
  const parts: string[] = [];
  let pos = 0;
  let open: [number, number] | undefined;
  for (const hit of hits) {
    if (open && hit[0] <= open[1]) {
      open[1] = Math.max(open[1], hit[1]);
      continue;
    }
    if (open) {
      parts.push(text.slice(pos, open[0]), REDACTED);
      pos = open[1];
    }
    open = [hit[0], hit[1]];
  }
  parts.push(text.slice(pos, open![0]), REDACTED, text.slice(open![1]));
  return parts.join('');
}

const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTHORIZATION/i;

/** Whether a variable or header name says it holds a secret (a fallback: names declared as secrets count anyway). */
export function looksSecret(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * The values of the variables `names` (those the config and the agents declare as secrets, see known-secrets.ts),
 * of every variable whose name says it holds a secret, and `extra` (e.g. a generated hub key).
 */
export function secretsFromEnv(env: NodeJS.ProcessEnv, extra: ReadonlyArray<string | undefined> = [], names: Iterable<string> = []): string[] {
  const declared = new Set(names);
  const fromEnv = Object.entries(env).flatMap(([name, value]) => ((declared.has(name) || looksSecret(name)) && value ? [value] : []));
  return [...fromEnv, ...extra.filter((v): v is string => Boolean(v))];
}
