/**
 * SIP and SIPS URIs (RFC 3261 §19.1): parse, format and compare, with %-escapes decoded once
 * (never recursively: RFC 4475 esc01, "value%41" stays "value%41" after one decode).
 *
 * Decisions:
 * - The user part runs to the first '@' (an unescaped '@' cannot occur in userinfo), the
 *   password from the first ':' of userinfo; both may contain ';', '?', '/' (RFC 4475 intmeth,
 *   semiuri).
 * - Any whitespace, '<' or '>', or a malformed %-escape makes the URI invalid.
 * - Other schemes (tel:, http:, soap.beep:, ...) parse as opaque `{scheme, opaque}`; whether
 *   they are acceptable is an application decision (416, RFC 4475 unkscm/novelsc).
 * - Comparison follows §19.1.4: user and password case-sensitive (after decoding), host
 *   case-insensitive, parameters compared only when both sides carry them except user, ttl,
 *   method and maddr (and transport) that must match when either side has them, headers all.
 */
import { fail } from './grammar.js';
import type { OtherUri, SipUri, Uri } from './types.js';

const USER_CHARS = /^[A-Za-z0-9\-_.!~*'()&=+$,;?/%]*$/;
const PASSWORD_CHARS = /^[A-Za-z0-9\-_.!~*'()&=+$,%]*$/;
const PARAM_CHARS = /^[A-Za-z0-9\-_.!~*'()[\]/:&+$%]+$/;
const HEADER_CHARS = /^[A-Za-z0-9\-_.!~*'()[\]/?:+$%]*$/;
const HOSTNAME = /^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?\.?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^\[[0-9A-Fa-f:.]+\]$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+\-.]*$/;

/** Decode %HH escapes once; a '%' not followed by two hex digits is an error. */
export function unescape(s: string, what: string): string {
  if (!s.includes('%')) return s;
  const bytes: number[] = [];
  const raw = Buffer.from(s, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i] as number;
    if (b === 0x25) {
      const hex = raw.subarray(i + 1, i + 3).toString('latin1');
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) fail(`${what}: bad %-escape`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Escape every character of `s` that is not in `keep` (a single-character class). */
function escape(s: string, keep: RegExp): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && keep.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const USER_KEEP = /[A-Za-z0-9\-_.!~*'()&=+$,;?/]/;
const PASSWORD_KEEP = /[A-Za-z0-9\-_.!~*'()&=+$,]/;
const PARAM_KEEP = /[A-Za-z0-9\-_.!~*'()[\]/:&+$]/;
const HEADER_KEEP = /[A-Za-z0-9\-_.!~*'()[\]/?:+$]/;

export function isValidHost(host: string): boolean {
  return IPV4.test(host) || IPV6.test(host) || HOSTNAME.test(host);
}

/** Parse any absolute URI; SIP/SIPS ones fully. Throws SyntaxError when malformed. */
export function parseUri(text: string, what = 'URI'): Uri {
  if (/[\s<>"]/.test(text)) fail(`${what}: whitespace, quote or angle bracket in "${text.slice(0, 40)}"`);
  const colon = text.indexOf(':');
  if (colon <= 0) fail(`${what}: no scheme in "${text.slice(0, 40)}"`);
  const scheme = text.slice(0, colon).toLowerCase();
  if (!SCHEME.test(scheme)) fail(`${what}: bad scheme "${scheme}"`);
  if (scheme !== 'sip' && scheme !== 'sips') {
    const opaque = text.slice(colon + 1);
    if (opaque.length === 0) fail(`${what}: empty ${scheme} URI`);
    return { scheme, opaque } satisfies OtherUri;
  }
  return parseSipUri(scheme, text.slice(colon + 1), what);
}

function parseSipUri(scheme: 'sip' | 'sips', rest: string, what: string): SipUri {
  const uri: SipUri = { scheme, host: '', params: {}, headers: [] };
  const at = rest.indexOf('@');
  let hostPart = rest;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    hostPart = rest.slice(at + 1);
    const pc = userinfo.indexOf(':');
    const user = pc >= 0 ? userinfo.slice(0, pc) : userinfo;
    if (user.length === 0 || !USER_CHARS.test(user)) fail(`${what}: bad user part`);
    uri.user = unescape(user, `${what} user`);
    if (pc >= 0) {
      const password = userinfo.slice(pc + 1);
      if (!PASSWORD_CHARS.test(password)) fail(`${what}: bad password`);
      uri.password = unescape(password, `${what} password`);
    }
  }
  const q = hostPart.indexOf('?');
  const headersPart = q >= 0 ? hostPart.slice(q + 1) : undefined;
  if (q >= 0) hostPart = hostPart.slice(0, q);
  const [hostport = '', ...params] = hostPart.split(';');
  let host = hostport;
  if (hostport.startsWith('[')) {
    const close = hostport.indexOf(']');
    if (close < 0) fail(`${what}: unterminated IPv6 reference`);
    host = hostport.slice(0, close + 1);
    const after = hostport.slice(close + 1);
    if (after.length > 0) {
      if (!after.startsWith(':')) fail(`${what}: junk after IPv6 reference`);
      uri.port = parsePort(after.slice(1), what);
    }
  } else {
    const pc = hostport.indexOf(':');
    if (pc >= 0) {
      host = hostport.slice(0, pc);
      uri.port = parsePort(hostport.slice(pc + 1), what);
    }
  }
  if (!isValidHost(host)) fail(`${what}: bad host "${host.slice(0, 40)}"`);
  uri.host = host.toLowerCase();
  for (const p of params) {
    const eq = p.indexOf('=');
    const name = eq >= 0 ? p.slice(0, eq) : p;
    const value = eq >= 0 ? p.slice(eq + 1) : null;
    if (!PARAM_CHARS.test(name) || (value !== null && !PARAM_CHARS.test(value))) fail(`${what}: bad uri-parameter "${p.slice(0, 30)}"`);
    uri.params[unescape(name, what).toLowerCase()] = value === null ? null : unescape(value, what);
  }
  if (headersPart !== undefined) {
    for (const h of headersPart.split('&')) {
      const eq = h.indexOf('=');
      if (eq <= 0 || !HEADER_CHARS.test(h.slice(0, eq)) || !HEADER_CHARS.test(h.slice(eq + 1))) fail(`${what}: bad URI header "${h.slice(0, 30)}"`);
      uri.headers.push([unescape(h.slice(0, eq), what), unescape(h.slice(eq + 1), what)]);
    }
  }
  return uri;
}

function parsePort(p: string, what: string): number {
  if (!/^\d{1,5}$/.test(p) || Number(p) > 65535) fail(`${what}: bad port "${p}"`);
  return Number(p);
}

export function formatUri(u: Uri): string {
  if (!('host' in u)) return `${u.scheme}:${u.opaque}`;
  let out = `${u.scheme}:`;
  if (u.user !== undefined) {
    out += escape(u.user, USER_KEEP);
    if (u.password !== undefined) out += `:${escape(u.password, PASSWORD_KEEP)}`;
    out += '@';
  }
  out += u.host;
  if (u.port !== undefined) out += `:${u.port}`;
  for (const [k, v] of Object.entries(u.params)) out += `;${escape(k, PARAM_KEEP)}${v === null ? '' : `=${escape(v, PARAM_KEEP)}`}`;
  if (u.headers.length > 0) out += `?${u.headers.map(([k, v]) => `${escape(k, HEADER_KEEP)}=${escape(v, HEADER_KEEP)}`).join('&')}`;
  return out;
}

const MUST_MATCH = ['user', 'ttl', 'method', 'maddr', 'transport'];

/** URI equivalence, RFC 3261 §19.1.4. */
export function uriEquals(a: Uri, b: Uri): boolean {
  if (a.scheme !== b.scheme) return false;
  if (!('host' in a) || !('host' in b)) return 'opaque' in a && 'opaque' in b && a.opaque === b.opaque;
  if (a.user !== b.user || a.password !== b.password) return false;
  if (a.host.toLowerCase() !== b.host.toLowerCase() || a.port !== b.port) return false;
  for (const name of new Set([...Object.keys(a.params), ...Object.keys(b.params)])) {
    const inA = name in a.params;
    const inB = name in b.params;
    if (inA && inB) {
      const va = a.params[name];
      const vb = b.params[name];
      if ((va ?? '').toLowerCase() !== (vb ?? '').toLowerCase() || (va === null) !== (vb === null)) return false;
    } else if (MUST_MATCH.includes(name)) return false;
  }
  if (a.headers.length !== b.headers.length) return false;
  const hb = new Map(b.headers.map(([k, v]) => [k.toLowerCase(), v]));
  return a.headers.every(([k, v]) => hb.get(k.toLowerCase()) === v);
}

/** True for a `lr` URI (loose router, RFC 3261 §16.12.1.1). */
export function isLooseRouter(u: Uri): boolean {
  return 'host' in u && 'lr' in u.params;
}

