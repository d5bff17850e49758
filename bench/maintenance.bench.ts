/**
 * Maintenance benchmark: what the object store's background maintenance (drain, full verify,
 * rebalance) costs its clients, and how fast it moves and checks data. The store runs in this
 * process on 7 real loop devices (bench/maintenance/store.ts); everything it makes is removed at
 * the end, also on an error or on SIGINT/SIGTERM.
 *
 *   npx tsc -p . && node dist/bench/maintenance.bench.js [--mib N] [--reps N] [--window S]   (as root)
 *
 * There is no peer to compare with on this machine: Ceph's recovery and scrub cannot be driven
 * the same way (one volume drained on demand, a scrub run to its end and timed), so every figure
 * stands alone. Progress goes to stderr; stdout gets the tables and, as its last line, one JSON
 * line {"bench":"maintenance", ...}.
 */
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { median, spread } from './lib/stats.js';
import { fmt, renderTable, type Cell } from './lib/table.js';
import { Cleanup } from './objstore/cleanup.js';
import { CpuMeter } from './objstore/proc.js';
import { Client, Corpus, type Endpoint, type Obj } from './objstore/client.js';
import { round } from './objstore/report.js';
import { Jobs, keepRunning, mibPerSec, Pair, perSec, repeat, seconds, type JobRun } from './maintenance/jobs.js';
import { checkBytes, figures, runLoad, type ClassFigures, type LoadClass } from './maintenance/load.js';
import { BenchStore } from './maintenance/store.js';

const KIB = 1024;
const MIB = 1024 * KIB;
const DRAIN_CONCURRENCY = [1, 4, 8] as const;
/** the order they run in: the store is left at the default (4) for the client-cost phase */
const DRAIN_ORDER = [1, 8, 4] as const;
const REBALANCE_CONCURRENCY = [1, 4, 16] as const;
const SMALL_OBJECTS = 256;
const PEER_NOTE = "no peer to compare with on this machine for drain/scrub (Ceph's recovery cannot be driven the same way)";

const HELP = `Usage: node dist/bench/maintenance.bench.js [options]     (root: loop devices, mounts)

Measures on an object store in this process over 7 loop volumes (sparse, losetup --direct-io=on):
  1. drain throughput: 6 volumes, N MiB of objects (half in 4 MiB objects, half in 256 KiB ones),
     a 7th volume added, then volume drains back and forth between the two (each drain moves
     every slice of the full one onto the empty one), at OBJSTORE_DRAIN_CONCURRENCY 1, 4 and 8
     (the store restarted over the same state for each); MiB/s of slice bytes moved (the drain's
     bytesMoved over its own start..finish)
  2. client cost: 2 GET streams of 256 KiB objects and 1 of 4 KiB objects, for --window seconds,
     (a) with no maintenance, (b) while a drain runs, (c) while a full verify run runs (started
     with the window, cancelled or stopped at its end; the drain is then finished unloaded);
     p50/p99 latency and throughput of the requests that started while the job ran, the ratios
     b/a and c/a (what the volume actors' low-priority queue buys), and the job's own rate under
     the load against its rate alone
  3. full verify (every byte, parity recomputed, MD5) and light verify (headers) of the fleet:
     MiB/s of object bytes and objects/s
  4. rebalance (deadband 0) onto the empty volume at concurrency 1, 4 and 16: MiB/s of slice
     bytes moved; a drain of that volume (untimed) puts the slices back between runs
Every measurement is repeated up to --reps times, and again only while its runs so far took
less than --budget seconds (the jobs' own durations): short ones get the median of --reps, long
ones fewer (the tables show every run). ${PEER_NOTE}.

Options:
  --mib N      MiB of objects for the drain and verify data set (default 256; 32 to 4096)
  --reps N     repetitions of every measurement (default 3; 1 to 20)
  --window S   seconds of each client-load window (default 6; 2 to 120)
  --budget S   job seconds after which a measurement is not repeated (default 15; 1 to 3600)
  --help       this text
Environment: BENCH_LOG_LEVEL=info shows the daemon's logs (on stdout: they mix with the tables).
Output: tables on stdout, then one JSON line {"bench":"maintenance", ...} as the last line.`;

interface Options {
  mib: number;
  reps: number;
  windowS: number;
  budgetS: number;
}

function parseOptions(): Options | null {
  const { values } = parseArgs({
    options: {
      mib: { type: 'string', default: '256' },
      reps: { type: 'string', default: '3' },
      window: { type: 'string', default: '6' },
      budget: { type: 'string', default: '15' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  const int = (name: string, raw: string | undefined, min: number, max: number): number => {
    const v = Number(raw);
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`--${name} must be an integer from ${min} to ${max}, got ${raw}`);
    return v;
  };
  return { mib: int('mib', values.mib, 32, 4096), reps: int('reps', values.reps, 1, 20), windowS: int('window', values.window, 2, 120), budgetS: int('budget', values.budget, 1, 3600) };
}

const log = (s: string) => process.stderr.write(`${s}\n`);
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
const pct = (xs: number[]) => `${Math.round(spread(xs) * 100)}%`;
const ratio = (b: number | undefined, a: number | undefined) => (a !== undefined && b !== undefined && a > 0 && Number.isFinite(b) ? b / a : null);
const x = (r: number | null) => (r === null ? null : `${r.toFixed(2)}x`);

/** Medians over the rounds of one job kind. */
interface JobSummary {
  mib_s: number;
  per_s: number;
  seconds: number;
  items: number;
  mib: number;
  spread: number;
  rounds_mib_s: number[];
  outcomes?: string[];
}

function jobSummary(runs: JobRun[]): JobSummary {
  return {
    mib_s: median(runs.map(mibPerSec)),
    per_s: median(runs.map(perSec)),
    seconds: median(runs.map(seconds)),
    items: median(runs.map((r) => r.items)),
    mib: median(runs.map((r) => r.bytes / MIB)),
    spread: spread(runs.map(mibPerSec)),
    rounds_mib_s: runs.map(mibPerSec),
  };
}

/** Aggregate rate of several runs (bytes over their summed durations). */
function aggregate(runs: JobRun[]): number {
  const s = runs.reduce((t, r) => t + seconds(r), 0);
  return s > 0 ? runs.reduce((t, r) => t + r.bytes, 0) / MIB / s : Number.NaN;
}

async function putAll(client: Client, objs: Obj[], streams = 4): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: streams }, async () => {
      while (next < objs.length) await client.put(objs[next++]!);
    }),
  );
}

type Condition = 'idle' | 'drain' | 'verify';
const CONDITIONS: Condition[] = ['idle', 'drain', 'verify'];

async function main(): Promise<number> {
  const opts = parseOptions();
  if (!opts) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const t0 = Date.now();
  const cleanup = new Cleanup();
  const failures: string[] = [];
  const nBig = Math.max(1, Math.round(opts.mib / 2 / 4));
  const nMid = Math.max(1, Math.round((opts.mib / 2) * 4));
  // Each volume gets about mib/4 of slices (4+2 over six); keep it under a third full.
  const volMiB = Math.max(1024, Math.ceil((opts.mib * 0.75) / 256) * 256);
  const json: Record<string, unknown> = { bench: 'maintenance', mib: opts.mib, reps: opts.reps, window_s: opts.windowS, budget_s: opts.budgetS, cores: availableParallelism(), loadavg_start: loadavg(), peer: null, peer_note: PEER_NOTE };
  const drains: Partial<Record<number, JobRun[]>> = {};
  const rebalances: Partial<Record<number, JobRun[]>> = {};
  const verifies: Record<'full' | 'light', JobRun[]> = { full: [], light: [] };
  const client: Record<Condition, Array<Record<string, ClassFigures>>> = { idle: [], drain: [], verify: [] };
  const underLoad: Record<'drain' | 'verify', JobRun[]> = { drain: [], verify: [] };
  const covered: Record<Condition, number[]> = { idle: [], drain: [], verify: [] };
  const cpu: Record<Condition, number[]> = { idle: [], drain: [], verify: [] };
  let directIo: boolean | null = null;
  const clients: Client[] = [];
  log(`maintenance bench: ${opts.mib} MiB of objects (${nBig} x 4 MiB, ${nMid} x 256 KiB), ${opts.reps} repetition(s), ${opts.windowS} s client windows`);

  try {
    // ------------------------------------------------------------ the store and its data
    log(`7 loop volumes of ${volMiB} MiB (sparse), the store with drain concurrency ${DRAIN_ORDER[0]}`);
    const store = await BenchStore.create(7, volMiB, cleanup);
    directIo = store.directIo;
    let concurrency: number = DRAIN_ORDER[0];
    await store.start({ drainConcurrency: concurrency });
    const ids = await store.provision(store.devices.slice(0, 6));
    const jobs = new Jobs(() => store.url);
    const ep = (): Endpoint => ({
      key: 'hostd',
      label: 'hostd',
      url: new URL(store.url),
      bucket: 'maintbench',
      createsBucket: false,
      sendContentMd5: true,
      md5Of: (h) => (typeof h['content-md5'] === 'string' ? h['content-md5'] : undefined),
      putOk: [201],
      verifyContent: true,
      pids: () => [],
    });
    const corpus = new Corpus(4 * MIB, 16, 256 * KIB, 64);
    const tiny = new Corpus(4 * KIB, 1, 4 * KIB, 64);
    const mixed: Obj[] = [];
    const mids: Obj[] = [];
    for (let b = 0, m = 0; b < nBig || m < nMid; ) {
      // interleaved, so every part of the object id order holds both sizes
      if (b < nBig && (m >= nMid || b * nMid <= m * nBig)) mixed.push({ name: `big-${b}`, kind: 'big', variant: b++ % 16 });
      else {
        const o: Obj = { name: `mid-${m}`, kind: 'small', variant: m++ % 64 };
        mixed.push(o);
        mids.push(o);
      }
    }
    const small: Obj[] = Array.from({ length: SMALL_OBJECTS }, (_, i) => ({ name: `small-${i}`, kind: 'small', variant: i % 64 }));
    let at = Date.now();
    log(`writing ${mixed.length} objects (${opts.mib} MiB) over 6 volumes, 4 PUT streams`);
    {
      const c = new Client(ep(), corpus);
      try {
        await putAll(c, mixed);
      } finally {
        c.close();
      }
    }
    log(`  written in ${((Date.now() - at) / 1000).toFixed(1)} s`);
    const [spare] = await store.provision([store.devices[6]!]);
    const pair = new Pair(jobs, ids[0]!, spare!);
    json.volumes = { count: 7, size_mib: volMiB, direct_io: directIo, ids: [...ids, spare] };
    json.objects = { big_4mib: nBig, mid_256kib: nMid, small_4kib: SMALL_OBJECTS };

    // ------------------------------------------------------------ 1. drain throughput
    for (const c of DRAIN_ORDER) {
      if (c !== concurrency) {
        log(`restarting the store with drain concurrency ${c}`);
        await store.restart({ drainConcurrency: c });
        concurrency = c;
      }
      drains[c] = await repeat(opts.reps, opts.budgetS, seconds, async (r) => {
        const from = pair.full;
        const run = await pair.flip();
        log(`  drain concurrency ${c}, round ${r + 1}: volume ${from}: ${run.items} slices, ${fmt(run.bytes / MIB)} MiB in ${seconds(run).toFixed(2)} s = ${fmt(mibPerSec(run))} MiB/s`);
        return run;
      });
    }

    // ------------------------------------------------------------ 2. client cost
    at = Date.now();
    log(`client cost (drain concurrency ${concurrency}): writing ${SMALL_OBJECTS} objects of 4 KiB (volume ${pair.empty} read-only meanwhile, so they stay on the other six)`);
    await jobs.readOnly(pair.empty, true);
    {
      const c = new Client(ep(), tiny);
      try {
        await putAll(c, small);
      } finally {
        c.close();
      }
    }
    await jobs.readOnly(pair.empty, false);
    const midClient = new Client(ep(), corpus);
    const smallClient = new Client(ep(), tiny);
    clients.push(midClient, smallClient);
    const classes: LoadClass[] = [
      { key: 'get_256k', label: 'GET 256 KiB, 2 streams', client: midClient, objects: mids, objectBytes: 256 * KIB, streams: 2 },
      { key: 'get_4k', label: 'GET 4 KiB, 1 stream', client: smallClient, objects: small, objectBytes: 4 * KIB, streams: 1 },
    ];
    await runLoad(classes, 1000); // warm-up: connections, code paths
    const ms = opts.windowS * 1000;
    for (let r = 0; r < opts.reps; r++) {
      for (const cond of CONDITIONS) {
        let spans: Array<[number, number]> | null = null;
        let w;
        const meter = new CpuMeter();
        meter.start();
        if (cond === 'idle') w = await runLoad(classes, ms);
        else {
          const deadline = Date.now() + ms;
          const job = cond === 'drain' ? (dl: number) => pair.flip(dl) : (dl: number) => jobs.verify('full', dl);
          const [lw, runs] = await Promise.all([runLoad(classes, ms), keepRunning(job, deadline)]);
          w = lw;
          spans = runs.map((j) => [j.startMs, j.endMs]);
          underLoad[cond].push(...runs);
        }
        cpu[cond].push(meter.stop().client);
        const f = figures(w, spans);
        const errors = w.records.filter((rec) => rec.errors);
        if (errors.length) throw new Error(`GETs failed ${cond === 'idle' ? 'with no maintenance' : `during ${cond}`}: ${errors.map((e) => `${e.cls.label}: ${e.errors}, first: ${e.firstError}`).join('; ')}`);
        client[cond].push(f.byClass);
        covered[cond].push(f.covered_s);
        log(`  round ${r + 1} ${cond.padEnd(6)} (${f.covered_s.toFixed(1)} s measured, ${cpu[cond].at(-1)!.toFixed(2)} cores): ${classes.map((c) => `${c.key} p50 ${fmt(f.byClass[c.key]!.p50_ms)} p99 ${fmt(f.byClass[c.key]!.p99_ms)} ms, ${fmt(f.byClass[c.key]!.per_s)}/s`).join('; ')}`);
        await checkBytes(classes, 4);
      }
    }
    log(`  client cost done in ${((Date.now() - at) / 1000).toFixed(0)} s`);

    // ------------------------------------------------------------ 3. verify throughput
    for (const mode of ['full', 'light'] as const) {
      verifies[mode] = await repeat(opts.reps, opts.budgetS, seconds, async (r) => {
        const run = await jobs.verify(mode);
        log(`  verify ${mode}, round ${r + 1}: ${run.items} objects, ${fmt(run.bytes / MIB)} MiB in ${seconds(run).toFixed(2)} s`);
        return run;
      });
    }

    // ------------------------------------------------------------ 4. rebalance throughput
    for (const c of REBALANCE_CONCURRENCY) {
      rebalances[c] = await repeat(opts.reps, opts.budgetS, seconds, async (r) => {
        const run = await jobs.rebalance(c);
        log(`  rebalance concurrency ${c}, round ${r + 1}: ${run.items} slices, ${fmt(run.bytes / MIB)} MiB onto volume ${pair.empty} in ${seconds(run).toFixed(2)} s = ${fmt(mibPerSec(run))} MiB/s (${run.outcome})`);
        await jobs.settle();
        await pair.restore();
        return run;
      });
    }
  } catch (err) {
    failures.push(errText(err));
    log(`FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    for (const c of clients) c.close();
    log('cleaning up: the store, mounts, loop devices, files');
    await cleanup.run();
    cleanup.close();
  }

  // ------------------------------------------------------------ report
  const out: string[] = [];
  out.push(`maintenance benchmark: ${availableParallelism()} cores; ${opts.mib} MiB of objects on 6 of 7 loop volumes (${directIo === false ? 'loop direct-io OFF: host page cache below' : 'loop direct-io on'}); medians of up to ${opts.reps} runs (fewer once a measurement's runs took ${opts.budgetS} s); ± = (max - min) / median; load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  out.push(`note: ${PEER_NOTE}; every figure stands alone.`);
  out.push('');

  out.push('1. Drain: every slice of one volume moved onto the empty 7th (slice bytes, the drain\'s own start..finish)');
  const drainJson: Record<string, unknown> = {};
  const drainRows: Cell[][] = DRAIN_CONCURRENCY.map((c) => {
    const runs = drains[c];
    if (!runs?.length) return [`OBJSTORE_DRAIN_CONCURRENCY=${c}`, null, null, null, null, null, null, 'not run'];
    const s = jobSummary(runs);
    drainJson[`c${c}`] = s;
    return [`OBJSTORE_DRAIN_CONCURRENCY=${c}`, s.mib_s, s.per_s, pct(s.rounds_mib_s), s.items, s.mib, s.seconds, s.rounds_mib_s.map((v) => fmt(v)).join(' ')];
  });
  out.push(renderTable(['setting', 'MiB/s', 'slices/s', '±', 'slices', 'MiB moved', 's', 'runs: MiB/s'], drainRows));
  json.drain = drainJson;
  out.push('');

  out.push(`2. Client cost: GET load alone, during drains (concurrency 4) and during full verify runs; requests started while a job ran`);
  const med = (cond: Condition, key: string, f: keyof ClassFigures) => {
    const v = client[cond].map((c) => c[key]?.[f]).filter((n): n is number => typeof n === 'number' && Number.isFinite(n));
    return v.length ? median(v) : undefined;
  };
  const clientJson: Record<string, unknown> = {};
  const rows: Cell[][] = [];
  const metrics: Array<{ key: string; label: string; f: keyof ClassFigures; unit: string }> = [
    { key: 'get_256k', label: 'GET 256 KiB x2 streams', f: 'p50_ms', unit: 'p50 ms' },
    { key: 'get_256k', label: 'GET 256 KiB x2 streams', f: 'p99_ms', unit: 'p99 ms' },
    { key: 'get_256k', label: 'GET 256 KiB x2 streams', f: 'mib_s', unit: 'MiB/s' },
    { key: 'get_4k', label: 'GET 4 KiB x1 stream', f: 'p50_ms', unit: 'p50 ms' },
    { key: 'get_4k', label: 'GET 4 KiB x1 stream', f: 'p99_ms', unit: 'p99 ms' },
    { key: 'get_4k', label: 'GET 4 KiB x1 stream', f: 'per_s', unit: 'obj/s' },
  ];
  for (const cond of CONDITIONS) {
    const per: Record<string, unknown> = {};
    for (const key of ['get_256k', 'get_4k']) per[key] = { p50_ms: med(cond, key, 'p50_ms'), p99_ms: med(cond, key, 'p99_ms'), mib_s: med(cond, key, 'mib_s'), per_s: med(cond, key, 'per_s'), requests: med(cond, key, 'requests') };
    clientJson[cond] = { ...per, measured_s: covered[cond].length ? median(covered[cond]) : null, process_cpu_cores: cpu[cond].length ? median(cpu[cond]) : null };
  }
  const ratios: Record<string, Record<string, number | null>> = { drain_over_idle: {}, verify_over_idle: {} };
  for (const m of metrics) {
    const a = med('idle', m.key, m.f);
    const b = med('drain', m.key, m.f);
    const c = med('verify', m.key, m.f);
    ratios.drain_over_idle![`${m.key}_${m.f}`] = ratio(b, a);
    ratios.verify_over_idle![`${m.key}_${m.f}`] = ratio(c, a);
    rows.push([m.label, m.unit, a, b, c, x(ratio(b, a)), x(ratio(c, a))]);
  }
  const medOf = (xs: number[]) => (xs.length ? median(xs) : undefined);
  rows.push(['time measured per window', 's', ...CONDITIONS.map((c) => medOf(covered[c])), null, null]);
  rows.push(['CPU of this process (client + store)', 'cores', ...CONDITIONS.map((c) => medOf(cpu[c])), x(ratio(medOf(cpu.drain), medOf(cpu.idle))), x(ratio(medOf(cpu.verify), medOf(cpu.idle)))]);
  out.push(renderTable(['load', 'figure', '(a) idle', '(b) drain', '(c) verify', 'b/a', 'c/a'], rows));
  out.push('');
  out.push('The jobs themselves during those windows: bytes moved (drain) or checked (verify) over the time they ran in them.');
  const alone = (runs: JobRun[] | undefined) => (runs?.length ? median(runs.map(mibPerSec)) : Number.NaN);
  const drainAlone = alone(drains[4]);
  const verifyAlone = alone(verifies.full);
  const drainLoaded = underLoad.drain.length ? aggregate(underLoad.drain) : Number.NaN;
  const verifyLoaded = underLoad.verify.length ? aggregate(underLoad.verify) : Number.NaN;
  out.push(renderTable(['job during the client load', 'MiB/s alone', 'MiB/s under load', 'ratio', 'runs'], [
    ['drain (slice bytes), concurrency 4', drainAlone, drainLoaded, x(ratio(drainLoaded, drainAlone)), String(underLoad.drain.length)],
    ['full verify (object bytes)', verifyAlone, verifyLoaded, x(ratio(verifyLoaded, verifyAlone)), String(underLoad.verify.length)],
  ]));
  json.client = { ...clientJson, ...ratios, drain_under_load_mib_s: drainLoaded, verify_under_load_mib_s: verifyLoaded, drain_runs_under_load: underLoad.drain.length, verify_runs_under_load: underLoad.verify.length };
  out.push('');

  out.push('3. Verification runs over the whole fleet (full: every byte read, parity and MD5 recomputed; light: headers)');
  const vrows: Cell[][] = [];
  const verifyJson: Record<string, unknown> = {};
  for (const mode of ['full', 'light'] as const) {
    const runs = verifies[mode];
    if (!runs.length) {
      vrows.push([mode, null, null, null, null, null, 'not run']);
      continue;
    }
    const s = jobSummary(runs);
    const objs = runs.map(perSec);
    verifyJson[mode] = { mib_s: mode === 'full' ? s.mib_s : null, obj_s: s.per_s, seconds: s.seconds, objects: s.items, spread_obj_s: spread(objs), rounds_obj_s: objs };
    vrows.push([mode, mode === 'full' ? s.mib_s : null, s.per_s, pct(objs), s.items, s.seconds, objs.map((v) => fmt(v)).join(' ')]);
  }
  out.push(renderTable(['mode', 'MiB/s', 'objects/s', '±', 'objects', 's', 'runs: objects/s'], vrows));
  json.verify = verifyJson;
  out.push('');

  out.push('4. Rebalance (deadband 0) onto the empty volume (slice bytes, the job\'s own start..finish)');
  const rebJson: Record<string, unknown> = {};
  const rrows: Cell[][] = REBALANCE_CONCURRENCY.map((c) => {
    const runs = rebalances[c];
    if (!runs?.length) return [`concurrency ${c}`, null, null, null, null, null, null, null, 'not run'];
    const s = { ...jobSummary(runs), outcomes: [...new Set(runs.map((r) => r.outcome ?? '?'))] };
    rebJson[`c${c}`] = s;
    return [`concurrency ${c}`, s.mib_s, s.per_s, pct(s.rounds_mib_s), s.items, s.mib, s.seconds, s.rounds_mib_s.map((v) => fmt(v)).join(' '), s.outcomes.join(', ')];
  });
  out.push(renderTable(['setting', 'MiB/s', 'slices/s', '±', 'slices', 'MiB moved', 's', 'runs: MiB/s', 'outcome'], rrows));
  json.rebalance = rebJson;
  if (failures.length) out.push('', ...failures.map((f) => `FAILED: ${f}`));
  process.stdout.write(`${out.join('\n')}\n`);

  Object.assign(json, { failures, elapsed_s: (Date.now() - t0) / 1000, loadavg_end: loadavg() });
  process.stdout.write(`${JSON.stringify(round(json))}\n`);
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`maintenance bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
