import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { buildRtp } from '../../protocols/media/rtp.js';
import { buildReceiverReport, buildSenderReport, parseRtcp } from '../../protocols/media/rtcp.js';
import { aesCmKeystream, deriveKey, writeIv, LABEL_RTCP_AUTH } from '../../protocols/media/srtp/kdf.js';
import {
  SrtpReceiveContext,
  SrtpSendContext,
  decodeSdesKey,
  encodeSdesKey,
  type SrtpFailure,
} from '../../protocols/media/srtp/index.js';
import type { SrtpSuite } from '../../protocols/media/types.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const SUITES: SrtpSuite[] = ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'];
const TAG: Record<SrtpSuite, number> = { AES_CM_128_HMAC_SHA1_80: 10, AES_CM_128_HMAC_SHA1_32: 4 };

/** A deterministic 30-byte key per name (test keys only). */
const key = (name: string) => createHash('sha256').update(name).digest().subarray(0, 30);
const rtp = (seq: number, ssrc = 0x11223344, payload: Uint8Array = Buffer.from(`payload ${seq} `.repeat(8))) =>
  buildRtp({ marker: false, payloadType: 0, sequenceNumber: seq & 0xffff, timestamp: (seq * 160) >>> 0, ssrc }, payload);
const ok = (t: ExecutionContext, r: Buffer | SrtpFailure, want: Uint8Array, msg?: string) => {
  if (typeof r === 'string') t.fail(`${msg ?? 'unprotect'}: ${r}`);
  else t.deepEqual(r, Buffer.from(want), msg);
};

test('protocols/media rtp, rtcp and srtp are pure: allowed imports only, no timers, clock, randomness or fs', (t) => {
  const files = ['rtp.ts', 'rtcp.ts', 'srtp/kdf.ts', 'srtp/replay.ts', 'srtp/context.ts', 'srtp/receiver.ts', 'srtp/sdes.ts', 'srtp/index.ts'];
  for (const f of files) {
    const src = readFileSync(new URL(`../../../protocols/media/${f}`, import.meta.url), 'utf8');
    const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2] ?? m[3]);
    for (const i of imports) t.regex(i as string, /^(node:crypto|\.\/[\w-]+\.js|\.\.\/[\w-]+\.js)$/, `${f} imports ${i}`);
    t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|new Date|performance\.|Math\.random|process\.|\bfs\b|node:fs|node:dgram|node:net/, f);
  }
});

// ---- RFC 3711 Appendix B ----

test('RFC 3711 B.2: AES-CM keystream, IV from session salt, SSRC 0 and index 0', (t) => {
  const iv = Buffer.alloc(16);
  writeIv(iv, hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD'), 0, 0, 0);
  t.deepEqual(iv, hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000'));
  const ks = aesCmKeystream(hex('2B7E151628AED2A6ABF7158809CF4F3C'), iv, 0xff02 * 16);
  const block = (n: number) => ks.subarray(n * 16, n * 16 + 16).toString('hex').toUpperCase();
  t.is(block(0), 'E03EAD0935C95E80E166B16DD92B4EB4');
  t.is(block(1), 'D23513162B02D0F72A43A2FE4A5F97AB');
  t.is(block(2), '41E95B3BB0A2E8DD477901E4FCA894C0');
  t.is(block(0xfeff), 'EC8CDF7398607CB0F2D21675EA9EA1E4');
  t.is(block(0xff00), '362B7C3C6773516318A077D7FC5073AE');
  t.is(block(0xff01), '6A2CC3787889374FBEB4C81B17BA6C44');
});

test('RFC 3711 B.3: key derivation (cipher key, cipher salt, 94 bytes of auth key)', (t) => {
  const mk = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
  const ms = hex('0EC675AD498AFEEBB6960B3AABE6');
  t.deepEqual(deriveKey(mk, ms, 0x00, 16), hex('C61E7A93744F39EE10734AFE3FF7A087'));
  t.deepEqual(deriveKey(mk, ms, 0x02, 14), hex('30CBBC08863D8C85D49DB34A9AE1'));
  t.deepEqual(
    deriveKey(mk, ms, 0x01, 94),
    hex(`CEBE321F6FF7716B6FD4AB49AF256A15 6D38BAA48F0A0ACF3C34E2359E6CDBCE E049646C43D9327AD175578EF7227098
         6371C10C9A369AC2F94A8C5FBCDDDC25 6D6E919A48B610EF17C2041E47403576 6B68642C59BBFC2F34DB60DBDFB2`),
  );
  t.throws(() => deriveKey(mk.subarray(1), ms, 0, 16), { instanceOf: RangeError });
  t.throws(() => deriveKey(mk, Buffer.concat([ms, ms]), 0, 16), { instanceOf: RangeError });
});

test('libsrtp known answers (srtp_driver): SRTP _80 protect and SRTCP _80 unprotect with the B.3 master key', (t) => {
  const ks = hex('E1F97A0D3E018BE0D64FA32C06DE4139 0EC675AD498AFEEBB6960B3AABE6');
  const plain = hex('800f1234decafbadcafebabe abababababababababababababababab');
  const send = new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', ks);
  t.deepEqual(send.protectRtp(plain), hex('800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402 b78d6acc99ea179b8dbb'));
  const recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', ks);
  const srtcp = hex('81c8000bcafebabe 7128035be487b9bdbef89041f977a5a8 80000001 993e08cd54d6c1230798');
  ok(t, recv.unprotectRtcp(srtcp), hex('81c8000bcafebabe abababababababababababababababab'));
  t.is(recv.unprotectRtcp(srtcp), 'replay');
});

// ---- round trips and failures ----

for (const suite of SUITES) {
  test(`${suite}: round trip; tags ${TAG[suite]} bytes (RTP) and 10 bytes (SRTCP); payload is encrypted`, (t) => {
    const k = key('round trip');
    const send = new SrtpSendContext(suite, k);
    const recv = new SrtpReceiveContext(suite, k);
    for (let seq = 1000; seq < 1010; seq++) {
      const p = rtp(seq);
      const s = send.protectRtp(p);
      t.is(s.length, p.length + TAG[suite]);
      t.deepEqual(s.subarray(0, 12), p.subarray(0, 12), 'header in clear');
      t.notDeepEqual(s.subarray(12, p.length), p.subarray(12), 'payload encrypted');
      ok(t, recv.unprotectRtp(s), p);
    }
    // CSRCs, a header extension and padding: the whole header stays clear, padding is encrypted.
    const fancy = Buffer.from([0xb1, 0x00, 0x00, 0x07, 0, 0, 0, 1, 0x11, 0x22, 0x33, 0x45, 9, 9, 9, 9, 0xbe, 0xde, 0, 1, 1, 2, 3, 4, 0xaa, 0xbb, 0, 0, 3]);
    const fs = send.protectRtp(fancy);
    t.deepEqual(fs.subarray(0, 24), fancy.subarray(0, 24));
    t.notDeepEqual(fs.subarray(24, fancy.length), fancy.subarray(24));
    ok(t, recv.unprotectRtp(fs), fancy);
    const empty = rtp(2000, 0x11223344, new Uint8Array(0));
    ok(t, recv.unprotectRtp(send.protectRtp(empty)), empty, 'empty payload');

    for (let i = 0; i < 3; i++) {
      const c = buildSenderReport({ ssrc: 0x11223344, ntpMsw: i, ntpLsw: 2, rtpTimestamp: 3, packetCount: 4, octetCount: 5, reports: [] });
      const sc = send.protectRtcp(c);
      t.is(sc.length, c.length + 4 + 10);
      t.deepEqual(sc.subarray(0, 8), c.subarray(0, 8));
      t.is(sc.readUInt32BE(c.length), (0x80000000 | i) >>> 0, 'E flag and index');
      t.notDeepEqual(sc.subarray(8, c.length), c.subarray(8));
      const back = recv.unprotectRtcp(sc);
      ok(t, back, c);
      if (typeof back !== 'string') t.is(parseRtcp(back)?.[0]?.type, 'sr');
    }
  });

  test(`${suite}: a flipped bit anywhere (header, payload, tag) is refused; so is a wrong key`, (t) => {
    const k = key('flip');
    const send = new SrtpSendContext(suite, k);
    const recv = new SrtpReceiveContext(suite, k);
    const s = send.protectRtp(rtp(7, 0x55667788, Buffer.from('0123456789abcdef')));
    for (let bit = 0; bit < s.length * 8; bit++) {
      const f = Buffer.from(s);
      f[bit >> 3] = (f[bit >> 3] as number) ^ (0x80 >> (bit & 7));
      const r = recv.unprotectRtp(f);
      // Version, extension and CSRC-count bits change the header shape: those may be 'malformed'.
      if (bit < 8 && [0, 1, 3, 4, 5, 6, 7].includes(bit)) t.true(r === 'auth' || r === 'malformed', `bit ${bit}: ${String(r)}`);
      else t.is(r, 'auth', `bit ${bit}`);
    }
    ok(t, recv.unprotectRtp(s), rtp(7, 0x55667788, Buffer.from('0123456789abcdef')), 'the intact packet still passes: failures changed no state');

    const c = send.protectRtcp(buildReceiverReport({ ssrc: 0x55667788, reports: [] }));
    for (let bit = 0; bit < c.length * 8; bit++) {
      const f = Buffer.from(c);
      f[bit >> 3] = (f[bit >> 3] as number) ^ (0x80 >> (bit & 7));
      const r = recv.unprotectRtcp(f);
      if (bit < 2) t.true(r === 'auth' || r === 'malformed', `SRTCP bit ${bit}`);
      else t.is(r, 'auth', `SRTCP bit ${bit}`);
    }
    ok(t, recv.unprotectRtcp(c), buildReceiverReport({ ssrc: 0x55667788, reports: [] }));

    const wrong = new SrtpReceiveContext(suite, key('another key'));
    t.is(wrong.unprotectRtp(send.protectRtp(rtp(8))), 'auth');
    t.is(wrong.unprotectRtcp(send.protectRtcp(buildReceiverReport({ ssrc: 1, reports: [] }))), 'auth');
    const otherSuite = new SrtpReceiveContext(suite === SUITES[0] ? SUITES[1]! : SUITES[0]!, k);
    t.is(otherSuite.unprotectRtp(send.protectRtp(rtp(9))), 'auth', 'other tag length');
  });
}

test('malformed packets', (t) => {
  const recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', key('m'));
  const ok80 = new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', key('m')).protectRtp(rtp(1));
  t.is(recv.unprotectRtp(new Uint8Array(0)), 'malformed');
  t.is(recv.unprotectRtp(ok80.subarray(0, 21)), 'malformed', 'header + less than a tag');
  const v1 = Buffer.from(ok80);
  v1[0] = 0x40;
  t.is(recv.unprotectRtp(v1), 'malformed');
  const cc = Buffer.from(ok80.subarray(0, 30));
  cc[0] = 0x8f; // 15 CSRCs = 72 header bytes
  t.is(recv.unprotectRtp(cc), 'malformed');
  t.is(recv.unprotectRtcp(new Uint8Array(21)), 'malformed');
  t.is(recv.unprotectRtcp(Buffer.alloc(30, 0x40)), 'malformed', 'RTCP version 1');
  const send = new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', key('m'));
  t.throws(() => send.protectRtp(new Uint8Array(11)), { instanceOf: RangeError });
  t.throws(() => send.protectRtcp(Uint8Array.of(0x80, 200, 0, 0)), { instanceOf: RangeError });
  t.throws(() => new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', new Uint8Array(29)), { instanceOf: RangeError });
  t.throws(() => new SrtpReceiveContext('AES_256_CM_HMAC_SHA1_80' as SrtpSuite, key('m')), { instanceOf: RangeError });
  t.throws(() => new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', key('m'), { maxSsrcs: 0 }), { instanceOf: RangeError });
  t.throws(() => new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', key('m'), { replayWindow: 40000 }), { instanceOf: RangeError });
});

test('SRTCP with the E flag clear (built here with our own HMAC) is authenticated and returned unchanged', (t) => {
  const k = key('unencrypted srtcp');
  const plain = buildReceiverReport({ ssrc: 0x99, reports: [] });
  const body = Buffer.concat([plain, Buffer.from([0, 0, 0, 5])]);
  const authKey = deriveKey(k.subarray(0, 16), k.subarray(16), LABEL_RTCP_AUTH, 20);
  const packet = Buffer.concat([body, createHmac('sha1', authKey).update(body).digest().subarray(0, 10)]);
  const recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_32', k);
  ok(t, recv.unprotectRtcp(packet), plain);
  t.is(recv.unprotectRtcp(packet), 'replay');
  const flagged = Buffer.from(packet);
  flagged[plain.length] = 0x80; // claim E = 1 without re-tagging
  t.is(new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_32', k).unprotectRtcp(flagged), 'auth');
});

// ---- replay, window, ROC ----

test('replay → replay; older than the window → too-old; late packets inside the window pass', (t) => {
  const k = key('replay');
  const send = new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', k);
  const recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', k);
  const packets = Array.from({ length: 300 }, (_, i) => send.protectRtp(rtp(i)));
  const held = new Set([10, 171, 172, 250]);
  for (let i = 0; i < 300; i++) if (!held.has(i)) ok(t, recv.unprotectRtp(packets[i]!), rtp(i));
  t.is(recv.unprotectRtp(packets[299]!), 'replay', 'the newest again');
  t.is(recv.unprotectRtp(packets[200]!), 'replay', 'inside the window');
  ok(t, recv.unprotectRtp(packets[250]!), rtp(250), 'a late one within the window');
  t.is(recv.unprotectRtp(packets[250]!), 'replay');
  ok(t, recv.unprotectRtp(packets[172]!), rtp(172), '299 - 172 = 127: the oldest index the default window of 128 holds');
  t.is(recv.unprotectRtp(packets[171]!), 'too-old', '299 - 171 = 128');
  t.is(recv.unprotectRtp(packets[10]!), 'too-old');
  t.is(recv.unprotectRtp(packets[0]!), 'too-old');

  const small = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', k, { replayWindow: 64 });
  ok(t, small.unprotectRtp(packets[100]!), rtp(100));
  ok(t, small.unprotectRtp(packets[37]!), rtp(37), '63 behind');
  t.is(small.unprotectRtp(packets[36]!), 'too-old', '64 behind');

  // SRTCP has its own window on the explicit index.
  const c = Array.from({ length: 200 }, (_, i) => send.protectRtcp(buildReceiverReport({ ssrc: 0x11223344, reports: [] })));
  for (let i = 0; i < 200; i++) if (i !== 100 && i !== 50) t.false(typeof recv.unprotectRtcp(c[i]!) === 'string');
  t.is(recv.unprotectRtcp(c[199]!), 'replay');
  t.false(typeof recv.unprotectRtcp(c[100]!) === 'string');
  t.is(recv.unprotectRtcp(c[100]!), 'replay');
  t.is(recv.unprotectRtcp(c[50]!), 'too-old');
});

test('sequence wrap 65535 → 0 increments the ROC; a late packet from before the wrap still decrypts', (t) => {
  const k = key('wrap');
  const send = new SrtpSendContext('AES_CM_128_HMAC_SHA1_32', k);
  const recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_32', k);
  const seqs = [65530, 65531, 65532, 65533, 65534, 65535, 65536, 65537, 65538, 65539];
  const p = new Map(seqs.map((s) => [s, send.protectRtp(rtp(s))]));
  t.deepEqual(send.snapshot().streams, [{ ssrc: 0x11223344, roc: 1, lastSeq: 3 }]);
  for (const s of [65530, 65531, 65532, 65533, 65536, 65537, 65535, 65538, 65534, 65539]) ok(t, recv.unprotectRtp(p.get(s)!), rtp(s), `seq ${s & 0xffff}`);
  const st = recv.snapshot().rtp[0]!;
  t.is(st.roc, 1);
  t.is(st.highestSeq, 3);
  t.is(recv.unprotectRtp(p.get(65535)!), 'replay');
  // The ROC is in the IV and the tag: the same SEQ in the next cycle is a different packet.
  const again = new SrtpSendContext('AES_CM_128_HMAC_SHA1_32', k);
  t.notDeepEqual(again.protectRtp(rtp(65536)), p.get(65536), 'ROC 0 vs ROC 1 for SEQ 0');
  // Many wraps: 200k packets in order, the last one decrypts with ROC 3.
  const long = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_32', k);
  const s2 = new SrtpSendContext('AES_CM_128_HMAC_SHA1_32', k);
  let last: Buffer | SrtpFailure = 'malformed';
  let i = 0;
  for (; i + 97 < 200_000; i += 97) t.false(typeof long.unprotectRtp(s2.protectRtp(rtp(i, 7, Buffer.of(i & 0xff)))) === 'string');
  last = long.unprotectRtp(s2.protectRtp(rtp(i, 7, Buffer.of(i & 0xff))));
  ok(t, last, rtp(i, 7, Buffer.of(i & 0xff)));
  t.is(long.snapshot().rtp[0]?.roc, 3);
});

test('snapshot/restore (structuredClone) mid-stream keeps decrypting and still rejects replays', (t) => {
  const k = key('snapshot');
  let send = new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', k);
  let recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', k, { replayWindow: 256, maxSsrcs: 4 });
  const early = Array.from({ length: 40 }, (_, i) => send.protectRtp(rtp(65520 + i)));
  const rtcpEarly = [0, 1, 2].map(() => send.protectRtcp(buildReceiverReport({ ssrc: 0x11223344, reports: [] })));
  for (let i = 0; i < 40; i++) if (i !== 5) ok(t, recv.unprotectRtp(early[i]!), rtp(65520 + i));
  t.false(typeof recv.unprotectRtcp(rtcpEarly[0]!) === 'string');
  t.false(typeof recv.unprotectRtcp(rtcpEarly[2]!) === 'string');

  const sendState = structuredClone(send.snapshot());
  const recvState = structuredClone(recv.snapshot());
  t.is(recvState.replayWindow, 256);
  t.is(recvState.maxSsrcs, 4);
  t.is(recvState.keySalt.length, 30);
  send = SrtpSendContext.restore(sendState);
  recv = SrtpReceiveContext.restore(recvState);

  for (let i = 0; i < 40; i++) if (i !== 5) t.is(recv.unprotectRtp(early[i]!), 'replay', `replayed ${i}`);
  ok(t, recv.unprotectRtp(early[5]!), rtp(65525), 'the gap in the window survived the move');
  t.is(recv.unprotectRtp(early[5]!), 'replay');
  const next = send.protectRtp(rtp(65560));
  ok(t, recv.unprotectRtp(next), rtp(65560), 'the restored sender continues with ROC 1');
  t.is(recv.unprotectRtcp(rtcpEarly[2]!), 'replay');
  t.false(typeof recv.unprotectRtcp(rtcpEarly[1]!) === 'string', 'SRTCP window survived too');
  const c = send.protectRtcp(buildReceiverReport({ ssrc: 0x11223344, reports: [] }));
  t.is(c.readUInt32BE(c.length - 14), 0x80000003, 'the SRTCP index continues');
  t.false(typeof recv.unprotectRtcp(c) === 'string');

  // A peer that restarts the same SSRC and indexes under the same key is refused.
  const restarted = new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', k);
  t.is(recv.unprotectRtp(restarted.protectRtp(rtp(65530))), 'replay');
  t.is(recv.unprotectRtcp(restarted.protectRtcp(buildReceiverReport({ ssrc: 0x11223344, reports: [] }))), 'replay');
});

test('ssrc-limit: at most maxSsrcs SSRCs with state, separately for SRTP and SRTCP; forgeries are still auth', (t) => {
  const k = key('ssrcs');
  const send = new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', k);
  const recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', k, { maxSsrcs: 3 });
  for (const ssrc of [1, 2, 3]) ok(t, recv.unprotectRtp(send.protectRtp(rtp(10, ssrc))), rtp(10, ssrc));
  t.is(recv.unprotectRtp(send.protectRtp(rtp(10, 4))), 'ssrc-limit');
  t.is(recv.unprotectRtp(new SrtpSendContext('AES_CM_128_HMAC_SHA1_80', key('x')).protectRtp(rtp(10, 5))), 'auth', 'not authenticated: auth');
  ok(t, recv.unprotectRtp(send.protectRtp(rtp(11, 2))), rtp(11, 2), 'known SSRCs go on');
  t.deepEqual(recv.ssrcCount, { rtp: 3, rtcp: 0 });
  for (const ssrc of [7, 8, 9]) t.false(typeof recv.unprotectRtcp(send.protectRtcp(buildReceiverReport({ ssrc, reports: [] }))) === 'string');
  t.is(recv.unprotectRtcp(send.protectRtcp(buildReceiverReport({ ssrc: 10, reports: [] }))), 'ssrc-limit');
  t.is(new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_80', k).maxSsrcs, 32, 'default');
  recv.resetReplay();
  ok(t, recv.unprotectRtp(send.protectRtp(rtp(12, 4))), rtp(12, 4), 'after a reset there is room again');
});

test('resetReplay lets an index through again (SRTP and SRTCP)', (t) => {
  const k = key('reset');
  const send = new SrtpSendContext('AES_CM_128_HMAC_SHA1_32', k);
  const recv = new SrtpReceiveContext('AES_CM_128_HMAC_SHA1_32', k);
  const p = send.protectRtp(rtp(500));
  const c = send.protectRtcp(buildReceiverReport({ ssrc: 0x11223344, reports: [] }));
  ok(t, recv.unprotectRtp(p), rtp(500));
  t.false(typeof recv.unprotectRtcp(c) === 'string');
  t.is(recv.unprotectRtp(p), 'replay');
  t.is(recv.unprotectRtcp(c), 'replay');
  recv.resetReplay();
  t.deepEqual(recv.ssrcCount, { rtp: 0, rtcp: 0 });
  ok(t, recv.unprotectRtp(p), rtp(500));
  t.false(typeof recv.unprotectRtcp(c) === 'string');
  t.is(recv.unprotectRtp(p), 'replay');
});

test('decodeSdesKey: exactly 30 bytes of base64, else null; encodeSdesKey is its inverse', (t) => {
  const k = randomBytes(30);
  const b64 = k.toString('base64');
  t.is(b64.length, 40);
  t.deepEqual(Buffer.from(decodeSdesKey(b64)!), k);
  t.is(encodeSdesKey(k), b64);
  // The key of RFC 4568's example offer (a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNf...).
  t.deepEqual(decodeSdesKey('WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz'), new Uint8Array(Buffer.from('YS___semctl () {\t220;}\n}\nunles', 'latin1')));
  for (const bad of ['', randomBytes(29).toString('base64'), randomBytes(31).toString('base64'), `${b64}=`, `${b64}AAAA`, b64.slice(0, 39), `${b64.slice(0, 39)}*`, ` ${b64.slice(1)}`, `${b64.slice(0, 38)}==`, b64.replace(/./g, (c, i) => (i === 3 ? '-' : c))]) {
    t.is(decodeSdesKey(bad), null, JSON.stringify(bad));
  }
  t.is(decodeSdesKey(42 as unknown as string), null);
  t.throws(() => encodeSdesKey(new Uint8Array(16)), { instanceOf: RangeError });
});

// Serial (runs before this file's concurrent tests); best of 3 rounds, since other test files share the 2 cores.
test.serial('rough cost per packet (logged, not asserted)', (t) => {
  for (const suite of SUITES) {
    const k = key('bench');
    const send = new SrtpSendContext(suite, k);
    const recv = new SrtpReceiveContext(suite, k);
    const plain = Array.from({ length: 64 }, (_, i) => rtp(i, 9, randomBytes(160)));
    const n = 10000;
    let seq = 0;
    let best = { protect: Infinity, unprotect: Infinity };
    for (let round = 0; round < 4; round++) {
      const protectedPackets: Buffer[] = [];
      let t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++, seq++) {
        const p = plain[seq & 63]!;
        p.writeUInt16BE(seq & 0xffff, 2);
        protectedPackets.push(send.protectRtp(p));
      }
      const protect = Number(process.hrtime.bigint() - t0) / 1000 / n;
      t0 = process.hrtime.bigint();
      let good = 0;
      for (const p of protectedPackets) if (typeof recv.unprotectRtp(p) !== 'string') good++;
      const unprotect = Number(process.hrtime.bigint() - t0) / 1000 / n;
      t.is(good, n);
      if (round > 0) best = { protect: Math.min(best.protect, protect), unprotect: Math.min(best.unprotect, unprotect) }; // round 0 warms up
    }
    t.log(`${suite}, 160-byte payload: protect ${best.protect.toFixed(1)} µs/packet, unprotect ${best.unprotect.toFixed(1)} µs/packet`);
  }
});
