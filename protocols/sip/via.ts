/**
 * Via (RFC 3261 §20.42, §18.2.1; RFC 3581 rport): parse and format one via-parm, and read
 * its branch, received, rport, maddr and ttl.
 *
 * Decisions:
 * - LWS is allowed around each '/' of sent-protocol and around ';' and '=' (RFC 4475 wsinv).
 * - `rport` with no value reads as `true` (the client asks for it); with a value as a number.
 * - ttl must be 0..255 and a port 0..65535, otherwise the Via is malformed.
 */
import { fail, formatParams, parseParams, Scanner } from './grammar.js';
import type { Via } from './types.js';
import { isValidHost } from './uri.js';

/** The RFC 3261 branch prefix (§8.1.1.7). */
export const MAGIC_COOKIE = 'z9hG4bK';

export function parseVia(text: string): Via {
  const s = new Scanner(text.trim());
  const name = s.token('Via protocol name');
  if (!s.eat('/')) fail('Via: expected "/" after the protocol name');
  const version = s.token('Via protocol version');
  if (!s.eat('/')) fail('Via: expected "/" after the protocol version');
  const transport = s.token('Via transport').toUpperCase();
  s.skipWs();
  const start = s.pos;
  while (!s.done && !/[;\s]/.test(s.peek() as string)) s.pos++;
  const sentBy = s.text.slice(start, s.pos);
  let host = sentBy;
  let port: number | undefined;
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(sentBy);
  if (!m) fail(`Via: bad sent-by "${sentBy.slice(0, 40)}"`);
  host = m[1] as string;
  if (m[2] !== undefined) {
    port = Number(m[2]);
    if (port > 65535) fail('Via: port out of range');
  }
  if (!isValidHost(host)) fail(`Via: bad host "${host.slice(0, 40)}"`);
  const params = parseParams(s, 'Via');
  const ttl = params['ttl'];
  if (ttl !== undefined && (ttl === null || !/^\d{1,3}$/.test(ttl) || Number(ttl) > 255)) fail('Via: ttl must be 0..255');
  const rport = params['rport'];
  if (typeof rport === 'string' && (!/^\d{1,5}$/.test(rport) || Number(rport) > 65535)) fail('Via: bad rport');
  const branch = params['branch'];
  if (branch === null) fail('Via: branch without a value');
  const via: Via = { protocol: `${name}/${version}`, transport, host: host.toLowerCase(), params };
  if (port !== undefined) via.port = port;
  return via;
}

export function formatVia(v: Via): string {
  return `${v.protocol}/${v.transport} ${v.host}${v.port === undefined ? '' : `:${v.port}`}${formatParams(v.params)}`;
}

export function branchOf(v: Via): string | undefined {
  const b = v.params['branch'];
  return typeof b === 'string' ? b : undefined;
}

/** True when the branch is RFC 3261 style: the magic cookie and something after it. */
export function isRfc3261Branch(branch: string | undefined): branch is string {
  return branch !== undefined && branch.startsWith(MAGIC_COOKIE) && branch.length > MAGIC_COOKIE.length;
}

/** `received` parameter (§18.2.1). */
export function receivedOf(v: Via): string | undefined {
  const r = v.params['received'];
  return typeof r === 'string' ? r : undefined;
}

/** `rport`: a number when filled in, true when requested with no value, undefined when absent. */
export function rportOf(v: Via): number | true | undefined {
  if (!('rport' in v.params)) return undefined;
  const r = v.params['rport'];
  return r === null || r === undefined ? true : Number(r);
}

export function maddrOf(v: Via): string | undefined {
  const m = v.params['maddr'];
  return typeof m === 'string' ? m : undefined;
}

export function ttlOf(v: Via): number | undefined {
  const t = v.params['ttl'];
  return typeof t === 'string' ? Number(t) : undefined;
}

/** sent-by as "host:port" with the default port of the transport filled in (for matching). */
export function sentByKey(v: Via): string {
  const port = v.port ?? (v.transport === 'TLS' ? 5061 : 5060);
  return `${v.host}:${port}`;
}

/**
 * Where a response to this Via goes (§18.2.2 and RFC 3581 §4): the `received` address (or
 * the sent-by host) and the `rport` value (or the sent-by port, or 5060).
 */
export function responseTarget(v: Via): { host: string; port: number } {
  const host = maddrOf(v) ?? receivedOf(v) ?? v.host;
  const rport = rportOf(v);
  const port = typeof rport === 'number' ? rport : v.port ?? (v.transport === 'TLS' ? 5061 : 5060);
  return { host, port };
}
