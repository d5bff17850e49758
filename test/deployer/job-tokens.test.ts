import test from 'ava';
import { createHmac } from 'node:crypto';
import type { Result } from '../../protocols/deploy/errors.js';
import { mintJobToken, verifyJobToken } from '../../protocols/deploy/job-tokens.js';

const KEY = Buffer.alloc(32, 7);
const NONCE = Buffer.alloc(16, 1);
const NOW = 1_790_000_000_000; // ms
const CLAIMS = { repoKey: 'gitlab.example.com/team/shop', jobId: '4711', ref: 'main', sha: 'a'.repeat(40) };
const EXPECT = { repoKey: CLAIMS.repoKey, jobId: '4711' };

function reason<T>(r: Result<T>): string {
  if (r.ok) throw new Error('expected a refusal');
  if (r.error.status !== 401 || r.error.code !== 'JOB_TOKEN_INVALID') throw new Error(JSON.stringify(r.error));
  return r.error.message;
}
const mint = (ttl = 600, claims = CLAIMS, key: Buffer = KEY) => mintJobToken(key, claims, NOW, ttl, NONCE).token;

test('a minted token verifies for its repository and job, giving back the ref and commit it was bound to', (t) => {
  const { token, exp } = mintJobToken(KEY, CLAIMS, NOW, 600, NONCE);
  t.is(exp, NOW / 1000 + 600);
  t.regex(token, /^hjt1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  t.deepEqual(verifyJobToken(KEY, token, EXPECT, NOW), { ok: true, value: { ...CLAIMS, exp } });
  t.true(verifyJobToken(KEY, token, EXPECT, NOW + 599_999).ok, 'valid until the last millisecond before exp');
});

test('the mac is HMAC-SHA256 under the key over "hjt1.<payload>"', (t) => {
  const token = mint();
  const [prefix, payload, mac] = token.split('.');
  t.is(mac, createHmac('sha256', KEY).update(`${prefix}.${payload}`).digest('base64url'));
  t.deepEqual(JSON.parse(Buffer.from(payload as string, 'base64url').toString()), { r: CLAIMS.repoKey, j: '4711', ref: 'main', sha: CLAIMS.sha, exp: NOW / 1000 + 600, n: NONCE.toString('base64url') });
});

test('expired at exp: 401', (t) => {
  t.is(reason(verifyJobToken(KEY, mint(600), EXPECT, NOW + 600_000)), 'job token verification failed: the token has expired');
  t.is(reason(verifyJobToken(KEY, mint(1), EXPECT, NOW + 10 ** 9)), 'job token verification failed: the token has expired');
});

test('a token for another job or another repository: 401', (t) => {
  t.is(reason(verifyJobToken(KEY, mint(), { ...EXPECT, jobId: '4712' }, NOW)), 'job token verification failed: the token was issued for another job');
  t.is(reason(verifyJobToken(KEY, mint(), { ...EXPECT, repoKey: 'gitlab.example.com/team/blog' }, NOW)), 'job token verification failed: the token was issued for another repository');
});

test('tampered tokens fail the signature: a changed payload, a changed mac, another key', (t) => {
  const token = mint();
  const [prefix, payload, mac] = token.split('.') as [string, string, string];
  const forged = Buffer.from(JSON.stringify({ r: CLAIMS.repoKey, j: '9999', ref: 'main', sha: CLAIMS.sha, exp: NOW / 1000 + 600, n: 'AQ' })).toString('base64url');
  t.is(reason(verifyJobToken(KEY, `${prefix}.${forged}.${mac}`, { ...EXPECT, jobId: '9999' }, NOW)), 'job token verification failed: signature does not match');
  const flipped = (mac[0] === 'A' ? 'B' : 'A') + mac.slice(1);
  t.is(reason(verifyJobToken(KEY, `${prefix}.${payload}.${flipped}`, EXPECT, NOW)), 'job token verification failed: signature does not match');
  t.is(reason(verifyJobToken(KEY, `${prefix}.${payload}.${mac.slice(0, 20)}`, EXPECT, NOW)), 'job token verification failed: signature does not match', 'a short mac');
  t.is(reason(verifyJobToken(Buffer.alloc(32, 8), token, EXPECT, NOW)), 'job token verification failed: signature does not match');
});

test('malformed tokens: 401 without reading further', (t) => {
  for (const bad of ['', 'x', 'hjt1.a', 'hjt1.a.b.c', 'hjt2.a.b', 'hjt1..b', 'hjt1.a+b.c', 'hjt1.a.b=', ' hjt1.a.b', 'glcbt-64_abcdef']) {
    t.is(reason(verifyJobToken(KEY, bad, EXPECT, NOW)), 'job token verification failed: not a job token of this service', bad);
  }
  // a well-signed payload that is not the expected JSON
  const payload = Buffer.from('[1,2]').toString('base64url');
  const mac = createHmac('sha256', KEY).update(`hjt1.${payload}`).digest('base64url');
  t.is(reason(verifyJobToken(KEY, `hjt1.${payload}.${mac}`, EXPECT, NOW)), 'job token verification failed: payload is not readable');
});

test('tokens differ by nonce; keys shorter than 32 bytes and bad nonces are programming errors', (t) => {
  t.not(mintJobToken(KEY, CLAIMS, NOW, 600, Buffer.alloc(16, 2)).token, mint());
  t.throws(() => mint(600, CLAIMS, Buffer.alloc(31)), { instanceOf: TypeError });
  t.throws(() => verifyJobToken(Buffer.alloc(16), 'x', EXPECT, NOW), { instanceOf: TypeError });
  t.throws(() => mintJobToken(KEY, CLAIMS, NOW, 600, Buffer.alloc(8)), { instanceOf: TypeError });
  t.throws(() => mintJobToken(KEY, CLAIMS, NOW, 0, NONCE), { instanceOf: TypeError });
});
