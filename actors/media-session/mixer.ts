/**
 * The decode/resample/mix/encode half of routing, for destinations that do not get packets
 * forwarded as they are. Sources push decoded audio when packets arrive; every 20 ms the
 * session calls `tick`, and each mixing destination gets one frame: the sum of its sources
 * (resampled to its codec's rate), encoded in its codec.
 */
import { Resampler } from '../../protocols/media/codecs/resample.js';
import type { CodecName } from '../../protocols/media/types.js';
import { createDecoder, createEncoder, type AudioDecoder, type AudioEncoder } from './codecs.js';
import { SampleFifo } from './fifo.js';

/** A source as the mixer sees it: decoded packets (RTP) or a generator (tone). */
export interface MixSource {
  id: string;
  /** For a generator: a frame at `rate`, or null when it has nothing this tick. */
  generate?: (rate: number) => Int16Array | null;
}

interface SourceAudio {
  decoders: Map<CodecName, AudioDecoder>;
  /** Codec of the last packet pushed (null: PCM pushed as it is, from a WebSocket or a bridge). */
  codec: CodecName | null;
  fifo: SampleFifo | null;
  rate: number;
  /** This tick's frame at the source's own rate (pulled once per tick), or null. */
  frame: Int16Array | null;
  scratch: Int16Array;
  resamplers: Map<number, Resampler>;
}

export class Mixer {
  private sources = new Map<string, SourceAudio>();
  private encoders = new Map<string, AudioEncoder>();
  private tickCache = new Map<string, Int16Array | null>();

  /** Decode a packet of `codec` from source `id` into its queue. */
  push(id: string, codec: CodecName, payload: Uint8Array): void {
    const s = this.source(id);
    let dec = s.decoders.get(codec);
    if (!dec) {
      dec = createDecoder(codec);
      s.decoders.set(codec, dec);
    }
    this.atRate(s, dec.sampleRate, 200);
    s.codec = codec;
    s.fifo!.push(dec.decode(payload));
  }

  /**
   * Queue PCM of source `id` at `rate` as it is (WebSocket and bridge sources), any length: the
   * tick takes it 20 ms at a time. The queue holds `capacityMs`; beyond it the oldest goes.
   */
  pushPcm(id: string, rate: number, pcm: Int16Array, capacityMs: number): void {
    const s = this.source(id);
    this.atRate(s, rate, capacityMs);
    s.codec = null;
    s.fifo!.push(pcm);
  }

  /** Samples a source's queue dropped because it ran ahead of the clock. */
  dropped(id: string): number {
    return this.sources.get(id)?.fifo?.dropped ?? 0;
  }

  private source(id: string): SourceAudio {
    let s = this.sources.get(id);
    if (!s) {
      s = { decoders: new Map(), codec: null, fifo: null, rate: 0, frame: null, scratch: new Int16Array(0), resamplers: new Map() };
      this.sources.set(id, s);
    }
    return s;
  }

  /** A change of the source's rate (a codec change) starts its queue and resamplers afresh. */
  private atRate(s: SourceAudio, rate: number, capacityMs: number): void {
    if (s.rate === rate) return;
    s.rate = rate;
    s.fifo = new SampleFifo((rate * capacityMs) / 1000);
    s.scratch = new Int16Array(rate / 50);
    s.resamplers.clear();
  }

  forget(id: string): void {
    this.sources.delete(id);
    this.encoders.delete(id);
  }

  /** Start of a tick: each decoded source yields at most one 20 ms frame. */
  beginTick(): void {
    this.tickCache.clear();
    for (const s of this.sources.values()) {
      s.frame = s.fifo && s.fifo.pull(s.scratch.length, s.scratch) ? s.scratch : null;
    }
  }

  /** The codec a decoded source last sent, when it has a frame this tick; else null. */
  frameCodec(id: string): CodecName | null {
    const s = this.sources.get(id);
    return s && s.frame !== null ? s.codec : null;
  }

  /**
   * The mixed, encoded frame for one destination, or null when none of its sources had audio
   * this tick (nothing is sent then: a leg that hears only silent peers gets no packets).
   */
  mixFor(destination: string, codec: CodecName, sources: readonly MixSource[]): Uint8Array | null {
    let enc = this.encoders.get(destination);
    if (!enc || enc.codec !== codec) {
      enc = createEncoder(codec);
      this.encoders.set(destination, enc);
    }
    const pcm = this.mixPcm(enc.sampleRate, sources);
    return pcm && enc.encode(pcm);
  }

  /** The sum of `sources`' frames at `rate` (20 ms), or null when none had audio this tick. */
  mixPcm(rate: number, sources: readonly MixSource[]): Int16Array | null {
    const n = rate / 50;
    const acc = new Int32Array(n);
    let heard = 0;
    for (const src of sources) {
      const frame = this.frameOf(src, rate);
      if (!frame) continue;
      heard++;
      for (let i = 0; i < n; i++) acc[i]! += frame[i] ?? 0;
    }
    if (heard === 0) return null;
    const pcm = new Int16Array(n);
    for (let i = 0; i < n; i++) {
      const v = acc[i]!;
      pcm[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    return pcm;
  }

  private frameOf(src: MixSource, rate: number): Int16Array | null {
    const key = `${src.id}@${rate}`;
    if (this.tickCache.has(key)) return this.tickCache.get(key)!;
    let out: Int16Array | null = null;
    if (src.generate) out = src.generate(rate);
    else {
      const s = this.sources.get(src.id);
      if (s && s.rate > 0) {
        if (s.rate === rate) out = s.frame;
        else {
          let r = s.resamplers.get(rate);
          if (!r) {
            r = new Resampler(s.rate, rate);
            s.resamplers.set(rate, r);
          }
          // Feed silence through the resampler on a gap so its history stays continuous.
          const resampled = r.process(s.frame ?? new Int16Array(s.scratch.length));
          out = s.frame ? resampled : null;
        }
      }
    }
    this.tickCache.set(key, out);
    return out;
  }
}
