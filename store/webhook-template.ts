// A webhook's `task` template: how a delivery becomes the text an agent reads. Placeholders are checked when the
// definition loads (a typo is an error naming the field) and filled when a delivery comes (pure, both).
//   {{payload}}          the body as pretty JSON (or as text when it is no JSON), capped at PAYLOAD_CHARS
//   {{payload.a.b.0}}    one field of the JSON body: strings as they are, anything else as compact JSON
//   {{header.<name>}}    one request header (e.g. {{header.x-github-event}}); credential headers are never given
//   {{hook}} {{agent}} {{delivery}}   the hook's name, the agent's, the delivery id

/** `{{ name }}` with an optional dotted path. */
const PLACEHOLDER = /\{\{\s*([a-z]+)(?:\.([A-Za-z0-9_.-]+))?\s*\}\}/g;
const NAMES = new Set(['payload', 'header', 'hook', 'agent', 'delivery']);
/** The pretty payload is cut here: a task is read by a model, not archived. */
export const PAYLOAD_CHARS = 8_000;
/** A single field is cut here. */
const FIELD_CHARS = 2_000;
/** The whole task is cut here, whatever the template. */
export const TASK_CHARS = 16_000;
/** Headers that carry credentials or the signature: never part of a task, whatever the template asks. */
const WITHHELD_HEADERS = /^(authorization|proxy-authorization|cookie|x-hub-signature(-256)?|x-api-key)$/i;

/** What is wrong with `template`'s placeholders, or undefined when each is known. */
export function templateProblem(template: string): string | undefined {
  for (const m of template.matchAll(PLACEHOLDER)) {
    const [whole, name, path] = m;
    if (!NAMES.has(name!)) return `unknown placeholder ${whole}: use {{payload}}, {{payload.<field>}}, {{header.<name>}}, {{hook}}, {{agent}} or {{delivery}}`;
    if (name === 'header' && !path) return `${whole} names no header: write {{header.x-github-event}}`;
    if (name !== 'payload' && name !== 'header' && path) return `${whole}: {{${name}}} takes no field`;
  }
  return undefined;
}

export interface Delivery {
  agent: string;
  hook: string;
  delivery: string;
  /** The raw body as text. */
  body: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** The task text of `delivery` through `template` (not yet redacted: the caller redacts the result). */
export function renderTask(template: string, d: Delivery): string {
  const json = parseJson(d.body);
  const text = template.replace(PLACEHOLDER, (_whole, name: string, path: string | undefined) => {
    switch (name) {
      case 'payload':
        return path === undefined ? cap(json === undefined ? d.body : JSON.stringify(json, null, 2), PAYLOAD_CHARS) : cap(fieldOf(json, path), FIELD_CHARS);
      case 'header': {
        if (WITHHELD_HEADERS.test(path!)) return '(withheld)';
        const v = d.headers[path!.toLowerCase()];
        return cap(Array.isArray(v) ? v.join(', ') : (v ?? '(none)'), FIELD_CHARS);
      }
      case 'hook':
        return d.hook;
      case 'agent':
        return d.agent;
      default:
        return d.delivery;
    }
  });
  return cap(text, TASK_CHARS);
}

function fieldOf(json: unknown, path: string): string {
  let at: unknown = json;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return '(missing)';
    at = (at as Record<string, unknown>)[part];
  }
  return typeof at === 'string' ? at : JSON.stringify(at);
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters cut)`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
