// The README's worked examples of "Webhooks" and "Approvals", as written. The GitHub-style hook: its `webhooks:`
// block is the agent's, and its curl/openssl script runs in bash against the daemon's ingress (the only change: the
// ingress's port, which a test cannot take as 7071); the delivery is queued, and the agent's run reads the rendered
// event. The agent whose posts need approval: its config.yaml validates, with the keys the README explains.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AgentConfigSchema } from '../store/agent-config.ts';
import { validateYaml } from '../store/yaml-validate.ts';
import { PROCESS_START_MS } from './support/ceilings.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';

const run = promisify(execFile);
const readme = readFileSync('README.md', 'utf8');

/** The text of README section `heading` up to the next heading of its level or above (outside code blocks). */
function section(heading: string): string {
  const lines = readme.split('\n');
  const start = lines.indexOf(heading);
  expect(start, `README has "${heading}"`).toBeGreaterThan(0);
  const level = /^#+/.exec(heading)![0].length;
  let fenced = false;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^(#+) /.exec(lines[i]!);
    if (m && m[1]!.length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start, end).join('\n');
}

function block(text: string, lang: string, index = 0): string {
  const found = [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))][index]?.[1];
  expect(found, `a ${lang} block`).toBeDefined();
  return found!;
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('README worked examples', () => {
  it('the GitHub-style webhook: the curl/openssl delivery is queued and the agent reads the rendered event', async () => {
    const inbound = section('### Inbound: `POST /hooks/<agent>/<name>`');
    const hooks = block(inbound, 'yaml');
    const script = block(inbound, 'sh');
    const clerk = `name: clerk\ntype: llm\nbrain: {provider: scripted, model: m, responses: ["Summarised."]}\ncapabilities: {grants: [hub:read]}\n${hooks}`;
    h = await startHarness({
      redisUrl: inject('redisUrl'),
      agentsDir: makeAgentsDir({ clerk: { config: clerk, prompt: 'You are a clerk.' } }, { withGreeter: false }),
      // The secret the README exports for the sender is the daemon's too.
      env: { GITHUB_WEBHOOK_SECRET: 'change-me' },
      config: (c) => void (c.scheduler.exploration_interval = 3_600_000),
    });
    const ingress = h.daemon.ingressUrl;
    expect(ingress).toBeDefined();
    expect(script).toContain('http://127.0.0.1:7071/hooks/clerk/github');
    const out = await run('bash', ['-euo', 'pipefail', '-c', script.replaceAll('http://127.0.0.1:7071', ingress!)], { timeout: PROCESS_START_MS });
    const answer = JSON.parse(out.stdout) as { task_id: string; status: string };
    expect(Object.keys(answer).sort()).toEqual(['status', 'task_id']);
    expect(answer.status).toBe('queued');
    expect(answer.task_id).toMatch(/^webhook:github:[0-9a-f]{32}$/);
    const answered = await waitFor('the delivery\'s run', () => h!.outcomes.find((o) => o.agent === 'clerk' && o.trigger === 'task' && o.outcome.kind === 'answered'), 60_000);
    const asked = JSON.stringify(answered.events.find((e) => e.type === 'user_message'));
    expect(asked).toContain('GitHub sent a push event for acme/site.');
    expect(asked).toContain('refs/heads/main');
  });

  it('the agent whose posts need approval: its config.yaml is valid, hub_post waits, 24h, both approvers', () => {
    const yaml = block(section('## Approvals'), 'yaml');
    const parsed = validateYaml('README.md', yaml, AgentConfigSchema);
    expect(parsed.problems).toEqual([]);
    expect(parsed.ok && parsed.value.approvals).toMatchObject({ tools: ['hub_post'], approvers: ['operator', 'admin'] });
    expect(parsed.ok && parsed.value.approvals?.timeout).toBe(24 * 3_600_000);
  });
});
