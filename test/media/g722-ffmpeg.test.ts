/**
 * G.722 against a real peer: ffmpeg's adpcm_g722 codec (its encoder and decoder follow the ITU
 * reference). The ITU test vectors are not available offline; this is the acceptance test.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { G722Decoder, G722Encoder } from '../../protocols/media/codecs/g722.js';
import { audioTempDir, bestLag, ffmpeg, fromS16le, mix, sine, snrDb, sweep, toS16le } from '../helpers/audio.js';

/** 2 s at 16 kHz: two sines plus a 100 Hz → 7.9 kHz sweep, −6 dBFS peak. */
const signal = (): Int16Array => mix(sine(16000, 440, 32000, 6000), sine(16000, 3100, 32000, 4000), sweep(16000, 100, 7900, 32000, 6000));

function encodeFrames(pcm: Int16Array): Uint8Array {
  const enc = new G722Encoder();
  const out = new Uint8Array(pcm.length / 2);
  for (let i = 0; i < pcm.length; i += 320) enc.encode(pcm.subarray(i, i + 320), out.subarray(i / 2, i / 2 + 160));
  return out;
}

test('our encoder → ffmpeg decoder: SNR ≥ 25 dB after the codec delay; our bytes equal ffmpeg encoder’s', async (t) => {
  const dir = audioTempDir(t);
  const input = signal();
  const ours = encodeFrames(input);
  writeFileSync(join(dir, 'in.raw'), toS16le(input));
  writeFileSync(join(dir, 'ours.g722'), ours);
  await Promise.all([
    ffmpeg(t, ['-f', 'g722', '-i', join(dir, 'ours.g722'), '-f', 's16le', '-ar', '16000', join(dir, 'ours-decoded.raw')]),
    ffmpeg(t, ['-f', 's16le', '-ar', '16000', '-ac', '1', '-i', join(dir, 'in.raw'), '-c:a', 'g722', '-f', 'g722', join(dir, 'ff.g722')]),
  ]);
  const decoded = fromS16le(readFileSync(join(dir, 'ours-decoded.raw')));
  t.is(decoded.length, input.length);
  const lag = bestLag(input, decoded, 64);
  const snr = snrDb(input, decoded, lag, 320);
  t.true(snr >= 25, `SNR ${snr.toFixed(1)} dB at lag ${lag}`);

  const theirs = readFileSync(join(dir, 'ff.g722'));
  t.is(theirs.length, ours.length);
  let differ = 0;
  for (let i = 0; i < ours.length; i++) if (ours[i] !== theirs[i]) differ++;
  t.is(differ, 0, `${differ} of ${ours.length} bytes differ from ffmpeg's encoder`);
  t.log(`ffmpeg decodes our G.722 at ${snr.toFixed(1)} dB SNR (lag ${lag}); ${differ} of ${ours.length} bytes differ from ffmpeg's encoder`);
});

test('ffmpeg encoder → our decoder equals ffmpeg’s own decode, sample for sample', async (t) => {
  const dir = audioTempDir(t);
  const input = signal();
  writeFileSync(join(dir, 'in.raw'), toS16le(input));
  await ffmpeg(t, ['-f', 's16le', '-ar', '16000', '-ac', '1', '-i', join(dir, 'in.raw'), '-c:a', 'g722', '-f', 'g722', join(dir, 'ff.g722')]);
  await ffmpeg(t, ['-f', 'g722', '-i', join(dir, 'ff.g722'), '-f', 's16le', '-ar', '16000', join(dir, 'ff-decoded.raw')]);
  const bytes = readFileSync(join(dir, 'ff.g722'));
  const theirs = fromS16le(readFileSync(join(dir, 'ff-decoded.raw')));
  const dec = new G722Decoder();
  const ours = new Int16Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i += 160) dec.decode(bytes.subarray(i, i + 160), ours.subarray(i * 2, i * 2 + 320));
  t.is(ours.length, theirs.length);
  let maxDiff = 0;
  let differ = 0;
  for (let i = 0; i < ours.length; i++) {
    const d = Math.abs((ours[i] as number) - (theirs[i] as number));
    if (d > 0) differ++;
    maxDiff = Math.max(maxDiff, d);
  }
  t.is(maxDiff, 0, `${differ} samples differ, by up to ${maxDiff}`);
  t.true(snrDb(input, ours, bestLag(input, ours, 64), 320) >= 25);
});
