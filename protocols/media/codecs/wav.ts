/**
 * WAV (RIFF/WAVE) files as the file endpoint plays them: the header probe that refuses a bad or
 * truncated file with a message naming what is wrong, and the decoder to mono 16-bit PCM at the
 * file's own rate with the gain applied. Pure: the caller reads the bytes.
 *
 * Decisions:
 * - Integer PCM only (format tag 1, or WAVE_FORMAT_EXTENSIBLE whose sub-format is PCM), 8-bit
 *   (unsigned), 16-bit or 24-bit (signed little-endian); mono or stereo; 8000 to 192000 Hz.
 *   Float, ADPCM, 32-bit and more than two channels are refused by name.
 * - Strict about lengths: a RIFF size or a data chunk that runs past the end of the file is a
 *   truncated file, and a data chunk that is not a whole number of sample frames is one cut
 *   mid-sample; both are refused (nothing is played from a file that is not whole). Bytes after
 *   the RIFF chunk are ignored. Chunks other than `fmt ` and `data` (LIST, fact …) are skipped,
 *   with RIFF's pad byte after an odd-sized chunk.
 * - Stereo is mixed down to mono as (L + R) / 2; 24-bit keeps its top 16 bits (after the gain,
 *   rounded); 8-bit is centred on 128. The gain is applied in floating point and the result
 *   clamped to 16 bits, so a gain above 0 dB clips rather than wraps.
 */

export interface WavInfo {
  sampleRate: number;
  channels: 1 | 2;
  bitsPerSample: 8 | 16 | 24;
  /** Offset of the first sample byte in the file. */
  dataOffset: number;
  /** Bytes of sample data (a whole number of frames). */
  dataBytes: number;
  /** Sample frames (samples per channel). */
  frames: number;
  durationMs: number;
}

export const WAV_MIN_RATE = 8000;
export const WAV_MAX_RATE = 192_000;

const FORMAT_PCM = 1;
const FORMAT_EXTENSIBLE = 0xfffe;
const FORMAT_NAMES: Record<number, string> = { 2: 'Microsoft ADPCM', 3: 'IEEE float', 6: 'A-law', 7: 'μ-law', 0x11: 'IMA ADPCM', 0x55: 'MP3' };

const ascii = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);

/** Read the header of a whole WAV file held in `file`; an error message when it is not one we play. */
export function probeWav(file: Uint8Array): { ok: true; info: WavInfo } | { ok: false; message: string } {
  const bad = (message: string) => ({ ok: false as const, message });
  if (file.length < 12) return bad(`not a WAV file: ${file.length} bytes, shorter than a RIFF header`);
  if (ascii(file, 0) !== 'RIFF' || ascii(file, 8) !== 'WAVE') return bad('not a WAV file: it does not start with RIFF….WAVE');
  const v = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const riffEnd = 8 + v.getUint32(4, true);
  if (riffEnd > file.length) return bad(`truncated WAV file: the RIFF header says ${riffEnd} bytes, the file has ${file.length}`);
  let fmt: { tag: number; channels: number; rate: number; byteRate: number; blockAlign: number; bits: number } | null = null;
  let at = 12;
  while (at + 8 <= riffEnd) {
    const id = ascii(file, at);
    const size = v.getUint32(at + 4, true);
    const body = at + 8;
    if (body + size > riffEnd) return bad(`truncated WAV file: chunk "${id}" at byte ${at} says ${size} bytes, only ${riffEnd - body} remain`);
    if (id === 'fmt ') {
      if (size < 16) return bad(`bad WAV file: the fmt chunk is ${size} bytes, at least 16 are needed`);
      let tag = v.getUint16(body, true);
      if (tag === FORMAT_EXTENSIBLE) {
        if (size < 40) return bad(`bad WAV file: an extensible fmt chunk is ${size} bytes, 40 are needed`);
        tag = v.getUint16(body + 24, true); // the sub-format GUID starts with the format tag
      }
      fmt = { tag, channels: v.getUint16(body + 2, true), rate: v.getUint32(body + 4, true), byteRate: v.getUint32(body + 8, true), blockAlign: v.getUint16(body + 12, true), bits: v.getUint16(body + 14, true) };
    } else if (id === 'data') {
      if (!fmt) return bad('bad WAV file: the data chunk comes before any fmt chunk');
      const f = fmt;
      if (f.tag !== FORMAT_PCM) return bad(`unsupported WAV encoding: ${FORMAT_NAMES[f.tag] ?? `format tag ${f.tag}`}; only integer PCM (8, 16 or 24-bit) is played`);
      if (f.bits !== 8 && f.bits !== 16 && f.bits !== 24) return bad(`unsupported WAV sample size: ${f.bits} bits; 8, 16 and 24-bit PCM are played`);
      if (f.channels !== 1 && f.channels !== 2) return bad(`unsupported WAV channel count: ${f.channels}; mono and stereo are played`);
      if (!Number.isInteger(f.rate) || f.rate < WAV_MIN_RATE || f.rate > WAV_MAX_RATE) return bad(`unsupported WAV sample rate: ${f.rate} Hz; ${WAV_MIN_RATE} to ${WAV_MAX_RATE} Hz are played`);
      const frameBytes = (f.channels * f.bits) / 8;
      if (f.blockAlign !== frameBytes) return bad(`bad WAV file: block align ${f.blockAlign} does not match ${f.channels} channel(s) of ${f.bits} bits (${frameBytes})`);
      if (f.byteRate !== frameBytes * f.rate) return bad(`bad WAV file: byte rate ${f.byteRate} does not match ${f.rate} Hz × ${frameBytes} bytes`);
      if (size % frameBytes !== 0) return bad(`truncated WAV file: the data chunk (${size} bytes) ends in the middle of a ${frameBytes}-byte sample frame`);
      if (size === 0) return bad('empty WAV file: the data chunk holds no samples');
      const frames = size / frameBytes;
      return { ok: true, info: { sampleRate: f.rate, channels: f.channels, bitsPerSample: f.bits, dataOffset: body, dataBytes: size, frames, durationMs: Math.floor((frames * 1000) / f.rate) } };
    }
    at = body + size + (size & 1);
  }
  return bad(fmt ? 'bad WAV file: no data chunk' : 'bad WAV file: no fmt chunk');
}

/** Decibels to a linear amplitude factor. */
export const gainFactor = (db: number) => 10 ** (db / 20);

/** The samples of a probed file as mono 16-bit PCM at the file's rate, `gainDb` applied. */
export function decodeWav(file: Uint8Array, info: WavInfo, gainDb = 0): Int16Array {
  const { channels, bitsPerSample: bits, frames } = info;
  const bytes = bits / 8;
  const v = new DataView(file.buffer, file.byteOffset + info.dataOffset, info.dataBytes);
  // Scale to 16-bit full scale, the channel average and the gain in one factor.
  const scale = (gainFactor(gainDb) / channels) * (bits === 24 ? 1 / 256 : bits === 8 ? 256 : 1);
  const read = bits === 16 ? (o: number) => v.getInt16(o, true) : bits === 8 ? (o: number) => v.getUint8(o) - 128 : (o: number) => (v.getUint8(o) | (v.getUint8(o + 1) << 8) | (v.getInt8(o + 2) << 16));
  const out = new Int16Array(frames);
  for (let i = 0, o = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++, o += bytes) sum += read(o);
    const s = Math.round(sum * scale);
    out[i] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
  }
  return out;
}
