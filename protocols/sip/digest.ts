/**
 * Digest authentication for a UAC (RFC 3261 §22.2, §22.4; RFC 2617 §3.2; RFC 7616 §3.4):
 * read a WWW-Authenticate / Proxy-Authenticate challenge, compute the Authorization /
 * Proxy-Authorization value. node:crypto only; the client nonce is a parameter.
 *
 * Decisions:
 * - MD5, MD5-sess, SHA-256 and SHA-256-sess; qop "auth" when the challenge offers it (our
 *   requests' bodies are not protected, so "auth-int" alone is refused), none for an RFC
 *   2069-style challenge without qop.
 * - The caller keeps the nonce count per nonce and passes it in (`nc`, starting at 1).
 */
import { createHash } from 'node:crypto';
import { fail, quote, splitList } from './grammar.js';
import { headerValues } from './parse.js';
import type { SipRequest, SipResponse } from './types.js';
import { formatUri } from './uri.js';

export interface DigestChallenge {
  realm: string;
  nonce: string;
  opaque?: string;
  algorithm: string;
  qop: string[];
  stale: boolean;
  /** The header this came from decides the answer's header (401 → Authorization, 407 → Proxy-Authorization). */
  proxy: boolean;
}

/** Parse `Digest realm="...", nonce="...", ...`. Throws SyntaxError when it is not a Digest challenge. */
export function parseDigestChallenge(value: string, proxy = false): DigestChallenge {
  const m = /^\s*Digest\s+(.*)$/is.exec(value);
  if (!m) fail('not a Digest challenge');
  const params = new Map<string, string>();
  for (const item of splitList(m[1] as string, 'Digest challenge')) {
    const eq = item.indexOf('=');
    if (eq <= 0) fail(`Digest challenge: bad parameter "${item.slice(0, 30)}"`);
    let v = item.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    params.set(item.slice(0, eq).trim().toLowerCase(), v);
  }
  const realm = params.get('realm');
  const nonce = params.get('nonce');
  if (realm === undefined || nonce === undefined) fail('Digest challenge: realm and nonce are required');
  const c: DigestChallenge = {
    realm,
    nonce,
    algorithm: params.get('algorithm') ?? 'MD5',
    qop: (params.get('qop') ?? '').split(',').map((q) => q.trim().toLowerCase()).filter((q) => q.length > 0),
    stale: (params.get('stale') ?? '').toLowerCase() === 'true',
    proxy,
  };
  const opaque = params.get('opaque');
  if (opaque !== undefined) c.opaque = opaque;
  return c;
}

export interface DigestCredentials {
  username: string;
  password: string;
}

export interface DigestRequest {
  method: string;
  /** The digest-uri: the Request-URI as sent. */
  uri: string;
  /** Client nonce (random, caller-provided). */
  cnonce: string;
  /** Nonce count for this nonce, from 1. */
  nc: number;
}

function hashOf(algorithm: string): (s: string) => string {
  const base = algorithm.toUpperCase().replace(/-SESS$/, '');
  const name = base === 'MD5' ? 'md5' : base === 'SHA-256' ? 'sha256' : fail(`Digest: unsupported algorithm ${algorithm}`);
  return (s) => createHash(name).update(s, 'utf8').digest('hex');
}

/** The request-digest (RFC 2617 §3.2.2.1, RFC 7616 §3.4.1). */
export function digestResponse(c: DigestChallenge, cred: DigestCredentials, r: DigestRequest): { response: string; qop?: string; nc: string } {
  const H = hashOf(c.algorithm);
  const nc = r.nc.toString(16).padStart(8, '0');
  let ha1 = H(`${cred.username}:${c.realm}:${cred.password}`);
  if (/-sess$/i.test(c.algorithm)) ha1 = H(`${ha1}:${c.nonce}:${r.cnonce}`);
  const ha2 = H(`${r.method}:${r.uri}`);
  if (c.qop.length === 0) return { response: H(`${ha1}:${c.nonce}:${ha2}`), nc };
  if (!c.qop.includes('auth')) fail('Digest: the challenge offers no qop=auth');
  return { response: H(`${ha1}:${c.nonce}:${nc}:${r.cnonce}:auth:${ha2}`), qop: 'auth', nc };
}

/** The Authorization (or Proxy-Authorization) header for a request answering `c`. */
export function digestAuthorization(c: DigestChallenge, cred: DigestCredentials, r: DigestRequest): { name: string; value: string } {
  const d = digestResponse(c, cred, r);
  const parts = [
    `username=${quote(cred.username)}`,
    `realm=${quote(c.realm)}`,
    `nonce=${quote(c.nonce)}`,
    `uri=${quote(r.uri)}`,
    `response=${quote(d.response)}`,
    `algorithm=${c.algorithm}`,
  ];
  if (d.qop) parts.push(`cnonce=${quote(r.cnonce)}`, `qop=${d.qop}`, `nc=${d.nc}`);
  if (c.opaque !== undefined) parts.push(`opaque=${quote(c.opaque)}`);
  return { name: c.proxy ? 'Proxy-Authorization' : 'Authorization', value: `Digest ${parts.join(', ')}` };
}

/**
 * The request to send again after a 401 or 407 (§22.2, §8.1.3.5): same request with CSeq + 1,
 * a new branch (a new transaction), and the Authorization or Proxy-Authorization answering the
 * first Digest challenge of the response (replacing an earlier answer for the same header).
 * Undefined when the response carries no Digest challenge we can answer.
 */
export function authorizeRequest(
  req: SipRequest,
  challenge: SipResponse,
  cred: DigestCredentials,
  o: { cnonce: string; nc?: number; branch: string },
): SipRequest | undefined {
  const proxy = challenge.status === 407;
  const values = headerValues(challenge, proxy ? 'Proxy-Authenticate' : 'WWW-Authenticate');
  for (const v of values) {
    let c: DigestChallenge;
    try {
      c = parseDigestChallenge(v, proxy);
    } catch {
      continue;
    }
    let h: { name: string; value: string };
    try {
      h = digestAuthorization(c, cred, { method: req.method, uri: formatUri(req.uri), cnonce: o.cnonce, nc: o.nc ?? 1 });
    } catch {
      continue;
    }
    const top = req.via[0];
    return {
      ...req,
      via: top ? [{ ...top, params: { ...top.params, branch: o.branch } }, ...req.via.slice(1)] : req.via,
      cseq: { seq: req.cseq.seq + 1, method: req.cseq.method },
      headers: [...req.headers.filter((x) => x.name.toLowerCase() !== h.name.toLowerCase()), h],
    };
  }
  return undefined;
}
