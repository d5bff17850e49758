/**
 * File endpoints playing Ogg Opus on a real bridge: an .opus file made by ffmpeg (libopus) plays
 * into a PCMU RTP peer as its tone, at its length; a corrupt (flipped byte → CRC), a cut, a
 * non-Opus Ogg and a huge .opus are refused at create, creating nothing; an .opus URL served by
 * a loopback HTTP server goes buffering → playing, a corrupt one finishes with the CRC error.
 */
import test from 'ava';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseCidrList } from '../../protocols/media/ip.js';
import { audioTempDir, dominantFrequency, ffmpeg } from '../helpers/audio.js';
import { bridgeSession, leg, outcome, RtpPeer, sleep } from '../helpers/media.js';

test.serial('a stereo .opus made by ffmpeg plays into a PCMU peer as its 1 kHz tone, 1 s, then finishes', async (t) => {
  const dir = audioTempDir(t);
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=44100:duration=1', '-ac', '2', '-c:a', 'libopus', join(dir, 'tone.opus')]);
  const { c } = await bridgeSession(t, { fileDir: dir });
  const pcmu = await RtpPeer.open(t);
  await leg(c, pcmu);
  const started = Date.now();
  const made = await c.call('endpoint.create_file', { source: 'tone.opus' });
  t.is(made.state, 'playing');
  t.is(made.duration_ms, 1000);
  const finished = await c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === made.endpoint_id, 5000);
  const took = Date.now() - started;
  t.is(finished.played_ms, 1000);
  t.is(finished.reason, 'completed');
  t.true(took >= 950 && took < 1600, `finished after ${took} ms`);
  await sleep(150);
  t.true(pcmu.received.length >= 48 && pcmu.received.length <= 51, `50 packets of 20 ms, got ${pcmu.received.length}`);
  const f = dominantFrequency(pcmu.decodedPcmu(), 8000);
  t.true(Math.abs(f - 1000) < 5, `PCMU: ${f} Hz`);
  const info = await c.call('session.info', {});
  t.like(info.endpoints.find((e) => e.endpoint_id === made.endpoint_id), { type: 'file', state: 'finished', sample_rate: 48000, played_ms: 1000 });
});

test.serial('refused at create, creating nothing: a flipped byte (CRC), a cut file, Ogg that is not Opus, a huge .opus', async (t) => {
  const dir = audioTempDir(t);
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=0.3', '-c:a', 'libopus', join(dir, 'good.opus')]);
  const bytes = readFileSync(join(dir, 'good.opus'));
  const flipped = Buffer.from(bytes);
  flipped[flipped.length - 20] = flipped[flipped.length - 20]! ^ 0x01;
  writeFileSync(join(dir, 'flipped.opus'), flipped);
  writeFileSync(join(dir, 'cut.opus'), bytes.subarray(0, bytes.length - 33));
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=0.3', '-c:a', 'flac', join(dir, 'flac.ogg')]);
  // 101 MiB (sparse) behind a valid start: over the 100 MiB default cap, refused unread.
  writeFileSync(join(dir, 'huge.opus'), bytes);
  truncateSync(join(dir, 'huge.opus'), 101 * 1024 * 1024);
  const { c } = await bridgeSession(t, { fileDir: dir });
  const cases: Array<[string, RegExp]> = [
    ['flipped.opus', /^ENDPOINT_ERROR: .*source flipped.opus: corrupt Ogg file: the CRC of the page at byte \d+ is 0x[0-9a-f]{8}, its bytes give 0x[0-9a-f]{8}/],
    ['cut.opus', /^ENDPOINT_ERROR: .*source cut.opus: truncated Ogg file/],
    ['flac.ogg', /^ENDPOINT_ERROR: .*source flac.ogg: unsupported Ogg file: the first packet is not OpusHead; only Ogg Opus is played/],
    ['huge.opus', /^ENDPOINT_ERROR: .*source huge.opus is 105906176 bytes; the limit is 104857600/],
  ];
  for (const [source, expected] of cases) t.regex(await outcome(c.call('endpoint.create_file', { source })), expected, source);
  t.deepEqual((await c.call('session.info', {})).endpoints, [], 'nothing was created');
  const ok = await c.call('endpoint.create_file', { source: 'good.opus' });
  t.is(ok.duration_ms, 300, 'the unharmed file plays');
});

test.serial('an .opus URL goes buffering → playing and plays its tone; a corrupt one finishes with the CRC error', async (t) => {
  const dir = audioTempDir(t);
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=700:sample_rate=48000:duration=0.6', '-c:a', 'libopus', join(dir, 'tone.opus')]);
  const good = readFileSync(join(dir, 'tone.opus'));
  const bad = Buffer.from(good);
  bad[200] = bad[200]! ^ 0x08;
  const server = createServer((req, res) => {
    const body = req.url === '/tone.opus' ? good : req.url === '/bad.opus' ? bad : null;
    if (body) res.writeHead(200, { 'Content-Type': 'audio/ogg', 'Content-Length': body.length }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { c } = await bridgeSession(t, { fileOrigins: [origin], fileNetworks: parseCidrList('127.0.0.1/32') });
  const peer = await RtpPeer.open(t);
  await leg(c, peer);
  const playing = c.waitFor('endpoint.state_changed', (e) => e.state === 'playing', 5000);
  const made = await c.call('endpoint.create_file', { source: `${origin}/tone.opus` });
  t.is(made.state, 'buffering');
  t.is((await playing).previous_state, 'buffering');
  const done = await c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === made.endpoint_id, 5000);
  t.is(done.reason, 'completed');
  t.is(done.played_ms, 600);
  await sleep(100);
  const f = dominantFrequency(peer.decodedPcmu(), 8000);
  t.true(Math.abs(f - 700) < 5, `${f} Hz`);
  // Watched from before the call: a short download can fail before the answer is read.
  const finishing = c.waitFor('endpoint.file.finished', (e) => e.endpoint_id !== made.endpoint_id, 5000);
  const broken = await c.call('endpoint.create_file', { source: `${origin}/bad.opus` });
  const failed = await finishing;
  t.is(String(failed.endpoint_id), String(broken.endpoint_id));
  t.is(failed.reason, 'error');
  t.regex(String(failed.error), /bad\.opus: corrupt Ogg file: the CRC of the page at byte \d+ is 0x[0-9a-f]{8}/);
});
