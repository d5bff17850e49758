/**
 * Job tokens of the `local` CI provider, the embedded default when no GitLab is reachable: the
 * admin (or a stand-in CI) asks `POST /api/job-tokens` for a token bound to one repository, job,
 * ref and commit, with an expiry; a deploy, chart or values request presents it with its jobId and
 * repoUrl and it is checked offline.
 *
 * Form: `hjt1.<payload>.<mac>`, both parts base64url without padding. The payload is JSON
 * `{"r": repoKey, "j": jobId, "ref", "sha", "exp": seconds since the epoch, "n": 16 random bytes
 * in base64url}`; the mac is HMAC-SHA256 under the server key over `hjt1.<payload>`, compared in
 * constant time. The repository is bound by its key (repo-url.ts), so `…/app.git` and `…/app`
 * present the same token. Verification fails (401 JOB_TOKEN_INVALID) for a malformed or tampered
 * token, one signed with another key, one expired at `now` (exp is exclusive), or one issued for
 * another repository or job. The ref and commit come back from the token, never from the request.
 * Pure: callers pass the key, `now` and the random bytes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { attempt, refuse, type Result } from './errors.js';

const PREFIX = 'hjt1';
/** Shortest server key accepted: 32 bytes, the HMAC-SHA256 block's worth of secret. */
export const MIN_KEY_BYTES = 32;
export const NONCE_BYTES = 16;
const B64URL_RE = /^[A-Za-z0-9_-]+$/;

export interface JobClaims {
  repoKey: string;
  jobId: string;
  ref: string;
  sha: string;
  /** seconds since the epoch; the token is valid while now < exp */
  exp: number;
}

interface Payload {
  r: string;
  j: string;
  ref: string;
  sha: string;
  exp: number;
  n: string;
}

function checkKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.byteLength < MIN_KEY_BYTES) throw new TypeError(`the job token key must be at least ${MIN_KEY_BYTES} bytes`);
}

function mac(key: Uint8Array, signed: string): Buffer {
  return createHmac('sha256', key).update(signed, 'utf8').digest();
}

/** A token for `claims` valid for `ttlSecs` from `now` (ms since the epoch); `nonce` is 16 random bytes. */
export function mintJobToken(key: Uint8Array, claims: Omit<JobClaims, 'exp'>, now: number, ttlSecs: number, nonce: Uint8Array): { token: string; exp: number } {
  checkKey(key);
  if (nonce.byteLength !== NONCE_BYTES) throw new TypeError(`nonce must be ${NONCE_BYTES} bytes`);
  if (!Number.isInteger(ttlSecs) || ttlSecs < 1) throw new TypeError('ttlSecs must be a positive whole number');
  const exp = Math.floor(now / 1000) + ttlSecs;
  const payload: Payload = { r: claims.repoKey, j: claims.jobId, ref: claims.ref, sha: claims.sha, exp, n: Buffer.from(nonce).toString('base64url') };
  const signed = `${PREFIX}.${Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')}`;
  return { token: `${signed}.${mac(key, signed).toString('base64url')}`, exp };
}

const fail = (why: string): never => refuse(401, 'JOB_TOKEN_INVALID', `job token verification failed: ${why}`);

/** The token's claims when it is genuine, unexpired and issued for this repository key and job; else 401. */
export function verifyJobToken(key: Uint8Array, token: string, expect: { repoKey: string; jobId: string }, now: number): Result<JobClaims> {
  checkKey(key);
  return attempt(() => {
    const parts = typeof token === 'string' ? token.split('.') : [];
    if (parts.length !== 3 || parts[0] !== PREFIX || !B64URL_RE.test(parts[1] as string) || !B64URL_RE.test(parts[2] as string)) return fail('not a job token of this service');
    const given = Buffer.from(parts[2] as string, 'base64url');
    const expected = mac(key, `${PREFIX}.${parts[1]}`);
    // constant time over the expected length; a wrong length is compared against itself to keep the timing flat
    const same = given.byteLength === expected.byteLength ? timingSafeEqual(given, expected) : (timingSafeEqual(expected, expected), false);
    if (!same) return fail('signature does not match');
    let p: Payload;
    try {
      p = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as Payload;
    } catch {
      return fail('payload is not readable');
    }
    if (typeof p !== 'object' || p === null || typeof p.r !== 'string' || typeof p.j !== 'string' || typeof p.ref !== 'string' || typeof p.sha !== 'string' || !Number.isInteger(p.exp)) {
      return fail('payload is not readable');
    }
    if (Math.floor(now / 1000) >= p.exp) return fail('the token has expired');
    if (p.r !== expect.repoKey) return fail('the token was issued for another repository');
    if (p.j !== expect.jobId) return fail('the token was issued for another job');
    return { repoKey: p.r, jobId: p.j, ref: p.ref, sha: p.sha, exp: p.exp };
  });
}
