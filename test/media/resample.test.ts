import test from 'ava';
import { Resampler } from '../../protocols/media/codecs/resample.js';
import { dominantFrequency, goertzelPower, rms, sine, sineFit } from '../helpers/audio.js';

const RATES = [8000, 16000, 48000] as const;
const PAIRS = RATES.flatMap((a) => RATES.filter((b) => b !== a).map((b) => [a, b] as const));

/** Runs a whole signal through a fresh resampler in 20 ms frames. */
function inFrames(from: number, to: number, input: Int16Array): Int16Array {
  const r = new Resampler(from, to);
  const frame = from / 50;
  const out = new Int16Array((input.length / frame) * (to / 50));
  for (let i = 0, o = 0; i < input.length; i += frame) {
    const y = r.process(input.subarray(i, i + frame));
    t0(y.length === to / 50, `frame of ${y.length}`);
    out.set(y, o);
    o += y.length;
  }
  return out;
}
function t0(ok: boolean, msg: string): void {
  if (!ok) throw new Error(msg);
}

/** The naive resampler these tests must reject: linear interpolation, no filter. */
function linear(from: number, to: number, input: Int16Array): Int16Array {
  const n = Math.floor((input.length * to) / from);
  const out = new Int16Array(n);
  for (let j = 0; j < n; j++) {
    const x = (j * from) / to;
    const i = Math.floor(x);
    const f = x - i;
    out[j] = Math.round((input[i] as number) * (1 - f) + ((input[i + 1] ?? input[i]) as number) * f);
  }
  return out;
}

/** Level (dB) of `freq` in `out` relative to a full-amplitude input sine. */
const levelDb = (out: Int16Array, rate: number, freq: number, amplitude: number): number => 10 * Math.log10(goertzelPower(out, rate, freq) / (amplitude ** 2 / 2));

test('1 kHz through 8k → 48k → 8k keeps frequency and level (±1 dB) with THD+N below −40 dB', (t) => {
  const amplitude = 16000;
  const input = sine(8000, 1000, 8000, amplitude);
  const up = inFrames(8000, 48000, input);
  const back = inFrames(48000, 8000, up);
  for (const [pcm, rate] of [
    [up, 48000],
    [back, 8000],
  ] as const) {
    const steady = pcm.subarray(rate / 10); // skip the first 100 ms
    t.true(Math.abs(dominantFrequency(steady, rate) - 1000) < 1, `${rate}: ${dominantFrequency(steady, rate)}`);
    const fit = sineFit(steady, rate, 1000);
    t.true(Math.abs(20 * Math.log10(fit.amplitude / amplitude)) < 1, `${rate}: amplitude ${fit.amplitude}`);
    t.true(fit.thdnDb < -40, `${rate}: THD+N ${fit.thdnDb.toFixed(1)} dB`);
  }
  // Linear interpolation leaves images around 8 kHz ± 1 kHz at 48 kHz: THD+N about −30 dB.
  t.true(sineFit(linear(8000, 48000, input), 48000, 1000).thdnDb > -40, 'the control fails this test');
});

test('anti-alias: a 6 kHz sine 16k → 8k is attenuated ≥ 50 dB (it would fold to 2 kHz); linear interpolation is not', (t) => {
  const amplitude = 20000;
  const input = sine(16000, 6000, 16000, amplitude);
  const out = inFrames(16000, 8000, input).subarray(800);
  const folded = levelDb(out, 8000, 2000, amplitude);
  t.true(folded < -50, `2 kHz alias at ${folded.toFixed(1)} dB`);
  t.true(20 * Math.log10(rms(out) / (amplitude / Math.SQRT2)) < -50);
  t.true(levelDb(linear(16000, 8000, input), 8000, 2000, amplitude) > -20, 'linear interpolation lets the alias through');
});

test('every pair: stopband ≥ 50 dB above the lower Nyquist, passband flat at 1 kHz, images removed', (t) => {
  const amplitude = 20000;
  for (const [from, to] of PAIRS) {
    const min = Math.min(from, to);
    const seconds = 0.5;
    // Passband.
    const pass = inFrames(from, to, sine(from, 1000, from * seconds, amplitude)).subarray(to / 20);
    t.true(Math.abs(levelDb(pass, to, 1000, amplitude)) < 0.2, `${from}→${to} passband`);
    if (from > to) {
      // Downsampling: anything from min/2 up to the input's Nyquist must vanish.
      for (const f of [0.5 * min + 50, 0.6 * min, 0.8 * min, 0.45 * from]) {
        const out = inFrames(from, to, sine(from, f, from * seconds, amplitude)).subarray(to / 20);
        const level = 20 * Math.log10(rms(out) / (amplitude / Math.SQRT2));
        t.true(level < -50, `${from}→${to}: ${f} Hz leaks at ${level.toFixed(1)} dB`);
      }
    } else {
      // Upsampling: a tone at f leaves images at k·from ± f; all must be ≥ 50 dB down.
      for (const f of [1000, 0.4 * min]) {
        const out = inFrames(from, to, sine(from, f, from * seconds, amplitude)).subarray(to / 20);
        const fit = sineFit(out, to, f);
        const images = 10 * Math.log10(fit.residualPower / (amplitude ** 2 / 2));
        t.true(images < -50, `${from}→${to}: images of ${f} Hz at ${images.toFixed(1)} dB`);
      }
    }
  }
});

test('streaming in 20 ms frames equals one block; each frame gives exactly to/50 samples from the first call', (t) => {
  for (const [from, to] of PAIRS) {
    const input = new Int16Array(from / 5); // 200 ms of pseudo-random audio
    let s = 12345;
    for (let i = 0; i < input.length; i++) {
      s = (s * 1103515245 + 12345) >>> 0;
      input[i] = ((s >>> 16) & 0x7fff) - 16384;
    }
    const block = new Resampler(from, to).process(input);
    t.is(block.length, (input.length * to) / from);
    t.deepEqual(inFrames(from, to, input), block, `${from}→${to}`);
    // Odd-sized pieces too: the phase carries over.
    const r = new Resampler(from, to);
    const parts: number[] = [];
    for (let i = 0, step = 7; i < input.length; i += step, step = (step * 5) % 97 + 1) {
      const piece = input.subarray(i, Math.min(input.length, i + step));
      const expect = r.outputLength(piece.length);
      const y = r.process(piece);
      t.is(y.length, expect);
      parts.push(...y);
    }
    t.deepEqual(parts, [...block], `${from}→${to} in odd pieces`);
  }
});

test('group delay is as documented and at most 2 ms', (t) => {
  for (const [from, to] of PAIRS) {
    const r = new Resampler(from, to);
    t.true(r.delayMs > 0 && r.delayMs <= 2, `${from}→${to}: ${r.delayMs} ms`);
    // Measure: the phase lag of a 200 Hz sine (period 5 ms) through the resampler.
    const f = 200;
    const skip = to / 20;
    const fit = sineFit(r.process(sine(from, f, from / 2, 16000)).subarray(skip), to, f);
    t.true(fit.amplitude > 15000);
    // out[j] ≈ sin(2πf(j/to − τ)); the fit starts at j = skip, so phase = 2πf(skip/to − τ).
    const period = 1 / f;
    const tau = (((skip / to - fit.phase / (2 * Math.PI * f)) % period) + period) % period;
    const delayMs = tau * 1000;
    t.true(Math.abs(delayMs - r.delayMs) < 0.02, `${from}→${to}: measured ${delayMs.toFixed(3)} ms, documented ${r.delayMs.toFixed(3)} ms`);
  }
});

test('equal rates pass through; output arrays are reused; bad rates and short outputs are refused', (t) => {
  const input = sine(16000, 1000, 320);
  t.deepEqual(new Resampler(16000, 16000).process(input), input);
  const r = new Resampler(8000, 48000);
  const out = new Int16Array(1000);
  const y = r.process(sine(8000, 1000, 160), out);
  t.is(y.length, 960);
  t.is(y.buffer, out.buffer);
  t.throws(() => r.process(new Int16Array(160), new Int16Array(959)), { instanceOf: RangeError });
  t.is(r.process(new Int16Array(0)).length, 0);
  for (const [a, b] of [
    [0, 8000],
    [8000, -1],
    [8000.5, 16000],
    [NaN, 8000],
    [8000, 7919],
  ]) {
    t.throws(() => new Resampler(a as number, b as number), { instanceOf: RangeError }, `${a}→${b}`);
  }
  // Full-scale input does not wrap around: the output is clamped.
  const loud = new Int16Array(960).fill(32767);
  for (let i = 0; i < loud.length; i += 2) loud[i] = -32768;
  const clamped = new Resampler(48000, 16000).process(loud);
  t.true(clamped.every((v) => v >= -32768 && v <= 32767));
});
