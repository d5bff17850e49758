/**
 * WAV probe and decode (protocols/media/codecs/wav.ts) on files made by ffmpeg in every format
 * the file endpoint plays, each resampled to the codec rates with the general-ratio resampler
 * (44.1 kHz and 11.025 kHz included); and the files it must refuse, each with its reason.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeWav, probeWav } from '../../protocols/media/codecs/wav.js';
import { Resampler } from '../../protocols/media/codecs/resample.js';
import { audioTempDir, dominantFrequency, ffmpeg, goertzelPower, rms, sine } from '../helpers/audio.js';

const FORMATS: Array<{ rate: number; channels: 1 | 2; codec: 'pcm_u8' | 'pcm_s16le' | 'pcm_s24le'; bits: 8 | 16 | 24 }> = [
  { rate: 8000, channels: 1, codec: 'pcm_s16le', bits: 16 },
  { rate: 11025, channels: 1, codec: 'pcm_u8', bits: 8 },
  { rate: 16000, channels: 2, codec: 'pcm_s16le', bits: 16 },
  { rate: 22050, channels: 2, codec: 'pcm_s24le', bits: 24 },
  { rate: 44100, channels: 2, codec: 'pcm_s16le', bits: 16 },
  { rate: 48000, channels: 1, codec: 'pcm_s24le', bits: 24 },
  { rate: 96000, channels: 2, codec: 'pcm_u8', bits: 8 },
];

test('every WAV format ffmpeg writes for us probes right, decodes to its tone and resamples to 8, 16 and 48 kHz', async (t) => {
  const dir = audioTempDir(t);
  for (const f of FORMATS) {
    const path = join(dir, `${f.rate}-${f.channels}-${f.bits}.wav`);
    // Stereo: the same sine in both channels at its full level (ffmpeg's own upmix would lower it by 3 dB).
    const layout = f.channels === 2 ? ['-af', 'pan=stereo|c0=c0|c1=c0'] : [];
    await ffmpeg(t, ['-f', 'lavfi', '-i', `sine=frequency=1000:sample_rate=${f.rate}:duration=0.5`, ...layout, '-c:a', f.codec, path]);
    const bytes = readFileSync(path);
    const p = probeWav(bytes);
    if (!p.ok) {
      t.fail(`${path}: ${p.message}`);
      continue;
    }
    const label = `${f.rate} Hz, ${f.channels} ch, ${f.bits}-bit`;
    t.like(p.info, { sampleRate: f.rate, channels: f.channels, bitsPerSample: f.bits, frames: Math.round(f.rate / 2), durationMs: 500 }, label);
    const pcm = decodeWav(bytes, p.info);
    t.is(pcm.length, p.info.frames, label);
    // ffmpeg's sine source has amplitude 1/8 of full scale.
    t.true(Math.abs(rms(pcm) - 4096 / Math.SQRT2) < 120, `${label}: rms ${rms(pcm)}`);
    t.true(Math.abs(dominantFrequency(pcm, f.rate) - 1000) < 5, `${label}: ${dominantFrequency(pcm, f.rate)} Hz`);
    for (const to of [8000, 16000, 48000]) {
      const out = new Resampler(f.rate, to).process(pcm);
      t.true(Math.abs(out.length - (pcm.length * to) / f.rate) <= 1, `${label} → ${to}: ${out.length} samples`);
      const hz = dominantFrequency(out.subarray(to / 50), to);
      t.true(Math.abs(hz - 1000) < 5, `${label} → ${to}: ${hz} Hz`);
    }
  }
});

test('the gain is applied in dB and clips instead of wrapping; stereo is mixed down', async (t) => {
  const dir = audioTempDir(t);
  const path = join(dir, 'stereo.wav');
  // Left 500 Hz, right 1500 Hz: the mono mix has both, each at half its level.
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=500:sample_rate=16000:duration=0.5', '-f', 'lavfi', '-i', 'sine=frequency=1500:sample_rate=16000:duration=0.5', '-filter_complex', '[0:a][1:a]join=inputs=2:channel_layout=stereo', '-c:a', 'pcm_s16le', path]);
  const bytes = readFileSync(path);
  const p = probeWav(bytes);
  if (!p.ok) return t.fail(p.message);
  t.is(p.info.channels, 2);
  const flat = decodeWav(bytes, p.info);
  const p500 = goertzelPower(flat, 16000, 500);
  const p1500 = goertzelPower(flat, 16000, 1500);
  t.true(Math.abs(10 * Math.log10(p500 / p1500)) < 0.5, 'both channels at the same level');
  t.true(Math.abs(Math.sqrt(2 * p500) - 2048) < 40, `each at half of 4096: ${Math.sqrt(2 * p500)}`);
  const minus6 = decodeWav(bytes, p.info, -6);
  t.true(Math.abs(10 * Math.log10(goertzelPower(minus6, 16000, 500) / p500) + 6) < 0.1, '-6 dB');
  // A mono sine at 1/8 of full scale: +20 dB takes it over full scale, where it clips.
  const mono = join(dir, 'mono.wav');
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=500:sample_rate=16000:duration=0.1', '-c:a', 'pcm_s16le', mono]);
  const mb = readFileSync(mono);
  const mp = probeWav(mb);
  if (!mp.ok) return t.fail(mp.message);
  const loud = decodeWav(mb, mp.info, 20);
  t.is(Math.max(...loud), 32767, '+20 dB clips at full scale');
  t.is(Math.min(...loud), -32768);
  t.true(loud.filter((v) => v === 32767).length > 50, 'clipped, not wrapped');
});

test('the resampler from 44.1 kHz keeps the band and removes what 8 kHz cannot carry', (t) => {
  const r = new Resampler(44100, 8000);
  const pass = r.process(sine(44100, 1000, 44100));
  t.is(pass.length, 8000);
  const inBand = goertzelPower(pass.subarray(800), 8000, 1000);
  t.true(Math.abs(10 * Math.log10(inBand / (16384 ** 2 / 2))) < 0.1, 'flat at 1 kHz');
  // 5 kHz would alias to 3 kHz at 8 kHz: it must be gone, not folded down.
  const alias = new Resampler(44100, 8000).process(sine(44100, 5000, 44100));
  t.true(rms(alias.subarray(800)) < 16384 * 10 ** (-50 / 20), `5 kHz through to 8 kHz: rms ${rms(alias.subarray(800))}`);
  // Frame by frame (882 samples each) gives what one block gives.
  const whole = new Resampler(44100, 16000).process(sine(44100, 700, 882 * 10));
  const framed = new Resampler(44100, 16000);
  const parts = Array.from({ length: 10 }, (_, i) => framed.process(sine(44100, 700, 882 * 10).subarray(i * 882, (i + 1) * 882)));
  t.deepEqual(Int16Array.from(parts.flatMap((p) => [...p])), whole);
  t.throws(() => new Resampler(8000, 7919), { instanceOf: RangeError, message: /7919\/8000/ });
});

test('bad and truncated WAV files are refused, each naming what is wrong', async (t) => {
  const dir = audioTempDir(t);
  const path = join(dir, 'good.wav');
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=8000:duration=0.2', '-c:a', 'pcm_s16le', path]);
  const good = readFileSync(path);
  const p = probeWav(good);
  if (!p.ok) return t.fail(p.message);
  const dataAt = p.info.dataOffset;
  const fmtAt = good.indexOf('fmt ') + 8;
  const edit = (f: (b: Buffer) => void) => {
    const b = Buffer.from(good);
    f(b);
    return b;
  };
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ['empty', new Uint8Array(0), /shorter than a RIFF header/],
    ['text', Buffer.from('hello, this is not audio at all'), /does not start with RIFF/],
    ['cut in the data', good.subarray(0, good.length - 101), /truncated WAV file: the RIFF header says/],
    ['cut, RIFF size fixed', edit((b) => b.writeUInt32LE(b.length - 8 - 100, 4)).subarray(0, good.length - 100), /truncated WAV file: chunk "data"/],
    ['odd data length', edit((b) => b.writeUInt32LE(p.info.dataBytes - 1, dataAt - 4)), /ends in the middle of a 2-byte sample frame/],
    ['float', edit((b) => b.writeUInt16LE(3, fmtAt)), /IEEE float/],
    ['ADPCM', edit((b) => b.writeUInt16LE(0x11, fmtAt)), /IMA ADPCM/],
    ['32-bit', edit((b) => b.writeUInt16LE(32, fmtAt + 14)), /32 bits/],
    ['6 channels', edit((b) => b.writeUInt16LE(6, fmtAt + 2)), /channel count: 6/],
    ['rate 0', edit((b) => b.writeUInt32LE(0, fmtAt + 4)), /sample rate: 0 Hz/],
    ['rate 4 GHz', edit((b) => b.writeUInt32LE(4_000_000_000, fmtAt + 4)), /sample rate: 4000000000 Hz/],
    ['byte rate wrong', edit((b) => b.writeUInt32LE(1234, fmtAt + 8)), /byte rate 1234/],
    ['no fmt', edit((b) => b.write('junk', fmtAt - 8, 'latin1')), /data chunk comes before any fmt chunk/],
    ['data claims 4 GiB', edit((b) => b.writeUInt32LE(0xfffffff0, dataAt - 4)), /truncated WAV file/],
    ['no samples', edit((b) => b.writeUInt32LE(0, dataAt - 4)), /no samples/],
  ];
  for (const [label, bytes, message] of cases) {
    const r = probeWav(bytes);
    t.false(r.ok, label);
    if (!r.ok) t.regex(r.message, message, label);
  }
});
