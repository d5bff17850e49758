/** Small statistics helpers for benchmarks: pure functions, no I/O. */

/** Median of a list of numbers (NaN for an empty list). Does not modify the input. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * Percentile `p` (0..100) by the nearest-rank method on a sorted copy: the value below which
 * p % of the samples fall. NaN for an empty list.
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  return percentileSorted(sorted, p);
}

/** Same as `percentile`, on samples that are already sorted ascending. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  if (p <= 0) return sorted[0]!;
  if (p >= 100) return sorted[n - 1]!;
  if (p === 50 && n % 2 === 0) return (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  const rank = Math.ceil((p / 100) * n);
  return sorted[Math.min(n, Math.max(1, rank)) - 1]!;
}

export interface LatencySummary {
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** p50 / p99 / max / mean of latency samples (any unit; the unit is kept). */
export function summarize(samples: Float64Array | readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samples as ArrayLike<number>).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: percentileSorted(sorted, 50),
    p99: percentileSorted(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Relative spread of rounds, (max - min) / median, as a fraction (0.05 = 5 %). */
export function spread(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = median(values);
  if (!Number.isFinite(m) || m === 0) return 0;
  return (Math.max(...values) - Math.min(...values)) / Math.abs(m);
}

/** Key-wise median of several rounds of the same metrics record. */
export function medianRecord<K extends string>(rounds: ReadonlyArray<Partial<Record<K, number>>>): Partial<Record<K, number>> {
  const keys = new Set<K>();
  for (const r of rounds) for (const k of Object.keys(r) as K[]) keys.add(k);
  const out: Partial<Record<K, number>> = {};
  for (const k of keys) {
    const vals = rounds.map((r) => r[k]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    if (vals.length) out[k] = median(vals);
  }
  return out;
}
