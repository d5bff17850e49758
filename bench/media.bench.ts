/**
 * Media bridge load benchmark, side by side with rtpengine (the anchor).
 *
 *   npx tsc -p . && node dist/bench/media.bench.js [--sweep 50,100,200] [--duration 10]
 *       [--srtp-sweep 50,100] [--only hostd|rtpengine] [--threads 2[,1]] [--floor main,unconnected]
 *       [--quick] [--help]
 *
 * It relays N concurrent two-leg PCMU calls (and N SRTP↔RTP calls) through hostd's media bridge
 * (bench/media/serve.js, a process of its own) and, in the same run and at the same N, through
 * rtpengine (userspace forwarding, as shared/peers/rtpengine/run.sh runs it), with one
 * generator (bench/media/load.ts, rtp-load.mjs's method). Relays alternate which goes first at
 * each N. Each (relay, mode, N) waits for a quiet machine first and is retried when other
 * processes plus hypervisor steal took more than --max-other % of a core during it (the recipe
 * counts other processes only; steal reached 16 % here and shows as jitter); the least
 * disturbed attempt is kept. A relay stops climbing after loss > --stop-loss %, CPU at
 * --stop-cpu % or a generator that falls behind (median send lateness > --stop-late ms).
 * --floor adds bare Node dgram relays (floor.ts): what any relay on Node costs per packet.
 * stdout: the table of rows, the summary (best N within the bar, calls per core, ratio) and,
 * last, one JSON line {"bench":"media",...}. Progress goes to stderr.
 * Helpers for the profile: media/profile-summary.ts (cpuprofile → per-packet buckets) and
 * media/primitives.ts (costs of the Node primitives on the packet path).
 */
import { positiveIntList } from './lib/options.js';
import { optionsOrExit } from './media/cli.js';
import os from 'node:os';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { FLOOR_VARIANTS, startFloor, type FloorVariant } from './media/floor.js';
import { startHostd, externalHostd } from './media/hostd.js';
import { type RunResult } from './media/load.js';
import { noise, quietRun } from './media/quiet-run.js';
import { sleep, waitQuiet } from './media/proc.js';
import type { Relay } from './media/relay.js';
import { BAR, bestOf, passes, ratios, resultsTable, summaryTable, type Failed, type Row } from './media/report.js';
import { externalRtpengine, startRtpengine } from './media/rtpengine.js';

const HELP = `Usage: node dist/bench/media.bench.js [options]

Relays N two-leg PCMU calls (20 ms, both ways) through hostd's media bridge and through
rtpengine in the same run; measures loss, added jitter p50/p99, relay CPU (from /proc),
µs of relay CPU per relayed packet and the generator's CPU. Bar: loss <= ${BAR.lossPct} %
and p99 added jitter <= ${BAR.p99Ms} ms.

Options:
  --sweep LIST         plain RTP calls per run (default 50,100,200)
  --srtp-sweep LIST    SRTP(leg A)<->RTP(leg B) calls per run (default 50,100; "none" skips)
  --duration S         seconds of media per run (default 10)
  --only R             hostd | rtpengine (default both)
  --threads LIST       media group threads of each hostd to spawn (default 2; e.g. 2,1)
  --floor LIST         also relay plain calls through bare Node dgram relays (no parsing): the
                       floor of any relay on Node. main = connected sockets on the main thread,
                       worker = the same on a worker thread, unconnected = bound to 0.0.0.0,
                       unconnected, a callback per send (as the bridge's sockets.ts); e.g. main,unconnected
  --quick              smoke run: 20 calls plain + 20 SRTP, 5 s, no retries
  --slots N            phase groups per 20 ms tick (default 10)
  --max-other PCT      retry a run when other processes plus steal took more than PCT % of a core (default 25)
  --retries N          retries per run (default 2)
  --quiet-wait S       wait up to S s for a quiet machine before each run (default 60)
  --stop-loss PCT      stop a relay's sweep above this loss (default 1)
  --stop-cpu PCT       ... at this relay CPU (default 95)
  --stop-late MS       ... when the generator's median send lateness exceeds MS (default 20)
  --hostd-url URL --hostd-pid PID      use a running bridge instead of spawning one
  --ng HOST:PORT --rtpengine-pid PID   use a running rtpengine (ng on 127.0.0.1)
  --no-install         do not apt-get install rtpengine-daemon when it is missing
  --hostd-node-args=S extra node flags for serve.js (e.g. --hostd-node-args="--cpu-prof --cpu-prof-dir=/tmp/prof")
  --json FILE          also append every row and the summary to FILE (JSON lines)
  --help`;

interface Options {
  sweep: number[];
  srtpSweep: number[];
  duration: number;
  only: 'hostd' | 'rtpengine' | null;
  threads: number[];
  quick: boolean;
  floor: FloorVariant[];
  slots: number;
  maxOther: number;
  retries: number;
  quietWait: number;
  stopLoss: number;
  stopCpu: number;
  stopLate: number;
  hostdUrl: string | null;
  hostdPid: number;
  ng: string | null;
  rtpenginePid: number;
  install: boolean;
  hostdNodeArgs: string[];
  json: string | null;
}

function parseOptions(): Options | null {
  const { values: v } = parseArgs({
    options: {
      sweep: { type: 'string', default: '50,100,200' },
      'srtp-sweep': { type: 'string', default: '50,100' },
      duration: { type: 'string', default: '10' },
      only: { type: 'string' },
      threads: { type: 'string', default: '2' },
      quick: { type: 'boolean', default: false },
      floor: { type: 'string', default: '' },
      slots: { type: 'string', default: '10' },
      'max-other': { type: 'string', default: '25' },
      retries: { type: 'string', default: '2' },
      'quiet-wait': { type: 'string', default: '60' },
      'stop-loss': { type: 'string', default: '1' },
      'stop-cpu': { type: 'string', default: '95' },
      'stop-late': { type: 'string', default: '20' },
      'hostd-url': { type: 'string' },
      'hostd-pid': { type: 'string' },
      ng: { type: 'string' },
      'rtpengine-pid': { type: 'string' },
      'no-install': { type: 'boolean', default: false },
      'hostd-node-args': { type: 'string', default: '' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (v.help) return null;
  const list = positiveIntList;
  const num = (s: string, name: string, min = 0): number => {
    const n = Number(s);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name}: a number >= ${min}, got ${s}`);
    return n;
  };
  const floorList = (s: string): FloorVariant[] => {
    const l = s.split(',').filter(Boolean);
    const bad = l.filter((x) => !(FLOOR_VARIANTS as readonly string[]).includes(x));
    if (bad.length) throw new Error(`--floor: ${FLOOR_VARIANTS.join(', ')}; got ${bad.join(', ')}`);
    return l as FloorVariant[];
  };
  if (v.only !== undefined && v.only !== 'hostd' && v.only !== 'rtpengine') throw new Error(`--only: hostd or rtpengine, got ${v.only}`);
  if ((v['hostd-url'] === undefined) !== (v['hostd-pid'] === undefined)) throw new Error('--hostd-url and --hostd-pid go together');
  if ((v.ng === undefined) !== (v['rtpengine-pid'] === undefined)) throw new Error('--ng and --rtpengine-pid go together');
  const o: Options = {
    sweep: list(v.sweep, 'sweep'),
    srtpSweep: list(v['srtp-sweep'], 'srtp-sweep'),
    duration: num(v.duration, 'duration', 2),
    only: (v.only as Options['only']) ?? null,
    threads: list(v.threads, 'threads'),
    quick: v.quick,
    floor: floorList(v.floor),
    slots: num(v.slots, 'slots', 1),
    maxOther: num(v['max-other'], 'max-other'),
    retries: num(v.retries, 'retries'),
    quietWait: num(v['quiet-wait'], 'quiet-wait'),
    stopLoss: num(v['stop-loss'], 'stop-loss'),
    stopCpu: num(v['stop-cpu'], 'stop-cpu'),
    stopLate: num(v['stop-late'], 'stop-late'),
    hostdUrl: v['hostd-url'] ?? null,
    hostdPid: v['hostd-pid'] ? num(v['hostd-pid'], 'hostd-pid', 1) : 0,
    ng: v.ng ?? null,
    rtpenginePid: v['rtpengine-pid'] ? num(v['rtpengine-pid'], 'rtpengine-pid', 1) : 0,
    install: !v['no-install'],
    hostdNodeArgs: v['hostd-node-args'].split(/\s+/).filter(Boolean),
    json: v.json ?? null,
  };
  if (o.quick) Object.assign(o, { sweep: [20], srtpSweep: [20], duration: 5, retries: 0, quietWait: 15 });
  return o;
}

const log = (s: string) => process.stderr.write(s + '\n');


async function main(): Promise<number> {
  const cli = optionsOrExit(parseOptions, HELP);
  if ('exit' in cli) return cli.exit;
  const o = cli.options;
  const relays: Relay[] = [];
  const stopAll = async () => {
    await Promise.all(relays.map((r) => r.stop().catch(() => undefined)));
  };
  const onSignal = () => void stopAll().then(() => process.exit(130));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const started = Date.now();
  const load0 = os.loadavg();
  const notes: string[] = [];
  try {
    if (o.only !== 'hostd') {
      if (o.ng) relays.push(externalRtpengine(o.ng, o.rtpenginePid));
      else relays.push(await startRtpengine({ install: o.install }));
    }
    if (o.only !== 'rtpengine') {
      if (o.hostdUrl) relays.push(externalHostd(o.hostdUrl, o.hostdPid));
      else for (const t of o.threads) relays.push(await startHostd({ name: o.threads.length > 1 ? `hostd/${t}t` : 'hostd', groupThreads: t, nodeArgs: o.hostdNodeArgs }));
    }
    for (const f of o.floor) relays.push(await startFloor(f));
  } catch (e) {
    await stopAll();
    console.error((e as Error).message);
    return 1;
  }
  const exclude = new Set([process.pid, ...relays.map((r) => r.pid)]);
  for (const r of relays) log(`# ${r.describe()}`);
  log(`# ${os.cpus().length} CPUs, load average ${load0.map((x) => x.toFixed(2)).join(' ')}; ${o.duration} s per run, ${o.slots} slots, bar: loss <= ${BAR.lossPct} %, p99 added jitter <= ${BAR.p99Ms} ms`);

  const rows: Row[] = [];
  const failed: Failed[] = [];
  const plan: Array<{ mode: 'plain' | 'srtp'; list: number[] }> = [
    { mode: 'plain', list: o.sweep },
    { mode: 'srtp', list: o.srtpSweep },
  ];
  try {
    for (const { mode, list } of plan) {
      const stopped = new Set<string>();
      for (const [idx, N] of list.entries()) {
        // alternate which relay goes first at each N
        const order = relays.map((_, i) => relays[(i + idx) % relays.length]!);
        for (const relay of order) {
          if (stopped.has(relay.name) || (mode === 'srtp' && !relay.srtp)) continue;
          const run = await quietRun(
            relay,
            N,
            { duration: o.duration, slots: o.slots, srtp: mode === 'srtp', warmup: 1, concurrency: 16, exclude },
            { retries: o.retries, maxOther: o.maxOther, quietWait: o.quietWait, label: `${relay.name} ${mode} N=${N}`, log, pauseMs: 3000 },
          );
          const { best, bestAttempt, attempts, background: bg, error } = run;
          if (!best) {
            failed.push({ relay: relay.name, mode, calls: N, error: error ?? 'no result' });
            stopped.add(relay.name);
            continue;
          }
          const row: Row = { ...best, attempt: bestAttempt, attempts, noisy: noise(best) > o.maxOther, background_before_pct: bg };
          rows.push(row);
          if (o.json) fs.appendFileSync(o.json, JSON.stringify(row) + '\n');
          log(
            `${relay.name.padEnd(10)} ${mode.padEnd(5)} N=${String(N).padStart(4)} loss ${row.loss_pct.toFixed(3)} % jitter p50/p99 ${row.transit_jitter_ms.p50.toFixed(2)}/${row.transit_jitter_ms.p99.toFixed(2)} ms ` +
              `relay ${row.relay_cpu_pct} % (${row.relay_us_per_pkt} µs/pkt, busiest ${row.relay_max_thread} ${row.relay_max_thread_pct} %) gen ${row.gen_cpu_pct} % other+steal ${noise(row)} % ${passes(row) ? 'pass' : 'FAIL'}${row.noisy ? ' (noisy)' : ''}`,
          );
          if (row.loss_pct > o.stopLoss) {
            notes.push(`${relay.name} ${mode}: stopped after N=${N}: loss ${row.loss_pct} % > ${o.stopLoss} %`);
            stopped.add(relay.name);
          } else if (row.relay_cpu_pct >= o.stopCpu || row.relay_max_thread_pct >= o.stopCpu) {
            notes.push(`${relay.name} ${mode}: stopped after N=${N}: relay CPU ${row.relay_cpu_pct} % (busiest thread ${row.relay_max_thread_pct} %)`);
            stopped.add(relay.name);
          } else if (row.send_late_ms.p50 > o.stopLate) {
            notes.push(`${relay.name} ${mode}: stopped after N=${N}: the generator fell behind (median ${row.send_late_ms.p50} ms late)`);
            stopped.add(relay.name);
          }
          await sleep(1000);
        }
      }
    }
  } finally {
    for (const r of relays) log(`# after the runs: ${r.describe()}`);
    await stopAll();
  }

  const modes = plan.filter((p) => p.list.length).map((p) => p.mode);
  const bests = modes.flatMap((m) => relays.filter((r) => m === 'plain' || r.srtp).map((r) => bestOf(rows, r.name, m)));
  const rs = ratios(rows, bests);
  const load1 = os.loadavg();
  const out: string[] = [];
  out.push(`media relay benchmark: ${os.cpus().length} CPUs, ${o.duration} s per run${o.quick ? ' (quick)' : ''}; load average ${load0.map((x) => x.toFixed(2)).join(' ')} at start, ${load1.map((x) => x.toFixed(2)).join(' ')} at end`);
  out.push(`bar: loss <= ${BAR.lossPct} % and p99 added jitter <= ${BAR.p99Ms} ms. jit = |ΔR-ΔS| ms, relay % / gen % / other % = % of one core, µs/pkt = relay CPU per relayed packet`);
  out.push('');
  out.push(resultsTable(rows, failed));
  out.push('');
  out.push(summaryTable(bests, rs));
  for (const r of rs) {
    const same = r.same_n.map((s) => `N=${s.calls}: ${s.cpu_ratio.toFixed(2)}`).join(', ');
    out.push(`${r.relay} ${r.mode}: calls/core ratio ${r.calls_per_core_ratio === null ? '-' : r.calls_per_core_ratio.toFixed(2)} (target >= 1: ${r.meets_target === null ? 'no rtpengine' : r.meets_target ? 'met' : 'NOT met'}); rtpengine CPU / its CPU at the same N: ${same || '-'}`);
  }
  for (const n of notes) out.push(`note: ${n}`);
  console.log(out.join('\n'));
  const json = {
    bench: 'media',
    quick: o.quick,
    duration_s: o.duration,
    cpus: os.cpus().length,
    loadavg_start: load0.map((x) => Math.round(x * 100) / 100),
    loadavg_end: load1.map((x) => Math.round(x * 100) / 100),
    seconds: Math.round((Date.now() - started) / 1000),
    bar: { loss_pct: BAR.lossPct, p99_jitter_ms: BAR.p99Ms },
    relays: relays.map((r) => r.name),
    best: bests,
    ratio: rs,
    rows,
    failed,
    notes,
  };
  if (o.json) fs.appendFileSync(o.json, JSON.stringify({ summary: true, ...json, rows: undefined }) + '\n');
  console.log(JSON.stringify(json));
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
