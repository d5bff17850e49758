/**
 * Streaming sample-rate conversion by a rational factor L/M (8000 ⇄ 16000 ⇄ 48000, and the rates
 * of audio files: 11025, 22050, 44100, 88200, 24000, 32000, 96000 … to any of those; any pair
 * whose reduced ratio has L, M ≤ 1024): a polyphase windowed-sinc FIR low-pass run at L·from.
 *
 * Decisions:
 * - Filter: Kaiser-windowed sinc (β = 4.75), cutoff (−6 dB) at 0.45·min(from, to), length
 *   32·(L·from)/min(from, to) taps: passband flat (±0.03 dB) to 0.4·min, stopband ≥ 52 dB from
 *   0.5·min up (the lower rate's Nyquist, so nothing aliases into the band below 0.5·min and
 *   images of the band are removed). For 8 kHz the edge of the telephone band (3.4 kHz) is at
 *   −1.2 dB: that is the price of the short filter.
 * - Group delay (the filter is linear-phase): (taps − 1) / 2 samples at L·from, i.e.
 *   `delayMs` = 1.99 ms for 8k⇄48k, 1.97 ms for 8k⇄16k, 0.99 ms for 16k⇄48k. There is no
 *   other start-up delay: the history starts as silence, and from the very first call a
 *   from/50-sample (20 ms) frame gives exactly to/50 samples (other lengths: input·L/M, rounded
 *   up or down by the carried phase; see outputLength()).
 *   Processing in frames or in one block gives identical samples.
 * - Arithmetic in doubles, output rounded to nearest and clamped to 16 bits. Filters are designed
 *   once per rate pair and shared (module cache; designing is deterministic). A large factor
   costs memory, not time per sample: 44100 → 8000 is a 14 112-tap filter (110 KiB) but each
   output sample still takes 177 multiply-adds (32 per input-rate period of the lower rate).
 * - Equal rates pass samples through unchanged.
 */

interface Design {
  up: number;
  down: number;
  /** Taps per phase. */
  k: number;
  /** Phase p's taps, reversed (oldest input first) and scaled by L: coeffs[p·k + j]. */
  coeffs: Float64Array;
  delayMs: number;
}

/** 44100 → 8000 is 80/441 and 11025 → 48000 is 640/147; a prime rate such as 7919 is refused. */
const MAX_FACTOR = 1024;
const KAISER_BETA = 4.75;
const designs = new Map<string, Design>();

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (power series). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 100; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum;
}

/** Kaiser-windowed sinc low-pass, `n` taps, cutoff `fc` in cycles per sample, unity DC gain. */
export function lowPass(n: number, fc: number, beta = KAISER_BETA): Float64Array {
  const h = new Float64Array(n);
  const centre = (n - 1) / 2;
  const i0beta = besselI0(beta);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = i - centre;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const r = n > 1 ? (2 * x) / (n - 1) : 0;
    h[i] = sinc * (besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0beta);
    sum += h[i] as number;
  }
  for (let i = 0; i < n; i++) h[i] = (h[i] as number) / sum;
  return h;
}

function design(from: number, to: number): Design {
  const key = `${from}/${to}`;
  const cached = designs.get(key);
  if (cached) return cached;
  const g = gcd(from, to);
  const up = to / g;
  const down = from / g;
  if (up > MAX_FACTOR || down > MAX_FACTOR) throw new RangeError(`resampling ${from} → ${to} Hz needs a factor ${up}/${down}; at most ${MAX_FACTOR}/${MAX_FACTOR} is supported`);
  const rate = from * up;
  const min = Math.min(from, to);
  const n = Math.round((32 * rate) / min);
  const h = lowPass(n, (0.45 * min) / rate);
  const k = Math.ceil(n / up);
  const coeffs = new Float64Array(up * k);
  for (let p = 0; p < up; p++) {
    for (let i = 0; i < k; i++) {
      const tap = p + i * up;
      coeffs[p * k + (k - 1 - i)] = tap < n ? (h[tap] as number) * up : 0;
    }
  }
  const d: Design = { up, down, k, coeffs, delayMs: (((n - 1) / 2) * 1000) / rate };
  designs.set(key, d);
  return d;
}

/** Streaming resampler from `fromRate` to `toRate`; keeps its history between calls. */
export class Resampler {
  /** Group delay of the filter, in milliseconds (0 for equal rates). */
  readonly delayMs: number;
  private readonly d: Design | null;
  /** k − 1 history samples followed by the current input. */
  private buf: Float64Array;
  /** Position of the next output on the L·from grid, relative to the current input's start. */
  private pos = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    for (const r of [fromRate, toRate]) if (!Number.isInteger(r) || r <= 0) throw new RangeError(`sample rate must be a positive integer, got ${r}`);
    this.d = fromRate === toRate ? null : design(fromRate, toRate);
    this.delayMs = this.d ? this.d.delayMs : 0;
    this.buf = new Float64Array(this.d ? this.d.k - 1 + 960 : 0);
  }

  /** How many samples the next process() of `inputLength` samples will return. */
  outputLength(inputLength: number): number {
    if (!this.d) return inputLength;
    const end = inputLength * this.d.up;
    return this.pos < end ? Math.ceil((end - this.pos) / this.d.down) : 0;
  }

  /**
   * Resamples the next piece of the stream. `out`, if given, must hold outputLength(input.length)
   * samples (the result is then `out` or a prefix view of it); otherwise a new array is returned.
   */
  process(input: Int16Array, out?: Int16Array): Int16Array {
    const n = this.outputLength(input.length);
    if (out !== undefined && out.length < n) throw new RangeError(`output array too short: ${out.length} < ${n}`);
    const o = out === undefined ? new Int16Array(n) : out.length === n ? out : out.subarray(0, n);
    const d = this.d;
    if (!d) {
      o.set(input);
      return o;
    }
    const { up, down, k, coeffs } = d;
    const hist = k - 1;
    if (this.buf.length < hist + input.length) {
      const bigger = new Float64Array(hist + input.length);
      bigger.set(this.buf.subarray(0, hist));
      this.buf = bigger;
    }
    const buf = this.buf;
    for (let i = 0; i < input.length; i++) buf[hist + i] = input[i] as number;
    let pos = this.pos;
    for (let j = 0; j < n; j++, pos += down) {
      const q = Math.floor(pos / up);
      const base = (pos - q * up) * k;
      let acc = 0;
      for (let i = 0; i < k; i++) acc += (coeffs[base + i] as number) * (buf[q + i] as number);
      const v = Math.round(acc);
      o[j] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    this.pos = pos - input.length * up;
    buf.copyWithin(0, input.length, input.length + hist);
    return o;
  }
}
