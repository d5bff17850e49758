/**
 * File endpoints on a real bridge: WAV files made by ffmpeg played into RTP peers (PCMU and
 * G.722) and decoded back; pause, resume, seek and loops seen in the received stream's timing;
 * files and paths that are refused at create, creating nothing.
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { G722Decoder } from '../../protocols/media/codecs/g722.js';
import { audioTempDir, dominantFrequency, ffmpeg, sineFit } from '../helpers/audio.js';
import { bridgeSession, leg, outcome, RtpPeer, sleep, type Received } from '../helpers/media.js';

/** A media directory with `name` made by ffmpeg from `lavfi` inputs. */
async function wav(t: ExecutionContext, dir: string, name: string, args: string[]): Promise<string> {
  await ffmpeg(t, [...args, join(dir, name)]);
  return name;
}

const sineWav = (t: ExecutionContext, dir: string, name: string, freq: number, seconds: number, rate = 8000, more: string[] = []) =>
  wav(t, dir, name, ['-f', 'lavfi', '-i', `sine=frequency=${freq}:sample_rate=${rate}:duration=${seconds}`, ...more, '-c:a', 'pcm_s16le']);

/** Gaps between consecutive packets longer than `ms`: [when (ms after the first), length]. */
function gaps(rx: Received[], ms: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 1; i < rx.length; i++) if (rx[i]!.at - rx[i - 1]!.at > ms) out.push([rx[i - 1]!.at - rx[0]!.at, rx[i]!.at - rx[i - 1]!.at]);
  return out;
}

test.serial('a 44.1 kHz stereo WAV plays into a PCMU and a G.722 peer as its 1 kHz tone, then finishes', async (t) => {
  const dir = audioTempDir(t);
  const name = await sineWav(t, dir, 'tone.wav', 1000, 1, 44100, ['-ac', '2']);
  const { c } = await bridgeSession(t, { fileDir: dir });
  const pcmu = await RtpPeer.open(t);
  await leg(c, pcmu);
  const g722 = await RtpPeer.open(t);
  await leg(c, g722, { codecs: ['9 G722/8000'] });
  const started = Date.now();
  const made = await c.call('endpoint.create_with_file', { source: name });
  t.is(made.state, 'playing');
  t.is(made.duration_ms, 1000);
  const finished = await c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === made.endpoint_id, 5000);
  const took = Date.now() - started;
  t.is(finished.played_ms, 1000);
  t.is(finished.reason, 'completed');
  t.true(took >= 950 && took < 1600, `finished after ${took} ms`);
  await sleep(150);
  for (const peer of [pcmu, g722]) t.true(peer.received.length >= 48 && peer.received.length <= 51, `50 packets of 20 ms, got ${peer.received.length}`);
  const f = dominantFrequency(pcmu.decodedPcmu(), 8000);
  t.true(Math.abs(f - 1000) < 5, `PCMU: ${f} Hz`);
  t.true(g722.received.every((r) => r.pt === 9));
  const dec = new G722Decoder();
  const parts = g722.received.map((r) => dec.decode(r.payload));
  const pcm = Int16Array.from(parts.flatMap((p) => [...p]));
  t.is(pcm.length, g722.received.length * 320, 'G.722: 320 samples at 16 kHz per packet');
  const g = dominantFrequency(pcm.subarray(1600), 16000);
  t.true(Math.abs(g - 1000) < 5, `G.722: ${g} Hz`);
  const info = await c.call('session.info', {});
  t.like(info.endpoints.find((e) => e.endpoint_id === made.endpoint_id), { type: 'file', state: 'finished', direction: 'inactive', sample_rate: 44100, played_ms: 1000 });
});

test.serial('pause stops the packets and keeps the place; resume carries on; both are idempotent and evented', async (t) => {
  const dir = audioTempDir(t);
  const name = await sineWav(t, dir, 'a.wav', 700, 1);
  const { c } = await bridgeSession(t, { fileDir: dir });
  const peer = await RtpPeer.open(t);
  await leg(c, peer);
  const states: string[] = [];
  c.on('endpoint.state_changed', (e) => states.push(`${e.previous_state}→${e.state}`));
  const { endpoint_id } = await c.call('endpoint.create_file', { source: name });
  await sleep(400);
  t.deepEqual(await c.call('endpoint.file.pause', { endpoint_id }), { state: 'paused' });
  t.deepEqual(await c.call('endpoint.file.pause', { endpoint_id }), { state: 'paused' }, 'pause twice is fine');
  await sleep(200);
  const during = peer.received.length;
  await sleep(600);
  t.is(peer.received.length, during, 'no packets while paused');
  const paused = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === endpoint_id)!;
  t.true((paused.position_ms as number) >= 300 && (paused.position_ms as number) <= 800, `paused at ${paused.position_ms} ms`);
  t.deepEqual(await c.call('endpoint.file.resume', { endpoint_id }), { state: 'playing' });
  t.deepEqual(await c.call('endpoint.file.resume', { endpoint_id }), { state: 'playing' });
  const done = await c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === endpoint_id, 5000);
  t.is(done.played_ms, 1000, 'the paused time is not played time');
  await sleep(100);
  const n = peer.received.length;
  t.true(n >= 48 && n <= 51, `the whole file once: ${n} packets`);
  const g = gaps(peer.received, 400);
  t.is(g.length, 1, `one gap: ${JSON.stringify(g)}`);
  t.true(g[0]![1] >= 700 && g[0]![1] <= 1400, `the pause: ${g[0]![1]} ms`);
  // Resumed where it paused: one continuous 700 Hz sine over the 50 packets, no jump of phase.
  const fit = sineFit(peer.decodedPcmu(), 8000, 700);
  t.true(fit.thdnDb < -25, `continuous across the pause: THD+N ${fit.thdnDb.toFixed(1)} dB`);
  t.deepEqual(states, ['playing→paused', 'paused→playing', 'playing→finished']);
  // A finished file refuses pause, resume and seek, and cannot be transferred.
  for (const m of ['endpoint.file.pause', 'endpoint.file.resume'] as const) t.regex(await outcome(c.call(m, { endpoint_id })), /^ENDPOINT_ERROR: .*.*has finished/);
  t.regex(await outcome(c.call('endpoint.file.seek', { endpoint_id, position_ms: 0 })), /^ENDPOINT_ERROR: .*.*has finished/);
});

test.serial('seek jumps to the asked place (heard in the tone); a seek past the end finishes the file', async (t) => {
  const dir = audioTempDir(t);
  // 1 s of 500 Hz, then 1 s of 1500 Hz.
  const name = await wav(t, dir, 'two.wav', ['-f', 'lavfi', '-i', 'sine=frequency=500:sample_rate=8000:duration=1', '-f', 'lavfi', '-i', 'sine=frequency=1500:sample_rate=8000:duration=1', '-filter_complex', '[0:a][1:a]concat=n=2:v=0:a=1', '-c:a', 'pcm_s16le']);
  const { c } = await bridgeSession(t, { fileDir: dir });
  const peer = await RtpPeer.open(t);
  await leg(c, peer);
  const { endpoint_id, duration_ms } = await c.call('endpoint.create_file', { source: name });
  t.is(duration_ms, 2000);
  await sleep(300);
  const before = peer.received.length;
  t.true(Math.abs(dominantFrequency(peer.decodedPcmu(), 8000) - 500) < 10, 'the start is 500 Hz');
  t.deepEqual(await c.call('endpoint.file.seek', { endpoint_id, position_ms: 1200 }), { state: 'playing', position_ms: 1200 });
  const sought = peer.received.length;
  const done = await c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === endpoint_id, 5000);
  await sleep(100);
  const left = peer.received.length - sought;
  // Packets in flight when the seek answers count before it: a few either way, far from the
  // ~85 of no seek or the ~25 of a seek to 1500 ms.
  t.true(left >= 33 && left <= 44, `800 ms (40 packets) left after the seek: ${left}`);
  const after = peer.decodedPcmu(before + 2);
  t.true(Math.abs(dominantFrequency(after, 8000) - 1500) < 10, `after the seek: ${dominantFrequency(after, 8000)} Hz`);
  t.true(done.played_ms >= 1000 && done.played_ms <= 1300, `played ${done.played_ms} ms`);
  // Seek while paused moves the place and stays paused; past the end it finishes.
  const second = await c.call('endpoint.create_file', { source: name, start_ms: 500 });
  t.is((await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === second.endpoint_id)!.position_ms, 500, 'start_ms');
  await c.call('endpoint.file.pause', { endpoint_id: second.endpoint_id });
  t.deepEqual(await c.call('endpoint.file.seek', { endpoint_id: second.endpoint_id, position_ms: 100 }), { state: 'paused', position_ms: 100 });
  const ended = c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === second.endpoint_id, 2000);
  t.deepEqual(await c.call('endpoint.file.seek', { endpoint_id: second.endpoint_id, position_ms: 2000 }), { state: 'finished', position_ms: 2000 });
  t.is((await ended).reason, 'completed');
});

test.serial('loop_count n plays the file n + 1 times back to back; start_ms applies to the first pass only', async (t) => {
  const dir = audioTempDir(t);
  // 200 ms of 500 Hz, then 200 ms of 1500 Hz.
  const name = await wav(t, dir, 'short.wav', ['-f', 'lavfi', '-i', 'sine=frequency=500:sample_rate=8000:duration=0.2', '-f', 'lavfi', '-i', 'sine=frequency=1500:sample_rate=8000:duration=0.2', '-filter_complex', '[0:a][1:a]concat=n=2:v=0:a=1', '-c:a', 'pcm_s16le']);
  const { c } = await bridgeSession(t, { fileDir: dir });
  const peer = await RtpPeer.open(t);
  await leg(c, peer);
  const started = Date.now();
  const { endpoint_id } = await c.call('endpoint.create_file', { source: name, loop_count: 2, start_ms: 200 });
  const done = await c.waitFor('endpoint.file.finished', (e) => e.endpoint_id === endpoint_id, 5000);
  const took = Date.now() - started;
  t.is(done.played_ms, 1000, '200 ms + 2 × 400 ms');
  t.true(took >= 950 && took < 1500, `finished after ${took} ms`);
  await sleep(100);
  const n = peer.received.length;
  t.true(n >= 48 && n <= 51, `${n} packets`);
  // The stream, 200 ms at a time: the second half (start_ms 200), then the whole file twice.
  const pcm = peer.decodedPcmu();
  const heard = [0, 1, 2, 3, 4].map((i) => Math.round(dominantFrequency(pcm.subarray(i * 1600 + 200, (i + 1) * 1600 - 200), 8000) / 100) * 100);
  t.deepEqual(heard, [1500, 500, 1500, 500, 1500]);
  // A file looping forever is still playing after several passes.
  const forever = await c.call('endpoint.create_file', { source: name, loop_count: null });
  await sleep(1000);
  const ep = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === forever.endpoint_id)!;
  t.like(ep, { state: 'playing', loops_left: null });
  t.true((ep.played_ms as number) >= 900, `played ${ep.played_ms} ms`);
});

test.serial('refused at create, creating nothing: bad, truncated and huge WAVs, paths outside the directory, non-files; playback off without a directory', async (t) => {
  const dir = audioTempDir(t);
  const outside = audioTempDir(t);
  const good = await sineWav(t, dir, 'good.wav', 440, 0.2);
  const bytes = readFileSync(join(dir, good));
  writeFileSync(join(dir, 'text.wav'), 'this is not a WAV file\n');
  writeFileSync(join(dir, 'cut.wav'), bytes.subarray(0, bytes.length - 51));
  // 101 MiB (sparse) behind a valid header: over the 100 MiB default cap, refused unread.
  writeFileSync(join(dir, 'huge.wav'), bytes);
  truncateSync(join(dir, 'huge.wav'), 101 * 1024 * 1024);
  await sineWav(t, outside, 'secret.wav', 440, 0.2);
  symlinkSync(join(outside, 'secret.wav'), join(dir, 'link.wav'));
  mkdirSync(join(dir, 'sub.wav'));
  execFileSync('mkfifo', [join(dir, 'fifo.wav')]);
  const { c, sessionId } = await bridgeSession(t, { fileDir: dir });
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ source: 'text.wav' }, /^ENDPOINT_ERROR: .*source text.wav: not a WAV file/],
    [{ source: 'cut.wav' }, /^ENDPOINT_ERROR: .*source cut.wav: truncated WAV file/],
    [{ source: 'huge.wav' }, /^ENDPOINT_ERROR: .*source huge.wav is 105906176 bytes; the limit is 104857600/],
    [{ source: 'missing.wav' }, /^ENDPOINT_ERROR: .*source missing.wav: no such file/],
    [{ source: '../x.wav' }, /^ENDPOINT_ERROR: .*/],
    [{ source: join(outside, 'secret.wav') }, /^ENDPOINT_ERROR: .*source .*secret.wav is outside the media directory/],
    [{ source: 'link.wav' }, /^ENDPOINT_ERROR: .*source link.wav is outside the media directory/],
    [{ source: 'sub.wav' }, /^ENDPOINT_ERROR: .*source sub.wav is not a regular file/],
    [{ source: 'fifo.wav' }, /^ENDPOINT_ERROR: .*source fifo.wav is not a regular file/],
    [{ source: good, start_ms: 200 }, /^INVALID_PARAMS: .*start_ms 200 is not inside the file \(200 ms long\)/],
    [{ source: 'http://127.0.0.1/x.wav' }, /^ENDPOINT_ERROR: .*URL playback is off: MEDIA_FILE_ORIGINS lists no origin/],
    [{ source: good, timeout_ms: 500 }, /^INVALID_PARAMS: .*timeout_ms and cache_ttl_secs apply to URL sources only/],
    [{ source: good, gain_db: 30 }, /^INVALID_PARAMS: .*gain_db must be between -60 and 20 dB/],
  ];
  for (const [params, expected] of cases) t.regex(await outcome(c.call('endpoint.create_file', params as { source: string })), expected, JSON.stringify(params));
  t.deepEqual((await c.call('session.info', {})).endpoints, [], 'nothing was created');
  // The good file plays; it only sends, and it cannot be transferred.
  const { endpoint_id } = await c.call('endpoint.create_file', { source: join(dir, good) });
  t.regex(await outcome(c.call('endpoint.update_direction', { endpoint_id, direction: 'recvonly' })), /^INVALID_PARAMS: .*a file endpoint only sends/);
  const other = await c.call('session.create', {});
  await c.call('session.attach', { session_id: sessionId });
  t.regex(await outcome(c.call('endpoint.transfer', { endpoint_id, target_session_id: other.session_id })), /^INVALID_PARAMS: .*a file endpoint cannot be transferred/);
  t.regex(await outcome(c.call('endpoint.file.pause', { endpoint_id: 'nope' })), /^ENDPOINT_ERROR: .*no endpoint nope/);
  // Without a media directory, local playback is off.
  const off = await bridgeSession(t);
  t.regex(await outcome(off.c.call('endpoint.create_file', { source: good })), /^ENDPOINT_ERROR: .*local file playback is off/);
});
