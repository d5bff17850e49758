/**
 * Which URLs a file endpoint may download (an SSRF surface: the bridge fetches what a client
 * names, from inside the operator's network). Pure: the rules, no I/O; the download
 * (actors/media-session/url-source.ts) asks these at every hop, for every resolved address.
 *
 * The rules:
 * - URL playback is off unless MEDIA_FILE_ORIGINS lists origins; a URL's origin (scheme, host,
 *   port; default ports folded) must be one of them exactly. Only http and https; no user name or
 *   password in the URL (they would go to whoever the host turns out to be).
 * - Every address a host name resolves to must be a public unicast address, or inside a network
 *   of MEDIA_FILE_NETWORKS. Loopback, private (RFC 1918, ULA), shared (CGNAT), link-local (the
 *   cloud metadata address 169.254.169.254 among them), unspecified, multicast, broadcast and
 *   reserved addresses are refused otherwise; an IPv4-mapped IPv6 address is judged as its IPv4
 *   address. A name with one refused address among good ones is refused (the connection could go
 *   to any of them).
 * - A redirect is a new URL and passes the same checks; at most MAX_REDIRECTS; https → http never.
 * Messages name the host and the rule, never the path or query (they may carry secrets).
 */

import { inCidr, parseCidr, parseIp, type Cidr } from './ip.js';

export const MAX_REDIRECTS = 5;

export interface UrlPolicy {
  /** Allowed origins (`scheme://host[:port]`, lowercase, default ports omitted). Empty: URL playback off. */
  origins: readonly string[];
  /** Networks where addresses that are not public unicast are allowed anyway. */
  networks: readonly Cidr[];
}


export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** Special ranges, most specific first; an address in none of them is public unicast. */
const SPECIAL: Array<[string, string]> = [
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['127.0.0.0/8', 'loopback'],
  ['10.0.0.0/8', 'private (RFC 1918)'],
  ['172.16.0.0/12', 'private (RFC 1918)'],
  ['192.168.0.0/16', 'private (RFC 1918)'],
  ['100.64.0.0/10', 'shared address space (carrier-grade NAT)'],
  ['169.254.0.0/16', 'link-local (cloud metadata services live here)'],
  ['192.0.0.0/24', 'reserved for protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b::/96', 'NAT64 (reaches IPv4 addresses indirectly)'],
  ['100::/64', 'discard-only'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4 (reaches IPv4 addresses indirectly)'],
  ['fc00::/7', 'private (unique local)'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
  ['::/96', 'IPv4-compatible (deprecated)'],
];
const SPECIAL_CIDRS = SPECIAL.map(([c, why]) => ({ cidr: parseCidr(c), why }));

/** Why an address is not public unicast (null: it is). */
export function specialRange(ip: Uint8Array): string | null {
  for (const { cidr, why } of SPECIAL_CIDRS) if (inCidr(ip, cidr)) return why;
  return null;
}

/** May the bridge connect to `address` (a resolved literal)? null: yes; else why not. */
export function refuseAddress(address: string, policy: UrlPolicy): string | null {
  const ip = parseIp(address);
  if (!ip) return `${address} is not an IP address`;
  if (policy.networks.some((n) => inCidr(ip, n))) return null;
  const why = specialRange(ip);
  return why ? `${address} is ${why}, and not in MEDIA_FILE_NETWORKS` : null;
}

// ---- URLs -----------------------------------------------------------------------------------

/** The origins setting: comma-separated http(s) origins, normalised; throws naming the bad entry. */
export function parseOrigins(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((o) => {
      let u: URL;
      try {
        u = new URL(o);
      } catch {
        throw new Error(`${JSON.stringify(o)} is not an origin (http(s)://host[:port])`);
      }
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.pathname !== '/' || u.search || u.hash || o.includes('@')) {
        throw new Error(`${JSON.stringify(o)} is not an origin (http(s)://host[:port], nothing after it)`);
      }
      return u.origin;
    });
}

/** A URL as a client gave it: may the bridge start fetching it? (its addresses are checked after the lookup) */
export function checkUrl(raw: string, policy: UrlPolicy): Checked<URL> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { ok: false, message: 'source is not a valid URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { ok: false, message: `source scheme ${u.protocol} is not allowed (http and https only)` };
  if (u.username || u.password) return { ok: false, message: `source ${u.protocol}//…@${u.host}: a user name or password in the URL is refused` };
  if (policy.origins.length === 0) return { ok: false, message: 'URL playback is off: MEDIA_FILE_ORIGINS lists no origin' };
  if (!policy.origins.includes(u.origin)) return { ok: false, message: `origin ${u.origin} is not in MEDIA_FILE_ORIGINS` };
  return { ok: true, value: u };
}

/** A redirect from `from` to `location` (hop `hop`, 1-based): the next URL, or why not. */
export function checkRedirect(from: URL, location: string | undefined, hop: number, policy: UrlPolicy): Checked<URL> {
  if (hop > MAX_REDIRECTS) return { ok: false, message: `more than ${MAX_REDIRECTS} redirects` };
  if (!location) return { ok: false, message: `a redirect from ${from.origin} without a Location` };
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return { ok: false, message: `a redirect from ${from.origin} to an invalid URL` };
  }
  if (from.protocol === 'https:' && next.protocol === 'http:') return { ok: false, message: `a redirect from ${from.origin} to ${next.origin}: https → http is refused` };
  const c = checkUrl(next.href, policy);
  return c.ok ? c : { ok: false, message: `a redirect from ${from.origin}: ${c.message}` };
}

/** The host to look up for a URL (brackets of an IPv6 literal removed). */
export function hostOf(u: URL): string {
  return u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
}
