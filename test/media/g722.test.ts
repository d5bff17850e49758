import test from 'ava';
import { G722Decoder, G722Encoder, type G722State } from '../../protocols/media/codecs/g722.js';
import { bestLag, dominantFrequency, goertzelPower, mix, rms, sine, snrDb, sweep } from '../helpers/audio.js';

const FRAME = 320;

function encodeFrames(enc: G722Encoder, pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length / 2);
  for (let i = 0; i < pcm.length; i += FRAME) enc.encode(pcm.subarray(i, i + FRAME), out.subarray(i / 2, (i + FRAME) / 2));
  return out;
}

function decodeFrames(dec: G722Decoder, bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i += FRAME / 2) dec.decode(bytes.subarray(i, i + FRAME / 2), out.subarray(i * 2, (i + FRAME / 2) * 2));
  return out;
}

const speechLike = (): Int16Array => mix(sine(16000, 440, 32000, 6000), sine(16000, 3100, 32000, 4000), sweep(16000, 100, 7000, 32000, 8000));

test('a 20 ms frame is 320 samples in, 160 bytes out, and back', (t) => {
  const bytes = new G722Encoder().encode(sine(16000, 1000, FRAME));
  t.is(bytes.length, 160);
  t.is(new G722Decoder().decode(bytes).length, FRAME);
});

test('round trip keeps the signal: SNR ≥ 25 dB after the codec delay, found by cross-correlation', (t) => {
  const input = speechLike();
  const output = decodeFrames(new G722Decoder(), encodeFrames(new G722Encoder(), input));
  const lag = bestLag(input, output, 64);
  t.true(lag > 10 && lag < 40, `QMF delay ${lag} samples`);
  const snr = snrDb(input, output, lag, 320);
  t.true(snr >= 25, `SNR ${snr.toFixed(1)} dB`);
  t.log(`G.722 delay ${lag} samples, SNR ${snr.toFixed(1)} dB`);
});

test('both sub-bands carry audio: 1 kHz (low band) and 6 kHz (high band) come back at their frequency', (t) => {
  for (const f of [1000, 6000]) {
    const input = sine(16000, f, 16000, 10000);
    const output = decodeFrames(new G722Decoder(), encodeFrames(new G722Encoder(), input)).subarray(1600);
    t.true(Math.abs(dominantFrequency(output, 16000) - f) < 5, `${f} Hz`);
    const level = 10 * Math.log10(goertzelPower(output, 16000, f) / (10000 ** 2 / 2));
    t.true(Math.abs(level) < 1.5, `${f} Hz comes back at ${level.toFixed(2)} dB`);
  }
});

test('state carries between frames: frame by frame equals one block, and differs from fresh codecs per frame', (t) => {
  const input = speechLike();
  const block = new G722Encoder().encode(input);
  t.deepEqual(encodeFrames(new G722Encoder(), input), block);
  const fresh = new Uint8Array(block.length);
  for (let i = 0; i < input.length; i += FRAME) fresh.set(new G722Encoder().encode(input.subarray(i, i + FRAME)), i / 2);
  t.notDeepEqual(fresh, block);
  const decoded = new G722Decoder().decode(block);
  t.deepEqual(decodeFrames(new G722Decoder(), block), decoded);
});

test('snapshot is plain data: after a JSON or structuredClone trip the codec continues bit-exactly', (t) => {
  const input = speechLike();
  const whole = new G722Encoder().encode(input);
  const wholeDecoded = new G722Decoder().decode(whole);
  const half = input.length / 2;

  const enc = new G722Encoder();
  const first = enc.encode(input.subarray(0, half));
  const snap = enc.snapshot();
  const viaJson = JSON.parse(JSON.stringify(snap)) as G722State;
  t.deepEqual(viaJson, snap);
  const rest1 = G722Encoder.restore(viaJson).encode(input.subarray(half));
  const rest2 = G722Encoder.restore(structuredClone(snap)).encode(input.subarray(half));
  t.deepEqual([...first, ...rest1], [...whole]);
  t.deepEqual(rest2, rest1);
  // The snapshot is a copy: the original encoder going on does not change it.
  enc.encode(input.subarray(half));
  t.deepEqual(snap, viaJson);

  const dec = new G722Decoder();
  const d1 = dec.decode(whole.subarray(0, whole.length / 2));
  const d2 = G722Decoder.restore(JSON.parse(JSON.stringify(dec.snapshot())) as G722State).decode(whole.subarray(whole.length / 2));
  t.deepEqual([...d1, ...d2], [...wholeDecoded]);
});

test('restore refuses malformed state', (t) => {
  const good = new G722Encoder().snapshot();
  const bad: unknown[] = [
    null,
    {},
    { ...good, qmf: good.qmf.slice(1) },
    { ...good, band: [good.band[0]] },
    { ...good, band: [{ ...good.band[0], d: [0, 0] }, good.band[1]] },
    { ...good, band: [{ ...good.band[0], nb: -1 }, good.band[1]] },
    { ...good, band: [{ ...good.band[0], s: 1.5 }, good.band[1]] },
    { ...good, band: [good.band[0], { ...good.band[1], a: ['x', 0, 0] }] },
  ];
  for (const s of bad) {
    t.throws(() => G722Encoder.restore(s as G722State), { instanceOf: TypeError }, JSON.stringify(s));
    t.throws(() => G722Decoder.restore(s as G722State), { instanceOf: TypeError });
  }
});

test('bad input: odd sample counts are refused, empty frames are empty, short output arrays are refused', (t) => {
  const enc = new G722Encoder();
  t.throws(() => enc.encode(new Int16Array(319)), { instanceOf: RangeError });
  t.throws(() => enc.encode(new Int16Array(1)), { instanceOf: RangeError });
  const before = enc.snapshot();
  t.is(enc.encode(new Int16Array(0)).length, 0);
  t.deepEqual(enc.snapshot(), before, 'an empty frame leaves the state alone');
  t.throws(() => enc.encode(new Int16Array(320), new Uint8Array(159)), { instanceOf: RangeError });
  const dec = new G722Decoder();
  t.is(dec.decode(new Uint8Array(0)).length, 0);
  t.throws(() => dec.decode(new Uint8Array(160), new Int16Array(319)), { instanceOf: RangeError });
  // An odd number of bytes is fine: one byte is one sample pair.
  t.is(dec.decode(new Uint8Array(3)).length, 6);
  const out = new Int16Array(400);
  const r = dec.decode(new Uint8Array(160), out);
  t.is(r.length, 320);
  t.is(r.buffer, out.buffer);
});

test('arbitrary bytes decode to bounded audio and the decoder recovers on real data afterwards', (t) => {
  const junk = Uint8Array.from({ length: 8000 }, (_, i) => (i * 151 + (i >> 3) * 7) & 0xff);
  const dec = new G722Decoder();
  const noise = dec.decode(junk);
  t.is(noise.length, 16000);
  const input = sine(16000, 1000, 16000, 8000);
  const after = dec.decode(new G722Encoder().encode(input)).subarray(8000);
  t.true(Math.abs(dominantFrequency(after, 16000) - 1000) < 5);
  t.true(Math.abs(rms(after) - rms(input)) / rms(input) < 0.15);
});
