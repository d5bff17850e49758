/**
 * IP addresses and networks, the one home of their parsing for the media bridge's rules: every
 * address as 16 bytes (IPv4 as ::ffff:a.b.c.d, so an IPv4-mapped IPv6 address and its IPv4 form
 * are the same value), CIDR networks over those bytes. Pure: protocols/ may not use node:net.
 * Used by url-policy.ts (URL file sources) and sdp/address-policy.ts (SDP media addresses).
 */

export interface Cidr {
  /** 16 bytes (IPv4 as ::ffff:a.b.c.d) */
  bytes: Uint8Array;
  /** prefix length over the 16 bytes (an IPv4 /n is 96 + n) */
  prefix: number;
  text: string;
}

/** An IPv4 or IPv6 literal as 16 bytes (IPv4 as ::ffff:a.b.c.d); null when it is not one. */
export function parseIp(text: string): Uint8Array | null {
  const v4 = parseIpv4(text);
  if (v4) {
    const out = new Uint8Array(16);
    out[10] = 0xff;
    out[11] = 0xff;
    out.set(v4, 12);
    return out;
  }
  return parseIpv6(text);
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | null {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (s.includes('%')) return null; // zone ids: link-local by definition, and not for URLs
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return null;
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const words = (h: string): number[] | null => {
    if (h === '') return [];
    const out: number[] = [];
    const parts = h.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIpv4(p);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return null;
        out.push(parseInt(p, 16));
      }
    }
    return out;
  };
  const head = words(halves[0]!);
  const tail = halves.length === 2 ? words(halves[1]!) : [];
  if (!head || !tail) return null;
  const total = head.length + tail.length;
  if (halves.length === 1 ? total !== 8 : total > 7) return null;
  const all = [...head, ...new Array<number>(8 - total).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

/** `a.b.c.d/n` or `x::y/n` (a bare address is /32 or /128); throws naming the bad entry. */
export function parseCidr(text: string): Cidr {
  const [addr, len, extra] = text.trim().split('/');
  const bytes = parseIp(addr ?? '');
  const v4 = !!bytes && isMapped(bytes);
  if (!bytes || extra !== undefined) throw new Error(`${JSON.stringify(text)} is not a network (address/prefix, e.g. 10.1.0.0/16 or fd00::/8)`);
  const max = v4 ? 32 : 128;
  const n = len === undefined ? max : /^\d{1,3}$/.test(len) ? Number(len) : NaN;
  if (!(n >= 0 && n <= max)) throw new Error(`${JSON.stringify(text)}: the prefix length must be 0–${max}`);
  return { bytes, prefix: v4 ? 96 + n : n, text: text.trim() };
}

/** A setting's comma-separated CIDRs; throws naming the first bad one. */
export function parseCidrList(raw: string): Cidr[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseCidr);
}

export function inCidr(ip: Uint8Array, c: Cidr): boolean {
  let bits = c.prefix;
  for (let i = 0; i < 16 && bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i]! & mask) !== (c.bytes[i]! & mask)) return false;
  }
  return true;
}

/** An IPv4 address in its 16-byte form (::ffff:a.b.c.d). */
export function isMapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

