// The daemon's ingress listener: opens only when wanted (or always when enabled), routes by prefix, answers what
// no route takes with a 404 naming what it serves, survives a route's failure, and a taken port is one clear error.
import { createServer } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Ingress, answer, type IngressRoute } from '../daemon/ingress/ingress-server.ts';
import { ingressPort, portErrorOf, PortInUseError } from '../daemon/port-check.ts';
import { loadWarrenConfig, WarrenConfigSchema } from '../services/config.ts';
import type { AgentDefinition } from '../store/definition.ts';

const logger = pino({ level: 'silent' });
const open: Ingress[] = [];
afterEach(async () => {
  for (const i of open.splice(0)) await i.close();
});

const hooks = (wanted: boolean): IngressRoute => ({
  name: 'hooks',
  prefix: '/hooks/',
  wanted: () => wanted,
  handle: (_req, res, rest) => answer(res, 202, { rest }),
});
const broken: IngressRoute = { name: 'broken', prefix: '/broken/', wanted: () => true, handle: () => Promise.reject(new Error('boom')) };

function ingress(routes: IngressRoute[], enabled: boolean | 'auto' = 'auto'): Ingress {
  const i = new Ingress({ host: '127.0.0.1', port: 0, enabled, routes, logger });
  open.push(i);
  return i;
}

const none: AgentDefinition[] = [];

describe('Ingress', () => {
  it.each([
    { enabled: 'auto' as const, wanted: false, opens: false },
    { enabled: 'auto' as const, wanted: true, opens: true },
    { enabled: true, wanted: false, opens: true },
    { enabled: false, wanted: true, opens: false },
  ])('enabled $enabled with a route wanted=$wanted opens: $opens', async ({ enabled, wanted, opens }) => {
    const url = await ingress([hooks(wanted)], enabled).open(none);
    expect(url !== undefined).toBe(opens);
  });

  it('routes by prefix, 404s the rest naming what it serves, and answers 500 for a failing route without dying', async () => {
    const url = (await ingress([hooks(true), broken]).open(none))!;
    const r1 = await fetch(`${url}/hooks/ada/deploys?x=1`, { method: 'POST' });
    expect(r1.status).toBe(202);
    expect(await r1.json()).toEqual({ rest: 'ada/deploys' });
    const r2 = await fetch(`${url}/elsewhere`);
    expect(r2.status).toBe(404);
    expect(((await r2.json()) as { detail: string }).detail).toMatch(/\/hooks\/…, \/broken\/…/);
    const r3 = await fetch(`${url}/broken/x`);
    expect(r3.status).toBe(500);
    expect((await fetch(`${url}/hooks/again`, { method: 'POST' })).status).toBe(202);
  });

  it('opening twice gives the same listener', async () => {
    const i = ingress([hooks(true)]);
    const [a, b] = await Promise.all([i.open(none), i.open(none)]);
    expect(a).toBe(b);
    expect(i.url).toBe(a);
  });

  it('a taken port is a PortInUseError naming the setting and the variable', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const i = new Ingress({ host: '127.0.0.1', port, enabled: true, routes: [], logger });
      const err = await i.open(none).catch((e: unknown) => e);
      const config = WarrenConfigSchema.parse({ ingress: { port } });
      const mapped = portErrorOf(ingressPort(config), err);
      expect(mapped).toBeInstanceOf(PortInUseError);
      expect(String(mapped)).toMatch(/ingress.port in warren.yaml or WARREN_INGRESS_PORT/);
    } finally {
      taken.close();
    }
  });
});

describe('ingress settings', () => {
  it('defaults to loopback 7071, auto; WARREN_INGRESS_PORT and _HOST override; a bad port is named', () => {
    const c = loadWarrenConfig(undefined, {});
    expect(c.ingress).toEqual({ enabled: 'auto', host: '127.0.0.1', port: 7071 });
    const e = loadWarrenConfig(undefined, { WARREN_INGRESS_PORT: '0', WARREN_INGRESS_HOST: '0.0.0.0' });
    expect(e.ingress).toMatchObject({ host: '0.0.0.0', port: 0 });
    expect(() => loadWarrenConfig(undefined, { WARREN_INGRESS_PORT: 'seventy' })).toThrow(/WARREN_INGRESS_PORT must be a port number/);
  });
});
