// The ports a warren process will listen on, checked before anything starts: a clash is reported naming the
// setting and the variable that choose the port, not as a bare EADDRINUSE after the hub already started and the
// scheduler took leadership.
import { createServer } from 'node:net';
import type { WarrenConfig } from '../services/config.ts';

/** A port this process will listen on, and what a person changes to move it. */
export interface PlannedPort {
  /** What listens there, e.g. `the embedded hub`. */
  what: string;
  host: string;
  port: number;
  /** Where the port is chosen, e.g. `hub.port in warren.yaml or WARREN_HUB_PORT`. */
  setting: string;
}

export class PortInUseError extends Error {
  readonly planned: PlannedPort;
  constructor(planned: PlannedPort, problem: string, advice: string) {
    super(`port ${planned.port} on ${planned.host} ${problem} (${planned.what}: ${planned.setting}; 0 picks a free port). ${advice}`);
    this.name = 'PortInUseError';
    this.planned = planned;
  }
}

/**
 * Fails with a PortInUseError for the first planned port that is taken, or that another planned port also wants.
 * Port 0 (any free port) never clashes.
 */
export async function assertPortsFree(planned: readonly PlannedPort[]): Promise<void> {
  const fixed = planned.filter((p) => p.port !== 0);
  for (const [i, p] of fixed.entries()) {
    const twin = fixed.slice(0, i).find((q) => q.port === p.port);
    if (twin) throw new PortInUseError(p, 'is already in use', `${twin.what} wants it too (${twin.setting}).`);
  }
  for (const p of fixed) {
    const err = await tryListen(p.host, p.port);
    if (err?.code === 'EADDRINUSE') throw new PortInUseError(p, 'is already in use', 'Another program (perhaps another warren) holds it: stop it, or choose another port.');
    if (err?.code === 'EACCES') throw new PortInUseError(p, 'may not be used by this user', 'Choose a port above 1023.');
    // Anything else (an address not on this machine) is left for the real listen to report.
  }
}

/** Listens and closes at once; resolves the listen error, or undefined when the port was free. */
function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(undefined)));
  });
}

/** The fixed ports `warren start` listens on (the hub gateway for CLI agents takes any free loopback port). */
export function daemonPorts(config: WarrenConfig): PlannedPort[] {
  const out: PlannedPort[] = [];
  if (config.hub.embedded) out.push({ what: 'the embedded hub', host: config.hub.host, port: config.hub.port, setting: 'hub.port in warren.yaml or WARREN_HUB_PORT' });
  // `auto` opens only when an agent needs it (checked then): a daemon whose agents need none never clashes on it.
  if (config.ingress.enabled === true) out.push(ingressPort(config));
  if (config.metrics.enabled) out.push({ what: 'health and metrics', host: config.metrics.host, port: config.metrics.port, setting: 'metrics.port in warren.yaml or WARREN_METRICS_PORT' });
  return out;
}

/** The port `warren hub` listens on. */
export function hubPort(host: string, port: number): PlannedPort {
  return { what: 'the hub', host, port, setting: '--port, hub.port in warren.yaml or WARREN_HUB_PORT' };
}

/** The ingress listener's port, as a person moves it. */
export function ingressPort(config: WarrenConfig): PlannedPort {
  return { what: 'the ingress (webhooks, A2A)', host: config.ingress.host, port: config.ingress.port, setting: 'ingress.port in warren.yaml or WARREN_INGRESS_PORT' };
}

/** A listen error as the PortInUseError `assertPortsFree` would have given, when it is one of those. */
export function portErrorOf(planned: PlannedPort, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return new PortInUseError(planned, 'is already in use', 'Another program (perhaps another warren) holds it: stop it, or choose another port.');
  if (code === 'EACCES') return new PortInUseError(planned, 'may not be used by this user', 'Choose a port above 1023.');
  return err;
}
