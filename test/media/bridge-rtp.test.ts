/**
 * RTP and SRTP through the bridge with real peers: ffmpeg sends a sine into one endpoint, a
 * UDP socket of the test is the other endpoint's peer, and what it receives must decode to
 * the same frequency.
 */
import test from 'ava';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { G722Decoder } from '../../protocols/media/codecs/g722.js';
import { dominantFrequency } from '../helpers/audio.js';
import { ffmpeg, mediaAddress, RtpPeer, sdpKey, srtpReceiver, sleep, leg, bridgeSession } from '../helpers/media.js';

async function freePort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  s.close();
  return port & ~1; // even, for RTP
}

/** An SDP for ffmpeg's side: ffmpeg sends from `port`. */
function ffmpegSdp(port: number, o: { key?: Buffer; profile?: string } = {}): string {
  return [
    'v=0',
    `o=- 1 1 IN IP4 127.0.0.1`,
    's=ffmpeg',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${port} ${o.profile ?? (o.key ? 'RTP/SAVP' : 'RTP/AVP')} 0`,
    'a=rtpmap:0 PCMU/8000',
    ...(o.key ? [`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${o.key.toString('base64')}`] : []),
    'a=sendonly',
    '',
  ].join('\r\n');
}

function ffmpegSend(t: Parameters<typeof ffmpeg>[0], to: { address: string; port: number }, localPort: number, o: { freq: number; seconds: number; key?: Buffer }) {
  const target = o.key
    ? ['-srtp_out_suite', 'AES_CM_128_HMAC_SHA1_80', '-srtp_out_params', o.key.toString('base64'), `srtp://${to.address}:${to.port}?localrtpport=${localPort}&localrtcpport=${localPort + 1}`]
    : [`rtp://${to.address}:${to.port}?localrtpport=${localPort}&localrtcpport=${localPort + 1}`];
  return ffmpeg(t, ['-re', '-f', 'lavfi', '-i', `sine=frequency=${o.freq}:duration=${o.seconds}:sample_rate=8000`, '-af', 'asetnsamples=n=160', '-ac', '1', '-c:a', 'pcm_mulaw', '-f', 'rtp', ...target]);
}


test('plain RTP from ffmpeg reaches the other leg as forwarded PCMU of the same frequency', async (t) => {
  const { c } = await bridgeSession(t);
  const port = await freePort();
  const a = await c.call('endpoint.rtp.create_from_offer', { sdp: ffmpegSdp(port) });
  const b = await RtpPeer.open(t);
  const legB = await leg(c, b);
  const connected = c.waitFor('endpoint.state_changed', (e) => e.endpoint_id === a.endpoint_id && e.state === 'connected');
  const sender = ffmpegSend(t, mediaAddress(a.sdp_answer), port, { freq: 800, seconds: 3 });
  t.is((await connected).previous_state, 'new');
  await b.waitFor(100);
  const info = await c.call('session.info', {});
  t.deepEqual(info.routes.find((r) => r.destination === legB.id), { destination: legB.id, sources: [a.endpoint_id], mode: 'forward' });
  const f = dominantFrequency(b.decodedPcmu(5), 8000);
  t.true(Math.abs(f - 800) < 15, `received ${f} Hz`);
  const seqs = b.received.map((r) => r.seq);
  t.true(seqs.every((s, i) => i === 0 || s === ((seqs[i - 1]! + 1) & 0xffff)), 'outgoing sequence numbers are continuous');
  t.is(new Set(b.received.map((r) => r.ssrc)).size, 1);
  await sender.done;
});

test('SRTP: ffmpeg sends with the key of the answer given to the bridge; the plain leg hears it', async (t) => {
  const { c } = await bridgeSession(t);
  const offer = await c.call('endpoint.rtp.create_offer', { srtp: true });
  t.regex(offer.sdp_offer, /RTP\/SAVP/);
  t.is(sdpKey(offer.sdp_offer).key.length, 30);
  const port = await freePort();
  const key = randomBytes(30);
  await c.call('endpoint.rtp.accept_answer', { endpoint_id: offer.endpoint_id, sdp: ffmpegSdp(port, { key }) });
  const b = await RtpPeer.open(t);
  await leg(c, b);
  ffmpegSend(t, mediaAddress(offer.sdp_offer), port, { freq: 600, seconds: 3, key });
  await b.waitFor(100);
  const f = dominantFrequency(b.decodedPcmu(5), 8000);
  t.true(Math.abs(f - 600) < 15, `received ${f} Hz`);
  const ep = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === offer.endpoint_id)!;
  t.is((ep.counters as Record<string, number>).srtpAuthFailures, 0);
  t.true(ep.secure as boolean);
});

test('SRTP with a wrong key is rejected by authentication: nothing reaches the other leg', async (t) => {
  const { c } = await bridgeSession(t);
  const port = await freePort();
  const announced = randomBytes(30);
  const a = await c.call('endpoint.rtp.create_from_offer', { sdp: ffmpegSdp(port, { key: announced }) });
  const b = await RtpPeer.open(t);
  await leg(c, b);
  const run = ffmpegSend(t, mediaAddress(a.sdp_answer), port, { freq: 600, seconds: 1.5, key: randomBytes(30) });
  await run.done;
  await sleep(300);
  t.is(b.received.length, 0);
  const ep = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === a.endpoint_id)!;
  const failures = (ep.counters as Record<string, number>).srtpAuthFailures ?? 0;
  t.true(failures >= 50, `auth failures: ${failures}`);
  t.is(ep.state, 'new', 'no authenticated packet: never connected');
});

test('SRTP towards a peer: it decrypts with the key of the bridge\'s answer', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const b = await RtpPeer.open(t);
  const legB = await leg(c, b, { crypto: { suite: 'AES_CM_128_HMAC_SHA1_80', key: randomBytes(30) } });
  b.recvSrtp = srtpReceiver(sdpKey(legB.answer));
  await a.sendSine(legA.bridge, { freq: 1000, ms: 1500 });
  await b.waitFor(60);
  t.is(b.authFailures, 0);
  const f = dominantFrequency(b.decodedPcmu(3), 8000);
  t.true(Math.abs(f - 1000) < 15, `received ${f} Hz`);
  t.true(b.raw.every((p) => p.length === 12 + 160 + 10), 'every packet carries the 80-bit tag');
  const eps = (await c.call('session.info', {})).endpoints;
  t.true(eps.find((e) => e.endpoint_id === legA.id)!.connected as boolean, 'A sends from the port it announced: its socket is connected to it');
  t.false(eps.find((e) => e.endpoint_id === legB.id)!.connected as boolean, 'B has not sent yet: not connected');
});

test('different codecs are transcoded: PCMU in, G.722 out, same frequency', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const b = await RtpPeer.open(t);
  const legB = await leg(c, b, { codecs: ['9 G722/8000'] });
  t.regex(legB.answer, /a=rtpmap:9 G722\/8000/);
  await a.sendSine(legA.bridge, { freq: 700, ms: 2000 });
  await b.waitFor(60);
  const info = await c.call('session.info', {});
  t.is(info.routes.find((r) => r.destination === legB.id)!.mode, 'mix');
  const g722 = b.received.filter((r) => r.pt === 9);
  t.true(g722.length >= 60);
  t.true(g722.every((r) => r.payload.length === 160), '20 ms of G.722 is 160 bytes');
  const dec = new G722Decoder();
  const pcm = new Int16Array(g722.length * 320);
  g722.forEach((r, i) => pcm.set(dec.decode(r.payload), i * 320));
  const f = dominantFrequency(pcm.subarray(3200), 16000);
  t.true(Math.abs(f - 700) < 15, `received ${f} Hz`);
  const tsSteps = g722.slice(1).map((r, i) => (r.ts - g722[i]!.ts) >>> 0);
  t.true(tsSteps.filter((s) => s !== 160).length <= 2, 'G.722 timestamps advance 160 (8 kHz RTP clock) per 20 ms');
});
