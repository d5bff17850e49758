/**
 * Call-progress tones and test signals, synthesised at the receiver's sample rate.
 *
 * Tones (frequencies in Hz, cadence on/off in ms, repeating):
 *   ringback  440 + 480, 2000 on / 4000 off                 (North American ringback)
 *   ringing   400 + 450, 400 on / 200 off / 400 on / 2000 off (UK ring: differs from ringback)
 *   busy      480 + 620, 500 on / 500 off                   (North American busy)
 *   beep      1000, 250 on, then silence for good
 *   sine      `frequency` (default 1000), continuous
 *   silence   zeros
 *
 * Decisions:
 * - Level: −10 dBFS in total (a full-scale sine is 0 dBFS), shared equally by the components in
 *   power, so each of two components has a peak of 7327 and the sum never clips.
 * - A component at or above 0.45 × sampleRate is not synthesised (it would alias; the ideal
 *   low-pass of a sine above the band is silence); the others keep their level. So a 5 kHz
 *   sine for an 8 kHz receiver is silence, and a 5 kHz sine at 48 kHz is a 5 kHz sine.
 * - Phase is a per-component accumulator that runs through the off parts too, so output is
 *   continuous across calls; the cadence counts samples, never the clock.
 * - Each on part ramps linearly in and out over 2 ms, so cadence edges do not click.
 * - `frequency` is used by `sine` only; the other tones have fixed frequencies.
 */

export type ToneKind = 'ringback' | 'ringing' | 'busy' | 'beep' | 'sine' | 'silence';

/** One on/off step of a cadence; `offMs: Infinity` means the tone does not repeat. */
export interface CadenceStep {
  onMs: number;
  offMs: number;
}

export interface ToneSpec {
  freqs: number[];
  /** Repeating on/off steps; empty means continuously on. */
  cadence: CadenceStep[];
}

export const TONE_KINDS: readonly ToneKind[] = ['ringback', 'ringing', 'busy', 'beep', 'sine', 'silence'];
/** Total level of a tone, dBFS. */
export const TONE_LEVEL_DBFS = -10;
/** Components at or above this fraction of the sample rate are dropped. */
export const TONE_MAX_FRACTION = 0.45;
const RAMP_MS = 2;

/**
 * The frequencies and cadence of a tone. With `sampleRate`, only the components that rate can
 * carry (below 0.45 × sampleRate) are listed.
 */
export function toneComponents(kind: ToneKind, frequency?: number, sampleRate?: number): ToneSpec {
  let spec: ToneSpec;
  switch (kind) {
    case 'ringback':
      spec = { freqs: [440, 480], cadence: [{ onMs: 2000, offMs: 4000 }] };
      break;
    case 'ringing':
      spec = { freqs: [400, 450], cadence: [{ onMs: 400, offMs: 200 }, { onMs: 400, offMs: 2000 }] };
      break;
    case 'busy':
      spec = { freqs: [480, 620], cadence: [{ onMs: 500, offMs: 500 }] };
      break;
    case 'beep':
      spec = { freqs: [1000], cadence: [{ onMs: 250, offMs: Infinity }] };
      break;
    case 'sine': {
      const f = frequency ?? 1000;
      if (!Number.isFinite(f) || f <= 0) throw new RangeError(`sine frequency must be a positive number, got ${f}`);
      spec = { freqs: [f], cadence: [] };
      break;
    }
    case 'silence':
      spec = { freqs: [], cadence: [] };
      break;
    default:
      throw new TypeError(`unknown tone ${String(kind)}`);
  }
  if (sampleRate !== undefined) spec.freqs = spec.freqs.filter((f) => f < TONE_MAX_FRACTION * sampleRate);
  return spec;
}

/** Streaming tone source: each next() continues where the previous one stopped. */
export class ToneGenerator {
  readonly sampleRate: number;
  /** Components actually synthesised at this rate. */
  readonly freqs: readonly number[];
  private readonly amplitude: number;
  private readonly increments: Float64Array;
  private readonly phases: Float64Array;
  /** Cadence as [on, off] sample counts; empty = always on. */
  private readonly steps: Array<[number, number]>;
  private readonly cycle: number;
  private readonly ramp: number;
  /** Samples produced so far (position in the cadence). */
  private position = 0;

  constructor(kind: ToneKind, o: { sampleRate: number; frequency?: number | undefined }) {
    if (!Number.isInteger(o.sampleRate) || o.sampleRate <= 0) throw new RangeError(`sample rate must be a positive integer, got ${o.sampleRate}`);
    this.sampleRate = o.sampleRate;
    const all = toneComponents(kind, o.frequency);
    const kept = toneComponents(kind, o.frequency, o.sampleRate);
    this.freqs = kept.freqs;
    // Power shared by all nominal components, so a dropped one does not make the others louder.
    this.amplitude = all.freqs.length > 0 ? (32767 * 10 ** (TONE_LEVEL_DBFS / 20)) / Math.sqrt(all.freqs.length) : 0;
    this.increments = Float64Array.from(kept.freqs, (f) => f / o.sampleRate);
    this.phases = new Float64Array(kept.freqs.length);
    const samples = (ms: number): number => (ms === Infinity ? Infinity : Math.round((ms * o.sampleRate) / 1000));
    this.steps = kept.cadence.map((c) => [samples(c.onMs), samples(c.offMs)]);
    this.cycle = this.steps.reduce((s, [on, off]) => s + on + off, 0);
    this.ramp = Math.max(1, Math.round((RAMP_MS * o.sampleRate) / 1000));
  }

  /** True once the tone has nothing more to play (silence, nothing below 0.45 × rate, or a beep that ended). */
  get finished(): boolean {
    if (this.freqs.length === 0) return true;
    const first = this.steps[0];
    return this.cycle === Infinity && first !== undefined && this.position >= first[0];
  }

  /** The next `samples` samples; `out`, if given, must hold them (a prefix view is returned). */
  next(samples: number, out?: Int16Array): Int16Array {
    checkCount(samples);
    if (out !== undefined && out.length < samples) throw new RangeError(`output array too short: ${out.length} < ${samples}`);
    const o = out === undefined ? new Int16Array(samples) : out.length === samples ? out : out.subarray(0, samples);
    const { increments, phases, amplitude } = this;
    const count = phases.length;
    for (let i = 0; i < samples; i++) {
      const gain = this.gainAt(this.position + i);
      let v = 0;
      for (let c = 0; c < count; c++) {
        let ph = phases[c] as number;
        if (gain > 0) v += Math.sin(2 * Math.PI * ph);
        ph += increments[c] as number;
        phases[c] = ph >= 1 ? ph - 1 : ph;
      }
      o[i] = Math.round(v * amplitude * gain);
    }
    this.position += samples;
    return o;
  }

  /** Advances by `samples` without producing them (e.g. a receiver joining a tone late). */
  advance(samples: number): void {
    checkCount(samples);
    for (let c = 0; c < this.phases.length; c++) {
      const ph = (this.phases[c] as number) + (this.increments[c] as number) * samples;
      this.phases[c] = ph - Math.floor(ph);
    }
    this.position += samples;
  }

  /** Envelope at an absolute sample position: 0 off, 1 on, a 2 ms ramp at each edge. */
  private gainAt(position: number): number {
    if (this.freqs.length === 0) return 0;
    if (this.steps.length === 0) return 1;
    let t = this.cycle === Infinity ? position : position % this.cycle;
    for (const [on, off] of this.steps) {
      if (t < on) return Math.min(1, (t + 1) / (this.ramp + 1), (on - t) / (this.ramp + 1));
      t -= on;
      if (t < off) return 0;
      t -= off;
    }
    return 0;
  }
}

function checkCount(samples: number): void {
  if (!Number.isInteger(samples) || samples < 0) throw new RangeError(`sample count must be a non-negative integer, got ${samples}`);
}
