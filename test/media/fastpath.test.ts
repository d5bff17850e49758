/**
 * The native packet path through the bridge (npm test builds the addon): a forwarded stream
 * is carried by a native rule (session.info `native_path`), decodes to the frequency sent,
 * and keeps one continuous outgoing stream (SSRC, sequence, timestamps) across switches
 * native -> JS -> native (a direction change, a tone that makes it mix, its removal); the
 * counters match the packets; malformed, short and refused packets are dropped and counted
 * without ending the rule; telephone-events are remapped natively.
 */
import test from 'ava';
import dgram from 'node:dgram';
import type { ExecutionContext } from 'ava';
import type { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { buildRtp } from '../../protocols/media/rtp.js';
import { dominantFrequency } from '../helpers/audio.js';
import { bridgeSession, leg, mediaAddress, RtpPeer, sleep, type Received } from '../helpers/media.js';
import { ulawDecode } from '../../protocols/media/codecs/g711.js';

type Native = { source: boolean; destination: boolean } | null;

async function nativeOf(c: MediaBridgeClient, id: string): Promise<Native> {
  const info = await c.call('session.info', {});
  return info.endpoints.find((e) => e.endpoint_id === id)!.native_path as Native;
}

async function countersOf(c: MediaBridgeClient, id: string): Promise<Record<string, number>> {
  const info = await c.call('session.info', {});
  return info.endpoints.find((e) => e.endpoint_id === id)!.counters as Record<string, number>;
}

/** Wait until `pred` holds for the endpoint's native_path (the rule is set on the next packet JS forwards). */
async function waitNative(t: ExecutionContext, c: MediaBridgeClient, id: string, pred: (n: Native) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  let n: Native = null;
  while (Date.now() < deadline) {
    n = await nativeOf(c, id);
    if (pred(n)) return;
    await sleep(40);
  }
  t.fail(`${what}: native_path is ${JSON.stringify(n)}`);
}

function pcmu(rs: Received[]): Int16Array {
  const parts = rs.map((r) => ulawDecode(r.payload));
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) out.set(p, (o += p.length) - p.length);
  return out;
}

test('a forwarded stream runs natively and stays one continuous stream across native → JS → native', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const legB = await leg(c, b);
  const sending = a.sendSine(legA.bridge, { freq: 1000, ms: 4400 });
  await waitNative(t, c, legA.id, (n) => n?.source === true, 'forwarding starts natively');
  t.deepEqual(await nativeOf(c, legB.id), { source: false, destination: true }, 'B is the destination of the rule');
  await sleep(500);
  const nativeSpan = b.received.length;
  const f = dominantFrequency(pcmu(b.received.slice(3, nativeSpan)), 8000);
  t.true(Math.abs(f - 1000) < 15, `native forwarding: ${f} Hz`);

  // A change of direction re-plans: the rule comes back to JS, then is set again.
  await c.call('endpoint.update_direction', { endpoint_id: legB.id, direction: 'recvonly' });
  await waitNative(t, c, legA.id, (n) => n?.source === true, 'the rule is set again after the direction change');
  await sleep(300);

  // A tone makes B's route a mix: JS mixes on the 20 ms clock, no rule.
  const tone = await c.call('endpoint.create_tone', { tone: 'sine', frequency: 400 });
  await sleep(200);
  t.deepEqual(await nativeOf(c, legA.id), { source: false, destination: false }, 'no rule while mixing');
  const mixFrom = b.received.length;
  await sleep(600);
  const mixed = b.received.slice(mixFrom + 2, b.received.length);
  t.true(mixed.length > 20, `${mixed.length} mixed frames`);
  await c.call('endpoint.remove', { endpoint_id: tone.endpoint_id });
  await waitNative(t, c, legA.id, (n) => n?.source === true, 'forwarded natively again after the tone is removed');
  await sending;
  await sleep(300);

  const rs = b.received;
  t.true(rs.length >= 200, `${rs.length} packets at B`);
  t.true(rs.every((r) => r.ssrc === rs[0]!.ssrc), 'one SSRC');
  const seqGaps = rs.filter((r, i) => i > 0 && r.seq !== ((rs[i - 1]!.seq + 1) & 0xffff)).length;
  const tsGaps = rs.filter((r, i) => i > 0 && r.ts !== ((rs[i - 1]!.ts + 160) >>> 0)).length;
  t.is(seqGaps, 0, 'sequence numbers +1 at every packet, across every switch');
  t.is(tsGaps, 0, 'timestamps +160 at every packet, across every switch');
  t.is(rs.filter((r) => r.marker).length, 3, 'marker on the first packet, the first mixed frame and the first forwarded one after');
  const counters = await countersOf(c, legB.id);
  t.is(counters.packetsOut, rs.length, 'B counted every packet it sent (native and JS)');
});

test('counters match the packets; malformed, short and refused packets are dropped and counted; the rule stays', async (t) => {
  const { c } = await bridgeSession(t); // peer policy "address": the SDP address, any port
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  // A announces another port than it sends from: accepted ("address"), but its socket is not
  // connected to it, so the kernel lets a stranger's datagram through for the policy to refuse.
  const sdpA = a.sdp().replace(`m=audio ${a.port} `, `m=audio ${a.port === 40000 ? 40002 : 40000} `);
  const r = await c.call('endpoint.rtp.create_from_offer', { sdp: sdpA });
  const legA = { id: r.endpoint_id, bridge: mediaAddress(r.sdp_answer) };
  const legB = await leg(c, b);
  const sending = a.sendSine(legA.bridge, { freq: 700, ms: 2000 });
  await waitNative(t, c, legA.id, (n) => n?.source === true, 'forwarding starts natively');
  const to = legA.bridge;
  const header = buildRtp({ marker: false, payloadType: 0, sequenceNumber: 1, timestamp: 0, ssrc: 0x1234abcd }, Buffer.alloc(160, 0xff));
  const bad: Buffer[] = [
    Buffer.from([0x80, 0x00, 0x01]), // shorter than an RTP header
    Buffer.concat([Buffer.from([0x40]), header.subarray(1)]), // version 1
    Buffer.concat([Buffer.from([0xa0]), header.subarray(1, header.length - 1), Buffer.from([200])]), // padding longer than the payload
    Buffer.concat([Buffer.from([0x90]), header.subarray(1, 12), Buffer.from([0xbe, 0xde, 0xff, 0xff])]), // extension longer than the packet
    Buffer.concat([Buffer.from([0x8f]), header.subarray(1, 40)]), // 15 CSRCs announced, 7 present
  ];
  for (const p of bad) a.socket.send(p, to.port, to.address);
  // Another address than the SDP's: refused by the peer policy (127.0.0.2 is loopback too).
  const stranger = dgram.createSocket('udp4');
  t.teardown(() => stranger.close());
  await new Promise<void>((r) => stranger.bind(0, '127.0.0.2', () => r()));
  stranger.send(header, to.port, to.address);
  await sending;
  await sleep(300);
  const ca = await countersOf(c, legA.id);
  const cb = await countersOf(c, legB.id);
  t.is(ca.packetsIn, 100, 'every good packet, none of the bad ones');
  t.is(ca.bytesIn, 100 * 172);
  t.is(ca.malformed, bad.length);
  t.is(ca.policyDrops, 1);
  t.is(cb.packetsOut, 100);
  t.is(cb.bytesOut, 100 * 160);
  t.is(b.received.length, 100, 'B got exactly the good packets');
  t.true(b.received.every((r) => r.payload.length === 160));
  t.deepEqual(await nativeOf(c, legA.id), { source: true, destination: false }, 'the rule survived the bad packets');
  const metrics = await c.call('session.info', {});
  t.is(metrics.routes.find((r) => r.destination === legB.id)?.mode, 'forward');
});

test('telephone-events are remapped natively (PT 101 → 96) with the stream timestamps; the rule stays', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const legA = await leg(c, a, { te: true });
  const offerB = b
    .sdp({ codecs: ['0 PCMU/8000'] })
    .replace(`m=audio ${b.port} RTP/AVP 0`, `m=audio ${b.port} RTP/AVP 0 96`)
    .replace('a=ptime:20', 'a=rtpmap:96 telephone-event/8000\r\na=ptime:20');
  await c.call('endpoint.rtp.create_from_offer', { sdp: offerB });
  const to = legA.bridge;
  const send = (pt: number, seq: number, ts: number, payload: Buffer, marker = false) =>
    a.socket.send(buildRtp({ marker, payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc: 0x55aa55aa }, payload), to.port, to.address);
  for (let i = 0; i < 10; i++) {
    send(0, 100 + i, 1000 + 160 * i, Buffer.alloc(160, 0x7f), i === 0);
    await sleep(20);
  }
  await waitNative(t, c, legA.id, (n) => n?.source === true, 'forwarding starts natively');
  // Event packets: one timestamp (the event's start), durations growing.
  for (let i = 0; i < 3; i++) send(101, 110 + i, 2600, Buffer.from([5, i === 2 ? 0x8a : 10, (160 * (i + 1)) >> 8, (160 * (i + 1)) & 0xff]), i === 0);
  await sleep(300);
  t.deepEqual(await nativeOf(c, legA.id), { source: true, destination: false }, 'events did not end the rule');
  const ev = b.received.filter((r) => r.pt === 96);
  t.is(ev.length, 3);
  const audio = b.received.filter((r) => r.pt === 0);
  const offset = (audio[0]!.ts - 1000) >>> 0;
  t.true(ev.every((e) => e.ts === ((2600 + offset) >>> 0)), 'the event keeps the source timestamp mapping');
  const expected = [0, 1, 2].map((i) => [5, i === 2 ? 0x8a : 10, (160 * (i + 1)) >> 8, (160 * (i + 1)) & 0xff]);
  t.deepEqual(ev.map((e) => [...e.payload]), expected, 'event payloads unchanged (same clock rate)');
  t.true(ev[0]!.marker && !ev[1]!.marker, 'the marker of the event is kept');
  const seqs = b.received.map((r) => r.seq);
  t.true(seqs.every((s, i) => i === 0 || s === ((seqs[i - 1]! + 1) & 0xffff)), 'one sequence across audio and events');
});
