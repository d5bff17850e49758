/**
 * Actor runtime benchmark: message passing and placement costs of the real ActorSystem.
 *
 *   npm run bench:runtime            (build, then run)
 *   node dist/bench/runtime.bench.js [--rounds N] [--quick] [--help]
 *
 * Every scenario runs once to warm up, then N rounds; the table shows the median of the
 * rounds (this is a noisy 2-core VM) and the spread (max - min) / median of the main figure.
 * Progress goes to stderr; stdout gets the tables and, as its last line, one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { ActorSystem, type ActorRef } from '../runtime/system.js';
import type { EchoProtocol } from './actors/echo/messages.js';
import { castLoop, requestLoop, type Ask, type CastLoad, type CastResult, type LoadResult, type RequestLoad } from './lib/load.js';
import type { RawReply, RawRequest } from './lib/raw-echo-worker.js';
import { median, medianRecord, spread } from './lib/stats.js';
import { fmt, renderTable } from './lib/table.js';

const ECHO = new URL('./actors/echo/actor.js', import.meta.url).href;
const RAW_WORKER = new URL('./lib/raw-echo-worker.js', import.meta.url);
const MIB = 1024 * 1024;
const LONG_MS = 120_000;

const HELP = `Usage: node dist/bench/runtime.bench.js [--rounds N] [--quick] [--help]

Measures the hostd actor runtime (runtime/supervisor/system.ts) on worker threads:
  - request/reply main->worker, worker->worker on two threads, and two actors on one
    shared thread; window 1 (latency p50/p99) and window 64 (throughput)
  - the same with a 1 MiB ArrayBuffer on every request, transferred vs copied
  - fire-and-forget casts main->worker, worker->worker, same thread
  - a bare worker_threads MessagePort peer running the same protocol (baseline)
  - spawn time on a dedicated thread vs an existing shared thread; RSS and heap per thread

Each scenario: 1 warm-up, then N rounds; the median is reported.

Options:
  --rounds N   measured rounds per scenario (default 5; 3 with --quick)
  --quick      about 5x fewer iterations (a smoke run, ~20 s)
  --help       this text

Output: tables on stdout, then one JSON line {"bench":"runtime", ...} as the last line.`;

interface Options {
  rounds: number;
  quick: boolean;
}

function parseOptions(): Options | null {
  const { values } = parseArgs({
    options: { rounds: { type: 'string' }, quick: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
    strict: true,
  });
  if (values.help) return null;
  const quick = values.quick ?? false;
  const rounds = values.rounds === undefined ? (quick ? 3 : 5) : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) throw new Error(`--rounds must be an integer from 1 to 100, got ${values.rounds}`);
  return { rounds, quick };
}

/** Iteration counts of a full run; --quick divides them. */
function sizes(quick: boolean) {
  const q = (n: number, min = 1) => (quick ? Math.max(min, Math.round(n / 5)) : n);
  return {
    reqW1: q(6_000, 500),
    reqW64: q(30_000, 2_000),
    mib: q(400, 60),
    casts: q(60_000, 5_000),
    castBurst: 1_000,
    memThreads: quick ? 4 : 8,
    memShared: quick ? 16 : 64,
  };
}

// ---------------------------------------------------------------------------------------
// Measurement plumbing

type Metrics = Record<string, number>;

interface Row {
  key: string;
  label: string;
  /** Median of each metric over the rounds. */
  m: Metrics;
  /** (max - min) / median of the main metric over the rounds. */
  spread: number;
  primary: string;
}

const log = (s: string) => process.stderr.write(`${s}\n`);

async function measure(key: string, label: string, primary: string, rounds: number, run: (warmup: boolean) => Promise<Metrics>): Promise<Row> {
  const t0 = performance.now();
  await run(true);
  const all: Metrics[] = [];
  for (let r = 0; r < rounds; r++) all.push(await run(false));
  const m = medianRecord(all) as Metrics;
  const row: Row = { key, label, m, primary, spread: spread(all.map((x) => x[primary]!)) };
  log(`  ${label.padEnd(54)} ${primary}=${fmt(m[primary]!)}  rounds=[${all.map((x) => fmt(x[primary]!)).join(', ')}]  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return row;
}

interface Scenario {
  key: string;
  label: string;
  primary: string;
  run(warmup: boolean): Promise<Metrics>;
}

/**
 * Warm every scenario up once, then run round 1 of all of them, round 2 of all, and so on:
 * a burst of background load then hits one round of many scenarios, not every round of one.
 */
async function interleaved(scenarios: readonly Scenario[], rounds: number): Promise<Row[]> {
  const t0 = performance.now();
  for (const s of scenarios) await s.run(true);
  log(`  warm-up done (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  const results = scenarios.map(() => [] as Metrics[]);
  for (let r = 0; r < rounds; r++) {
    const tr = performance.now();
    for (const [i, s] of scenarios.entries()) results[i]!.push(await s.run(false));
    log(`  round ${r + 1}/${rounds} done (${((performance.now() - tr) / 1000).toFixed(1)} s)`);
  }
  return scenarios.map((s, i) => {
    const all = results[i]!;
    const m = medianRecord(all) as Metrics;
    log(`  ${s.label.padEnd(54)} ${s.primary}=${fmt(m[s.primary]!).padStart(9)}  rounds=[${all.map((x) => fmt(x[s.primary]!)).join(', ')}]`);
    return { key: s.key, label: s.label, m, primary: s.primary, spread: spread(all.map((x) => x[s.primary]!)) };
  });
}

function reqMetrics(r: LoadResult, payloadBytes: number): Metrics {
  if (r.notDetached) throw new Error(`${r.notDetached} transferred buffers were still attached on the sender after send: not a transfer`);
  const m: Metrics = { msgs_s: r.perSec, p50_us: r.p50Us, p99_us: r.p99Us };
  if (payloadBytes) m.mib_s = (r.perSec * payloadBytes) / MIB;
  return m;
}

function castMetrics(r: CastResult): Metrics {
  return { msgs_s: r.perSec, dropped: r.sent - r.delivered };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A full GC of the main isolate (flag set at start-up), so RSS readings are less noisy. */
let gc: () => void = () => undefined;
function enableGc(): void {
  try {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  } catch {
    /* readings are noisier without it */
  }
}

// ---------------------------------------------------------------------------------------
// Baseline peer: a bare worker with the same protocol

class RawPeer {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (v: unknown) => void>();
  private rid = 1;

  private constructor(worker: Worker) {
    this.worker = worker;
    worker.on('message', ({ rid, value }: RawReply) => {
      const p = this.pending.get(rid);
      this.pending.delete(rid);
      p?.(value);
    });
  }

  static async start(): Promise<RawPeer> {
    const w = new Worker(RAW_WORKER);
    await new Promise<void>((resolve, reject) => {
      w.once('online', resolve);
      w.once('error', reject);
    });
    return new RawPeer(w);
  }

  ask: Ask = (msg, transfer) =>
    new Promise((resolve) => {
      const rid = this.rid++;
      this.pending.set(rid, resolve);
      this.worker.postMessage({ rid, msg } satisfies RawRequest, transfer);
    });

  request(msg: RawRequest['msg']): Promise<unknown> {
    return new Promise((resolve) => {
      const rid = this.rid++;
      this.pending.set(rid, resolve);
      this.worker.postMessage({ rid, msg } satisfies RawRequest);
    });
  }

  tell(): void {
    this.worker.postMessage({ msg: { type: 'tick' } } satisfies RawRequest);
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  let opts: Options | null;
  try {
    opts = parseOptions();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${HELP}\n`);
    process.exitCode = 2;
    return;
  }
  if (!opts) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  enableGc();
  const n = sizes(opts.quick);
  const R = opts.rounds;
  const started = performance.now();
  const load0 = loadavg()[0]!;
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-bench-'));
  let system: ActorSystem | null = null;
  let raw: RawPeer | null = null;
  const cleanup = async () => {
    const s = system;
    const r = raw;
    system = null;
    raw = null;
    await Promise.allSettled([s?.shutdown(), r?.close()]);
    rmSync(stateDir, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    interrupted = true;
    log(`${sig}: shutting down`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    // groupThreads 1: a shared group is exactly one thread. Dedicated placements ignore it.
    system = await ActorSystem.start({ stateDir, logLevel: 'silent', groupThreads: 1, poolThreads: 1, requestTimeoutMs: 30_000 });
    const sys = system;
    const spawn = async (id: string, placement: 'dedicated' | 'shared'): Promise<ActorRef<EchoProtocol>> => {
      await sys.start({ id, module: ECHO, restart: 'temporary', placement: placement === 'dedicated' ? { mode: 'dedicated' } : { mode: 'shared', group: 'x' } });
      return sys.ref<EchoProtocol>(id);
    };

    // Topology: t1 (dedicated) is the target of main and of d1 (dedicated, another thread);
    // s1 and s2 share the one thread of group x.
    const t1 = await spawn('t1', 'dedicated');
    const d1 = await spawn('d1', 'dedicated');
    const s1 = await spawn('s1', 'shared');
    const s2 = await spawn('s2', 'shared');
    const where = await Promise.all([t1, d1, s1, s2].map((r) => r.request({ type: 'where' })));
    const [wt1, wd1, ws1, ws2] = where.map((w) => w.threadId);
    if (wt1 === wd1 || wt1 === 0 || wd1 === 0) throw new Error(`t1 and d1 should be on two worker threads, are on ${wt1} and ${wd1}`);
    if (ws1 !== ws2) throw new Error(`s1 and s2 should share a thread, are on ${ws1} and ${ws2}`);
    log(`hostd runtime bench: node ${process.version}, ${availableParallelism()} CPUs, ${R} rounds${opts.quick ? ' (quick)' : ''}`);
    log(`threads: t1=${wt1} d1=${wd1} s1=s2=${ws1}`);

    const mainAsk: Ask = (m, transfer) => t1.request(m, { transfer, timeoutMs: LONG_MS }) as Promise<unknown>;
    const viaMain = (load: RequestLoad) => requestLoop(mainAsk, load);
    const viaWorker = (driver: ActorRef<EchoProtocol>, target: string) => (load: RequestLoad) =>
      driver.request({ type: 'drive', target, load }, { timeoutMs: LONG_MS });
    const paths: Array<{ key: string; label: string; run: (l: RequestLoad) => Promise<LoadResult> }> = [
      { key: 'main_worker', label: 'main -> worker', run: viaMain },
      { key: 'cross_thread', label: 'worker -> worker (2 threads)', run: viaWorker(d1, 't1') },
      { key: 'same_thread', label: 'worker -> worker (1 shared thread)', run: viaWorker(s1, 's2') },
    ];

    // The bare-port baseline runs in the same rounds, side by side.
    raw = await RawPeer.start();
    const rp = raw;
    const rawRun = (l: RequestLoad) => requestLoop(rp.ask, l);

    const scenarios: Scenario[] = [];
    const req = (key: string, label: string, run: (l: RequestLoad) => Promise<LoadResult>, load: RequestLoad) =>
      scenarios.push({
        key,
        label,
        primary: 'msgs_s',
        run: async (warm) => reqMetrics(await run(warm ? { ...load, count: Math.max(load.window * 4, Math.round(load.count / 4)) } : load), load.payloadBytes),
      });
    const castLoad: CastLoad = { count: n.casts, burst: n.castBurst };
    const cast = (key: string, label: string, run: (l: CastLoad) => Promise<CastResult>) =>
      scenarios.push({ key, label, primary: 'msgs_s', run: async (warm) => castMetrics(await run(warm ? { ...castLoad, count: Math.round(castLoad.count / 4) } : castLoad)) });

    const w1 = (payloadBytes = 0, transfer = false): RequestLoad => ({ count: payloadBytes ? n.mib : n.reqW1, window: 1, payloadBytes, transfer });
    const w64: RequestLoad = { count: n.reqW64, window: 64, payloadBytes: 0, transfer: false };
    for (const p of paths) {
      req(`${p.key}_req_w1`, `${p.label}, window 1`, p.run, w1());
      req(`${p.key}_req_w64`, `${p.label}, window 64`, p.run, w64);
    }
    for (const p of paths) {
      req(`${p.key}_1mib_transfer`, `${p.label}, 1 MiB transferred`, p.run, w1(MIB, true));
      req(`${p.key}_1mib_copy`, `${p.label}, 1 MiB copied`, p.run, w1(MIB, false));
    }
    cast('main_worker_cast', 'main -> worker, cast', (l) => castLoop(() => t1.send({ type: 'tick' }), () => t1.request({ type: 'count' }, { timeoutMs: LONG_MS }), l));
    cast('cross_thread_cast', 'worker -> worker (2 threads), cast', (l) => d1.request({ type: 'flood', target: 't1', load: l }, { timeoutMs: LONG_MS }));
    cast('same_thread_cast', 'worker -> worker (1 shared thread), cast', (l) => s1.request({ type: 'flood', target: 's2', load: l }, { timeoutMs: LONG_MS }));
    req('raw_port_req_w1', 'bare port main -> worker, window 1', rawRun, w1());
    req('raw_port_req_w64', 'bare port main -> worker, window 64', rawRun, w64);
    req('raw_port_1mib_transfer', 'bare port main -> worker, 1 MiB transferred', rawRun, w1(MIB, true));
    req('raw_port_1mib_copy', 'bare port main -> worker, 1 MiB copied', rawRun, w1(MIB, false));
    cast('raw_port_cast', 'bare port main -> worker, cast', (l) => castLoop(() => rp.tell(), () => rp.request({ type: 'count' }) as Promise<number>, l));

    log(`message passing: ${scenarios.length} scenarios, rounds interleaved`);
    const rows = await interleaved(scenarios, R);
    await rp.close();
    raw = null;

    // ---------------------------------------------------------------- placement costs
    log('placement: spawn and memory');
    let seq = 0;
    const costs: Row[] = [];
    const spawnCycle = (placement: 'dedicated' | 'shared') => async () => {
      const id = `sp-${placement[0]}-${seq++}`;
      const t0 = performance.now();
      const ref = await spawn(id, placement);
      const spawnMs = performance.now() - t0;
      const t1 = performance.now();
      await ref.request({ type: 'echo' });
      const firstMs = performance.now() - t1;
      const t2 = performance.now();
      await sys.stopChild(id);
      return { spawn_ms: spawnMs, first_reply_ms: firstMs, stop_ms: performance.now() - t2 };
    };
    costs.push(await measure('spawn_dedicated', 'spawn 1 actor on a new dedicated thread', 'spawn_ms', R, spawnCycle('dedicated')));
    costs.push(await measure('spawn_shared', 'spawn 1 actor on the existing shared thread', 'spawn_ms', R, spawnCycle('shared')));
    const settle = async () => {
      gc();
      await sleep(150);
      gc();
    };
    costs.push(
      await measure('mem_dedicated', `memory per dedicated thread (${n.memThreads} threads)`, 'rss_mib', R, async () => {
        const ids = Array.from({ length: n.memThreads }, () => `mem-d-${seq++}`);
        await settle();
        const rss0 = process.memoryUsage().rss;
        const t0 = performance.now();
        for (const id of ids) await spawn(id, 'dedicated');
        const spawnMs = (performance.now() - t0) / ids.length;
        await settle();
        const rss1 = process.memoryUsage().rss;
        const heaps = await Promise.all(ids.map((id) => sys.ref<EchoProtocol>(id).request({ type: 'where', gc: true })));
        for (const id of ids.reverse()) await sys.stopChild(id);
        return {
          rss_mib: (rss1 - rss0) / ids.length / MIB,
          heap_used_mib: median(heaps.map((h) => h.heapUsed)) / MIB,
          heap_total_mib: median(heaps.map((h) => h.heapTotal)) / MIB,
          spawn_ms: spawnMs,
        };
      }),
    );
    costs.push(
      await measure('mem_shared', `memory per actor on a shared thread (${n.memShared} actors)`, 'heap_used_kib', R, async () => {
        const ids = Array.from({ length: n.memShared }, () => `mem-s-${seq++}`);
        await settle();
        const h0 = await s1.request({ type: 'where', gc: true });
        const rss0 = process.memoryUsage().rss;
        const t0 = performance.now();
        for (const id of ids) await spawn(id, 'shared');
        const spawnMs = (performance.now() - t0) / ids.length;
        await settle();
        const rss1 = process.memoryUsage().rss;
        const h1 = await s1.request({ type: 'where', gc: true });
        for (const id of ids.reverse()) await sys.stopChild(id);
        return { rss_kib: (rss1 - rss0) / ids.length / 1024, heap_used_kib: (h1.heapUsed - h0.heapUsed) / ids.length / 1024, spawn_ms: spawnMs };
      }),
    );

    await sys.shutdown();
    system = null;

    // ---------------------------------------------------------------- report
    const byKey = new Map([...rows, ...costs].map((r) => [r.key, r]));
    const get = (k: string, metric = 'msgs_s') => byKey.get(k)?.m[metric] ?? Number.NaN;
    const msgTable = renderTable(
      ['scenario', 'msgs/s', 'MiB/s', 'p50 µs', 'p99 µs', 'spread'],
      rows.map((r) => [r.label, r.m.msgs_s, r.m.mib_s, r.m.p50_us, r.m.p99_us, pct(r.spread)]),
    );
    const dropped = rows.filter((r) => (r.m.dropped ?? 0) > 0);
    const costTable = renderTable(
      ['placement cost', 'value', 'unit', 'detail', 'spread'],
      [
        ['spawn 1 actor, new dedicated thread', get('spawn_dedicated', 'spawn_ms'), 'ms', `first reply ${fmt(get('spawn_dedicated', 'first_reply_ms'))} ms, stop ${fmt(get('spawn_dedicated', 'stop_ms'))} ms`, pct(byKey.get('spawn_dedicated')!.spread)],
        ['spawn 1 actor, existing shared thread', get('spawn_shared', 'spawn_ms'), 'ms', `first reply ${fmt(get('spawn_shared', 'first_reply_ms'))} ms, stop ${fmt(get('spawn_shared', 'stop_ms'))} ms`, pct(byKey.get('spawn_shared')!.spread)],
        ['memory per extra dedicated thread (RSS)', get('mem_dedicated', 'rss_mib'), 'MiB', `its V8 heap after GC: ${fmt(get('mem_dedicated', 'heap_used_mib'))} MiB live / ${fmt(get('mem_dedicated', 'heap_total_mib'))} MiB committed`, pct(byKey.get('mem_dedicated')!.spread)],
        ['memory per extra actor on a shared thread (V8 heap)', get('mem_shared', 'heap_used_kib'), 'KiB', `process RSS ${fmt(get('mem_shared', 'rss_kib'))} KiB per actor (below RSS resolution)`, pct(byKey.get('mem_shared')!.spread)],
      ],
    );
    const ratios: Record<string, number> = {
      transfer_gain_main_worker: get('main_worker_1mib_transfer') / get('main_worker_1mib_copy'),
      transfer_gain_cross_thread: get('cross_thread_1mib_transfer') / get('cross_thread_1mib_copy'),
      transfer_gain_same_thread: get('same_thread_1mib_transfer') / get('same_thread_1mib_copy'),
      same_vs_cross_thread_req_w1: get('same_thread_req_w1') / get('cross_thread_req_w1'),
      same_vs_cross_thread_req_w64: get('same_thread_req_w64') / get('cross_thread_req_w64'),
      same_vs_cross_thread_cast: get('same_thread_cast') / get('cross_thread_cast'),
      runtime_vs_raw_req_w1: get('main_worker_req_w1') / get('raw_port_req_w1'),
      runtime_vs_raw_req_w64: get('main_worker_req_w64') / get('raw_port_req_w64'),
      runtime_vs_raw_1mib_transfer: get('main_worker_1mib_transfer') / get('raw_port_1mib_transfer'),
      runtime_vs_raw_cast: get('main_worker_cast') / get('raw_port_cast'),
      spawn_dedicated_vs_shared: get('spawn_dedicated', 'spawn_ms') / get('spawn_shared', 'spawn_ms'),
      memory_dedicated_thread_vs_shared_actor: (get('mem_dedicated', 'rss_mib') * 1024) / get('mem_shared', 'heap_used_kib'),
    };
    const ratioTable = renderTable(
      ['ratio (msgs/s unless noted)', 'x'],
      [
        ['1 MiB transferred / copied, main -> worker', ratios.transfer_gain_main_worker],
        ['1 MiB transferred / copied, 2 threads', ratios.transfer_gain_cross_thread],
        ['1 MiB transferred / copied, 1 shared thread', ratios.transfer_gain_same_thread],
        ['1 shared thread / 2 threads, request window 1', ratios.same_vs_cross_thread_req_w1],
        ['1 shared thread / 2 threads, request window 64', ratios.same_vs_cross_thread_req_w64],
        ['1 shared thread / 2 threads, cast', ratios.same_vs_cross_thread_cast],
        ['runtime / bare port, request window 1', ratios.runtime_vs_raw_req_w1],
        ['runtime / bare port, request window 64', ratios.runtime_vs_raw_req_w64],
        ['runtime / bare port, 1 MiB transferred', ratios.runtime_vs_raw_1mib_transfer],
        ['runtime / bare port, cast', ratios.runtime_vs_raw_cast],
        ['spawn time dedicated / shared', ratios.spawn_dedicated_vs_shared],
        ['memory: dedicated thread RSS / shared actor heap', ratios.memory_dedicated_thread_vs_shared_actor],
      ],
    );
    const totalS = (performance.now() - started) / 1000;
    const load1 = loadavg()[0]!;
    const out = [
      '',
      `hostd runtime bench — node ${process.version}, ${availableParallelism()} CPUs, median of ${R} rounds after 1 warm-up${opts.quick ? ' (quick)' : ''}, ${totalS.toFixed(0)} s, load average ${load0.toFixed(2)} -> ${load1.toFixed(2)}`,
      '',
      msgTable,
      '',
      costTable,
      '',
      ratioTable,
      '',
      dropped.length ? `DROPPED casts: ${dropped.map((r) => `${r.label}: ${fmt(r.m.dropped!)} per round`).join('; ')}` : 'casts: none dropped (bursts of ' + n.castBurst + ' then a count request)',
      'spread = (max - min) / median of the rounds; window = requests outstanding at once; 1 MiB rows: window 1, buffer moved out and back (transfer) or copied out (copy).',
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    const json: Record<string, unknown> = { bench: 'runtime', node: process.version, cpus: availableParallelism(), rounds: R, quick: opts.quick, seconds: round(totalS), loadavg_1m: [round(load0), round(load1)] };
    for (const r of [...rows, ...costs]) json[r.key] = Object.fromEntries(Object.entries(r.m).map(([k, v]) => [k, round(v)]).concat([['spread', round(r.spread)]]));
    json.ratios = Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, round(v)]));
    process.stdout.write(`${JSON.stringify(json)}\n`);
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function pct(f: number): string {
  return `${(f * 100).toFixed(0)}%`;
}

/** Three significant digits, enough for a noisy VM. */
function round(v: number): number {
  if (!Number.isFinite(v) || v === 0) return v;
  const d = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(v))));
  return Number(v.toFixed(Math.min(d, 6)));
}

/** Set on SIGINT/SIGTERM: the errors of requests cut short by the shutdown are expected. */
let interrupted = false;

main().catch((err) => {
  if (interrupted) return;
  process.stderr.write(`runtime bench failed: ${(err as Error).stack ?? err}\n`);
  process.exitCode = 1;
});

