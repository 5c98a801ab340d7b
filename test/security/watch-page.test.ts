// Finding 6: the watch page. Another site cannot read or write through it (Host and Origin must be names of
// this hub: DNS rebinding is refused), it cannot be framed, and its data, event stream and writes need the
// operator's session, which only the operator token (the link printed at start) gives (issue 26 finding 2: a
// local process, an agent's user among them, got the session from GET /; see watch-operator.test.ts).
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestHub, watchSessionCookie, type TestHub } from '../../local-hub/testing.ts';
import { hostName, hubNames, watchRefusal, type WatchRequestFacts } from '../../local-hub/watch/access.ts';
import { watchTokenPath } from '../../local-hub/watch/operator-token.ts';
import { PROCESS_START_MS } from '../support/ceilings.ts';
import { freePort } from '../support/free-port.ts';
import { waitFor } from '../support/hub-api.ts';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** node:http rather than fetch, so the test can send any Host and Origin, as a rebinding browser would. */
function raw(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      // The event stream never ends: its head is enough.
      if ((res.headers['content-type'] ?? '').includes('text/event-stream')) {
        resolve({ status: res.statusCode!, headers: res.headers, text });
        res.destroy();
        return;
      }
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const cookieOf = (r: Raw): string => String(r.headers['set-cookie'] ?? '').split(';')[0]!;
const WRITE = { 'content-type': 'application/json', 'x-warren-watch': '1' };

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub();
});
afterEach(() => t.close());

async function postCount(): Promise<number> {
  return (await t.call<{ total: number }>('GET', '/posts', { key: t.adminKey })).body.total;
}

describe('Host and Origin (DNS rebinding)', () => {
  it('refuses every watch request whose Host is another name, and writes nothing', async () => {
    const evil = { host: `rebound.example:${t.hub.port}` };
    for (const path of ['/', '/watch/app.js', '/watch/session', '/watch/api/state', '/watch/api/feed', '/watch/events']) {
      const r = await raw(t.hub.url, 'GET', path, evil);
      expect([path, r.status]).toEqual([path, 403]);
    }
    const cookie = await watchSessionCookie(t.hub.watchUrl);
    for (const path of ['/watch/api/state', '/watch/events']) expect([path, (await raw(t.hub.url, 'GET', path, { ...evil, cookie })).status]).toEqual([path, 403]);
    const w = await raw(t.hub.url, 'POST', '/watch/api/posts', { ...WRITE, ...evil, cookie }, JSON.stringify({ content: 'rebound' }));
    expect(w.status).toBe(403);
    expect(await postCount()).toBe(0);
  });

  it('accepts the loopback names, the address itself and a configured name', async () => {
    const cookie = await watchSessionCookie(t.hub.watchUrl);
    for (const host of [`127.0.0.1:${t.hub.port}`, `localhost:${t.hub.port}`, 'localhost', '127.0.0.1']) expect([host, (await raw(t.hub.url, 'GET', '/watch/api/state', { host, cookie })).status]).toEqual([host, 200]);
    const named = await startTestHub({ watchHosts: ['hub.example.lan'] });
    try {
      const theirs = await watchSessionCookie(named.hub.watchUrl);
      expect((await raw(named.hub.url, 'GET', '/watch/api/state', { host: `hub.example.lan:${named.hub.port}`, cookie: theirs })).status).toBe(200);
      expect((await raw(named.hub.url, 'GET', '/watch/api/state', { host: 'other.example.lan', cookie: theirs })).status).toBe(403);
    } finally {
      await named.close();
    }
  });

  it('refuses another Origin, reading or writing, even with the session', async () => {
    const cookie = await watchSessionCookie(t.hub.watchUrl);
    for (const origin of ['http://rebound.example', `http://rebound.example:${t.hub.port}`, 'null', 'file://', 'https://evil.test']) {
      expect([origin, (await raw(t.hub.url, 'GET', '/watch/api/state', { origin, cookie })).status]).toEqual([origin, 403]);
      const w = await raw(t.hub.url, 'POST', '/watch/api/posts', { ...WRITE, origin, cookie }, JSON.stringify({ content: 'cross-origin' }));
      expect([origin, w.status]).toEqual([origin, 403]);
    }
    expect(await postCount()).toBe(0);
    const same = await raw(t.hub.url, 'POST', '/watch/api/posts', { ...WRITE, origin: t.hub.url, cookie }, JSON.stringify({ content: 'same origin' }));
    expect(same.status).toBe(201);
  });
});

describe('security headers', () => {
  it('every watch answer forbids framing and sniffing and carries a CSP limited to the hub itself', async () => {
    for (const path of ['/', '/watch/app.js', '/watch/style.css', '/watch/session', '/watch/api/state', '/watch/events', '/watch/api/nope']) {
      const r = await raw(t.hub.url, 'GET', path);
      expect([path, r.headers['x-frame-options'], r.headers['x-content-type-options']]).toEqual([path, 'DENY', 'nosniff']);
      const csp = String(r.headers['content-security-policy']);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
    }
  });
});

describe('the operator session', () => {
  it('GET / hands out none; the operator link gives an HttpOnly, SameSite=Strict cookie; reads, the event stream and writes need it', async () => {
    const page = await raw(t.hub.url, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers['set-cookie']).toBeUndefined();
    for (const path of ['/watch/api/state', '/watch/api/feed', '/watch/api/fleet', '/watch/events']) expect([path, (await raw(t.hub.url, 'GET', path)).status]).toEqual([path, 401]);
    const body = JSON.stringify({ content: 'from a local process without the token' });
    expect((await raw(t.hub.url, 'POST', '/watch/api/posts', WRITE, body)).status).toBe(401);
    expect((await raw(t.hub.url, 'POST', '/watch/api/agents/bob/pause', WRITE, '{}')).status).toBe(401);
    expect((await raw(t.hub.url, 'GET', '/?token=wrong')).status).toBe(401);
    // The page asks whether it has a session before showing anything (the sign-in form when not).
    expect(JSON.parse((await raw(t.hub.url, 'GET', '/watch/session')).text)).toEqual({ signed_in: false });

    expect(t.hub.watchUrl).toBe(`${t.hub.url}/?token=${t.hub.watchToken}`);
    const link = await raw(t.hub.url, 'GET', `/?token=${t.hub.watchToken}`);
    expect(link.status).toBe(303);
    expect(link.headers.location).toBe('/'); // the token leaves the address bar
    const setCookie = String(link.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toContain(t.hub.watchToken); // a session, not the token itself
    const cookie = cookieOf(link);
    const forged = `${cookie.split('=')[0]}=${'A'.repeat(22)}.${'B'.repeat(43)}`;
    expect((await raw(t.hub.url, 'POST', '/watch/api/posts', { ...WRITE, cookie: forged }, body)).status).toBe(401);
    expect((await raw(t.hub.url, 'GET', '/watch/api/state', { cookie: forged })).status).toBe(401);
    expect(await postCount()).toBe(0);
    expect(JSON.parse((await raw(t.hub.url, 'GET', '/watch/session', { cookie })).text)).toEqual({ signed_in: true });
    expect((await raw(t.hub.url, 'GET', '/watch/api/state', { cookie })).status).toBe(200);
    expect((await raw(t.hub.url, 'GET', '/watch/events', { cookie })).status).toBe(200);
    expect((await raw(t.hub.url, 'POST', '/watch/api/posts', { ...WRITE, cookie }, body)).status).toBe(201);
  });

  it("another hub's session does not open this one", async () => {
    const other = await startTestHub();
    try {
      const theirs = await watchSessionCookie(other.hub.watchUrl);
      const value = theirs.split('=')[1]!;
      const body = JSON.stringify({ content: 'borrowed session' });
      expect((await raw(t.hub.url, 'POST', '/watch/api/posts', { ...WRITE, cookie: theirs }, body)).status).toBe(401);
      expect((await raw(t.hub.url, 'POST', '/watch/api/posts', { ...WRITE, cookie: `warren_watch_${t.hub.port}=${value}` }, body)).status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('the token is kept in a file only its owner can read, and re-used by the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-watch-token-'));
    const file = watchTokenPath(join(dir, 'data', 'hub.sqlite'))!;
    expect(file).toBe(join(dir, 'data', 'watch-token'));
    expect(watchTokenPath(':memory:')).toBeUndefined();
    const links: string[] = [];
    const first = await startTestHub({ watchTokenFile: file, onWatchLink: (l) => links.push(l) });
    const cookie = await watchSessionCookie(first.hub.watchUrl);
    await first.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.hub.watchToken);
    // A file others could read is narrowed before use.
    chmodSync(file, 0o644);
    const second = await startTestHub({ watchTokenFile: file, port: first.hub.port, onWatchLink: (l) => links.push(l) });
    try {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(second.hub.watchToken).toBe(first.hub.watchToken);
      expect(links).toEqual([first.hub.watchUrl, second.hub.watchUrl]);
      // The session outlives the restart: the same token signs it.
      expect((await raw(second.hub.url, 'GET', '/watch/api/state', { cookie })).status).toBe(200);
    } finally {
      await second.close();
    }
    writeFileSync(file, 'short\n');
    await expect(startTestHub({ watchTokenFile: file })).rejects.toThrow(`watch token file ${file}: does not hold a token`);
  });
});

describe("a page opened to the network (watch: 'any')", () => {
  it('serves the page shell to anyone, but its data, events and writes only with the session the token gives', async () => {
    const open = await startTestHub({ watch: 'any' });
    try {
      const base = open.hub.url;
      expect((await raw(base, 'GET', '/')).status).toBe(200);
      for (const path of ['/watch/api/state', '/watch/api/feed', '/watch/events', '/?token=wrong']) expect([path, (await raw(base, 'GET', path)).status]).toEqual([path, 401]);
      expect((await raw(base, 'POST', '/watch/api/posts', WRITE, JSON.stringify({ content: 'no token' }))).status).toBe(401);
      const cookie = await watchSessionCookie(open.hub.watchUrl);
      expect((await raw(base, 'GET', '/watch/api/state', { cookie })).status).toBe(200);
      expect((await raw(base, 'GET', '/watch/events', { cookie })).status).toBe(200);
      expect((await raw(base, 'POST', '/watch/api/posts', { ...WRITE, cookie }, JSON.stringify({ content: 'with the token' }))).status).toBe(201);
    } finally {
      await open.close();
    }
  });
});

describe('the access rule', () => {
  const names = hubNames('0.0.0.0', ['Hub.Example.Lan']);
  const facts = (over: Partial<WatchRequestFacts>): WatchRequestFacts => ({
    kind: 'read',
    remoteAddress: '127.0.0.1',
    host: 'localhost:7070',
    origin: undefined,
    hasSession: false,
    hasPageHeader: false,
    ...over,
  });
  const status = (f: Partial<WatchRequestFacts>, policy: 'loopback' | 'any' | 'off' = 'loopback'): number => watchRefusal(facts(f), { policy, names })?.status ?? 200;

  it('reads host names with and without ports, IPv6 in brackets, and nothing malformed', () => {
    expect(['localhost:7070', '[::1]:80', 'HUB.example.lan', 'a b', 'x:y', 'user@evil.test', ''].map(hostName)).toEqual(['localhost', '::1', 'hub.example.lan', undefined, undefined, undefined, undefined]);
    expect([...names].sort()).toEqual(['127.0.0.1', '::1', 'hub.example.lan', 'localhost']);
  });

  it('decides by policy, address, Host, Origin, page header and session', () => {
    expect(status({ hasSession: true })).toBe(200);
    expect(status({})).toBe(401); // reading needs the session, on this machine too
    expect(status({ kind: 'page' })).toBe(200); // the page and its scripts are public code
    expect(status({ kind: 'asset' })).toBe(200);
    expect(status({ hasSession: true }, 'off')).toBe(404);
    expect(status({ remoteAddress: '10.0.0.5', hasSession: true })).toBe(403);
    expect(status({ remoteAddress: '10.0.0.5', host: '10.0.0.1:7070', hasSession: true }, 'any')).toBe(200); // an address is never a rebound name
    expect(status({ host: undefined, hasSession: true })).toBe(403);
    expect(status({ host: 'evil.test', hasSession: true })).toBe(403);
    expect(status({ origin: 'http://evil.test', hasSession: true })).toBe(403);
    expect(status({ origin: 'http://localhost:7070', hasSession: true })).toBe(200);
    expect(status({ kind: 'write', hasSession: true })).toBe(403); // no page header
    expect(status({ kind: 'write', hasPageHeader: true })).toBe(401); // no session
    expect(status({ kind: 'write', hasPageHeader: true, hasSession: true })).toBe(200);
    expect(status({ remoteAddress: '10.0.0.5', host: '10.0.0.1:7070', kind: 'page' }, 'any')).toBe(200);
    expect(status({ remoteAddress: '10.0.0.5', host: '10.0.0.1:7070' }, 'any')).toBe(401);
  });
});

describe('warren hub on its own', () => {
  it('keeps the operator token beside its database (0600) and prints the link once, on stderr only', { timeout: PROCESS_START_MS + 10_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-hub-token-'));
    const port = await freePort();
    const child = spawn(process.execPath, [resolve('bin/warren.js'), 'hub', '--port', String(port), '--db', join(dir, 'hub.sqlite')], {
      env: { ...process.env, WARREN_HUB_ADMIN_KEY: 'watch-hub-cli-admin', WARREN_LOG_LEVEL: 'debug' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const line = await waitFor('the operator link', () => stderr.split('\n').find((l) => l.startsWith('watch page (operator link')), PROCESS_START_MS);
      const token = readFileSync(join(dir, 'watch-token'), 'utf8').trim();
      expect(statSync(join(dir, 'watch-token')).mode & 0o777).toBe(0o600);
      expect(line).toMatch(new RegExp(`: http://127\\.0\\.0\\.1:${port}/\\?token=${token}$`));
      const cookie = await watchSessionCookie(`http://127.0.0.1:${port}/?token=${token}`);
      expect((await raw(`http://127.0.0.1:${port}`, 'GET', '/watch/api/state', { cookie })).status).toBe(200);
      expect(stdout).not.toContain(token); // the log (debug, every request) never carries it
      expect(stderr.split(token).length - 1).toBe(1);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
