/**
 * Which remote media addresses an SDP may name (issue 16): broadcast, multicast, unspecified
 * ("this network", 0.0.0.0/8) and link-local (169.254.0.0/16, the cloud metadata address
 * 169.254.169.254 included; fe80::/10) are refused unless a network of the allow-list
 * (MEDIA_ALLOWED_NETWORKS) contains them. The one home of that rule: select.ts (offers and
 * re-INVITEs) and offer.ts (answers) call `refusedAddress` through `checkAddress`.
 *
 * Decision: the exact legacy hold address (`c=IN IP4 0.0.0.0`, or `::`) stays accepted as hold;
 * the bridge never sends RTP or RTCP to it (rtp-endpoint.ts transmit), so it is no target.
 * Pure: own IPv4/IPv6 parsing (protocols/ may not import node:net).
 */

/** An address as 4 (IPv4) or 16 (IPv6) bytes. */
type Bytes = Uint8Array;

export interface Network {
  bytes: Bytes;
  prefix: number;
  text: string;
}

export function parseIPv4(s: string): Bytes | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

export function parseIPv6(s: string): Bytes | null {
  if (s.includes('%')) return null; // zone ids name an interface, not a peer
  let tail: Bytes | null = null;
  let text = s;
  const lastColon = s.lastIndexOf(':');
  if (lastColon >= 0 && s.slice(lastColon + 1).includes('.')) {
    tail = parseIPv4(s.slice(lastColon + 1));
    if (!tail) return null;
    text = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const group = (h: string) => (h === '' ? [] : h.split(':'));
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  const groups = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - rest.length).fill('0'), ...rest] : head;
  if (groups.length !== 8 || (halves.length === 2 && head.length + rest.length > 7)) return null;
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = groups[i]!;
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    const n = parseInt(g, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  }
  if (tail) out.set(tail, 12);
  return out;
}

function parseIp(s: string): Bytes | null {
  return s.includes(':') ? parseIPv6(s) : parseIPv4(s);
}

/** `a.b.c.d/n`, `x::y/n`, or a bare address (one host). */
export function parseNetwork(text: string): { ok: true; value: Network } | { ok: false; error: string } {
  const [addr, len, extra] = text.trim().split('/');
  const bytes = parseIp(addr ?? '');
  if (!bytes || extra !== undefined) return { ok: false, error: `${text}: not an IP address or CIDR network` };
  const max = bytes.length * 8;
  const prefix = len === undefined ? max : /^[0-9]{1,3}$/.test(len) ? Number(len) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return { ok: false, error: `${text}: prefix length must be 0 to ${max}` };
  return { ok: true, value: { bytes, prefix, text: text.trim() } };
}

/** The allow-list setting's value (comma-separated) parsed, or the first bad entry. */
export function parseNetworks(list: string): { ok: true; value: Network[] } | { ok: false; error: string } {
  const out: Network[] = [];
  for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    const n = parseNetwork(item);
    if (!n.ok) return n;
    out.push(n.value);
  }
  return { ok: true, value: out };
}

function inNetwork(bytes: Bytes, n: Network): boolean {
  if (bytes.length !== n.bytes.length) return false;
  for (let bit = 0; bit < n.prefix; bit += 8) {
    const take = Math.min(8, n.prefix - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[bit / 8]! & mask) !== (n.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

/** Why an address may not be a media target by default, or null. */
export function specialKind(address: string): 'broadcast' | 'multicast' | 'unspecified' | 'link-local' | null {
  let b = parseIp(address);
  if (!b) return null;
  if (b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff) b = b.slice(12); // IPv4-mapped
  if (b.length === 4) {
    if (b.every((x) => x === 255)) return 'broadcast';
    if (b[0]! >= 224 && b[0]! <= 239) return 'multicast';
    if (b[0] === 0) return 'unspecified';
    if (b[0] === 169 && b[1] === 254) return 'link-local';
    return null;
  }
  if (b[0] === 0xff) return 'multicast';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'link-local';
  if (b.every((x) => x === 0)) return 'unspecified';
  return null;
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
  if (allowed.some((n) => inNetwork(b, n))) return null;
  return `${address} is a ${kind} address; the bridge sends media there only if MEDIA_ALLOWED_NETWORKS contains it`;
}
