/**
 * SDES (RFC 4568) a=crypto lines for SRTP: parse an offered/answered line into a key, or say
 * exactly why it is unusable; format our own line.
 *
 * Value form: `<tag> <suite> inline:<base64 key||salt>[|lifetime][|mki:len] [session params]`.
 * Decisions (what is "usable"):
 * - suites AES_CM_128_HMAC_SHA1_80 and AES_CM_128_HMAC_SHA1_32 only (exact spelling);
 * - exactly one key-param, `inline:` with 40 base64 characters decoding to 30 bytes
 *   (16-byte master key + 14-byte salt); several key-params are refused (they need MKIs);
 * - a lifetime (`2^N` or decimal, at most 2^48) is accepted and ignored: it bounds how long the
 *   peer uses its own key, the peer rekeys by re-INVITE;
 * - an MKI (`|1:4`) is refused: our SRTP layer does not carry MKI fields in packets;
 * - session params: KDR=0 accepted (our only rate), any other KDR refused; UNENCRYPTED_SRTP,
 *   UNENCRYPTED_SRTCP, UNAUTHENTICATED_SRTP and FEC_KEY refused; FEC_ORDER (no FEC is used) and
 *   WSH (a window-size hint) accepted and ignored; unknown params prefixed with `-` are optional
 *   extensions and ignored (RFC 4568 §6.3), any other unknown param is refused.
 */
import { SDES_KEY_BYTES, SRTP_SUITES, type SrtpSuite } from '../types.js';
import { fail, ok, type Result, type SdesKey } from './types.js';

const B64_30 = /^[A-Za-z0-9+/]{40}$/;
const MAX_LIFETIME = 2 ** 48;

function isSuite(s: string): s is SrtpSuite {
  return (SRTP_SUITES as readonly string[]).includes(s);
}

function checkLifetime(s: string): string | null {
  const pow = /^2\^(\d{1,2})$/.exec(s);
  const n = pow ? 2 ** Number(pow[1]) : /^\d{1,15}$/.test(s) ? Number(s) : NaN;
  if (!Number.isFinite(n) || n < 1) return `malformed key lifetime "${s}"`;
  if (n > MAX_LIFETIME) return `key lifetime ${s} exceeds 2^48`;
  return null;
}

function checkSessionParam(p: string): string | null {
  const kdr = /^KDR=(\d{1,2})$/.exec(p);
  if (kdr) return Number(kdr[1]) === 0 ? null : `unsupported key derivation rate ${p} (only KDR=0)`;
  if (p === 'UNENCRYPTED_SRTP' || p === 'UNENCRYPTED_SRTCP' || p === 'UNAUTHENTICATED_SRTP') return `unsupported session parameter ${p}`;
  if (p.startsWith('FEC_KEY=')) return 'unsupported session parameter FEC_KEY';
  if (p === 'FEC_ORDER=FEC_SRTP' || p === 'FEC_ORDER=SRTP_FEC') return null;
  if (/^WSH=\d{1,9}$/.test(p)) return null;
  if (p.startsWith('-')) return null;
  return `unknown session parameter ${p}`;
}

/** Strips an optional `a=` and `crypto:` prefix so both the raw line and the value are accepted. */
function value(line: string): string {
  return line.trim().replace(/^a=/, '').replace(/^crypto:/, '');
}

/** Parses an a=crypto value; on failure says what is wrong with it. */
export function checkSdes(line: string): Result<SdesKey> {
  const tokens = value(line).split(/[ \t]+/).filter((x) => x !== '');
  const [tagS, suite, keyParams, ...session] = tokens;
  if (tagS === undefined || suite === undefined || keyParams === undefined) return fail('malformed a=crypto line (needs tag, suite and key)');
  if (!/^\d{1,9}$/.test(tagS)) return fail(`malformed a=crypto tag "${tagS}"`);
  if (!isSuite(suite)) return fail(`unsupported crypto suite ${suite}`);
  if (keyParams.includes(';')) return fail('several keys in one a=crypto line (MKI) are not supported');
  const inline = /^inline:(.*)$/i.exec(keyParams);
  if (!inline) return fail(`unsupported key method in "${keyParams}" (only inline:)`);
  const [b64 = '', ...rest] = (inline[1] ?? '').split('|');
  if (rest.length > 2) return fail('malformed key parameters');
  for (const [i, r] of rest.entries()) {
    if (r.includes(':')) return fail('MKI is not supported');
    if (i > 0) return fail('malformed key parameters');
    const e = checkLifetime(r);
    if (e) return fail(e);
  }
  if (!B64_30.test(b64)) {
    const n = /^[A-Za-z0-9+/]*={0,2}$/.test(b64) && b64.length % 4 === 0 ? Buffer.from(b64, 'base64').length : -1;
    return fail(n < 0 ? 'SDES key is not valid base64' : `SDES key is ${n} bytes, need ${SDES_KEY_BYTES}`);
  }
  for (const p of session) {
    const e = checkSessionParam(p);
    if (e) return fail(e);
  }
  const keySalt = new Uint8Array(Buffer.from(b64, 'base64'));
  if (keySalt.length !== SDES_KEY_BYTES) return fail(`SDES key is ${keySalt.length} bytes, need ${SDES_KEY_BYTES}`);
  return ok({ tag: Number(tagS), suite, keySalt });
}

/** 'a=crypto' value (or whole line) → key, or null if unusable. */
export function parseSdesInline(line: string): SdesKey | null {
  const r = checkSdes(line);
  return r.ok ? r.value : null;
}

/** The a=crypto value for a key: `<tag> <suite> inline:<base64>`. */
export function formatSdes(k: SdesKey): string {
  if (k.keySalt.length !== SDES_KEY_BYTES) throw new RangeError(`SDES key must be ${SDES_KEY_BYTES} bytes, got ${k.keySalt.length}`);
  if (!Number.isInteger(k.tag) || k.tag < 0 || k.tag > 999_999_999) throw new RangeError(`bad a=crypto tag ${k.tag}`);
  return `${k.tag} ${k.suite} inline:${Buffer.from(k.keySalt.buffer, k.keySalt.byteOffset, k.keySalt.length).toString('base64')}`;
}

export function sameKey(a: SdesKey | null, b: SdesKey | null): boolean {
  if (a === null || b === null) return a === b;
  return a.suite === b.suite && Buffer.from(a.keySalt).equals(Buffer.from(b.keySalt));
}

/** Checks a key from the caller's random source. */
export function freshKey(newKey: () => Uint8Array): Result<Uint8Array> {
  const k = newKey();
  if (!(k instanceof Uint8Array) || k.length !== SDES_KEY_BYTES) return fail(`newKey() must return ${SDES_KEY_BYTES} random bytes`);
  return ok(new Uint8Array(k));
}
