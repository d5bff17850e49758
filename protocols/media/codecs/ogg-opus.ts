/**
 * Ogg Opus files (RFC 7845) as the file endpoint plays them: the probe that checks the headers
 * and the page layout of a demuxed Ogg stream (ogg.ts) and says which audio packets to decode
 * and how many samples to keep. Pure: the decoding (libopus) is the caller's
 * (actors/media-session/opus-file.ts).
 *
 * Decisions:
 * - The first page holds exactly the OpusHead packet (granule 0); OpusTags follows and ends its
 *   page; audio starts on a fresh page (RFC 7845 §3). Anything else is refused by name.
 * - OpusHead version 0.x (the major nibble 0), 1 or 2 channels, channel mapping family 0 only
 *   (families 1, 2, 255: surround and ambisonics are refused by name).
 * - The output gain (Q7.8 dB) is kept for the caller to add to gain_db.
 * - The stream must start at sample 0: the first audio page's granule equals the samples of the
 *   packets ending on it (checked by the caller once decoded; a stream cut from a live source,
 *   starting later, is refused, as RFC 7845 §4.5 permits for a file).
 * - The end is trimmed to the last page's granule position (RFC 7845 §4.5): kept samples =
 *   last granule − pre-skip. A last granule below the pre-skip, or above what the packets hold,
 *   is refused.
 */
import { demuxOgg, type OggStream } from './ogg.js';
import { gainFactor } from './wav.js';

export interface OggOpusInfo {
  /** Output rate: Opus always decodes at 48 kHz here. */
  sampleRate: 48000;
  channels: 1 | 2;
  /** The rate of the original input, informational only (OpusHead). */
  inputSampleRate: number;
  preSkip: number;
  /** OpusHead output gain in dB (Q7.8 in the header). */
  outputGainDb: number;
  /** The audio packets in order (headers excluded). */
  packets: Uint8Array[];
  /** For each audio packet, the granule position of its page when it is the page's last packet, else -1. */
  granuleAfter: number[];
  /** The last page's granule position. */
  lastGranule: number;
  /** Samples kept after pre-skip and end trimming (at 48 kHz). */
  frames: number;
  durationMs: number;
}

export const OPUS_FILE_RATE = 48000;

const ascii = (b: Uint8Array, len: number) => String.fromCharCode(...b.subarray(0, len));

/** Probe a whole .opus file; an error message naming what is wrong when it is not one we play. */
export function probeOggOpus(file: Uint8Array): { ok: true; info: OggOpusInfo } | { ok: false; message: string } {
  const demuxed = demuxOgg(file);
  if (!demuxed.ok) return demuxed;
  return probeOpusStream(demuxed.stream);
}

export function probeOpusStream(stream: OggStream): { ok: true; info: OggOpusInfo } | { ok: false; message: string } {
  const bad = (message: string) => ({ ok: false as const, message });
  const { pages, packets } = stream;
  const head = packets[0];
  if (!head || head.data.length < 8 || ascii(head.data, 8) !== 'OpusHead') return bad('unsupported Ogg file: the first packet is not OpusHead; only Ogg Opus is played (not Vorbis, FLAC or Speex)');
  const h = head.data;
  if (h.length < 19) return bad(`bad Ogg Opus file: OpusHead is ${h.length} bytes, at least 19 are needed`);
  if (head.page !== 0 || pages[0]!.packetsEnding !== 1) return bad('bad Ogg Opus file: OpusHead must be alone on the first page');
  if (pages[0]!.granule !== 0) return bad(`bad Ogg Opus file: the first page has granule position ${pages[0]!.granule}, 0 is required`);
  const version = h[8]!;
  if (version >> 4 !== 0) return bad(`unsupported Ogg Opus version ${version >> 4}.${version & 15}; version 0.x is played`);
  const channels = h[9]!;
  const v = new DataView(h.buffer, h.byteOffset, h.byteLength);
  const preSkip = v.getUint16(10, true);
  const inputSampleRate = v.getUint32(12, true);
  const outputGainDb = v.getInt16(16, true) / 256;
  const family = h[18]!;
  if (family !== 0) return bad(`unsupported Ogg Opus channel mapping family ${family}${family === 1 ? ' (surround)' : family === 2 || family === 3 ? ' (ambisonics)' : ''}; only family 0 (mono or stereo) is played`);
  if (channels !== 1 && channels !== 2) return bad(`bad Ogg Opus file: ${channels} channels with mapping family 0, which allows 1 or 2`);
  const tags = packets[1];
  if (!tags || tags.data.length < 8 || ascii(tags.data, 8) !== 'OpusTags') return bad('bad Ogg Opus file: the second packet is not OpusTags');
  if (pages[tags.page]!.packetsEnding !== 1 || packets[2]?.page === tags.page) return bad('bad Ogg Opus file: OpusTags must end its page, audio starts on a new one');
  const audio = packets.slice(2);
  if (audio.length === 0) return bad('empty Ogg Opus file: no audio packets');
  const granuleAfter = audio.map((p, i) => (audio[i + 1]?.page === p.page ? -1 : pages[p.page]!.granule));
  for (let i = 0; i < audio.length; i++) {
    if (granuleAfter[i] === -1 && audio[i + 1]?.page !== audio[i]!.page) return bad(`bad Ogg Opus file: the page at byte ${pages[audio[i]!.page]!.offset} ends a packet but has no granule position`);
  }
  let prev = 0;
  for (const g of granuleAfter) {
    if (g === -1) continue;
    if (g < prev) return bad(`bad Ogg Opus file: granule position ${g} goes back from ${prev}`);
    prev = g;
  }
  const lastGranule = pages[pages.length - 1]!.granule;
  if (lastGranule === -1) return bad('bad Ogg Opus file: the last page has no granule position');
  if (lastGranule < preSkip) return bad(`bad Ogg Opus file: the last granule position ${lastGranule} is below the pre-skip ${preSkip}`);
  const frames = lastGranule - preSkip;
  if (frames === 0) return bad('empty Ogg Opus file: no samples after the pre-skip');
  return {
    ok: true,
    info: { sampleRate: OPUS_FILE_RATE, channels, inputSampleRate, preSkip, outputGainDb, packets: audio.map((p) => p.data), granuleAfter, lastGranule, frames, durationMs: Math.floor((frames * 1000) / OPUS_FILE_RATE) },
  };
}

/**
 * The stream's decoded samples, checked and trimmed: `decoded` holds each audio packet's mono
 * 48 kHz samples in order. Checks the start at sample 0 and that the packets hold at least the
 * last granule position; returns the kept samples (pre-skip dropped, end trimmed), gain applied.
 */
export function trimOpusStream(info: OggOpusInfo, decoded: Int16Array[], gainDb: number): { ok: true; pcm: Int16Array } | { ok: false; message: string } {
  const bad = (message: string) => ({ ok: false as const, message });
  let total = 0;
  let checkedStart = false;
  for (let i = 0; i < decoded.length; i++) {
    total += decoded[i]!.length;
    const g = info.granuleAfter[i]!;
    if (g === -1 || checkedStart) continue;
    checkedStart = true;
    const last = i === decoded.length - 1;
    // The first page that ends a packet: its granule counts the samples so far, unless it is
    // also the last page, whose granule may trim the end.
    if (g > total) return bad(`unsupported Ogg Opus file: the stream starts at sample ${g - total}, not 0 (a stream cut from a live source)`);
    if (g < total && !last) return bad(`bad Ogg Opus file: the first audio page has granule position ${g}, its packets hold ${total} samples`);
  }
  if (info.lastGranule > total) return bad(`truncated Ogg Opus file: the last granule position is ${info.lastGranule}, the packets hold ${total} samples`);
  const factor = gainFactor(gainDb + info.outputGainDb);
  const out = new Int16Array(info.frames);
  let o = 0;
  let skip = info.preSkip;
  for (const part of decoded) {
    for (let i = 0; i < part.length && o < out.length; i++) {
      if (skip > 0) {
        skip--;
        continue;
      }
      const s = Math.round(part[i]! * factor);
      out[o++] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
    }
  }
  return { ok: true, pcm: out };
}
