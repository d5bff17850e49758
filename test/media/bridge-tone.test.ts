/** Tone endpoints and direction changes on a real bridge, checked by decoding what peers get. */
import test from 'ava';
import { createRequire } from 'node:module';
import { dominantFrequency, goertzelPower, rms } from '../helpers/audio.js';
import { RtpPeer, sleep, leg, bridgeSession } from '../helpers/media.js';


test('a sine tone decodes to the asked frequency; duration_ms ends it with endpoint.tone.finished', async (t) => {
  const { c } = await bridgeSession(t);
  const b = await RtpPeer.open(t);
  await leg(c, b);
  const tone = await c.call('endpoint.create_tone', { tone: 'sine', frequency: 1234, duration_ms: 1000 });
  const finished = await c.waitFor('endpoint.tone.finished', (e) => e.endpoint_id === tone.endpoint_id, 5000);
  t.is(finished.played_ms, 1000);
  await sleep(200);
  const n = b.received.length;
  t.true(n >= 45 && n <= 52, `one second of 20 ms packets, got ${n}`);
  const f = dominantFrequency(b.decodedPcmu(), 8000);
  t.true(Math.abs(f - 1234) < 10, `received ${f} Hz`);
  await sleep(300);
  t.is(b.received.length, n, 'nothing after the tone finished');
  const info = await c.call('session.info', {});
  t.is(info.endpoints.find((e) => e.endpoint_id === tone.endpoint_id)!.state, 'finished');
});

test('ringback has 440 and 480 Hz and its 2 s on / 4 s off cadence starts on', async (t) => {
  const { c } = await bridgeSession(t);
  const b = await RtpPeer.open(t);
  await leg(c, b);
  await c.call('endpoint.create_tone', { tone: 'ringback', duration_ms: 2600 });
  await c.waitFor('endpoint.tone.finished', () => true, 6000);
  const pcm = b.decodedPcmu();
  const on = pcm.subarray(800, 8000 * 1.8);
  const off = pcm.subarray(8000 * 2.1, 8000 * 2.5);
  t.true(goertzelPower(on, 8000, 440) > 100 * goertzelPower(on, 8000, 1000));
  t.true(goertzelPower(on, 8000, 480) > 100 * goertzelPower(on, 8000, 1000));
  t.true(rms(off) < rms(on) / 100, 'silent in the off part of the cadence');
});

test('a tone above what PCMU carries never reaches a PCMU leg as an alias, while an Opus leg gets it', async (t) => {
  const { c } = await bridgeSession(t);
  const pcmu = await RtpPeer.open(t);
  await leg(c, pcmu);
  const opus = await RtpPeer.open(t);
  await leg(c, opus, { codecs: ['111 opus/48000/2'] });
  await c.call('endpoint.create_tone', { tone: 'sine', frequency: 5000, duration_ms: 600 });
  await c.waitFor('endpoint.tone.finished', () => true, 5000);
  await sleep(100);
  const low = pcmu.decodedPcmu();
  t.true(low.length >= 8000 * 0.5, 'the PCMU leg still gets its 20 ms packets');
  t.true(rms(low) < 50, `PCMU leg: silence, not a 3 kHz alias (rms ${rms(low)})`);
  const { OpusEncoder } = createRequire(import.meta.url)('@discordjs/opus');
  const dec = new OpusEncoder(48000, 1);
  const frames = opus.received.filter((r) => r.pt === 111).map((r) => new Int16Array(new Uint8Array(dec.decode(r.payload)).buffer));
  const pcm = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
  frames.reduce((o, f) => (pcm.set(f, o), o + f.length), 0);
  const f = dominantFrequency(pcm.subarray(4800), 48000);
  t.true(Math.abs(f - 5000) < 30, `Opus leg: ${f} Hz`);
});

test('direction changes stop and start the right flows', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  const b = await RtpPeer.open(t);
  const legB = await leg(c, b);
  const both = () => Promise.all([a.sendSine(legA.bridge, { freq: 500, ms: 400, ssrc: 1 }), b.sendSine(legB.bridge, { freq: 900, ms: 400, ssrc: 2 })]);
  const step = async () => {
    const [na, nb] = [a.received.length, b.received.length];
    await both();
    await sleep(150);
    return [a.received.length - na > 10, b.received.length - nb > 10];
  };
  t.deepEqual(await step(), [true, true], 'sendrecv both ways');
  await c.call('endpoint.update_direction', { endpoint_id: legA.id, direction: 'sendonly' });
  t.deepEqual(await step(), [false, true], "A sendonly: A's peer sends (B hears it) but receives nothing");
  await c.call('endpoint.update_direction', { endpoint_id: legA.id, direction: 'recvonly' });
  t.deepEqual(await step(), [true, false], "A recvonly: A's peer hears B, its own audio is not forwarded");
  await c.call('endpoint.update_direction', { endpoint_id: legA.id, direction: 'inactive' });
  t.deepEqual(await step(), [false, false], 'A inactive: isolated');
  await c.call('endpoint.update_direction', { endpoint_id: legA.id, direction: 'auto' });
  t.deepEqual(await step(), [true, true], 'auto: back to the SDP direction (sendrecv)');
  const info = await c.call('session.info', {});
  t.is(info.endpoints.find((e) => e.endpoint_id === legA.id)!.direction_mode, 'auto');
});

test('the SDP direction is the peer\'s: a sendonly offer gets a recvonly answer and is a source only', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a, { direction: 'sendonly' });
  t.regex(legA.answer, /a=recvonly/);
  const b = await RtpPeer.open(t);
  const legB = await leg(c, b);
  await Promise.all([a.sendSine(legA.bridge, { freq: 500, ms: 400 }), b.sendSine(legB.bridge, { freq: 900, ms: 400 })]);
  await sleep(150);
  t.true(b.received.length > 10, 'B hears A');
  t.is(a.received.length, 0, 'A (sendonly) gets nothing');
});

test('media timeout: endpoint.media_timeout when media stops, state disconnected, connected again when it resumes', async (t) => {
  const { c } = await bridgeSession(t, { mediaTimeoutMs: 1000 });
  const a = await RtpPeer.open(t);
  const legA = await leg(c, a);
  await a.sendSine(legA.bridge, { freq: 500, ms: 200 });
  const timeout = await c.waitFor('endpoint.media_timeout', (e) => e.endpoint_id === legA.id, 5000);
  t.is(timeout.timeout_ms, 1000);
  t.true(timeout.last_packet_at !== null);
  t.is((await c.call('session.info', {})).endpoints[0]!.state, 'disconnected');
  const back = c.waitFor('endpoint.state_changed', (e) => e.endpoint_id === legA.id && e.state === 'connected');
  await a.sendSine(legA.bridge, { freq: 500, ms: 100, seq: 5000 });
  t.is((await back).previous_state, 'disconnected');
});
