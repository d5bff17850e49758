/**
 * SRTP in the native addon on its own: a rule SRTP in → SRTP out (both sides at once) checked
 * against protocols/media's JS contexts (the peer protects with one, the listener unprotects
 * with another, keys derived by kdf.ts), the receive state handed back in the form of
 * SrtpReceiveState (a restored JS context then refuses the replays C saw), the send ROC across
 * a SEQ wrap, SRTP packets too short for their tag, and refused SRTP arguments.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { F, NATIVE_WINDOW_WORDS, SRTP_KEYS, STATE_FIELDS } from '../../actors/media-session/fastpath.js';
import { addon, nativeSocket, ruleRig, until } from '../helpers/fastpath.js';
import { buildRtp, parseRtp } from '../../protocols/media/rtp.js';
import { deriveKey } from '../../protocols/media/srtp/kdf.js';
import { SrtpReceiveContext, SrtpSendContext } from '../../protocols/media/srtp/index.js';

const SUITE = 'AES_CM_128_HMAC_SHA1_80';

/** Session keys in the addon's layout, from kdf.ts (RFC 3711 labels 0, 2, 1). */
function sessionKeys(keySalt: Uint8Array): Uint8Array {
  const k = new Uint8Array(50);
  k.set(deriveKey(keySalt.subarray(0, 16), keySalt.subarray(16), 0, 16), 0);
  k.set(deriveKey(keySalt.subarray(0, 16), keySalt.subarray(16), 2, 14), 16);
  k.set(deriveKey(keySalt.subarray(0, 16), keySalt.subarray(16), 1, 20), 30);
  return k;
}

function baseState(): Float64Array {
  const s = new Float64Array(STATE_FIELDS);
  s[F.ssrc] = 0xdeadbeef;
  s[F.seq] = 65530; // the outgoing SEQ wraps: the send ROC must follow
  s[F.expectSsrc] = 0x01020304;
  s[F.badSeq] = 65537;
  s[F.transit] = NaN;
  s[F.clock] = 8000;
  s[F.teIn] = -1;
  s[F.teOut] = -1;
  return s;
}

test('SRTP in and SRTP out on one rule: JS-protected packets are forwarded, re-protected and decrypted by JS; the state comes back exact', async (t) => {
  const { src, dst, sender, listener, toJs } = await ruleRig(t);
  const inKey = randomBytes(30);
  const outKey = randomBytes(30);
  const peerSend = new SrtpSendContext(SUITE, inKey);
  const jsRecv = new SrtpReceiveContext(SUITE, inKey);
  // JS has accepted SEQ 65534 of the source (as the session does before it sets a rule).
  const first = peerSend.protectRtp(buildRtp({ marker: false, payloadType: 0, sequenceNumber: 65534, timestamp: 0, ssrc: 0x01020304 }, Buffer.alloc(160, 1)));
  t.false(typeof jsRecv.unprotectRtp(first) === 'string');
  const rx = jsRecv.snapshot().rtp[0]!;
  // Our sending side: JS sent SEQ 65529 with ROC 0.
  const ourSend = new SrtpSendContext(SUITE, outKey);
  ourSend.protectRtp(buildRtp({ marker: false, payloadType: 0, sequenceNumber: 65529, timestamp: 0, ssrc: 0xdeadbeef }, Buffer.alloc(160)));

  const s = baseState();
  s[F.inRoc] = rx.roc;
  s[F.inHighestSeq] = rx.highestSeq;
  s[F.inWindow] = 128;
  for (let w = 0; w < NATIVE_WINDOW_WORDS; w++) s[F.inW0 + w] = rx.window[w] ?? 0;
  s[F.outRoc] = 0;
  s[F.outLastSeq] = 65529;
  const keys = new Uint8Array(SRTP_KEYS.bytes);
  keys[SRTP_KEYS.inTag] = 10;
  keys[SRTP_KEYS.outTag] = 10;
  keys.set(sessionKeys(inKey), SRTP_KEYS.in);
  keys.set(sessionKeys(outKey), SRTP_KEYS.out);
  const map = new Int32Array(128).fill(-1);
  map[0] = 8;
  t.true(addon!.setRule(src.h, dst.h, s, '127.0.0.1', listener.port, '127.0.0.1', sender.port, map, keys));

  const sent: Buffer[] = [];
  for (let i = 1; i <= 10; i++) {
    const p = peerSend.protectRtp(buildRtp({ marker: false, payloadType: 0, sequenceNumber: (65534 + i) & 0xffff, timestamp: i * 160, ssrc: 0x01020304 }, Buffer.alloc(160, i)));
    sent.push(p);
    sender.socket.send(p, src.port, '127.0.0.1');
  }
  sender.socket.send(sent[3]!, src.port, '127.0.0.1'); // a replay
  sender.socket.send(first, src.port, '127.0.0.1'); // accepted by JS before the rule: C knows it
  sender.socket.send(sent[4]!.subarray(0, 12 + 9), src.port, '127.0.0.1'); // shorter than header + tag
  await until(() => listener.got.length >= 10);
  await new Promise((r) => setTimeout(r, 100));
  t.is(toJs.length, 0, 'nothing reached JS');
  t.is(listener.got.length, 10, 'ten forwarded, the replays and the short packet dropped');
  const listenerRecv = new SrtpReceiveContext(SUITE, outKey);
  const seqs: number[] = [];
  for (const [i, p] of listener.got.entries()) {
    const r = listenerRecv.unprotectRtp(p);
    if (typeof r === 'string') {
      t.fail(`packet ${i}: ${r}`);
      continue;
    }
    const h = parseRtp(r)!;
    seqs.push(h.sequenceNumber);
    t.is(h.payloadType, 8);
    t.is(h.ssrc, 0xdeadbeef);
    t.true(r.subarray(12).equals(Buffer.alloc(160, i + 1)), `payload ${i} decrypted by C and re-encrypted for the listener`);
  }
  t.deepEqual(seqs, [65530, 65531, 65532, 65533, 65534, 65535, 0, 1, 2, 3], 'across the wrap (ROC 1 from SEQ 0: the listener authenticates them)');

  const out = new Float64Array(STATE_FIELDS);
  t.true(addon!.takeRule(src.h, out));
  t.is(out[F.dReplays], 2);
  t.is(out[F.dMalformed], 1);
  t.is(out[F.dAuthFailures], 0);
  t.is(out[F.outRoc], 1);
  t.is(out[F.outLastSeq], 3);
  t.is(out[F.inRoc], 1);
  t.is(out[F.inHighestSeq], 8);
  // The handed-back window in SrtpReceiveState form: a JS context restored from it refuses what C accepted.
  const words = Array.from({ length: 4 }, (_, w) => out[F.inW0 + w]!);
  const restored = SrtpReceiveContext.restore({ ...jsRecv.snapshot(), rtp: [{ ssrc: 0x01020304, roc: out[F.inRoc]!, highestSeq: out[F.inHighestSeq]!, window: words }] });
  t.is(restored.unprotectRtp(sent[9]!), 'replay');
  t.is(restored.unprotectRtp(sent[0]!), 'replay');
  t.is(restored.unprotectRtp(first), 'replay');
  const next = peerSend.protectRtp(buildRtp({ marker: false, payloadType: 0, sequenceNumber: 9, timestamp: 0, ssrc: 0x01020304 }, Buffer.alloc(10)));
  t.false(typeof restored.unprotectRtp(next) === 'string', 'the next index passes with ROC 1');
  const sendBack = SrtpSendContext.restore({ ...ourSend.snapshot(), streams: [{ ssrc: 0xdeadbeef, roc: out[F.outRoc]!, lastSeq: out[F.outLastSeq]! }] });
  const jsNext = sendBack.protectRtp(buildRtp({ marker: false, payloadType: 8, sequenceNumber: 4, timestamp: 0, ssrc: 0xdeadbeef }, Buffer.alloc(10)));
  t.false(typeof listenerRecv.unprotectRtp(jsNext) === 'string', 'JS carries on with the ROC C handed back');
});

test('SRTP arguments out of range are refused; a plain rule without keys still works', async (t) => {
  const n = await nativeSocket(t);
  const map = new Int32Array(128);
  const s = baseState();
  s[F.inWindow] = 128;
  const keys = new Uint8Array(SRTP_KEYS.bytes);
  keys[SRTP_KEYS.inTag] = 7;
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys), 'a tag length other than 4 or 10');
  keys[SRTP_KEYS.inTag] = 10;
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys.subarray(0, 60)), 'a key block too short');
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, new Float64Array(102) as unknown as Uint8Array), 'not a Uint8Array');
  s[F.inWindow] = 129;
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys), 'a window larger than the native 128');
  s[F.inWindow] = 0;
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys), 'an empty window');
  s[F.inWindow] = 64;
  s[F.inHighestSeq] = 65536;
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys), 'a SEQ beyond 16 bits');
  s[F.inHighestSeq] = 1;
  s[F.inW0] = -1;
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys), 'a window word that is not a u32');
  s[F.inW0] = 0;
  keys[SRTP_KEYS.outTag] = 4;
  s[F.outLastSeq] = 70_000;
  t.false(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys), 'a send SEQ beyond 16 bits');
  s[F.outLastSeq] = 5;
  t.true(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, keys), 'well formed');
  const out = new Float64Array(STATE_FIELDS);
  t.true(addon!.takeRule(n.h, out));
  t.is(out[F.inWindow], 64);
  t.is(out[F.inW0], 1, 'the highest index is marked received');
  t.true(addon!.setRule(n.h, n.h, s, '127.0.0.1', 9, '127.0.0.1', -1, map, null), 'plain with null');
  t.true(addon!.takeRule(n.h, out));
});
