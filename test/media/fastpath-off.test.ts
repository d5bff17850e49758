/**
 * The bridge with the native packet path forced off (HOSTD_MEDIA_NATIVE=0, read when a thread
 * first opens RTP sockets): endpoints run on Node's dgram sockets (session.info `native_path`
 * is null) and forwarding works as before, with the same counters. This file sets the variable
 * for its own process only (ava runs each file in a process of its own).
 */
import test from 'ava';
import { dominantFrequency } from '../helpers/audio.js';
import { bridgeSession, leg, RtpPeer, sleep } from '../helpers/media.js';

process.env.HOSTD_MEDIA_NATIVE = '0';

test('HOSTD_MEDIA_NATIVE=0: dgram sockets, forwarding and counters as with the native path', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const legB = await leg(c, b);
  await a.sendSine(legA.bridge, { freq: 900, ms: 1000 });
  await sleep(300);
  const info = await c.call('session.info', {});
  const epA = info.endpoints.find((e) => e.endpoint_id === legA.id)!;
  const epB = info.endpoints.find((e) => e.endpoint_id === legB.id)!;
  t.is(epA.native_path, null, 'no native sockets');
  t.is(epB.native_path, null);
  t.is(b.received.length, 50);
  const f = dominantFrequency(b.decodedPcmu(3), 8000);
  t.true(Math.abs(f - 900) < 15, `${f} Hz`);
  const seqs = b.received.map((r) => r.seq);
  t.true(seqs.every((s, i) => i === 0 || s === ((seqs[i - 1]! + 1) & 0xffff)));
  t.is((epA.counters as Record<string, number>).packetsIn, 50);
  t.is((epB.counters as Record<string, number>).packetsOut, 50);
});
