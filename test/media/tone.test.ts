import test from 'ava';
import { ToneGenerator, toneComponents, type ToneKind } from '../../protocols/media/codecs/tone.js';
import { dbfs, dominantFrequency, goertzelPower, rms, sineFit } from '../helpers/audio.js';

/** Generates `ms` of a tone in 20 ms frames, as the session does. */
function generate(kind: ToneKind, sampleRate: number, ms: number, frequency?: number): Int16Array {
  const g = new ToneGenerator(kind, { sampleRate, frequency });
  const frame = sampleRate / 50;
  const out = new Int16Array((sampleRate * ms) / 1000);
  for (let i = 0; i < out.length; i += frame) out.set(g.next(frame), i);
  return out;
}

/** On/off per 50 ms window (on = above −40 dBFS). */
function pattern(pcm: Int16Array, sampleRate: number): string {
  const w = sampleRate / 20;
  let s = '';
  for (let i = 0; i + w <= pcm.length; i += w) s += dbfs(pcm.subarray(i, i + w)) > -40 ? '#' : '.';
  return s;
}
const on = (ms: number): string => '#'.repeat(ms / 50);
const off = (ms: number): string => '.'.repeat(ms / 50);

// The standard tones (frequencies and cadences of the North American and UK plans).
const STANDARD: Record<'ringback' | 'ringing' | 'busy', { freqs: [number, number]; cycle: string }> = {
  ringback: { freqs: [440, 480], cycle: on(2000) + off(4000) },
  ringing: { freqs: [400, 450], cycle: on(400) + off(200) + on(400) + off(2000) },
  busy: { freqs: [480, 620], cycle: on(500) + off(500) },
};

for (const [kind, std] of Object.entries(STANDARD) as Array<[keyof typeof STANDARD, (typeof STANDARD)['busy']]>) {
  for (const rate of [8000, 16000, 48000]) {
    test(`${kind} at ${rate} Hz: components ${std.freqs.join(' + ')} Hz at −10 dBFS in total, cadence by sample count`, (t) => {
      const cycleMs = std.cycle.length * 50;
      const pcm = generate(kind, rate, cycleMs * 2);
      t.is(pattern(pcm, rate), std.cycle + std.cycle);
      // 10..310 ms is "on" for all three; 300 ms holds whole periods of both components.
      const burst = pcm.subarray(rate * 0.01, rate * 0.31);
      const total = rms(burst) ** 2;
      const powers = std.freqs.map((f) => goertzelPower(burst, rate, f));
      for (const p of powers) t.true(Math.abs(10 * Math.log10(p / (total / 2))) < 0.3, `equal halves: ${powers.join(', ')}`);
      t.true((powers[0]! + powers[1]!) / total > 0.99, 'nothing but the two components');
      t.true(Math.abs(dbfs(burst) + 10) < 0.2, `level ${dbfs(burst).toFixed(2)} dBFS`);
      t.true(std.freqs.some((f) => Math.abs(dominantFrequency(burst, rate) - f) < 2));
    });
  }
}

test('ringing and ringback differ (frequencies and cadence)', (t) => {
  const a = toneComponents('ringing');
  const b = toneComponents('ringback');
  t.notDeepEqual(a.freqs, b.freqs);
  t.notDeepEqual(a.cadence, b.cadence);
  t.not(pattern(generate('ringing', 8000, 6000), 8000), pattern(generate('ringback', 8000, 6000), 8000));
});

test('beep: 1000 Hz for 250 ms, then silence for good', (t) => {
  const g = new ToneGenerator('beep', { sampleRate: 8000 });
  t.false(g.finished);
  const pcm = g.next(8000 * 6);
  t.true(g.finished);
  t.is(pattern(pcm, 8000), on(250) + off(6000 - 250));
  t.true(Math.abs(dominantFrequency(pcm.subarray(0, 2000), 8000) - 1000) < 2);
  t.true(pcm.subarray(2000).every((v) => v === 0));
});

test('sine: default 1000 Hz; 20 Hz and 20 kHz at 48 kHz; continuous at −10 dBFS', (t) => {
  for (const [f, rate] of [
    [undefined, 8000],
    [20, 48000],
    [20000, 48000],
    [3599, 8000],
    [5000, 16000],
    [5000, 48000],
    [1234.5, 16000],
  ] as const) {
    const pcm = generate('sine', rate, 1000, f);
    const expect = f ?? 1000;
    t.true(Math.abs(dominantFrequency(pcm, rate) - expect) < Math.max(0.5, expect * 1e-4), `${expect} Hz at ${rate}: ${dominantFrequency(pcm, rate)}`);
    t.true(Math.abs(dbfs(pcm) + 10) < 0.1, `${expect} Hz at ${rate}: ${dbfs(pcm)} dBFS`);
    t.is(pattern(pcm, rate), on(1000));
    t.true(sineFit(pcm, rate, expect).thdnDb < -60, 'a clean sine');
  }
});

test('a component at or above 0.45 × rate is dropped: 5 kHz at 8 kHz is silence, not a 3 kHz alias', (t) => {
  const pcm = generate('sine', 8000, 1000, 5000);
  t.true(pcm.every((v) => v === 0));
  t.true(new ToneGenerator('sine', { sampleRate: 8000, frequency: 3600 }).finished, '3600 = 0.45 × 8000 is dropped');
  t.false(new ToneGenerator('sine', { sampleRate: 8000, frequency: 3599 }).finished);
  t.deepEqual(toneComponents('sine', 5000, 8000).freqs, []);
  t.deepEqual(toneComponents('sine', 5000, 48000).freqs, [5000]);
  t.deepEqual(toneComponents('busy', undefined, 1200).freqs, [480], 'the other component keeps its level');
  const busy = generate('busy', 1200, 400);
  const p = goertzelPower(busy.subarray(12, 468), 1200, 480);
  t.true(Math.abs(10 * Math.log10(p / ((32767 * 10 ** -0.5) ** 2 / 4))) < 0.3);
});

test('phase is continuous across frames: frames equal one block; no click at frame or cadence edges', (t) => {
  for (const [kind, rate, f] of [
    ['sine', 8000, 1000],
    ['sine', 48000, 20000],
    ['busy', 8000, undefined],
    ['ringing', 16000, undefined],
  ] as const) {
    const block = new ToneGenerator(kind, { sampleRate: rate, frequency: f }).next(rate * 3);
    t.deepEqual(generate(kind, rate, 3000, f), block, `${kind} at ${rate}`);
    // A sum of sines of total peak P and top frequency F moves at most 2π·F/rate·P per sample.
    const peak = (32767 * 10 ** -0.5) * (kind === 'sine' ? 1 : Math.SQRT2);
    const top = kind === 'sine' ? f! : Math.max(...toneComponents(kind).freqs);
    const bound = Math.min(2 * peak, 2 * Math.PI * (top / rate) * peak) + 2;
    let maxStep = 0;
    for (let i = 1; i < block.length; i++) maxStep = Math.max(maxStep, Math.abs((block[i] as number) - (block[i - 1] as number)));
    t.true(maxStep <= bound, `${kind} at ${rate}: step ${maxStep} > ${bound.toFixed(0)}`);
  }
  // At a cadence edge the envelope ramps: the first samples of the tone are small.
  const busy = generate('busy', 8000, 1100);
  const edge = 8000; // 1.0 s: the second "on"
  t.true(Math.abs(busy[edge] as number) < 2000 && Math.abs(busy[edge - 1] as number) === 0);
});

test('advance() moves on like next() without producing samples (a late receiver joins mid-cadence)', (t) => {
  const whole = generate('ringback', 8000, 8000);
  const g = new ToneGenerator('ringback', { sampleRate: 8000 });
  g.advance(8000 * 5);
  const rest = g.next(8000 * 3);
  let maxDiff = 0;
  for (let i = 0; i < rest.length; i++) maxDiff = Math.max(maxDiff, Math.abs((rest[i] as number) - (whole[40000 + i] as number)));
  t.true(maxDiff <= 1, `differs by ${maxDiff}`);
});

test('silence is zeros; output arrays are reused; bad arguments are refused', (t) => {
  const g = new ToneGenerator('silence', { sampleRate: 16000 });
  t.true(g.finished);
  t.true(g.next(320).every((v) => v === 0));
  const out = new Int16Array(400);
  const y = new ToneGenerator('sine', { sampleRate: 16000 }).next(320, out);
  t.is(y.length, 320);
  t.is(y.buffer, out.buffer);
  t.is(g.next(0).length, 0);
  t.throws(() => g.next(-1), { instanceOf: RangeError });
  t.throws(() => g.next(1.5), { instanceOf: RangeError });
  t.throws(() => g.next(320, new Int16Array(10)), { instanceOf: RangeError });
  t.throws(() => g.advance(-5), { instanceOf: RangeError });
  t.throws(() => new ToneGenerator('sine', { sampleRate: 0 }), { instanceOf: RangeError });
  t.throws(() => new ToneGenerator('sine', { sampleRate: 8000.5 }), { instanceOf: RangeError });
  t.throws(() => new ToneGenerator('sine', { sampleRate: 8000, frequency: 0 }), { instanceOf: RangeError });
  t.throws(() => new ToneGenerator('sine', { sampleRate: 8000, frequency: NaN }), { instanceOf: RangeError });
  t.throws(() => new ToneGenerator('dial' as ToneKind, { sampleRate: 8000 }), { instanceOf: TypeError });
});
