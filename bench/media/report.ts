/**
 * The benchmark's verdicts, table and summary: pure functions of the run results.
 * The bar (from the issue): loss ≤ 0.1 % and p99 added jitter ≤ 5 ms. Per relay and mode the
 * best N is the highest N within the bar; calls per core = N / (relay CPU as a fraction of one
 * core) at that N. The ratio hostd/rtpengine compares calls per core; beside it, at every N
 * both relays ran, the ratio of their CPU (rtpengine / hostd: > 1 means hostd is cheaper).
 */
import { renderTable, type Cell } from '../lib/table.js';
import type { RunResult } from './load.js';

export const BAR = { lossPct: 0.1, p99Ms: 5 };

export interface Row extends RunResult {
  attempt: number;
  attempts: number;
  noisy: boolean;
  background_before_pct: number;
}

export interface Failed {
  relay: string;
  mode: 'plain' | 'srtp';
  calls: number;
  error: string;
}

export const passes = (r: RunResult): boolean => r.loss_pct <= BAR.lossPct && r.transit_jitter_ms.p99 <= BAR.p99Ms;

export interface Best {
  relay: string;
  mode: 'plain' | 'srtp';
  best_calls: number;
  relay_cpu_pct: number | null;
  us_per_pkt: number | null;
  calls_per_core: number | null;
  tested: number[];
}

export function bestOf(rows: Row[], relay: string, mode: 'plain' | 'srtp'): Best {
  const mine = rows.filter((r) => r.relay === relay && r.mode === mode);
  const ok = mine.filter(passes).sort((a, b) => a.calls - b.calls);
  const b = ok[ok.length - 1];
  return {
    relay,
    mode,
    best_calls: b?.calls ?? 0,
    relay_cpu_pct: b?.relay_cpu_pct ?? null,
    us_per_pkt: b?.relay_us_per_pkt ?? null,
    calls_per_core: b && b.relay_cpu_pct > 0 ? Math.round(b.calls / (b.relay_cpu_pct / 100)) : null,
    tested: mine.map((r) => r.calls),
  };
}

export interface Ratio {
  mode: 'plain' | 'srtp';
  /** The relay compared with rtpengine (hostd, hostd/1t, node-floor). */
  relay: string;
  /** its calls per core / rtpengine calls per core (each at its own best N). */
  calls_per_core_ratio: number | null;
  meets_target: boolean | null;
  /** At each N both ran: rtpengine CPU / hostd CPU (> 1: the relay uses less). */
  same_n: Array<{ calls: number; relay_cpu_pct: number; rtpengine_cpu_pct: number; cpu_ratio: number; relay_pass: boolean; rtpengine_pass: boolean }>;
}

export function ratios(rows: Row[], bests: Best[]): Ratio[] {
  const out: Ratio[] = [];
  for (const mode of ['plain', 'srtp'] as const) {
    const rt = bests.find((b) => b.relay === 'rtpengine' && b.mode === mode);
    for (const h of bests.filter((b) => b.relay !== 'rtpengine' && b.mode === mode)) {
      const r = rt?.calls_per_core && h.calls_per_core !== null ? Math.round((h.calls_per_core / rt.calls_per_core) * 100) / 100 : null;
      const same_n = rows
        .filter((x) => x.relay === h.relay && x.mode === mode)
        .flatMap((x) => {
          const y = rows.find((z) => z.relay === 'rtpengine' && z.mode === mode && z.calls === x.calls);
          if (!y || !(x.relay_cpu_pct > 0)) return [];
          return [{ calls: x.calls, relay_cpu_pct: x.relay_cpu_pct, rtpengine_cpu_pct: y.relay_cpu_pct, cpu_ratio: Math.round((y.relay_cpu_pct / x.relay_cpu_pct) * 100) / 100, relay_pass: passes(x), rtpengine_pass: passes(y) }];
        });
      out.push({ mode, relay: h.relay, calls_per_core_ratio: r, meets_target: rt ? (r === null ? false : r >= 1) : null, same_n });
    }
  }
  return out;
}

const f = (x: number | null | undefined, d = 1): Cell => (x === null || x === undefined || !Number.isFinite(x) ? null : x.toFixed(d));

export function resultsTable(rows: Row[], failed: Failed[]): string {
  const cols = ['relay', 'mode', 'calls', 'pkt/s', 'loss %', 'jit p50', 'jit p99', 'lat p99', 'relay %', 'sys %', 'thr max %', 'µs/pkt', 'gen %', 'other+steal %', 'late p99', 'bar', 'note'];
  const body: Cell[][] = rows.map((r) => [
    r.relay, r.mode, String(r.calls), r.pps_in, f(r.loss_pct, 3), f(r.transit_jitter_ms.p50, 2), f(r.transit_jitter_ms.p99, 2), f(r.latency_ms.p99, 2),
    f(r.relay_cpu_pct), f(r.relay_sys_pct), f(r.relay_max_thread_pct), f(r.relay_us_per_pkt), f(r.gen_cpu_pct), f(Math.max(r.other_cpu_pct, r.other_procs_pct) + r.steal_pct, 0), f(r.send_late_ms.p99, 2),
    passes(r) ? 'pass' : 'FAIL',
    [r.attempts > 1 ? `try ${r.attempt + 1}/${r.attempts}` : '', r.noisy ? 'noisy' : '', r.udp_rcvbuf_errors ? `rcvbuf err ${r.udp_rcvbuf_errors}` : ''].filter(Boolean).join(', '),
  ]);
  for (const x of failed) body.push([x.relay, x.mode, String(x.calls), null, null, null, null, null, null, null, null, null, null, null, null, 'FAIL', x.error.slice(0, 60)]);
  return renderTable(cols, body);
}

export function summaryTable(bests: Best[], rs: Ratio[]): string {
  const cols = ['relay', 'mode', 'best N in bar', 'relay % at N', 'µs/pkt', 'calls/core', 'x rtpengine'];
  const body: Cell[][] = bests.map((b) => {
    const r = rs.find((x) => x.relay === b.relay && x.mode === b.mode);
    return [b.relay, b.mode, b.best_calls ? String(b.best_calls) : 'none', f(b.relay_cpu_pct), f(b.us_per_pkt), b.calls_per_core === null ? null : String(b.calls_per_core), r ? (r.calls_per_core_ratio === null ? '-' : `${r.calls_per_core_ratio.toFixed(2)}x`) : ''];
  });
  return renderTable(cols, body);
}
