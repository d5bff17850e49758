/**
 * Which remote media addresses an SDP may name (issue 16): broadcast, multicast, unspecified
 * ("this network", 0.0.0.0/8) and link-local (169.254.0.0/16, the cloud metadata address
 * 169.254.169.254 included; fe80::/10) are refused unless a network of the allow-list
 * (MEDIA_ALLOWED_NETWORKS) contains them. The one home of that rule: select.ts (offers and
 * re-INVITEs) and offer.ts (answers) call `refusedAddress` through `checkAddress`.
 *
 * Decision: the exact legacy hold address (`c=IN IP4 0.0.0.0`, or `::`) stays accepted as hold;
 * the bridge never sends RTP or RTCP to it (rtp-endpoint.ts transmit), so it is no target.
 * Pure; addresses and networks are parsed by ../ip.ts (the bridge's one home for that).
 */
import { inCidr, parseCidr, parseCidrList, parseIp, type Cidr } from '../ip.js';

export type Network = Cidr;

/** An IPv6 literal as 16 bytes, or null (IPv4 literals: ip.ts parseIp). */
export function parseIPv6(s: string): Uint8Array | null {
  return s.includes(':') ? parseIp(s) : null;
}

/** `a.b.c.d/n`, `x::y/n`, or a bare address (one host). */
export function parseNetwork(text: string): { ok: true; value: Network } | { ok: false; error: string } {
  try {
    return { ok: true, value: parseCidr(text) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** The allow-list setting's value (comma-separated) parsed, or the first bad entry. */
export function parseNetworks(list: string): { ok: true; value: Network[] } | { ok: false; error: string } {
  try {
    return { ok: true, value: parseCidrList(list) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

const KINDS: Array<[Cidr, 'broadcast' | 'multicast' | 'unspecified' | 'link-local']> = [
  [parseCidr('255.255.255.255/32'), 'broadcast'],
  [parseCidr('224.0.0.0/4'), 'multicast'],
  [parseCidr('0.0.0.0/8'), 'unspecified'],
  [parseCidr('169.254.0.0/16'), 'link-local'],
  [parseCidr('ff00::/8'), 'multicast'],
  [parseCidr('fe80::/10'), 'link-local'],
  [parseCidr('::/128'), 'unspecified'],
];

/** Why an address may not be a media target by default, or null. */
export function specialKind(address: string): 'broadcast' | 'multicast' | 'unspecified' | 'link-local' | null {
  const b = parseIp(address);
  if (!b) return null;
  return KINDS.find(([c]) => inCidr(b, c))?.[1] ?? null;
}

/** The legacy hold address (`0.0.0.0` or `::`, exactly as written): accepted as hold, never sent to. */
export function isHoldAddress(address: string): boolean {
  return address === '0.0.0.0' || /^[0:]+$/.test(address);
}

/** null when the bridge may send media to `address`, else why not (naming the setting that would allow it). */
export function refusedAddress(address: string, allowed: readonly Network[]): string | null {
  if (isHoldAddress(address)) return null;
  const kind = specialKind(address);
  if (kind === null) return null;
  const b = parseIp(address)!;
  if (allowed.some((n) => inCidr(b, n))) return null;
  return `${address} is a ${kind} address; the bridge sends media there only if MEDIA_ALLOWED_NETWORKS contains it`;
}
