/**
 * What a transferred endpoint costs: the media bridge relaying N concurrent two-leg PCMU calls
 * (20 ms, both ways) with three placements of the legs (transfer-relay.ts):
 *   baseline     X and Z in one session (no transfer);
 *   same-thread  (a) X transferred to a session on its own thread (colocate_with): sockets handed over;
 *   relayed      (c) X transferred to a session on the other media thread: X's home session
 *                relays each datagram to it (ArrayBuffer in a runtime message) and each packet back.
 *
 *   npx tsc -p . && node dist/bench/media/transfer.bench.js [--calls 50,150] [--duration 10] [--repeat 1]
 *
 * One bridge (hostd.ts `startHostd`, serve.js in a process of its own, media group of 2
 * threads) serves every run; the generator is load.ts `runOnce` unchanged (send time in each
 * payload: latency and added jitter; loss; bridge CPU from /proc via proc.ts, so µs/pkt is the
 * bridge process's CPU per packet it relayed). Per N and round the placements run in turn, the
 * first one rotating, each after waiting for a quiet machine and retried (--retries) when other
 * processes plus steal took more than --max-other % of a core; the least disturbed try is kept.
 * stdout: the table of medians over the rounds, the relay's extra cost per packet against the
 * same-thread case (µs and %) and, last, one JSON line {"bench":"media-transfer",...}.
 * Progress (one line per run) goes to stderr.
 */
import { optionsOrExit } from './cli.js';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { medianRecord } from '../lib/stats.js';
import { renderTable, type Cell } from '../lib/table.js';
import { startHostd } from './hostd.js';
import { type RunResult } from './load.js';
import { noise, quietRun } from './quiet-run.js';
import { sleep } from './proc.js';
import type { Relay } from './relay.js';
import { DEFAULT_PLACEMENTS, PLACEMENT_NOTE, PLACEMENTS, transferRelay, type Placement } from './transfer-relay.js';

const HELP = `Usage: node dist/bench/media/transfer.bench.js [options]

Relays N two-leg PCMU calls (20 ms, both ways) through hostd's media bridge (2 media threads)
with the legs placed three ways: baseline (one session), same-thread (endpoint transferred to a
colocated session), relayed (endpoint transferred to a session on the other thread). Measures
bridge CPU per relayed packet (µs, from /proc), one-way latency p50/p99, added jitter and loss.

Options:
  --calls LIST      concurrent calls (2 streams each) per run (default 50,150)
  --duration S      seconds of media per run (default 10; the first second is warm-up)
  --placements L    which placements to run (default baseline,same-thread,relayed; also
                    bridged, bridged-threads: X and Z in two sessions wired by a bridge)
  --repeat R        rounds of every (placement, N); the table shows medians (default 1)
  --slots N         phase groups per 20 ms tick (default 10)
  --max-other PCT   retry a run when other processes plus steal took more than PCT % of a core (default 25)
  --retries N       retries per run (default 1)
  --quiet-wait S    wait up to S s for a quiet machine before each run (default 30)
  --help`;

interface Options {
  calls: number[];
  placements: Placement[];
  duration: number;
  repeat: number;
  slots: number;
  maxOther: number;
  retries: number;
  quietWait: number;
}

function parseOptions(): Options | null {
  const { values: v } = parseArgs({
    options: {
      calls: { type: 'string', default: '50,150' },
      placements: { type: 'string', default: DEFAULT_PLACEMENTS.join(',') },
      duration: { type: 'string', default: '10' },
      repeat: { type: 'string', default: '1' },
      slots: { type: 'string', default: '10' },
      'max-other': { type: 'string', default: '25' },
      retries: { type: 'string', default: '1' },
      'quiet-wait': { type: 'string', default: '30' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (v.help) return null;
  const num = (s: string, name: string, min: number, int = false): number => {
    const n = Number(s);
    if (!Number.isFinite(n) || n < min || (int && !Number.isInteger(n))) throw new Error(`--${name}: ${int ? 'an integer' : 'a number'} >= ${min}, got ${s}`);
    return n;
  };
  const calls = v.calls.split(',').map((s) => num(s, 'calls', 1, true));
  const placements = v.placements.split(',').filter(Boolean);
  const bad = placements.filter((p) => !(PLACEMENTS as readonly string[]).includes(p));
  if (bad.length || !placements.length) throw new Error(`--placements: a list of ${PLACEMENTS.join(', ')}; got ${v.placements}`);
  return {
    calls,
    placements: PLACEMENTS.filter((p) => placements.includes(p)),
    duration: num(v.duration, 'duration', 2),
    repeat: num(v.repeat, 'repeat', 1, true),
    slots: num(v.slots, 'slots', 1, true),
    maxOther: num(v['max-other'], 'max-other', 0),
    retries: num(v.retries, 'retries', 0, true),
    quietWait: num(v['quiet-wait'], 'quiet-wait', 0),
  };
}

const log = (s: string) => process.stderr.write(s + '\n');

interface Row extends RunResult {
  placement: Placement;
  round: number;
  attempts: number;
  noisy: boolean;
}

/** The figures of the table, median over the rounds of one (placement, N). */
const FIELDS = ['pps_in', 'loss_pct', 'lat_p50', 'lat_p99', 'jit_p50', 'jit_p99', 'bridge_pct', 'bridge_sys_pct', 'thread_max_pct', 'us_per_pkt', 'other_pct'] as const;
type Field = (typeof FIELDS)[number];
type Med = { placement: Placement; calls: number; runs: number; noisy_runs: number; us_per_pkt_runs: number[] } & Record<Field, number>;

function figures(r: Row): Record<Field, number> {
  return {
    pps_in: r.pps_in,
    loss_pct: r.loss_pct,
    lat_p50: r.latency_ms.p50,
    lat_p99: r.latency_ms.p99,
    jit_p50: r.transit_jitter_ms.p50,
    jit_p99: r.transit_jitter_ms.p99,
    bridge_pct: r.relay_cpu_pct,
    bridge_sys_pct: r.relay_sys_pct,
    thread_max_pct: r.relay_max_thread_pct,
    us_per_pkt: r.relay_us_per_pkt,
    other_pct: noise(r),
  };
}

function medians(rows: Row[], calls: number[]): Med[] {
  const out: Med[] = [];
  for (const n of calls)
    for (const p of PLACEMENTS) {
      const mine = rows.filter((r) => r.calls === n && r.placement === p);
      if (!mine.length) continue;
      const m = medianRecord<Field>(mine.map(figures));
      const full = Object.fromEntries(FIELDS.map((f) => [f, m[f] ?? Number.NaN])) as Record<Field, number>;
      out.push({ placement: p, calls: n, runs: mine.length, noisy_runs: mine.filter((r) => r.noisy).length, us_per_pkt_runs: mine.map((r) => r.relay_us_per_pkt), ...full });
    }
  return out;
}

interface Comparison {
  calls: number;
  /** relayed − same-thread, bridge CPU per packet: µs and % of the same-thread figure. */
  relay_extra_us: number | null;
  relay_extra_pct: number | null;
  /** Same, per round (rounds where both ran), to show the spread. */
  relay_extra_us_rounds: number[];
  /** same-thread − baseline. */
  same_thread_extra_us: number | null;
  same_thread_extra_pct: number | null;
  /** relayed − same-thread latency, ms. */
  relay_extra_lat_p50_ms: number | null;
  relay_extra_lat_p99_ms: number | null;
}

const r2 = (x: number) => Math.round(x * 100) / 100;
const r1 = (x: number) => Math.round(x * 10) / 10;

function compare(meds: Med[], rows: Row[], calls: number[]): Comparison[] {
  return calls.map((n) => {
    const get = (p: Placement) => meds.find((m) => m.calls === n && m.placement === p);
    const [b, a, c] = [get('baseline'), get('same-thread'), get('relayed')];
    const diff = (x: Med | undefined, y: Med | undefined, f: Field) => (x && y && Number.isFinite(x[f]) && Number.isFinite(y[f]) ? x[f] - y[f] : null);
    const pct = (d: number | null, base: Med | undefined) => (d === null || !base || !(base.us_per_pkt > 0) ? null : r1((d / base.us_per_pkt) * 100));
    const ca = diff(c, a, 'us_per_pkt');
    const ab = diff(a, b, 'us_per_pkt');
    const rounds = [...new Set(rows.map((r) => r.round))].flatMap((k) => {
      const x = rows.find((r) => r.round === k && r.calls === n && r.placement === 'relayed');
      const y = rows.find((r) => r.round === k && r.calls === n && r.placement === 'same-thread');
      return x && y ? [r2(x.relay_us_per_pkt - y.relay_us_per_pkt)] : [];
    });
    const lat = (f: Field) => {
      const d = diff(c, a, f);
      return d === null ? null : r2(d);
    };
    return {
      calls: n,
      relay_extra_us: ca === null ? null : r2(ca),
      relay_extra_pct: pct(ca, a),
      relay_extra_us_rounds: rounds,
      same_thread_extra_us: ab === null ? null : r2(ab),
      same_thread_extra_pct: pct(ab, b),
      relay_extra_lat_p50_ms: lat('lat_p50'),
      relay_extra_lat_p99_ms: lat('lat_p99'),
    };
  });
}

const f = (x: number | null | undefined, d = 1): Cell => (x === null || x === undefined || !Number.isFinite(x) ? null : x.toFixed(d));
const signed = (x: number | null, d = 1): Cell => (x === null ? null : `${x >= 0 ? '+' : ''}${x.toFixed(d)}`);

function table(meds: Med[]): string {
  const cols = ['placement', 'calls', 'runs', 'pkt/s', 'loss %', 'lat p50', 'lat p99', 'jit p50', 'jit p99', 'bridge %', 'sys %', 'thr max %', 'µs/pkt', 'vs same-thread', 'other+steal %', 'note'];
  const body: Cell[][] = meds.map((m) => {
    const a = meds.find((x) => x.calls === m.calls && x.placement === 'same-thread');
    const d = a && m.placement !== 'same-thread' ? m.us_per_pkt - a.us_per_pkt : null;
    const vs = d === null || !a ? null : `${signed(d)} µs (${signed((d / a.us_per_pkt) * 100, 0)} %)`;
    const runs = m.runs > 1 ? m.us_per_pkt_runs.map((x) => x.toFixed(1)).join('/') + ' µs' : '';
    return [
      m.placement, String(m.calls), String(m.runs), f(m.pps_in, 0), f(m.loss_pct, 3), f(m.lat_p50, 2), f(m.lat_p99, 2), f(m.jit_p50, 2), f(m.jit_p99, 2),
      f(m.bridge_pct), f(m.bridge_sys_pct), f(m.thread_max_pct), f(m.us_per_pkt), vs, f(m.other_pct, 0),
      [runs, m.noisy_runs ? `${m.noisy_runs} noisy` : ''].filter(Boolean).join(', '),
    ];
  });
  return renderTable(cols, body);
}

async function main(): Promise<number> {
  const cli = optionsOrExit(parseOptions, HELP);
  if ('exit' in cli) return cli.exit;
  const o = cli.options;
  const started = Date.now();
  const load0 = os.loadavg();
  let hostd: Relay;
  try {
    hostd = await startHostd({ name: 'hostd', groupThreads: 2 });
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  const onSignal = () => void hostd.stop().then(() => process.exit(130));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const relays = new Map(PLACEMENTS.map((p) => [p, transferRelay(hostd, p)] as const));
  const exclude = new Set([process.pid, hostd.pid]);
  log(`# ${hostd.describe()}`);
  log(`# ${os.cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(' ')}; ${o.duration} s per run, ${o.slots} slots, ${o.repeat} round(s)`);

  const rows: Row[] = [];
  const failed: Array<{ placement: Placement; calls: number; round: number; error: string }> = [];
  let turn = 0;
  try {
    for (const n of o.calls)
      for (let round = 0; round < o.repeat; round++) {
        const order = o.placements.map((_, i) => o.placements[(i + turn) % o.placements.length]!);
        turn++;
        for (const p of order) {
          const relay = relays.get(p)!;
          const run = await quietRun(
            relay,
            n,
            { duration: o.duration, slots: o.slots, srtp: false, warmup: 1, concurrency: 16, exclude },
            { retries: o.retries, maxOther: o.maxOther, quietWait: o.quietWait, label: `${p} N=${n}`, log, pauseMs: 2000 },
          );
          if (run.error) failed.push({ placement: p, calls: n, round, error: run.error });
          const { best, attempts } = run;
          if (!best) continue;
          const row: Row = { ...best, placement: p, round, attempts, noisy: noise(best) > o.maxOther };
          rows.push(row);
          log(
            `${p.padEnd(11)} N=${String(n).padStart(4)} round ${round + 1}: loss ${row.loss_pct.toFixed(3)} % latency p50/p99 ${row.latency_ms.p50.toFixed(2)}/${row.latency_ms.p99.toFixed(2)} ms ` +
              `jitter p99 ${row.transit_jitter_ms.p99.toFixed(2)} ms bridge ${row.relay_cpu_pct} % (${row.relay_us_per_pkt} µs/pkt, busiest ${row.relay_max_thread} ${row.relay_max_thread_pct} %) ` +
              `gen ${row.gen_cpu_pct} % other+steal ${noise(row)} %${row.noisy ? ' (noisy)' : ''}`,
          );
          await sleep(1000);
        }
      }
  } finally {
    await hostd.stop().catch(() => undefined);
  }

  const meds = medians(rows, o.calls);
  const cmp = compare(meds, rows, o.calls);
  const load1 = os.loadavg();
  const out: string[] = [];
  out.push(`media transfer benchmark: ${os.cpus().length} CPUs, bridge media group of 2 threads, ${o.duration} s per run, ${o.repeat} round(s) (medians); load average ${load0.map((x) => x.toFixed(2)).join(' ')} at start, ${load1.map((x) => x.toFixed(2)).join(' ')} at end`);
  for (const p of o.placements) out.push(`  ${p.padEnd(11)} ${PLACEMENT_NOTE[p]}`);
  out.push('lat = one-way latency generator → bridge → generator (ms), jit = added jitter |ΔR−ΔS| (ms), bridge % / thr max % / other+steal % = % of one core, µs/pkt = bridge CPU per relayed packet');
  out.push('');
  out.push(table(meds));
  out.push('');
  for (const c of cmp) {
    const rounds = c.relay_extra_us_rounds.length > 1 ? ` (per round: ${c.relay_extra_us_rounds.map((x) => signed(x, 2)).join(', ')} µs)` : '';
    out.push(
      `N=${c.calls}: relayed costs ${signed(c.relay_extra_us, 2) ?? '-'} µs/pkt against same-thread (${signed(c.relay_extra_pct) ?? '-'} %)${rounds}; ` +
        `same-thread ${signed(c.same_thread_extra_us, 2) ?? '-'} µs/pkt against baseline (${signed(c.same_thread_extra_pct) ?? '-'} %); ` +
        `latency relayed − same-thread p50 ${signed(c.relay_extra_lat_p50_ms, 2) ?? '-'} ms, p99 ${signed(c.relay_extra_lat_p99_ms, 2) ?? '-'} ms`,
    );
  }
  for (const x of failed) out.push(`FAILED ${x.placement} N=${x.calls} round ${x.round + 1}: ${x.error}`);
  console.log(out.join('\n'));
  const round = (m: Med) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v * 1000) / 1000 : v]));
  console.log(
    JSON.stringify({
      bench: 'media-transfer',
      duration_s: o.duration,
      repeat: o.repeat,
      cpus: os.cpus().length,
      group_threads: 2,
      loadavg_start: load0.map(r2),
      loadavg_end: load1.map(r2),
      seconds: Math.round((Date.now() - started) / 1000),
      medians: meds.map(round),
      compare: cmp,
      rows,
      failed,
    }),
  );
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
