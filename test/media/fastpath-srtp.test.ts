/**
 * SRTP on the native packet path, through the bridge with real peers: ffmpeg's SRTP (SDES) into
 * a leg whose other leg is plain is carried by the native rule and decodes to the frequency
 * sent; plain RTP into an SRTP leg leaves natively encrypted and is decrypted by an independent
 * implementation (protocols/media's JS contexts on the peer's side); forged and replayed packets
 * are dropped and counted by the rule itself (it stays set); a switch native → JS → native keeps
 * the replay window, the ROC (a SEQ wrap on the native path) and the outgoing streams exact; a
 * rekey during native forwarding accepts the old key for 5 s, then refuses it.
 */
import test, { type ExecutionContext } from 'ava';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import type { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import type { SrtpSendContext } from '../../protocols/media/srtp/index.js';
import type { SrtpSuite } from '../../protocols/media/types.js';
import { dominantFrequency } from '../helpers/audio.js';
import { bridgeSession, ffmpeg, leg, mediaAddress, RtpPeer, sdpKey, sleep, srtpReceiver, srtpSender, type Received } from '../helpers/media.js';

type Native = { source: boolean; destination: boolean } | null;

async function endpointInfo(c: MediaBridgeClient, id: string): Promise<{ native: Native; counters: Record<string, number> }> {
  const info = await c.call('session.info', {});
  const ep = info.endpoints.find((e) => e.endpoint_id === id)!;
  return { native: ep.native_path as Native, counters: ep.counters as Record<string, number> };
}

async function waitNative(t: ExecutionContext, c: MediaBridgeClient, id: string, pred: (n: Native) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 6000;
  let n: Native = null;
  while (Date.now() < deadline) {
    n = (await endpointInfo(c, id)).native;
    if (pred(n)) return;
    await sleep(40);
  }
  t.fail(`${what}: native_path is ${JSON.stringify(n)}`);
}

async function freePort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port & ~1;
}

/** A send context that keeps a copy of every packet it protects (to replay them later). */
function recording(ctx: SrtpSendContext, sent: Buffer[]): SrtpSendContext {
  return { protectRtp: (p: Uint8Array) => {
    const out = ctx.protectRtp(p);
    sent.push(Buffer.from(out));
    return out;
  } } as unknown as SrtpSendContext;
}

function continuous(rs: Received[]): number {
  return rs.filter((r, i) => i > 0 && r.seq !== ((rs[i - 1]!.seq + 1) & 0xffff)).length;
}

test('ffmpeg sends SRTP (SDES): the native rule authenticates and decrypts it; the plain leg decodes 600 Hz', async (t) => {
  const { c } = await bridgeSession(t);
  const port = await freePort();
  const key = randomBytes(30);
  const sdpA = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=ffmpeg', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${port} RTP/SAVP 0`, 'a=rtpmap:0 PCMU/8000',
    `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key.toString('base64')}`, 'a=sendonly', ''].join('\r\n');
  const a = await c.call('endpoint.rtp.create_from_offer', { sdp: sdpA });
  const b = await RtpPeer.open(t);
  const legB = await leg(c, b);
  const to = mediaAddress(a.sdp_answer);
  const ff = ffmpeg(t, ['-re', '-f', 'lavfi', '-i', 'sine=frequency=600:duration=3:sample_rate=8000', '-af', 'asetnsamples=n=160', '-ac', '1', '-c:a', 'pcm_mulaw', '-f', 'rtp',
    '-srtp_out_suite', 'AES_CM_128_HMAC_SHA1_80', '-srtp_out_params', key.toString('base64'), `srtp://${to.address}:${to.port}?localrtpport=${port}&localrtcpport=${port + 1}`]);
  await waitNative(t, c, a.endpoint_id, (n) => n?.source === true, 'ffmpeg\'s SRTP is forwarded natively');
  t.deepEqual((await endpointInfo(c, legB.id)).native, { source: false, destination: true });
  const from = b.received.length;
  t.is(await ff.done, 0, ff.stderr());
  await sleep(200);
  const native = b.received.slice(from);
  t.true(native.length >= 60, `${native.length} packets forwarded while the rule was set`);
  const f = dominantFrequency(b.decodedPcmu(from), 8000);
  t.true(Math.abs(f - 600) < 15, `the plain peer decodes ${f} Hz`);
  t.is(continuous(b.received), 0, 'no gap in the outgoing sequence');
  const { counters } = await endpointInfo(c, a.endpoint_id);
  t.is(counters.srtpAuthFailures, 0);
  t.is(counters.srtpReplays, 0);
  t.true(counters.packetsIn! >= b.received.length, `packetsIn ${counters.packetsIn} counted natively too`);
});

for (const suite of ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32'] as SrtpSuite[]) {
  test(`plain in, ${suite} out: encrypted and tagged natively, decrypted by the JS SRTP at the peer`, async (t) => {
    const { c } = await bridgeSession(t);
    const a = await RtpPeer.open(t);
    const b = await RtpPeer.open(t);
    const legA = await leg(c, a);
    const legB = await leg(c, b, { crypto: { suite, key: randomBytes(30) } });
    b.recvSrtp = srtpReceiver(sdpKey(legB.answer));
    const sending = a.sendSine(legA.bridge, { freq: 1000, ms: 2000 });
    await waitNative(t, c, legA.id, (n) => n?.source === true, 'forwarded natively');
    t.deepEqual((await endpointInfo(c, legB.id)).native, { source: false, destination: true });
    const from = b.raw.length;
    await sending;
    await sleep(200);
    t.true(b.raw.length - from >= 60, `${b.raw.length - from} packets sent natively`);
    t.is(b.authFailures, 0, 'every packet authenticates with the key of the bridge\'s answer');
    const tag = suite === 'AES_CM_128_HMAC_SHA1_80' ? 10 : 4;
    t.true(b.raw.every((p) => p.length === 12 + 160 + tag), `every packet carries the ${tag * 8}-bit tag`);
    t.true(b.raw.slice(from).every((p, i) => !p.subarray(12, 172).equals(b.received[from + i]!.payload)), 'the payload is encrypted on the wire');
    t.is(continuous(b.received), 0, 'sequence numbers continuous from JS to native');
    const f = dominantFrequency(b.decodedPcmu(3), 8000);
    t.true(Math.abs(f - 1000) < 15, `${f} Hz`);
  });
}

test('a forged tag, a replayed and a too-old packet are dropped and counted by the native rule, which stays set', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const k = { suite: 'AES_CM_128_HMAC_SHA1_32' as SrtpSuite, key: randomBytes(30) };
  const legA = await leg(c, a, { crypto: k });
  await leg(c, b);
  const sent: Buffer[] = [];
  await a.sendSine(legA.bridge, { freq: 800, ms: 3000, srtp: recording(srtpSender(k), sent) });
  await sleep(150);
  t.true((await endpointInfo(c, legA.id)).native?.source === true, 'the rule is set');
  const before = (await endpointInfo(c, legA.id)).counters;
  const received = b.received.length;
  const forged = Buffer.from(sent.at(-1)!);
  forged[forged.length - 1]! ^= 1;
  const forgedPayload = Buffer.from(sent.at(-1)!);
  forgedPayload[20]! ^= 0x80;
  const to = legA.bridge;
  for (const p of [forged, forgedPayload, sent.at(-1)!, sent.at(-5)!, sent[0]!]) a.socket.send(p, to.port, to.address);
  await sleep(300);
  const after = await endpointInfo(c, legA.id);
  t.deepEqual(after.native, { source: true, destination: false }, 'dropped in C: JS never saw them, the rule was not taken back');
  t.is(after.counters.srtpAuthFailures! - before.srtpAuthFailures!, 2, 'a bad tag and a modified payload');
  t.is(after.counters.srtpReplays! - before.srtpReplays!, 3, 'two replays within the window, one older than it (150 packets back)');
  t.is(b.received.length, received, 'nothing reached the other leg');
});

test('native → JS → native keeps the replay window, the ROC and both streams exact (SRTP↔RTP both ways)', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const k = { suite: 'AES_CM_128_HMAC_SHA1_80' as SrtpSuite, key: randomBytes(30) };
  const legA = await leg(c, a, { crypto: k });
  const legB = await leg(c, b);
  a.recvSrtp = srtpReceiver(sdpKey(legA.answer));
  const sent: Buffer[] = [];
  // A's SEQ starts 30 before the wrap: the ROC becomes 1 on the native path.
  const aSending = a.sendSine(legA.bridge, { freq: 700, ms: 3600, srtp: recording(srtpSender(k), sent), seq: 65506 });
  const bSending = b.sendSine(legB.bridge, { freq: 1100, ms: 3600 });
  await waitNative(t, c, legA.id, (n) => n?.source === true && n.destination === true, 'both directions native');
  // Past the wrap (30 packets in), natively.
  for (let i = 0; i < 200 && sent.length < 45; i++) await sleep(20);
  const beforeSwitch = sent.length;
  t.true(beforeSwitch >= 45, `${beforeSwitch} packets sent, the SEQ wrapped`);
  t.deepEqual((await endpointInfo(c, legA.id)).native, { source: true, destination: true }, 'still native after the wrap');
  // JS takes both rules back (re-plan), then a tone makes both routes a mix (JS), then native again.
  await c.call('endpoint.update_direction', { endpoint_id: legB.id, direction: 'sendrecv' });
  const tone = await c.call('endpoint.create_tone', { tone: 'sine', frequency: 400 });
  await sleep(300);
  t.deepEqual((await endpointInfo(c, legA.id)).native, { source: false, destination: false }, 'no rule while mixing');
  // A replay of a packet C accepted, reaching JS: JS must know C's window.
  a.socket.send(sent[beforeSwitch - 3]!, legA.bridge.port, legA.bridge.address);
  await sleep(100);
  await c.call('endpoint.remove', { endpoint_id: tone.endpoint_id });
  await waitNative(t, c, legA.id, (n) => n?.source === true && n.destination === true, 'native again after the tone');
  // And one accepted by JS while mixing, reaching C: C must know JS's window.
  a.socket.send(sent[beforeSwitch + 8]!, legA.bridge.port, legA.bridge.address);
  await Promise.all([aSending, bSending]);
  await sleep(200);
  const { counters } = await endpointInfo(c, legA.id);
  t.is(counters.srtpAuthFailures, 0, 'every packet of A authenticated, across the wrap and every switch');
  t.is(counters.srtpReplays, 2, 'both replays refused, one by JS and one by C');
  t.is(a.authFailures, 0, 'A authenticates every packet the bridge sent it (native and JS: the ROC and key state followed)');
  t.true(a.received.length > 150, `${a.received.length} packets at A`);
  t.is(continuous(a.received), 0, 'A: sequence continuous across the switches');
  const forwardedToB = b.received.filter((r) => r.ssrc === b.received[0]!.ssrc);
  t.is(continuous(forwardedToB), 0, 'B: sequence continuous across the switches');
  t.true(b.received.length >= 170, `${b.received.length} packets at B (nothing lost around the wrap)`);
});

test('rekey during native forwarding: the old key works for 5 s (on the JS path), then is refused natively', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const oldKey = { suite: 'AES_CM_128_HMAC_SHA1_80' as SrtpSuite, key: randomBytes(30) };
  const legA = await leg(c, a, { crypto: oldKey });
  await leg(c, b);
  const oldSend = srtpSender(oldKey);
  await a.sendSine(legA.bridge, { freq: 500, ms: 600, srtp: oldSend, seq: 100 });
  await waitNative(t, c, legA.id, (n) => n?.source === true, 'native with the first key');
  await c.call('endpoint.rtp.srtp_rekey', { endpoint_id: legA.id });
  const newKey = { suite: 'AES_CM_128_HMAC_SHA1_80' as SrtpSuite, key: randomBytes(30) };
  await c.call('endpoint.rtp.accept_answer', { endpoint_id: legA.id, sdp: a.sdp({ crypto: newKey }) });
  const newSend = srtpSender(newKey);
  const at0 = b.received.length;
  await a.sendSine(legA.bridge, { freq: 500, ms: 300, srtp: oldSend, seq: 130 });
  await a.sendSine(legA.bridge, { freq: 500, ms: 300, srtp: newSend, seq: 145 });
  await sleep(100);
  t.true(b.received.length - at0 >= 28, `old and new key accepted in the transition (${b.received.length - at0})`);
  t.false((await endpointInfo(c, legA.id)).native?.source, 'no rule while the old key is live');
  await sleep(4800);
  await a.sendSine(legA.bridge, { freq: 500, ms: 400, srtp: newSend, seq: 160 });
  await waitNative(t, c, legA.id, (n) => n?.source === true, 'native again with the new key');
  // The new-key packets still on their way (a loaded machine forwards them late) land before
  // the count is taken: wait until B has had nothing for 150 ms.
  for (let last = -1, until = Date.now() + 3000; b.received.length !== last && Date.now() < until; ) {
    last = b.received.length;
    await sleep(150);
  }
  const before = await endpointInfo(c, legA.id);
  const at1 = b.received.length;
  await a.sendSine(legA.bridge, { freq: 500, ms: 200, srtp: oldSend, seq: 200 });
  await sleep(150);
  const after = await endpointInfo(c, legA.id);
  t.is(b.received.length, at1, 'the old key is refused after 5 s');
  t.is(after.counters.srtpAuthFailures! - before.counters.srtpAuthFailures!, 10, 'each old-key packet counted');
  t.true(after.native?.source, 'refused by the native rule');
  await a.sendSine(legA.bridge, { freq: 500, ms: 200, srtp: newSend, seq: 220 });
  await sleep(100);
  t.true(b.received.length >= at1 + 9, 'the new key still works natively');
  t.is(continuous(b.received), 0, 'B\'s stream continuous throughout');
});
