/**
 * The codec factory the media session uses: one encoder or decoder per stream and direction,
 * behind a common interface, with state that can be snapshotted where the codec allows.
 *
 * Decisions:
 * - PCMU/PCMA: 8 kHz, stateless (snapshot() is null). G.722: 16 kHz PCM, RTP clock 8000,
 *   snapshot() is the plain-data G722State. Opus: 48 kHz mono through @discordjs/opus
 *   (libopus), 32 kbit/s; the SDP says opus/48000/2 but we send mono (stereo-capable decoders
 *   play it) and decode to mono (libopus downmixes a stereo packet).
 * - Opus state cannot be read out of libopus: snapshot() is null and a codec restored from it
 *   starts fresh (a moved stream costs the decoder's few ms of prediction, nothing more).
 * - @discordjs/opus is loaded with createRequire on first use, so importing this module does
 *   not load the native addon.
 * - libopus aborts the whole process on a PCM length it does not accept, so the Opus encoder
 *   checks the length first (2.5, 5, 10, 20, 40 or 60 ms of 48 kHz samples) and throws a
 *   RangeError instead. Other encoders take any length (G.722: any even length).
 * - An empty Opus payload decodes to no samples (libopus would conceal a lost packet; loss
 *   concealment is the jitter buffer's decision, not the decoder's). A corrupt one throws.
 * - encode()/decode() return a new array unless `out` is given (then `out` or a prefix view of
 *   it is returned), so results may be kept across frames.
 * - PCM is native-endian Int16Array; @discordjs/opus speaks s16le, so this assumes a
 *   little-endian host (all supported Node platforms are).
 */
import { createRequire } from 'node:module';
import { alawDecode, alawEncode, ulawDecode, ulawEncode } from '../../protocols/media/codecs/g711.js';
import { G722Decoder, G722Encoder, type G722State } from '../../protocols/media/codecs/g722.js';
import { CODECS, type CodecName } from '../../protocols/media/types.js';

export interface AudioEncoder {
  readonly codec: CodecName;
  readonly sampleRate: number;
  /** Samples per 20 ms frame. */
  readonly frameSamples: number;
  /** Encodes mono PCM at sampleRate (normally frameSamples long). */
  encode(pcm: Int16Array, out?: Uint8Array): Uint8Array;
  /** Plain-data state for restoring elsewhere, or null when the codec has none to give. */
  snapshot(): unknown;
}

export interface AudioDecoder {
  readonly codec: CodecName;
  readonly sampleRate: number;
  /** Decodes one RTP payload to mono PCM at sampleRate. */
  decode(payload: Uint8Array, out?: Int16Array): Int16Array;
  snapshot(): unknown;
}

type OpusModule = typeof import('@discordjs/opus');
type OpusCodec = InstanceType<OpusModule['OpusEncoder']>;

const OPUS_RATE = 48000;
export const OPUS_BITRATE = 32000;
const OPUS_FRAME_SIZES = new Set([120, 240, 480, 960, 1920, 2880]);
let opus: OpusModule | null = null;

function newOpus(): OpusCodec {
  opus ??= createRequire(import.meta.url)('@discordjs/opus') as OpusModule;
  const c = new opus.OpusEncoder(OPUS_RATE, 1);
  c.setBitrate(OPUS_BITRATE);
  return c;
}

function frameSamplesOf(codec: CodecName): number {
  return CODECS[codec].sampleRate / 50;
}

function checkCodec(codec: unknown): asserts codec is CodecName {
  if (typeof codec !== 'string' || !Object.hasOwn(CODECS, codec)) throw new TypeError(`unknown codec ${String(codec)}`);
}

function copyOut(src: Uint8Array, out: Uint8Array | undefined): Uint8Array;
function copyOut(src: Int16Array, out: Int16Array | undefined): Int16Array;
function copyOut(src: Uint8Array | Int16Array, out: Uint8Array | Int16Array | undefined): Uint8Array | Int16Array {
  if (out === undefined) return src;
  if (out.length < src.length) throw new RangeError(`output array too short: ${out.length} < ${src.length}`);
  const o = out.length === src.length ? out : out.subarray(0, src.length);
  o.set(src as never);
  return o;
}

export function createEncoder(codec: CodecName, state?: unknown): AudioEncoder {
  checkCodec(codec);
  const base = { codec, sampleRate: CODECS[codec].sampleRate, frameSamples: frameSamplesOf(codec) };
  switch (codec) {
    case 'pcmu':
      return { ...base, encode: (pcm, out) => ulawEncode(pcm, out), snapshot: () => null };
    case 'pcma':
      return { ...base, encode: (pcm, out) => alawEncode(pcm, out), snapshot: () => null };
    case 'g722': {
      const enc = state == null ? new G722Encoder() : G722Encoder.restore(state as G722State);
      return { ...base, encode: (pcm, out) => enc.encode(pcm, out), snapshot: () => enc.snapshot() };
    }
    case 'opus': {
      const enc = newOpus();
      return {
        ...base,
        encode: (pcm, out) => {
          if (!OPUS_FRAME_SIZES.has(pcm.length)) throw new RangeError(`Opus encodes 2.5/5/10/20/40/60 ms frames (120..2880 samples at 48 kHz); got ${pcm.length}`);
          const packet: Uint8Array = enc.encode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
          return copyOut(packet, out);
        },
        snapshot: () => null,
      };
    }
  }
}

export function createDecoder(codec: CodecName, state?: unknown): AudioDecoder {
  checkCodec(codec);
  const base = { codec, sampleRate: CODECS[codec].sampleRate };
  switch (codec) {
    case 'pcmu':
      return { ...base, decode: (b, out) => ulawDecode(b, out), snapshot: () => null };
    case 'pcma':
      return { ...base, decode: (b, out) => alawDecode(b, out), snapshot: () => null };
    case 'g722': {
      const dec = state == null ? new G722Decoder() : G722Decoder.restore(state as G722State);
      return { ...base, decode: (b, out) => dec.decode(b, out), snapshot: () => dec.snapshot() };
    }
    case 'opus': {
      const dec = newOpus();
      return {
        ...base,
        decode: (b, out) => {
          if (b.length === 0) return copyOut(new Int16Array(0), out);
          const raw = dec.decode(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
          const pcm =
            raw.byteOffset % 2 === 0
              ? new Int16Array(raw.buffer, raw.byteOffset, raw.length >> 1)
              : new Int16Array(new Uint8Array(raw).buffer);
          return copyOut(pcm, out);
        },
        snapshot: () => null,
      };
    }
  }
}

/** RTP timestamp units per `ms` of audio: the codec's RTP clock (G.722's is 8000, not 16000). */
export function rtpTimestampIncrement(codec: CodecName, ms = 20): number {
  checkCodec(codec);
  const units = (CODECS[codec].clockRate * ms) / 1000;
  if (!(ms > 0) || !Number.isInteger(units)) throw new RangeError(`${ms} ms is not a whole number of ${codec} RTP clock units`);
  return units;
}
