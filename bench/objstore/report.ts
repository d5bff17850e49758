/** Tables, targets and the JSON line of the object store benchmark: pure functions of the results. */
import { median, spread } from '../lib/stats.js';
import { fmt, renderTable, type Cell } from '../lib/table.js';
import { SCENARIOS, type Results, type Sample } from './scenarios.js';

/** Medians of the rounds of one scenario, and the spread of its main figure. */
export interface Summary {
  value: number;
  p50_ms: number;
  p99_ms: number;
  client_cpu: number;
  server_cpu: number | null;
  objects: number;
  spread: number;
  rounds: number[];
}

export function summarizeRounds(samples: Sample[]): Summary {
  const med = (f: (s: Sample) => number | null) => {
    const v = samples.map(f).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    return v.length ? median(v) : null;
  };
  const values = samples.map((s) => s.value);
  return {
    value: median(values),
    p50_ms: med((s) => s.p50_ms) ?? Number.NaN,
    p99_ms: med((s) => s.p99_ms) ?? Number.NaN,
    client_cpu: med((s) => s.client_cpu) ?? Number.NaN,
    server_cpu: med((s) => s.server_cpu),
    objects: med((s) => s.objects) ?? 0,
    spread: spread(values),
    rounds: values,
  };
}

export type Summaries = Record<string, Summary>;

export function summarizeAll(r: Results): Summaries {
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, summarizeRounds(v)]));
}

/** A peer's column: its summaries, or why it has none. */
export interface Column {
  title: string;
  data: Summaries | null;
  why?: string;
}

const cpu = (s: Summary | undefined): string | null => {
  if (!s) return null;
  const server = s.server_cpu === null ? '?' : s.server_cpu.toFixed(2);
  return `${s.client_cpu.toFixed(2)}/${server}`;
};

export function ratio(a: Summary | undefined, b: Summary | undefined): number | null {
  if (!a || !b || !(b.value > 0)) return null;
  return a.value / b.value;
}

/** The PUT/GET table: one row per scenario; for each column the median, p50 latency and CPU. */
export function scenarioTable(ceph: Column, hostd: Column, ceiling: Column): string {
  const cols: string[] = ['scenario', 'unit'];
  for (const c of [ceph, hostd]) cols.push(c.title, 'p50 ms', '±', 'cpu c/s');
  cols.push('hostd/Ceph', ceiling.title);
  const rows: Cell[][] = SCENARIOS.map((sc) => {
    const row: Cell[] = [sc.label, sc.unit];
    for (const c of [ceph, hostd]) {
      const s = c.data?.[sc.key];
      row.push(s?.value, s?.p50_ms, s ? `${Math.round(s.spread * 100)}%` : null, cpu(s));
    }
    const r = ratio(hostd.data?.[sc.key], ceph.data?.[sc.key]);
    row.push(r === null ? null : `${r.toFixed(2)}x`, ceiling.data?.[sc.key]?.value);
    return row;
  });
  const notes = [ceph, hostd, ceiling].filter((c) => !c.data && c.why).map((c) => `${c.title}: ${c.why}`);
  return [renderTable(cols, rows), ...notes].join('\n');
}

/**
 * Small-object scenarios whose requests take tens of milliseconds while the server sits mostly
 * idle: time spent waiting, not working. On a kept-alive loopback connection that is the signature
 * of Nagle's algorithm on the server holding a small response body until the client's delayed ACK
 * of the response head (~40 ms on Linux); the server can avoid it with TCP_NODELAY.
 */
export function stallNotes(columns: Column[]): string[] {
  const out: string[] = [];
  for (const c of columns) {
    for (const sc of SCENARIOS) {
      const s = c.data?.[sc.key];
      if (!s || sc.kind !== 'small' || s.server_cpu === null) continue;
      if (s.p50_ms >= 30 && s.server_cpu < 0.5) {
        out.push(`${c.title} ${sc.label}: p50 ${fmt(s.p50_ms)} ms with the server at ${s.server_cpu.toFixed(2)} cores: a wait, not work (likely Nagle on the server vs delayed ACK; TCP_NODELAY on its side removes it)`);
      }
    }
  }
  return out;
}

export interface Target {
  name: string;
  want: string;
  measured: string | null;
  met: boolean | null;
  /** why it could not be judged */
  why?: string;
}

const GIB_IN_MIB = 1024;

/** The object store's targets, judged on the medians. */
export function targets(md5MiBs: number | null, hostd: Summaries | null, ceph: Summaries | null, hostdWhy: string, cephWhy: string): Target[] {
  const out: Target[] = [];
  const h = (k: string) => hostd?.[k];
  const mib = (v: number) => `${fmt(v)} MiB/s`;
  const add = (name: string, want: string, value: number | undefined, need: number | null, unit: (v: number) => string, missing?: string) => {
    if (!hostd) return void out.push({ name, want, measured: null, met: null, why: hostdWhy });
    if (need === null) return void out.push({ name, want, measured: value === undefined ? null : unit(value), met: null, why: missing ?? 'no reference figure' });
    if (value === undefined) return void out.push({ name, want, measured: null, met: null, why: 'scenario not measured' });
    out.push({ name, want, measured: unit(value), met: value >= need });
  };
  const bound = md5MiBs === null ? null : 0.75 * md5MiBs;
  add('one PUT stream >= 75 % of the MD5 bound', bound === null ? '75 % of MD5' : `>= ${mib(bound)}`, h('put_64m_1')?.value, bound, mib, 'MD5 bound not measured');
  add('one GET stream >= 1.2 GiB/s', `>= ${mib(1.2 * GIB_IN_MIB)}`, h('get_64m_1')?.value, 1.2 * GIB_IN_MIB, mib);
  for (const [four, one, label, unit] of [
    ['put_64m_4', 'put_64m_1', 'PUT 64 MiB', mib],
    ['get_64m_4', 'get_64m_1', 'GET 64 MiB', mib],
    ['put_4k_4', 'put_4k_1', 'PUT 4 KiB', (v: number) => `${fmt(v)} obj/s`],
    ['get_4k_4', 'get_4k_1', 'GET 4 KiB', (v: number) => `${fmt(v)} obj/s`],
  ] as const) {
    const base = h(one)?.value;
    // "faster" = strictly above the one-stream median
    const need = base === undefined ? null : base * (1 + 1e-9);
    add(`4 streams faster than 1: ${label}`, base === undefined ? '> 1 stream' : `> ${unit(base)}`, h(four)?.value, need, unit, 'one-stream figure missing');
  }
  for (const k of ['put_4k_1', 'put_4k_4', 'get_4k_1', 'get_4k_4']) {
    const sc = SCENARIOS.find((s) => s.key === k)!;
    const c = ceph?.[k]?.value;
    const need = c === undefined ? null : 5 * c;
    add(`4 KiB objects >= 5x Ceph: ${sc.label}`, need === null ? '5x Ceph' : `>= ${fmt(need)} obj/s`, h(k)?.value, need, (v) => `${fmt(v)} obj/s`, cephWhy);
  }
  return out;
}

export function targetTable(ts: Target[]): string {
  return renderTable(
    ['target (hostd)', 'want', 'measured', 'result'],
    ts.map((t) => [t.name, t.want, t.measured, t.met === null ? `n/a: ${t.why}` : t.met ? 'met' : 'MISSED']),
  );
}

/** Rounds numbers for the JSON line (3 significant decimals at most). */
export function round(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null;
  if (Array.isArray(v)) return v.map(round);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, round(x)]));
  return v;
}
