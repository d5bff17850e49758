/**
 * A fixed-bin histogram of millisecond values (10 µs bins up to 500 ms), as in the rtpengine
 * peer recipe rtp-load.mjs: constant memory at any packet rate, percentiles at bin centres.
 * Negative values count by magnitude (added jitter is |ΔR − ΔS|).
 */
const BIN_US = 10;
const NBINS = 50_000;

export class Hist {
  private readonly h = new Uint32Array(NBINS + 1);
  n = 0;
  max = 0;

  add(ms: number): void {
    const v = ms < 0 ? -ms : ms;
    const b = Math.floor((v * 1000) / BIN_US);
    this.h[b > NBINS ? NBINS : b]!++;
    this.n++;
    if (v > this.max) this.max = v;
  }

  /** Percentile p (0..100) in ms; NaN when empty. */
  pct(p: number): number {
    if (!this.n) return Number.NaN;
    const want = Math.ceil((this.n * p) / 100);
    let acc = 0;
    for (let i = 0; i <= NBINS; i++) {
      acc += this.h[i]!;
      if (acc >= want) return i === NBINS ? this.max : ((i + 0.5) * BIN_US) / 1000;
    }
    return this.max;
  }
}
