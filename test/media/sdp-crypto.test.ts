import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { checkSdes, formatSdes, isWebRtcSdp, parseSdesInline, sameKey } from '../../protocols/media/sdp/index.js';

const SRC_DIR = new URL('../../../protocols/media/sdp/', import.meta.url);
// RFC 4568 §4 example key (30 bytes of key||salt).
const RFC_KEY = 'PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR';
const b64 = (n: number, fill = 1): string => Buffer.alloc(n, fill).toString('base64');

test('the sdp modules are pure: allowed imports only, no timers, clock, randomness or fs', (t) => {
  const files = readdirSync(SRC_DIR).filter((f) => f.endsWith('.ts'));
  t.true(files.length >= 8, `found ${files.join(', ')}`);
  for (const f of files) {
    const src = readFileSync(new URL(f, SRC_DIR), 'utf8');
    const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\brequire\s*\(/g)].map((m) => m[1] ?? m[2] ?? 'require(');
    t.true(imports.length > 0, f);
    for (const i of imports) t.regex(i, /^(\.\/[\w-]+\.js|\.\.\/types\.js|\.\.\/ip\.js|sdp-transform|node:crypto)$/, `${f} imports ${i}`);
    t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|new Date|Math\.random|process\.|\bfs\b|node:fs|performance\./, f);
  }
});

test('parseSdesInline: the RFC 4568 key decodes to its 16-byte master key and 14-byte salt', (t) => {
  const k = parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}`);
  const raw = Buffer.from(RFC_KEY, 'base64');
  t.is(raw.length, 30);
  t.truthy(k);
  t.is(k!.tag, 1);
  t.is(k!.suite, 'AES_CM_128_HMAC_SHA1_80');
  t.deepEqual(Buffer.from(k!.keySalt), raw);
  t.deepEqual(Buffer.from(k!.keySalt.subarray(0, 16)), raw.subarray(0, 16));
  t.is(k!.keySalt.subarray(16).length, 14);
  // The same with the attribute prefix, and the _32 suite.
  t.deepEqual(parseSdesInline(`a=crypto:7 AES_CM_128_HMAC_SHA1_32 inline:${RFC_KEY}`)?.tag, 7);
  t.is(parseSdesInline(`crypto:2 AES_CM_128_HMAC_SHA1_32 inline:${RFC_KEY}`)?.suite, 'AES_CM_128_HMAC_SHA1_32');
});

test('parseSdesInline: unknown suites are unusable', (t) => {
  for (const suite of ['AES_256_CM_HMAC_SHA1_80', 'AEAD_AES_128_GCM', 'F8_128_HMAC_SHA1_80', 'aes_cm_128_hmac_sha1_80', 'NULL_HMAC_SHA1_80']) {
    t.is(parseSdesInline(`1 ${suite} inline:${RFC_KEY}`), null, suite);
    const r = checkSdes(`1 ${suite} inline:${RFC_KEY}`);
    t.false(r.ok);
    if (!r.ok) t.regex(r.error, /unsupported crypto suite/);
  }
});

test('parseSdesInline: the key must decode to exactly 30 bytes, and the error names the length', (t) => {
  for (const n of [16, 29, 31, 32, 46]) {
    const r = checkSdes(`1 AES_CM_128_HMAC_SHA1_80 inline:${b64(n)}`);
    t.false(r.ok, `${n} bytes`);
    if (!r.ok) t.regex(r.error, new RegExp(`${n} bytes, need 30`));
  }
  for (const bad of ['', `${RFC_KEY.slice(0, 39)}!`, `${RFC_KEY}==`, RFC_KEY.slice(0, 39), `${RFC_KEY}A`]) {
    t.is(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${bad}`), null, bad);
  }
  t.truthy(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${b64(30, 0xab)}`));
});

test('parseSdesInline: lifetimes are accepted up to 2^48, MKIs and several keys are refused', (t) => {
  for (const life of ['2^20', '2^31', '2^48', '1048576', '1']) t.truthy(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}|${life}`), life);
  for (const life of ['2^49', '2^', 'x', '0', '2^20^2']) t.is(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}|${life}`), null, life);
  const mki = checkSdes(`1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}|2^20|1:32`);
  t.false(mki.ok);
  if (!mki.ok) t.regex(mki.error, /MKI/);
  t.is(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}|1:4`), null);
  t.is(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}|2^20|2^30`), null);
  t.is(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}|2^20|1:4;inline:${RFC_KEY}|2^20|2:4`), null);
  t.is(parseSdesInline(`1 AES_CM_128_HMAC_SHA1_80 uri:https://example.com/key`), null);
});

test('parseSdesInline: session parameters we cannot honour make the line unusable', (t) => {
  const line = (p: string) => `1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY} ${p}`;
  for (const p of ['KDR=0', 'FEC_ORDER=FEC_SRTP', 'WSH=128', '-X_VENDOR_HINT', 'KDR=0 WSH=64']) t.truthy(parseSdesInline(line(p)), p);
  for (const p of ['KDR=1', 'KDR=24', 'UNENCRYPTED_SRTP', 'UNENCRYPTED_SRTCP', 'UNAUTHENTICATED_SRTP', 'FEC_KEY=inline:abc', 'BOGUS', 'KDR=0 UNENCRYPTED_SRTP']) {
    const r = checkSdes(line(p));
    t.false(r.ok, p);
    if (!r.ok) t.regex(r.error, /session parameter|key derivation rate/, p);
  }
});

test('parseSdesInline: malformed lines are unusable', (t) => {
  for (const l of ['', '1', '1 AES_CM_128_HMAC_SHA1_80', `x AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}`, `1234567890 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}`, `-1 AES_CM_128_HMAC_SHA1_80 inline:${RFC_KEY}`]) {
    t.is(parseSdesInline(l), null, l);
  }
});

test('formatSdes: the RFC 4568 layout, with the key in base64, and parses back', (t) => {
  const keySalt = new Uint8Array(30).map((_, i) => i * 7 + 3);
  const s = formatSdes({ tag: 3, suite: 'AES_CM_128_HMAC_SHA1_32', keySalt });
  t.is(s, `3 AES_CM_128_HMAC_SHA1_32 inline:${Buffer.from(keySalt).toString('base64')}`);
  const back = parseSdesInline(s);
  t.truthy(back);
  t.deepEqual([back!.tag, back!.suite, Buffer.from(back!.keySalt)], [3, 'AES_CM_128_HMAC_SHA1_32', Buffer.from(keySalt)]);
  t.true(sameKey(back, { tag: 9, suite: 'AES_CM_128_HMAC_SHA1_32', keySalt }));
  t.false(sameKey(back, { tag: 3, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt }));
  t.false(sameKey(back, { tag: 3, suite: 'AES_CM_128_HMAC_SHA1_32', keySalt: keySalt.map((x) => x ^ 1) }));
  t.throws(() => formatSdes({ tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: new Uint8Array(29) }), { instanceOf: RangeError });
  // A subarray view formats its own bytes, not the whole backing buffer.
  const big = new Uint8Array(40).map((_, i) => i);
  t.is(formatSdes({ tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: big.subarray(5, 35) }).split('inline:')[1], Buffer.from(big.subarray(5, 35)).toString('base64'));
});

const CHROME = [
  'v=0', 'o=- 4611731400430051336 2 IN IP4 127.0.0.1', 's=-', 't=0 0', 'a=group:BUNDLE 0', 'a=msid-semantic: WMS',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111 0', 'c=IN IP4 0.0.0.0', 'a=rtcp:9 IN IP4 0.0.0.0', 'a=ice-ufrag:EsAw', 'a=ice-pwd:bP+XJMM09aR8AiX1jdukzR6Y',
  'a=fingerprint:sha-256 DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09:DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF',
  'a=setup:actpass', 'a=mid:0', 'a=sendrecv', 'a=rtcp-mux', 'a=rtpmap:111 opus/48000/2', 'a=rtpmap:0 PCMU/8000', '',
].join('\r\n');

test('isWebRtcSdp: DTLS profile, fingerprint or ICE credentials mean WebRTC', (t) => {
  t.true(isWebRtcSdp(CHROME));
  t.true(isWebRtcSdp('v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 4000 UDP/TLS/RTP/SAVP 0\r\n'));
  t.true(isWebRtcSdp('v=0\r\nm=audio 4000 RTP/SAVPF 0\r\na=fingerprint:sha-256 AA:BB\r\n'));
  t.true(isWebRtcSdp('v=0\nm=audio 4000 RTP/AVP 0\na=ice-ufrag:abcd\n'));
  t.false(isWebRtcSdp('v=0\r\ns=fingerprint test\r\nc=IN IP4 192.0.2.1\r\nm=audio 4000 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:' + RFC_KEY + '\r\n'));
  t.false(isWebRtcSdp('v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 4000 RTP/AVP 0\r\n'));
  t.false(isWebRtcSdp(''));
});
