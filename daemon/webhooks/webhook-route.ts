// `POST /hooks/<agent>/<name>` on the ingress: a signed delivery becomes a task in the agent's task inbox and is
// answered 202 at once; the scheduler's task round runs it through the queue like any other activation. Every
// refusal (404 unknown, 413 too large, 401 unsigned, 429 too many) is decided before the inbox or the queue is
// touched. Unknown agents and unknown hooks get the same answer, so the route tells no one which agents exist.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { SIGNATURE_HEADER, signatureMatches } from '../../policy/hub-signature.ts';
import type { TaskInbox } from '../../scheduler/task-inbox.ts';
import { describeSecretRef, readSecretRef } from '../../services/secret-ref.ts';
import type { SecretSource } from '../../services/secrets.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { renderTask } from '../../store/webhook-template.ts';
import { readCapped } from '../../local-hub/http-io.ts';
import { answer, type IngressRoute } from '../ingress/ingress-server.ts';
import type { HookRateLimit } from './hook-rate-limit.ts';

/** The largest body a hook accepts (GitHub's usual payloads are far below it); larger ones are answered 413. */
export const WEBHOOK_MAX_BYTES = 256 * 1024;
/** A delivery id from a header is used as it is when it looks like one; anything else is hashed. */
const PLAIN_DELIVERY = /^[A-Za-z0-9._:-]{1,128}$/;

export interface WebhookRouteDeps {
  definition(agent: string): AgentDefinition | undefined;
  secrets: Pick<SecretSource, 'get'>;
  tasks: Pick<TaskInbox, 'add'>;
  rateLimit: Pick<HookRateLimit, 'take'>;
  redact(text: string): string;
  /** Teaches the redactor a secret read from a file (its value must never reach a log or a task). */
  learnSecret(value: string): void;
  logger: Logger;
}

const NOT_FOUND = { error: 'not_found', detail: 'no such webhook' };

export function webhookRoute(deps: WebhookRouteDeps): IngressRoute {
  return {
    name: 'webhooks',
    prefix: '/hooks/',
    wanted: (defs) => defs.some((d) => (d.config.webhooks ?? []).length > 0),
    handle: (req, res, rest) => handleDelivery(deps, req, res, rest),
  };
}

async function handleDelivery(deps: WebhookRouteDeps, req: IncomingMessage, res: ServerResponse, rest: string): Promise<void> {
  const [agent, name, ...more] = rest.split('/').map((p) => safeDecode(p));
  const hook = more.length === 0 && agent && name ? deps.definition(agent)?.config.webhooks?.find((h) => h.name === name) : undefined;
  if (!hook) return drain(req, () => answer(res, 404, NOT_FOUND));
  if (req.method !== 'POST') return drain(req, () => answer(res, 405, { error: 'method_not_allowed', detail: 'webhooks take POST' }, { allow: 'POST' }));
  const body = await readCapped(req, WEBHOOK_MAX_BYTES);
  if (body === 'too_large') return refuseTooLarge(req, res);
  const secret = readSecretRef(hook, deps.secrets);
  if (secret === undefined) {
    // The operator's mistake, told to the operator only: the sender sees a hook that does not exist.
    deps.logger.error({ agent, hook: hook.name }, `webhook ${agent}/${hook.name} has no secret: set the ${describeSecretRef(hook)}; deliveries are refused`);
    return answer(res, 404, NOT_FOUND);
  }
  deps.learnSecret(secret);
  if (!signatureMatches(secret, body, header(req, SIGNATURE_HEADER))) {
    deps.logger.warn({ agent, hook: hook.name }, 'webhook delivery refused: bad or missing X-Hub-Signature-256');
    return answer(res, 401, { error: 'bad_signature', detail: 'X-Hub-Signature-256 must be sha256=<hex HMAC-SHA256 of the raw body with the hook secret>' });
  }
  const wait = await deps.rateLimit.take(agent!, hook.name, hook.per_minute);
  if (wait !== undefined) return answer(res, 429, { error: 'rate_limited', detail: `more than ${hook.per_minute} deliveries a minute to this hook` }, { 'retry-after': String(wait) });
  const delivery = deliveryId(header(req, 'x-github-delivery') ?? header(req, 'idempotency-key'), body);
  const taskId = `webhook:${hook.name}:${delivery}`;
  const text = deps.redact(renderTask(hook.task, { agent: agent!, hook: hook.name, delivery, body: body.toString('utf8'), headers: req.headers }));
  const added = await deps.tasks.add(agent!, { id: taskId, source: 'webhook', name: hook.name, text, createdAt: Date.now(), meta: { delivery } });
  if (added === 'full') return answer(res, 429, { error: 'inbox_full', detail: `agent ${agent} has too many tasks waiting; deliver again later` }, { 'retry-after': '60' });
  deps.logger.info({ agent, hook: hook.name, task: taskId, duplicate: added === 'duplicate' }, added === 'added' ? 'webhook delivery accepted' : 'webhook delivery seen before; nothing added');
  answer(res, 202, { task_id: taskId, status: added === 'added' ? 'queued' : 'duplicate' });
}

/**
 * The delivery's identity: the sender's id (`X-GitHub-Delivery`, else `Idempotency-Key`), or, without one, the
 * body's SHA-256, so the same body sent twice runs once (a sender that means two runs sends two ids).
 */
export function deliveryId(given: string | undefined, body: Buffer): string {
  if (given !== undefined && PLAIN_DELIVERY.test(given)) return given;
  const hash = createHash('sha256').update(given === undefined ? body : given).digest('hex').slice(0, 32);
  return given === undefined ? `body-${hash}` : `id-${hash}`;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined || one === '' ? undefined : one;
}

function refuseTooLarge(req: IncomingMessage, res: ServerResponse): void {
  answer(res, 413, { error: 'too_large', detail: `webhook bodies are capped at ${WEBHOOK_MAX_BYTES} bytes` }, { connection: 'close' });
  // The rest is not read: the connection closes once the answer is out.
  req.resume();
}

/** Answers after the body (which is not wanted) has been read off, so the client sees the answer, not a reset. */
function drain(req: IncomingMessage, then: () => void): void {
  req.resume();
  if (req.readableEnded) return then();
  req.once('end', then);
  req.once('error', then);
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return '';
  }
}
