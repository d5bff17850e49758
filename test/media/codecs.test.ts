import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createDecoder, createEncoder, rtpTimestampIncrement } from '../../actors/media-session/codecs.js';
import type { CodecName } from '../../protocols/media/types.js';
import { dominantFrequency, goertzelPower, sine } from '../helpers/audio.js';

const CODEC_LIST: CodecName[] = ['pcmu', 'pcma', 'g722', 'opus'];

/** Encodes and decodes `pcm` in 20 ms frames through fresh codecs. */
function roundTrip(codec: CodecName, pcm: Int16Array): { decoded: Int16Array; packets: Uint8Array[] } {
  const enc = createEncoder(codec);
  const dec = createDecoder(codec);
  const n = enc.frameSamples;
  const decoded = new Int16Array(pcm.length);
  const packets: Uint8Array[] = [];
  for (let i = 0; i + n <= pcm.length; i += n) {
    const packet = enc.encode(pcm.subarray(i, i + n));
    packets.push(packet);
    const frame = dec.decode(packet);
    if (frame.length !== n) throw new Error(`${codec}: decoded ${frame.length} samples for a frame of ${n}`);
    decoded.set(frame, i);
  }
  return { decoded, packets };
}

/** Frame duration of an Opus TOC byte's config (RFC 6716 Table 2). */
function tocFrameMs(toc: number): number {
  const config = toc >> 3;
  if (config < 12) return [10, 20, 40, 60][config % 4]!; // SILK-only
  if (config < 16) return [10, 20][config % 2]!; // Hybrid
  return [2.5, 5, 10, 20][config % 4]!; // CELT-only
}

test('rates, frame sizes and RTP timestamp increments (RFC 3551: G.722 clock 8000; RFC 7587: Opus 48000)', (t) => {
  const expect: Record<CodecName, { rate: number; frame: number; ts20: number; ts10: number; bytes: number | null }> = {
    pcmu: { rate: 8000, frame: 160, ts20: 160, ts10: 80, bytes: 160 },
    pcma: { rate: 8000, frame: 160, ts20: 160, ts10: 80, bytes: 160 },
    g722: { rate: 16000, frame: 320, ts20: 160, ts10: 80, bytes: 160 },
    opus: { rate: 48000, frame: 960, ts20: 960, ts10: 480, bytes: null },
  };
  for (const codec of CODEC_LIST) {
    const e = expect[codec];
    const enc = createEncoder(codec);
    const dec = createDecoder(codec);
    t.is(enc.codec, codec);
    t.is(dec.codec, codec);
    t.is(enc.sampleRate, e.rate);
    t.is(dec.sampleRate, e.rate);
    t.is(enc.frameSamples, e.frame);
    t.is(rtpTimestampIncrement(codec), e.ts20);
    t.is(rtpTimestampIncrement(codec, 20), e.ts20);
    t.is(rtpTimestampIncrement(codec, 10), e.ts10);
    if (e.bytes !== null) t.is(enc.encode(new Int16Array(e.frame)).length, e.bytes);
  }
  t.throws(() => rtpTimestampIncrement('pcmu', 0), { instanceOf: RangeError });
  t.throws(() => rtpTimestampIncrement('pcmu', 0.01), { instanceOf: RangeError });
  t.throws(() => rtpTimestampIncrement('gsm' as CodecName), { instanceOf: TypeError });
  t.throws(() => createEncoder('gsm' as CodecName), { instanceOf: TypeError });
  t.throws(() => createDecoder('toString' as CodecName), { instanceOf: TypeError });
});

test('each codec round trip at its rate keeps a 1 kHz sine (frequency and level)', (t) => {
  for (const codec of CODEC_LIST) {
    const rate = createEncoder(codec).sampleRate;
    const amplitude = 10000;
    const { decoded } = roundTrip(codec, sine(rate, 1000, rate, amplitude));
    const steady = decoded.subarray(rate / 5); // after 200 ms
    const f = dominantFrequency(steady, rate);
    t.true(Math.abs(f - 1000) < 2, `${codec}: ${f} Hz`);
    const level = 10 * Math.log10(goertzelPower(steady, rate, 1000) / (amplitude ** 2 / 2));
    t.true(Math.abs(level) < 1.5, `${codec}: ${level.toFixed(2)} dB`);
  }
});

test('Opus: 20 ms frames of 48 kHz mono encode to small packets and decode to 960 samples', (t) => {
  const { decoded, packets } = roundTrip('opus', sine(48000, 1000, 48000, 10000));
  t.is(packets.length, 50);
  const total = packets.reduce((s, p) => s + p.length, 0);
  // 32 kbit/s is 80 bytes per 20 ms; allow the encoder's variation.
  t.true(total / packets.length > 20 && total / packets.length < 160, `${total / packets.length} bytes per packet`);
  // TOC byte (RFC 6716 §3.1): mono, one frame per packet, a 20 ms frame.
  for (const p of packets) {
    t.is(p[0]! & 0x04, 0, 'mono');
    t.is(p[0]! & 0x03, 0, 'one frame per packet');
    t.is(tocFrameMs(p[0]!), 20);
  }
  t.true(Math.abs(dominantFrequency(decoded.subarray(9600), 48000) - 1000) < 1);
});

test('Opus: bad frame sizes are a RangeError (not a crash), corrupt payloads throw, empty ones decode to nothing', (t) => {
  const enc = createEncoder('opus');
  for (const n of [0, 100, 959, 961, 1000]) t.throws(() => enc.encode(new Int16Array(n)), { instanceOf: RangeError }, `${n}`);
  for (const n of [480, 1920]) t.true(enc.encode(new Int16Array(n)).length > 0, `${n} samples is a valid Opus frame`);
  const dec = createDecoder('opus');
  t.is(dec.decode(new Uint8Array(0)).length, 0);
  t.throws(() => dec.decode(Uint8Array.of(0xff, 0xff, 0xff)));
  // Still usable after an error.
  t.is(dec.decode(enc.encode(new Int16Array(960))).length, 960);
  const out = new Int16Array(1000);
  const y = dec.decode(enc.encode(new Int16Array(960)), out);
  t.is(y.length, 960);
  t.is(y.buffer, out.buffer);
});

test('snapshots: G.722 continues exactly after a JSON trip; PCMU/PCMA/Opus give null and restore fresh', (t) => {
  const pcm = sine(16000, 700, 3200, 9000);
  const whole = createEncoder('g722');
  const expected = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => whole.encode(pcm.subarray(i * 320, i * 320 + 320)));
  let enc = createEncoder('g722');
  const got: Uint8Array[] = [];
  for (let i = 0; i < 10; i++) {
    got.push(enc.encode(pcm.subarray(i * 320, i * 320 + 320)));
    enc = createEncoder('g722', JSON.parse(JSON.stringify(enc.snapshot())));
  }
  t.deepEqual(got, expected);
  const dec = createDecoder('g722');
  dec.decode(expected[0]!);
  const moved = createDecoder('g722', structuredClone(dec.snapshot()));
  t.deepEqual(moved.decode(expected[1]!), dec.decode(expected[1]!));
  t.throws(() => createEncoder('g722', { band: 'nope' }), { instanceOf: TypeError });

  for (const codec of ['pcmu', 'pcma', 'opus'] as const) {
    t.is(createEncoder(codec).snapshot(), null);
    t.is(createDecoder(codec).snapshot(), null);
    t.is(createEncoder(codec, null).sampleRate, createEncoder(codec).sampleRate);
  }
});

test('importing codecs.ts does not load @discordjs/opus; creating an Opus codec does', async (t) => {
  const url = new URL('../../actors/media-session/codecs.js', import.meta.url).href;
  const script = `
    import { createRequire } from 'node:module';
    const cache = createRequire(import.meta.url).cache;
    const loaded = () => Object.keys(cache).some((k) => k.includes('@discordjs'));
    const m = await import(${JSON.stringify(url)});
    const out = [loaded()];
    m.createEncoder('pcmu'); m.createDecoder('g722');
    out.push(loaded());
    m.createDecoder('opus');
    out.push(loaded());
    console.log(JSON.stringify(out));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
  t.deepEqual(JSON.parse(stdout), [false, false, true]);
});
