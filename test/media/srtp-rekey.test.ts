import test from 'ava';
import { createHash } from 'node:crypto';
import { buildRtp } from '../../protocols/media/rtp.js';
import { buildReceiverReport } from '../../protocols/media/rtcp.js';
import { SrtpReceiveContext, SrtpReceiver, SrtpSendContext, type SrtpFailure } from '../../protocols/media/srtp/index.js';

const SUITE = 'AES_CM_128_HMAC_SHA1_80';
const key = (name: string) => createHash('sha256').update(name).digest().subarray(0, 30);
const rtp = (seq: number, ssrc = 0x0a0b0c0d) => buildRtp({ marker: false, payloadType: 8, sequenceNumber: seq & 0xffff, timestamp: seq * 160, ssrc }, Buffer.from(`pcma ${seq}`));
const rr = (ssrc = 0x0a0b0c0d) => buildReceiverReport({ ssrc, reports: [] });
const passed = (r: Buffer | SrtpFailure) => typeof r !== 'string';

function setup(graceMs?: number) {
  const oldSend = new SrtpSendContext(SUITE, key('old'));
  const newSend = new SrtpSendContext(SUITE, key('new'));
  const rx = new SrtpReceiver(new SrtpReceiveContext(SUITE, key('old')));
  const T = 1_000_000;
  return { oldSend, newSend, rx, T, rekey: () => rx.rekey(new SrtpReceiveContext(SUITE, key('new')), T, graceMs) };
}

test('dual-context rekey: old-key packets pass for 5 s, then are refused; new-key packets pass throughout', (t) => {
  const { oldSend, newSend, rx, T, rekey } = setup();
  t.true(passed(rx.unprotectRtp(oldSend.protectRtp(rtp(1)), T - 10)));
  t.is(rx.unprotectRtp(newSend.protectRtp(rtp(1000)), T - 5), 'auth', 'no new key before the rekey');
  rekey();
  t.true(passed(rx.unprotectRtp(newSend.protectRtp(rtp(1001)), T)));
  t.deepEqual(rx.unprotectRtp(oldSend.protectRtp(rtp(2)), T + 1), rtp(2));
  t.true(passed(rx.unprotectRtcp(oldSend.protectRtcp(rr()), T + 2000)));
  const late = oldSend.protectRtp(rtp(3));
  t.deepEqual(rx.unprotectRtp(late, T + 4999), rtp(3));
  t.is(rx.unprotectRtp(late, T + 4999), 'replay', 'the old context still enforces its replay window');
  t.true(rx.expire(T + 4999), 'old context kept until retireAt');
  t.is(rx.unprotectRtp(oldSend.protectRtp(rtp(4)), T + 5000), 'auth', 'at retireAt the old key is gone');
  t.false(rx.expire(T + 5000));
  t.is(rx.unprotectRtcp(oldSend.protectRtcp(rr()), T + 5001), 'auth');
  t.true(passed(rx.unprotectRtp(newSend.protectRtp(rtp(1002)), T + 6000)));
  t.true(passed(rx.unprotectRtcp(newSend.protectRtcp(rr()), T + 6000)));
  t.is(rx.unprotectRtp(newSend.protectRtp(rtp(1002)), T + 6000), 'replay', 'new-key replays are not retried with the old key');
});

test('rekey, RTCP-only traffic: the SRTCP path alone retires the old key', (t) => {
  const { oldSend, newSend, rx, T, rekey } = setup();
  rekey();
  t.true(passed(rx.unprotectRtcp(oldSend.protectRtcp(rr()), T + 100)));
  t.true(passed(rx.unprotectRtcp(newSend.protectRtcp(rr()), T + 200)));
  t.true(passed(rx.unprotectRtcp(oldSend.protectRtcp(rr()), T + 4999)));
  t.is(rx.unprotectRtcp(oldSend.protectRtcp(rr()), T + 5000), 'auth');
  t.false(rx.expire(T + 5000), 'dropped by the RTCP call, not kept for a later RTP packet');
  t.is(rx.unprotectRtp(oldSend.protectRtp(rtp(9)), T + 5000), 'auth');
});

test('rekey, idle transition: no packet during the grace period, an old-key packet after it is refused', (t) => {
  const { oldSend, rx, T, rekey } = setup();
  t.true(passed(rx.unprotectRtp(oldSend.protectRtp(rtp(1)), T - 1)));
  rekey();
  t.is(rx.unprotectRtp(oldSend.protectRtp(rtp(2)), T + 60_000), 'auth');
  t.is(rx.snapshot().previous, null, 'the old context is gone');
  // And the same with only an expire() tick.
  const s2 = setup();
  s2.rekey();
  t.true(s2.rx.expire(s2.T + 4000));
  t.false(s2.rx.expire(s2.T + 5000));
  t.is(s2.rx.unprotectRtcp(s2.oldSend.protectRtcp(rr()), s2.T + 4000), 'auth', 'time does not go back for a dropped key');
});

test('rekey: custom grace, a second rekey retires the oldest key at once, snapshot/restore mid-transition', (t) => {
  const { oldSend, rx, T, rekey } = setup(1000);
  rekey();
  t.true(passed(rx.unprotectRtp(oldSend.protectRtp(rtp(1)), T + 999)));
  t.is(rx.unprotectRtp(oldSend.protectRtp(rtp(2)), T + 1000), 'auth');

  const a = setup();
  a.rekey();
  t.true(passed(a.rx.unprotectRtp(a.oldSend.protectRtp(rtp(5)), a.T + 10)));
  t.true(passed(a.rx.unprotectRtp(a.newSend.protectRtp(rtp(500)), a.T + 10)));
  const restored = SrtpReceiver.restore(structuredClone(a.rx.snapshot()));
  t.is(restored.unprotectRtp(a.oldSend.protectRtp(rtp(5)), a.T + 20), 'replay', "the old key's replay window survived the move");
  t.true(passed(restored.unprotectRtp(a.oldSend.protectRtp(rtp(6)), a.T + 4000)), 'the old key survives the move with its retireAt');
  t.is(restored.unprotectRtp(a.oldSend.protectRtp(rtp(7)), a.T + 5000), 'auth');
  t.true(passed(restored.unprotectRtp(a.newSend.protectRtp(rtp(501)), a.T + 5000)));

  const third = new SrtpSendContext(SUITE, key('third'));
  const b = setup();
  b.rekey();
  b.rx.rekey(new SrtpReceiveContext(SUITE, key('third')), b.T + 100);
  t.is(b.rx.unprotectRtp(b.oldSend.protectRtp(rtp(1)), b.T + 200), 'auth', 'the first key is retired by the second rekey');
  t.true(passed(b.rx.unprotectRtp(b.newSend.protectRtp(rtp(1)), b.T + 200)), 'the second key is the old one now');
  t.true(passed(b.rx.unprotectRtp(third.protectRtp(rtp(1)), b.T + 200)));
  t.is(b.rx.unprotectRtp(b.newSend.protectRtp(rtp(2)), b.T + 5100), 'auth');
});

test('resetReplay on the receiver resets every live key', (t) => {
  const { oldSend, newSend, rx, T, rekey } = setup();
  const o = oldSend.protectRtp(rtp(1));
  t.true(passed(rx.unprotectRtp(o, T - 1)));
  rekey();
  const n = newSend.protectRtp(rtp(1));
  t.true(passed(rx.unprotectRtp(n, T)));
  t.is(rx.unprotectRtp(o, T + 1), 'replay');
  rx.resetReplay();
  t.true(passed(rx.unprotectRtp(o, T + 2)));
  t.true(passed(rx.unprotectRtp(n, T + 2)));
  t.is(rx.current.ssrcCount.rtp, 1);
});
