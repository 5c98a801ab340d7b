// The shared decisions of the CLI parsers: how a supervisor stop, a no-action sentinel or a post decide the result.
import { GENERAL_ONLY } from '../memory/audience.ts';
import { describe, expect, it } from 'vitest';
import { answered, stoppedOutcome } from '../executors/cli/outcome.ts';
import { mcpServersFor } from '../executors/cli/mcp.ts';
import { warrenHubMcpLauncher } from '../executors/cli/hub-mcp-launcher.ts';
import { definition, exitOf } from './support/cli-agent.ts';

const usage = { inputTokens: 1, outputTokens: 2, cachedTokens: 0 };

describe('stoppedOutcome', () => {
  it('leaves a process that exited by itself to the parser', () => {
    expect(stoppedOutcome(exitOf(0), usage, 1)).toBeUndefined();
  });

  it('classifies each stop', () => {
    expect(stoppedOutcome(exitOf(null, { spawnError: 'spawn claude ENOENT' }), usage, 0)).toMatchObject({ termination: 'error', error: { retryable: false, message: 'could not start the CLI: spawn claude ENOENT' } });
    expect(stoppedOutcome(exitOf(null, { stoppedBy: 'aborted', detail: 'Error: shutdown' }), usage, 1)).toMatchObject({ termination: 'aborted', error: { retryable: true } });
    // behavior.max_duration arrives as an AbortSignal.timeout reason: a deadline failure, never a silent "no answer".
    expect(stoppedOutcome(exitOf(null, { stoppedBy: 'aborted', detail: 'TimeoutError: The operation was aborted due to timeout' }), usage, 1)).toMatchObject({ termination: 'error', error: { retryable: true, message: expect.stringMatching(/deadline/) as unknown } });
    expect(stoppedOutcome(exitOf(null, { stoppedBy: 'deadline', detail: 'no result within 5 ms' }), usage, 1)).toMatchObject({ termination: 'error', error: { retryable: true } });
    expect(stoppedOutcome(exitOf(null, { stoppedBy: 'idle', detail: 'no output for 5 ms' }), usage, 1)).toMatchObject({ termination: 'error', error: { message: expect.stringMatching(/idle watchdog/) as unknown } });
    expect(stoppedOutcome(exitOf(null, { stoppedBy: 'line_too_long', detail: 'a line of output exceeded 8 bytes' }), usage, 1)).toMatchObject({ termination: 'error', error: { retryable: false } });
  });

  it('a CLI killed after it posted through the hub counts as posted, so no retry posts twice', () => {
    expect(stoppedOutcome(exitOf(null, { stoppedBy: 'deadline' }), usage, 3, true)).toEqual({ text: '', posted: true, partial: true, termination: 'deadline', usage, steps: 3 });
  });
});

describe('answered', () => {
  it('posted wins; a sentinel means no_action; otherwise the trimmed text', () => {
    expect(answered('Did it.', true, usage, 1)).toMatchObject({ posted: true, text: '', termination: 'final' });
    expect(answered('  NO_ACTION \n', false, usage, 1)).toMatchObject({ posted: false, text: '', termination: 'no_action' });
    expect(answered('  Hello.\n', false, usage, 1)).toMatchObject({ text: 'Hello.', termination: 'final' });
  });
});

describe('mcpServersFor', () => {
  it('adds the hub server only with a hub grant and a launcher, keeps explicit servers, reports built-in names it cannot wire', () => {
    const def = definition({ type: 'claude-code', capabilities: { grants: ['hub:read'], mcp_servers: ['github', 'hub', { name: 'runbooks', command: 'npx', args: ['-y', 'rb'] }, { name: 'docs', url: 'http://127.0.0.1:1/mcp' }] } });
    const hub = { command: '/node', args: ['warren.js', 'mcp', 'hub'], env: {} };
    const { servers, skipped } = mcpServersFor(def, hub);
    expect(servers.map((s) => `${s.kind}:${s.name}`)).toEqual(['stdio:hub', 'stdio:runbooks', 'http:docs']);
    expect(skipped).toEqual(['github']);
    expect(mcpServersFor(def, undefined).servers.map((s) => s.name)).toEqual(['runbooks', 'docs']);
    const noGrant = definition({ type: 'claude-code', capabilities: { grants: ['github:read'] } });
    expect(mcpServersFor(noGrant, hub).servers).toEqual([]);
  });
});

describe('warrenHubMcpLauncher', () => {
  it('starts `warren mcp hub` for the agent and activation with its hub grants, URL and key in the environment, not argv', () => {
    const def = definition({ type: 'claude-code', capabilities: { grants: ['hub:read', 'hub:write', 'github:read'] } });
    let released = 0;
    const launch = warrenHubMcpLauncher({ credentials: (a) => ({ hubUrl: 'http://127.0.0.1:9999', key: `token-for-${a.name}`, release: () => void released++ }), node: '/node' })(def, 'act-1', GENERAL_ONLY);
    expect(launch.command).toBe('/node');
    expect(launch.args.slice(1)).toEqual(['mcp', 'hub', '--agent', 'coder', '--grants', 'hub:read,hub:write', '--activation', 'act-1']);
    expect(launch.args[0]).toMatch(/bin\/warren\.js$/);
    expect(launch.args.join(' ')).not.toContain('token-for-coder');
    expect(launch.env).toEqual({ WARREN_HUB_URL: 'http://127.0.0.1:9999', WARREN_HUB_KEY: 'token-for-coder' });
    launch.release?.();
    expect(released).toBe(1);
  });
});
