// The pure parts of webhooks: the signature check, the delivery identity, and the task template.
import { describe, expect, it } from 'vitest';
import { signBody, signatureMatches } from '../policy/hub-signature.ts';
import { deliveryId } from '../daemon/webhooks/webhook-route.ts';
import { PAYLOAD_CHARS, renderTask, templateProblem } from '../store/webhook-template.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';

const body = '{"action":"opened"}';
const good = signBody('s3cret', body);

describe('signatureMatches', () => {
  it.each([
    { header: good, ok: true },
    { header: good.toUpperCase().replace('SHA256=', 'sha256='), ok: true },
    { header: signBody('other', body), ok: false },
    { header: good.slice(0, -2), ok: false },
    { header: good.replace('sha256=', 'sha1='), ok: false },
    { header: undefined, ok: false },
    { header: '', ok: false },
  ])('$header → $ok', ({ header, ok }) => {
    expect(signatureMatches('s3cret', body, header)).toBe(ok);
  });
  it('is over the raw bytes: the same JSON spaced otherwise does not match', () => {
    expect(signatureMatches('s3cret', '{ "action": "opened" }', good)).toBe(false);
  });
});

describe('deliveryId', () => {
  it.each([
    { given: '72d3162e-cc78-11e3-81ab-4c9367dc0958', want: '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
    { given: 'has spaces and / slashes', want: /^id-[0-9a-f]{32}$/ },
    { given: undefined, want: /^body-[0-9a-f]{32}$/ },
  ])('$given', ({ given, want }) => {
    const id = deliveryId(given, Buffer.from(body));
    if (typeof want === 'string') expect(id).toBe(want);
    else expect(id).toMatch(want);
  });
  it('the same body without an id is the same delivery; another body another', () => {
    expect(deliveryId(undefined, Buffer.from('a'))).toBe(deliveryId(undefined, Buffer.from('a')));
    expect(deliveryId(undefined, Buffer.from('a'))).not.toBe(deliveryId(undefined, Buffer.from('b')));
  });
});

describe('task templates', () => {
  const d = { agent: 'clerk', hook: 'gh', delivery: 'd1', body: JSON.stringify({ pr: { number: 7, title: 'Fix', labels: ['a'] } }), headers: { 'x-github-event': 'pull_request', authorization: 'Bearer t0ken' } };
  it.each([
    { template: '{{header.x-github-event}} #{{payload.pr.number}}: {{payload.pr.title}}', want: 'pull_request #7: Fix' },
    { template: '{{payload.pr.labels}} {{payload.pr.labels.0}}', want: '["a"] a' },
    { template: '{{payload.nope.deeper}}', want: '(missing)' },
    { template: '{{header.x-absent}}', want: '(none)' },
    { template: '{{header.authorization}}', want: '(withheld)' },
    { template: '{{hook}}/{{agent}}/{{delivery}}', want: 'gh/clerk/d1' },
    { template: '{{ payload.pr.number }}', want: '7' },
  ])('$template', ({ template, want }) => {
    expect(templateProblem(template)).toBeUndefined();
    expect(renderTask(template, d)).toBe(want);
  });
  it('{{payload}} is pretty JSON, or the text itself, capped', () => {
    expect(renderTask('{{payload}}', d)).toContain('"number": 7');
    expect(renderTask('{{payload}}', { ...d, body: 'plain text' })).toBe('plain text');
    const long = renderTask('{{payload}}', { ...d, body: 'x'.repeat(PAYLOAD_CHARS + 10) });
    expect(long).toMatch(/… \(10 more characters cut\)$/);
  });
  it.each([
    { template: '{{body}}', problem: /unknown placeholder \{\{body\}\}/ },
    { template: '{{header}}', problem: /names no header/ },
    { template: '{{hook.name}}', problem: /takes no field/ },
  ])('$template is refused', ({ template, problem }) => {
    expect(templateProblem(template)).toMatch(problem);
  });
  it('the schema names the field of a bad template and a hook without exactly one secret', () => {
    const base = { name: 'clerk', type: 'llm', brain: { model: 'm' }, capabilities: {} };
    const bad = AgentConfigSchema.safeParse({ ...base, webhooks: [{ name: 'gh', secret_env: 'S', task: '{{body}}' }] });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error!.issues[0]!.path)).toBe('["webhooks",0,"task"]');
    const none = AgentConfigSchema.safeParse({ ...base, webhooks: [{ name: 'gh', task: 'x' }] });
    expect(none.error!.issues[0]!.message).toMatch(/exactly one of secret_env or secret_file/);
  });
});
