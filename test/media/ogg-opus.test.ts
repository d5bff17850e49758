/**
 * Ogg Opus files decoded for file endpoints (protocols/media/codecs/ogg-opus.ts and
 * actors/media-session/opus-file.ts): .opus files made by ffmpeg (libopus) decode to their tone
 * at 48 kHz, stereo mixed down; files built here from real libopus packets pin the pre-skip, the
 * end trim, the gains and every refusal.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDecoder, createEncoder } from '../../actors/media-session/codecs.js';
import { decodeFile } from '../../actors/media-session/file-source.js';
import { decodeOggOpus } from '../../actors/media-session/opus-file.js';
import { probeOggOpus } from '../../protocols/media/codecs/ogg-opus.js';
import { stampOggCrc } from '../../protocols/media/codecs/ogg.js';
import { audioTempDir, dominantFrequency, ffmpeg, goertzelPower, rms, sine } from '../helpers/audio.js';
import { opusFile, opusHead } from '../helpers/ogg.js';

/** `n` libopus packets of 20 ms of a 1 kHz sine (48 kHz mono). */
function packets(n: number): Uint8Array[] {
  const enc = createEncoder('opus');
  const pcm = sine(48000, 1000, 960 * n, 12000);
  return Array.from({ length: n }, (_, i) => enc.encode(pcm.subarray(i * 960, (i + 1) * 960)));
}
const tenPackets = packets(10);

const decoded = (file: Uint8Array, gainDb = 0) => {
  const r = decodeOggOpus(file, gainDb);
  if (!r.ok) throw new Error(r.message);
  return r;
};
const refusal = (file: Uint8Array) => {
  const r = decodeOggOpus(file, 0);
  return r.ok ? 'ok' : r.message;
};

test('an .opus file made by ffmpeg (libopus, mono 48 kHz) decodes to its 1 kHz tone, exactly 1 s long', async (t) => {
  const dir = audioTempDir(t);
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=1000:sample_rate=48000:duration=1', '-c:a', 'libopus', join(dir, 'tone.opus')]);
  const r = decoded(new Uint8Array(readFileSync(join(dir, 'tone.opus'))));
  t.like(r.info, { sampleRate: 48000, channels: 1, frames: 48000, durationMs: 1000 });
  t.true(r.info.preSkip > 0, 'libopus files have a pre-skip');
  t.is(r.pcm.length, 48000, 'pre-skip dropped and the end trimmed to the last granule position');
  t.true(Math.abs(dominantFrequency(r.pcm, 48000) - 1000) < 3, `${dominantFrequency(r.pcm, 48000)} Hz`);
  // ffmpeg's sine is 1/8 of full scale: about -21 dBFS RMS.
  t.true(Math.abs(rms(r.pcm.subarray(4800)) - 32768 / 8 / Math.SQRT2) < 300, `rms ${rms(r.pcm)}`);
  // Through decodeFile (what both local and URL files use): the same PCM at 48 kHz.
  const f = decodeFile(new Uint8Array(readFileSync(join(dir, 'tone.opus'))), 'tone.opus', '/x/tone.opus', 0);
  t.true(f.ok && f.file.info.sampleRate === 48000 && f.file.info.durationMs === 1000 && f.file.pcm.length === 48000);
});

test('a stereo .opus (600 Hz left, 1400 Hz right, from 44.1 kHz) is mixed down to mono with both tones', async (t) => {
  const dir = audioTempDir(t);
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=600:sample_rate=44100:duration=0.5', '-f', 'lavfi', '-i', 'sine=frequency=1400:sample_rate=44100:duration=0.5', '-filter_complex', '[0:a][1:a]amerge=inputs=2', '-c:a', 'libopus', join(dir, 'st.opus')]);
  const r = decoded(new Uint8Array(readFileSync(join(dir, 'st.opus'))));
  t.is(r.info.channels, 2);
  t.is(r.pcm.length, 24000);
  const body = r.pcm.subarray(2400);
  const [p600, p1400, p1000] = [600, 1400, 1000].map((f) => goertzelPower(body, 48000, f));
  t.true(Math.abs(10 * Math.log10(p600! / p1400!)) < 2, `both channels at the same level: ${(10 * Math.log10(p600! / p1400!)).toFixed(1)} dB apart`);
  t.true(p600! > 1000 * p1000!, 'and nothing between them');
});

test('pre-skip and end trim are exact: the kept samples are the decoder’s [pre-skip, last granule)', (t) => {
  const file = opusFile({ packets: tenPackets, preSkip: 312, lastGranule: 9000, perPage: 3 });
  const r = decoded(file);
  t.is(r.pcm.length, 9000 - 312);
  t.is(r.info.durationMs, 181);
  const dec = createDecoder('opus');
  const all = Int16Array.from(tenPackets.flatMap((p) => [...dec.decode(p)]));
  t.deepEqual([...r.pcm], [...all.subarray(312, 9000)]);
  // One page holding all the audio may trim its own end (first audio page = last page).
  t.is(decoded(opusFile({ packets: tenPackets, preSkip: 0, perPage: 10, lastGranule: 9500 })).pcm.length, 9500);
});

test('gain_db and the OpusHead output gain add up, clamped to 16 bits', (t) => {
  const plain = decoded(opusFile({ packets: tenPackets })).pcm;
  const down = decoded(opusFile({ packets: tenPackets }), -6).pcm;
  t.true(Math.abs(rms(down) / rms(plain) - 10 ** (-6 / 20)) < 0.01, `ratio ${rms(down) / rms(plain)}`);
  const both = decoded(opusFile({ packets: tenPackets, gainQ78: 6 * 256 }), -6).pcm;
  t.deepEqual([...both], [...plain], '+6 dB in the header, -6 dB asked: unchanged');
  const loud = decoded(opusFile({ packets: tenPackets, gainQ78: 20 * 256 }), 20).pcm;
  t.is(Math.max(...loud), 32767, 'clips, does not wrap');
  t.is(Math.min(...loud), -32768);
});

test('refused: heads, tags and layouts RFC 7845 does not allow, each by name', (t) => {
  const p = tenPackets;
  const cases: Array<[Uint8Array, RegExp]> = [
    [opusFile({ packets: p, head: new TextEncoder().encode('\x01vorbis\0\0\0\0\0\0\0\0\0\0\0\0') }), /^unsupported Ogg file: the first packet is not OpusHead; only Ogg Opus is played/],
    [opusFile({ packets: p, head: opusHead().subarray(0, 18) }), /OpusHead is 18 bytes, at least 19 are needed/],
    [opusFile({ packets: p, version: 0x10 }), /^unsupported Ogg Opus version 1\.0; version 0\.x is played/],
    [opusFile({ packets: p, family: 1, channels: 6 }), /^unsupported Ogg Opus channel mapping family 1 \(surround\); only family 0 \(mono or stereo\) is played/],
    [opusFile({ packets: p, family: 255 }), /channel mapping family 255; only family 0/],
    [opusFile({ packets: p, channels: 3 }), /3 channels with mapping family 0, which allows 1 or 2/],
    [opusFile({ packets: p, channels: 0 }), /0 channels with mapping family 0/],
    [opusFile({ packets: p, tags: null }), /the second packet is not OpusTags/],
    [opusFile({ packets: [] }), /^truncated Ogg file: no end-of-stream page/],
    [opusFile({ packets: p, perPage: 10, preSkip: 3000, lastGranule: 2000 }), /the last granule position 2000 is below the pre-skip 3000/],
    [opusFile({ packets: p, perPage: 10, preSkip: 312, lastGranule: 312 }), /^empty Ogg Opus file: no samples after the pre-skip/],
    [opusFile({ packets: p, lastGranule: 9601 }), /^truncated Ogg Opus file: the last granule position is 9601, the packets hold 9600 samples/],
    [opusFile({ packets: p, granuleOffset: 48000 }), /^unsupported Ogg Opus file: the stream starts at sample 48000, not 0/],
    [opusFile({ packets: p, granuleOffset: -100 }), /the first audio page has granule position 4700, its packets hold 4800 samples/],
    [opusFile({ packets: p, lastGranule: 100 }), /granule position 100 goes back from 4800/],
    [opusFile({ packets: [...p.slice(0, 3), new Uint8Array(0), ...p.slice(4)] }), /^bad Ogg Opus file: audio packet 4 is empty/],
    // TOC code 3 with a frame count of 0: libopus refuses the packet.
    [opusFile({ packets: [...p.slice(0, 6), new Uint8Array([0xfb, 0x00]), ...p.slice(7)] }), /^corrupt Ogg Opus file: audio packet 7 cannot be decoded/],
  ];
  for (const [file, expected] of cases) t.regex(refusal(file), expected);
  // OpusHead must be alone on page 0, OpusTags must end its page.
  const good = opusFile({ packets: p });
  t.is(refusal(good), 'ok');
  const first = good.slice();
  first[6] = 1; // granule of the first page
  stampOggCrc(first, 0, 27 + 1 + 19);
  t.regex(refusal(first), /the first page has granule position 1, 0 is required/);
});

test('refused through decodeFile with the source named: a flipped byte (CRC) and a cut .opus', async (t) => {
  const dir = audioTempDir(t);
  await ffmpeg(t, ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=0.3', '-c:a', 'libopus', join(dir, 'a.opus')]);
  const bytes = new Uint8Array(readFileSync(join(dir, 'a.opus')));
  const flipped = bytes.slice();
  flipped[bytes.length - 10] = flipped[bytes.length - 10]! ^ 0x40;
  const r = decodeFile(flipped, 'a.opus', '/x', 0);
  t.true(!r.ok && /^source a\.opus: corrupt Ogg file: the CRC of the page at byte \d+ is 0x[0-9a-f]{8}, its bytes give/.test(r.message), r.ok ? 'ok' : r.message);
  const cut = decodeFile(bytes.subarray(0, bytes.length - 7), 'a.opus', '/x', 0);
  t.true(!cut.ok && /^source a\.opus: truncated Ogg file: the page at byte \d+ says \d+ bytes, only \d+ remain/.test(cut.message), cut.ok ? 'ok' : cut.message);
  t.true(probeOggOpus(bytes).ok, 'the unharmed file probes');
});
