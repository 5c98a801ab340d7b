// Who may use the watch page, and how. It has no key of its own and writes as humans, so:
// - by default only this machine may open it (`loopback`); a hub published on a network opts in with `any`;
// - the Host (and Origin, when sent) must be a name of this hub: a page on another site whose name was pointed
//   at 127.0.0.1 (DNS rebinding) sends its own name and is refused;
// - the page itself and its scripts are public code and carry no data; everything else (reading, the event
//   stream, writing) needs the operator's session, given only for the operator token (printed at start, kept in
//   a file only the daemon's user can read: operator-token.ts). Any local process, an agent's user among them,
//   can reach a loopback port, so being on this machine is not enough. Writing also needs the page's header.
import { BlockList, isIP } from 'node:net';
import { HttpError } from '../http-error.ts';

export type WatchPolicy = 'loopback' | 'any' | 'off';

/** `asset`: the page's CSS and script; `page`: the HTML (both public code); `read`: data and the event stream. */
export type WatchRequestKind = 'asset' | 'page' | 'read' | 'write';

export interface WatchRequestFacts {
  kind: WatchRequestKind;
  remoteAddress: string | undefined;
  host: string | undefined;
  origin: string | undefined;
  /** A valid session cookie (session.ts). */
  hasSession: boolean;
  /** The `X-Warren-Watch: 1` header the page's own script sends (a cross-site form cannot). */
  hasPageHeader: boolean;
}

export interface WatchRules {
  policy: WatchPolicy;
  /** Host names of this hub, lowercase, without port (see `hubNames`). */
  names: ReadonlySet<string>;
  /** Networks whose addresses count as this machine (e.g. a container bridge the host's browser comes through). */
  trusted?: BlockList;
}

/** `10.0.0.0/8`-style networks as a BlockList; throws on a malformed one. */
export function trustedNetworks(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split('/');
    const family = isIP(net ?? '');
    const prefix = Number(bits);
    if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) throw new Error(`not a network: "${cidr}" (expected an address/prefix such as 172.16.0.0/12)`);
    list.addSubnet(net!, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

function inTrusted(address: string | undefined, trusted: BlockList | undefined): boolean {
  if (!address || !trusted) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  const family = isIP(v4);
  return family !== 0 && trusted.check(v4, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** The names a browser may use for this hub: loopback names, the bound host, and any configured ones. */
export function hubNames(boundHost: string | undefined, extra: readonly string[] = []): Set<string> {
  const names = new Set(LOOPBACK_NAMES);
  for (const n of [boundHost, ...extra]) if (n && n !== '0.0.0.0' && n !== '::') names.add(n.toLowerCase().replace(/^\[|\]$/g, ''));
  return names;
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** `name`, `name:port`, `[v6]`, `[v6]:port` → the bare lowercase name; undefined when malformed. */
export function hostName(hostHeader: string): string | undefined {
  const m = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9.-]+))(?::\d{1,5})?$/i.exec(hostHeader.trim());
  return m ? (m[1] ?? m[2])!.toLowerCase() : undefined;
}

/**
 * A name this hub answers to. An IP literal is always one: a browser that sends it reached the hub by that
 * address, so the page's origin is the hub itself (rebinding needs a name the attacker controls).
 */
function knownHost(name: string | undefined, names: ReadonlySet<string>): boolean {
  return name !== undefined && (names.has(name) || isIP(name) !== 0);
}

function originHost(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? hostName(u.host) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a request without the operator session is refused (401: the page then shows its sign-in form). */
export const NEEDS_TOKEN = "the watch page needs the operator token: open the link warren printed at start, or paste the token from the hub's watch-token file";

/** Undefined when the request may go ahead; otherwise the refusal to send. */
export function watchRefusal(f: WatchRequestFacts, rules: WatchRules): HttpError | undefined {
  if (rules.policy === 'off') return new HttpError(404, 'the watch page is turned off on this hub');
  if (rules.policy === 'loopback' && !isLoopback(f.remoteAddress) && !inTrusted(f.remoteAddress, rules.trusted)) {
    return new HttpError(403, 'the watch page answers only on this machine (start the hub with --watch any to open it)');
  }
  if (!knownHost(f.host === undefined ? undefined : hostName(f.host), rules.names)) return new HttpError(403, `Host ${JSON.stringify(f.host ?? '')} is not a name of this hub`);
  if (f.origin !== undefined && !knownHost(originHost(f.origin), rules.names)) return new HttpError(403, `Origin ${JSON.stringify(f.origin)} is not this hub`);
  if (f.kind === 'asset' || f.kind === 'page') return undefined;
  if (f.kind === 'write' && !f.hasPageHeader) return new HttpError(403, 'watch page writes need the X-Warren-Watch header');
  if (!f.hasSession) return new HttpError(401, NEEDS_TOKEN);
  return undefined;
}
