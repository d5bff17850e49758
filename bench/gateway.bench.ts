#!/usr/bin/env node
/**
 * Calls per second through the session gateway, beside its peers on the same machine:
 *
 *   sipp uac → hostd (SIP server → gateway → an application on /control) — the call answered by the app
 *   sipp uac → sipp uas directly                                           — the ceiling of the tools
 *   sipp uac → Kamailio (transaction-stateful proxy) → sipp uas            — the proxy peer
 *
 * For each path the rate steps up until a step has a failed call or cannot be held (fewer than
 * 90 % of the asked calls per second completed); the result is the highest rate held with zero
 * failed calls, with INVITE→200 p50/p99 at that rate (sipp's clock: whole milliseconds). A
 * warm-up of 300 calls at 100/s goes first on each path. The paths run their ladders together,
 * step by step (each rate: every path still holding, in turn), so they meet the same minutes of a
 * machine whose speed moves; `--repeat N` runs it all N times and takes each path's median. After
 * each step the machine must be quiet again (under 15 % busy for half a second) before the next
 * starts: an overloaded far end works on for seconds, and the next path would pay for it. Each step also gives the CPU a call
 * costs the far end (hostd: the daemon's threads plus the application, which runs in this
 * process; sipp: the uas), from /proc — steadier than the rate held on a shared machine.
 * Prints a table and one JSON line.
 *
 *   node dist/bench/gateway.bench.js [--rates 100,200,...] [--seconds 5] [--only hostd,sipp,kamailio] [--repeat N]
 *     [--hostd-node-args="--cpu-prof --cpu-prof-dir=DIR"]
 */
import { parseArgs } from 'node:util';
import { renderTable } from './lib/table.js';
import { summarize } from './lib/stats.js';
import { runUac, startUas, type UacRun } from './gateway/sipp.js';
import { startKamailio } from './gateway/kamailio.js';
import { startHostdGateway } from './gateway/hostd.js';
import { freeUdpPort } from './gateway/ports.js';
import { busiestThread, processCpuMs, selfCpuMs, threadCpuMs, waitQuiet } from './gateway/cpu.js';

const HELP = `Usage: node dist/bench/gateway.bench.js [options]
  --rates LIST    calls/s steps, ascending (default 100,200,300,500,700,1000,1400,2000,2800)
  --seconds N     seconds of calls per step (default 5)
  --only LIST     paths to run: hostd,sipp,kamailio (default all); also hostd-own, hostd-shared:
                  hostd with GATEWAY_THREAD=own / sipserver set, to compare the two in the same minutes
  --repeat N      run every path's ladder N times (default 1); the table gives each path's median
                  best rate, and the ratios of each repeat are printed beside it
  --hostd-node-args=ARGS  node options for the hostd daemon (space-separated), e.g. a CPU profile:
                  "--cpu-prof --cpu-prof-dir=DIR" (summarize: node dist/bench/gateway/profile-top.js DIR/*)
  -h, --help      this text`;

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '100,200,300,500,700,1000,1400,2000,2800' },
    seconds: { type: 'string', default: '5' },
    only: { type: 'string', default: 'hostd,sipp,kamailio' },
    repeat: { type: 'string', default: '1' },
    'hostd-node-args': { type: 'string', default: '' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const rates = values.rates!.split(',').map(Number);
const seconds = Number(values.seconds);
const repeat = Number(values.repeat);
if (!rates.length || rates.some((r) => !Number.isInteger(r) || r <= 0) || !(seconds > 0) || !Number.isInteger(repeat) || repeat < 1) {
  console.error(`invalid --rates, --seconds or --repeat\n${HELP}`);
  process.exit(2);
}
const only = new Set(values.only!.split(','));
for (const p of only) if (!['hostd', 'hostd-own', 'hostd-shared', 'sipp', 'kamailio'].includes(p)) {
  console.error(`unknown path in --only: ${p}\n${HELP}`);
  process.exit(2);
}

interface Step extends UacRun {
  /** CPU ms per completed call of the far end (null when not measured) */
  cpuMsPerCall: number | null;
  /** the same for the far end's busiest thread (hostd: the SIP server's; sipp: its one thread) */
  busiestMsPerCall: number | null;
}

interface PathResult {
  path: string;
  steps: Step[];
  best: Step | null;
}

/** What answers the calls of a path: its SIP address, its process (for CPU), whether this process takes part. */
interface Sut {
  target: string;
  pid?: number;
  /** The application runs in the bench's own process: count its CPU too. */
  countSelf?: boolean;
  stop(): Promise<void>;
}

function cpuOf(sut: Sut): number | null {
  const p = sut.pid !== undefined ? processCpuMs(sut.pid) : null;
  if (p === null) return null;
  return p + (sut.countSelf ? selfCpuMs() : 0);
}

interface Path {
  path: string;
  open: () => Promise<Sut>;
}

/**
 * Every path's ladder, interleaved: the paths are started together, warmed up, then at each rate
 * every path still holding runs its step (in turn, not at once) before the next rate. On a shared
 * machine whose speed moves by the minute, the paths then meet the same minutes; one path's whole
 * ladder after another's measured the drift as often as the paths.
 */
async function measureAll(paths: Path[]): Promise<PathResult[]> {
  const results: PathResult[] = paths.map((p) => ({ path: p.path, steps: [], best: null }));
  const suts: Sut[] = [];
  try {
    for (const p of paths) suts.push(await p.open());
    // Warm-up, not counted: JIT, pooled connections, sockets.
    for (const sut of suts) await runUac(sut.target, await freeUdpPort(), 100, 300, 30_000);
    const alive = new Set(paths.map((_, i) => i));
    for (const rate of rates) {
      for (const i of [...alive]) {
        if (!(await step(results[i]!, suts[i]!, rate))) alive.delete(i);
        await waitQuiet();
      }
      if (!alive.size) break;
    }
  } finally {
    for (const sut of suts) await sut.stop().catch(() => undefined);
  }
  return results;
}

/** One step of one path at `rate`; whether it held. */
async function step(result: PathResult, sut: Sut, rate: number): Promise<boolean> {
  const calls = Math.round(rate * seconds);
  const cpu0 = cpuOf(sut);
  const threads0 = sut.pid !== undefined ? threadCpuMs(sut.pid) : new Map<number, number>();
  const uac = await runUac(sut.target, await freeUdpPort(), rate, calls, (seconds + 30) * 1000);
  const cpu1 = cpuOf(sut);
  const busiest = sut.pid !== undefined ? busiestThread(threads0, threadCpuMs(sut.pid)) : null;
  const perCall = (ms: number | null) => (ms !== null && uac.successful > 0 ? ms / uac.successful : null);
  const run: Step = { ...uac, cpuMsPerCall: perCall(cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null), busiestMsPerCall: perCall(busiest) };
  result.steps.push(run);
  const achieved = run.successful / run.seconds;
  const held = run.failed === 0 && run.successful === calls && achieved >= 0.9 * rate * (calls / (calls + rate * 0.5));
  const s = summarize(run.setupMs);
  process.stderr.write(`${result.path}: ${rate}/s asked, ${run.successful}/${calls} ok, ${run.failed} failed, ${achieved.toFixed(0)}/s done, setup p50 ${s.p50.toFixed(1)} ms p99 ${s.p99.toFixed(1)} ms${run.cpuMsPerCall !== null ? `, ${run.cpuMsPerCall.toFixed(3)} CPU ms/call (busiest thread ${run.busiestMsPerCall?.toFixed(3)})` : ''}${held ? '' : '  ← not held'}\n`);
  if (run.failed > 0 && run.errors) process.stderr.write(`  sipp's error log begins:\n${run.errors.replace(/^/gm, '    ')}\n`);
  if (held) result.best = run;
  return held;
}

const paths: Path[] = [];
const hostdPath = (path: string, env: Record<string, string> = {}): Path => ({
  path,
  open: async () => ({ ...(await startHostdGateway('service', values['hostd-node-args']!.split(' ').filter(Boolean), env)), countSelf: true }),
});
if (only.has('hostd')) paths.push(hostdPath('hostd (sipp → SIP server → gateway → app)'));
if (only.has('hostd-shared')) paths.push(hostdPath('hostd, GATEWAY_THREAD=sipserver', { GATEWAY_THREAD: 'sipserver' }));
if (only.has('hostd-own')) paths.push(hostdPath('hostd, GATEWAY_THREAD=own', { GATEWAY_THREAD: 'own' }));
if (only.has('sipp')) {
  paths.push({
    path: 'sipp → sipp uas',
    open: async () => {
      const port = await freeUdpPort();
      const uas = startUas(port);
      await new Promise((r) => setTimeout(r, 300));
      return { target: `127.0.0.1:${port}`, pid: uas.child.pid!, stop: () => uas.stop() };
    },
  });
}
if (only.has('kamailio')) {
  paths.push({
    path: 'sipp → Kamailio (tm) → sipp uas',
    open: async () => {
      const uasPort = await freeUdpPort();
      const uas = startUas(uasPort);
      const port = await freeUdpPort();
      const kam = await startKamailio(port, uasPort).catch(async (e) => {
        await uas.stop();
        throw e;
      });
      return { target: `127.0.0.1:${port}`, stop: async () => { await kam.stop(); await uas.stop(); } };
    },
  });
}

/** Each repeat runs every path's ladder again (interleaved); the table gives each path's median best rate. */
const repeats: PathResult[][] = [];
for (let r = 0; r < repeat; r++) {
  if (repeat > 1) process.stderr.write(`repeat ${r + 1}/${repeat}\n`);
  repeats.push(await measureAll(paths));
}
/** Per path, the repeat whose best rate is the median (the lower middle one for an even count). */
const results: PathResult[] = paths.map((_, i) => {
  const runs = repeats.map((rs) => rs[i]!).sort((a, b) => (a.best?.rate ?? 0) - (b.best?.rate ?? 0));
  return runs[Math.floor((runs.length - 1) / 2)]!;
});

const row = (r: PathResult) => {
  const s = r.best ? summarize(r.best.setupMs) : null;
  return [r.path, r.best?.rate ?? 0, r.best ? r.best.successful / r.best.seconds : null, s?.p50, s?.p99, r.best?.cpuMsPerCall?.toFixed(3) ?? null, r.best?.busiestMsPerCall?.toFixed(3) ?? null];
};
console.log(`\nCalls per second with zero failed calls (${seconds} s per step, UDP, calls with no hold time):\n`);
console.log(renderTable(['path', 'highest rate held (calls/s)', 'completed/s at it', 'INVITE→200 p50 (ms)', 'p99 (ms)', 'far end CPU ms/call', 'its busiest thread'], results.map(row)));
const rateOf = (rs: PathResult[], prefix: string) => rs.find((r) => r.path.startsWith(prefix))?.best?.rate ?? null;
const hostd = rateOf(results, 'hostd');
const sipp = rateOf(results, 'sipp → sipp');
const kam = rateOf(results, 'sipp → Kamailio');
/** A hostd path over a peer, repeat by repeat (each repeat's paths ran in the same minutes). */
const perRepeat = (mine: string, peer: string) =>
  repeats.map((rs) => {
    const h = rateOf(rs, mine);
    const p = rateOf(rs, peer);
    return h !== null && p ? Number((h / p).toFixed(2)) : null;
  });
for (const r of results.filter((x) => x.path.startsWith('hostd'))) {
  const h = r.best?.rate ?? 0;
  const name = results.filter((x) => x.path.startsWith('hostd')).length > 1 ? r.path : 'hostd';
  if (sipp) {
    const by = repeat > 1 ? `  (by repeat: ${perRepeat(r.path, 'sipp → sipp').join(' ')})` : '';
    console.log(`\n${name} / sipp-to-sipp: ${(h / sipp).toFixed(2)}×${by}${kam ? `   ${name} / Kamailio: ${(h / kam).toFixed(2)}×` : ''}`);
  }
}
console.log(JSON.stringify({
  bench: 'gateway',
  seconds,
  repeat,
  ratiosToSippByRepeat: perRepeat('hostd', 'sipp → sipp'),
  paths: results.map((r) => ({ path: r.path, bestRate: r.best?.rate ?? 0, setupP50Ms: r.best ? summarize(r.best.setupMs).p50 : null, setupP99Ms: r.best ? summarize(r.best.setupMs).p99 : null, steps: r.steps.map((s) => ({ rate: s.rate, ok: s.successful, failed: s.failed, seconds: Number(s.seconds.toFixed(2)), cpuMsPerCall: s.cpuMsPerCall === null ? null : Number(s.cpuMsPerCall.toFixed(4)), busiestMsPerCall: s.busiestMsPerCall === null ? null : Number(s.busiestMsPerCall.toFixed(4)) })) })),
  ratioToSipp: hostd !== null && sipp ? hostd / sipp : null,
  ratioToKamailio: hostd !== null && kam ? hostd / kam : null,
}));
