/**
 * Digest authentication against the worked examples of RFC 2617 §3.5 and RFC 7616 §3.9.1,
 * and the retry of a challenged request (RFC 3261 §22.2) checked with the RFC 2617 formula.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import { authorizeRequest, digestAuthorization, digestResponse, parseDigestChallenge } from '../../protocols/sip/digest.js';
import { request, response } from './messages.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

const RFC2617 =
  'Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"';

test('RFC 2617 §3.5: the challenge parses (quoted commas do not split it)', (t) => {
  t.deepEqual(parseDigestChallenge(RFC2617), {
    realm: 'testrealm@host.com',
    nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
    opaque: '5ccc069c403ebaf9f0171e9517f40e41',
    algorithm: 'MD5',
    qop: ['auth', 'auth-int'],
    stale: false,
    proxy: false,
  });
});

test('RFC 2617 §3.5: Mufasa / "Circle Of Life" GET /dir/index.html gives response 6629fae49393a05397450978507c4ef1', (t) => {
  const c = parseDigestChallenge(RFC2617);
  const r = digestResponse(c, { username: 'Mufasa', password: 'Circle Of Life' }, { method: 'GET', uri: '/dir/index.html', cnonce: '0a4f113b', nc: 1 });
  t.deepEqual(r, { response: '6629fae49393a05397450978507c4ef1', qop: 'auth', nc: '00000001' });
});

test('RFC 2617 §3.5: the Authorization header carries every field of the example', (t) => {
  const h = digestAuthorization(parseDigestChallenge(RFC2617), { username: 'Mufasa', password: 'Circle Of Life' }, { method: 'GET', uri: '/dir/index.html', cnonce: '0a4f113b', nc: 1 });
  t.is(h.name, 'Authorization');
  t.is(
    h.value,
    'Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", response="6629fae49393a05397450978507c4ef1", algorithm=MD5, cnonce="0a4f113b", qop=auth, nc=00000001, opaque="5ccc069c403ebaf9f0171e9517f40e41"',
  );
});

const RFC7616 = (alg: string) =>
  `Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=${alg}, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`;
const REQ7616 = { method: 'GET', uri: '/dir/index.html', cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ', nc: 1 };

test('RFC 7616 §3.9.1: MD5 and SHA-256 responses of the example', (t) => {
  const cred = { username: 'Mufasa', password: 'Circle of Life' };
  t.is(digestResponse(parseDigestChallenge(RFC7616('MD5')), cred, REQ7616).response, '8ca523f5e9506fed4657c9700eebdbec');
  t.is(digestResponse(parseDigestChallenge(RFC7616('SHA-256')), cred, REQ7616).response, '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
});

test('a 407 challenge is answered in Proxy-Authorization; a challenge without qop uses the RFC 2069 form', (t) => {
  const c = parseDigestChallenge('Digest realm="atlanta.example.com", nonce="84f1c1ae6cbe5ua9"', true);
  const h = digestAuthorization(c, { username: 'alice', password: 'pw' }, { method: 'INVITE', uri: 'sip:bob@biloxi.example.com', cnonce: 'x', nc: 1 });
  t.is(h.name, 'Proxy-Authorization');
  t.false(h.value.includes('qop='));
  t.false(h.value.includes('cnonce='));
});

test('a non-Digest challenge and one without nonce are refused', (t) => {
  t.throws(() => parseDigestChallenge('Basic realm="x"'));
  t.throws(() => parseDigestChallenge('Digest realm="x"'));
});

test('authorizeRequest (§22.2): after a 407 the INVITE goes again with CSeq + 1, a new branch and Proxy-Authorization', (t) => {
  const inv = request('INVITE');
  const challenge = response(inv, 407, { toTag: 'p1', extra: ['Proxy-Authenticate: Digest realm="atlanta.example.com", qop="auth", nonce="f84f1cec41e6cbe5aea9c8e88d359", opaque="", algorithm=MD5'] });
  const again = authorizeRequest(inv, challenge, { username: 'alice', password: 'secret' }, { cnonce: '0a4f113b', branch: 'z9hG4bKretry' });
  t.truthy(again);
  t.deepEqual(again?.cseq, { seq: inv.cseq.seq + 1, method: 'INVITE' });
  t.is(again?.via[0]?.params['branch'], 'z9hG4bKretry');
  const h = again?.headers.find((x) => x.name === 'Proxy-Authorization');
  const ha1 = md5('alice:atlanta.example.com:secret');
  const ha2 = md5('INVITE:sip:bob@biloxi.example.com');
  t.true(h?.value.includes(`response="${md5(`${ha1}:f84f1cec41e6cbe5aea9c8e88d359:00000001:0a4f113b:auth:${ha2}`)}"`), h?.value);
  t.is(authorizeRequest(inv, response(inv, 401, { extra: ['WWW-Authenticate: Basic realm="x"'] }), { username: 'a', password: 'b' }, { cnonce: 'c', branch: 'z9hG4bKy' }), undefined);
});
