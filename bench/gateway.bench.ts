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
 * warm-up of 300 calls at 100/s goes first on each path. Each step also gives the CPU a call
 * costs the far end (hostd: the daemon's threads plus the application, which runs in this
 * process; sipp: the uas), from /proc — steadier than the rate held on a shared machine.
 * Prints a table and one JSON line.
 *
 *   node dist/bench/gateway.bench.js [--rates 100,200,...] [--seconds 5] [--only hostd,sipp,kamailio]
 *     [--hostd-node-args="--cpu-prof --cpu-prof-dir=DIR"]
 */
import { parseArgs } from 'node:util';
import { renderTable } from './lib/table.js';
import { summarize } from './lib/stats.js';
import { runUac, startUas, type UacRun } from './gateway/sipp.js';
import { startKamailio } from './gateway/kamailio.js';
import { startHostdGateway } from './gateway/hostd.js';
import { freeUdpPort } from './gateway/ports.js';
import { busiestThread, processCpuMs, selfCpuMs, threadCpuMs } from './gateway/cpu.js';

const HELP = `Usage: node dist/bench/gateway.bench.js [options]
  --rates LIST    calls/s steps, ascending (default 100,200,300,500,700,1000,1400,2000,2800)
  --seconds N     seconds of calls per step (default 5)
  --only LIST     paths to run: hostd,sipp,kamailio (default all)
  --hostd-node-args=ARGS  node options for the hostd daemon (space-separated), e.g. a CPU profile:
                  "--cpu-prof --cpu-prof-dir=DIR" (summarize: node dist/bench/gateway/profile-top.js DIR/*)
  -h, --help      this text`;

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '100,200,300,500,700,1000,1400,2000,2800' },
    seconds: { type: 'string', default: '5' },
    only: { type: 'string', default: 'hostd,sipp,kamailio' },
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
if (!rates.length || rates.some((r) => !Number.isInteger(r) || r <= 0) || !(seconds > 0)) {
  console.error(`invalid --rates or --seconds\n${HELP}`);
  process.exit(2);
}
const only = new Set(values.only!.split(','));
for (const p of only) if (!['hostd', 'sipp', 'kamailio'].includes(p)) {
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

/** One path: `open` starts what answers calls and returns its SIP address; steps run until one fails. */
async function measure(path: string, open: () => Promise<Sut>): Promise<PathResult> {
  const steps: Step[] = [];
  let best: Step | null = null;
  const sut = await open();
  try {
    // Warm-up, not counted: JIT, pooled connections, sockets.
    await runUac(sut.target, await freeUdpPort(), 100, 300, 30_000);
    for (const rate of rates) {
      const calls = Math.round(rate * seconds);
      const cpu0 = cpuOf(sut);
      const threads0 = sut.pid !== undefined ? threadCpuMs(sut.pid) : new Map<number, number>();
      const uac = await runUac(sut.target, await freeUdpPort(), rate, calls, (seconds + 30) * 1000);
      const cpu1 = cpuOf(sut);
      const busiest = sut.pid !== undefined ? busiestThread(threads0, threadCpuMs(sut.pid)) : null;
      const perCall = (ms: number | null) => (ms !== null && uac.successful > 0 ? ms / uac.successful : null);
      const run: Step = { ...uac, cpuMsPerCall: perCall(cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null), busiestMsPerCall: perCall(busiest) };
      steps.push(run);
      const achieved = run.successful / run.seconds;
      const held = run.failed === 0 && run.successful === calls && achieved >= 0.9 * rate * (calls / (calls + rate * 0.5));
      const s = summarize(run.setupMs);
      process.stderr.write(`${path}: ${rate}/s asked, ${run.successful}/${calls} ok, ${run.failed} failed, ${achieved.toFixed(0)}/s done, setup p50 ${s.p50.toFixed(1)} ms p99 ${s.p99.toFixed(1)} ms${run.cpuMsPerCall !== null ? `, ${run.cpuMsPerCall.toFixed(3)} CPU ms/call (busiest thread ${run.busiestMsPerCall?.toFixed(3)})` : ''}${held ? '' : '  ← not held'}\n`);
      if (run.failed > 0 && run.errors) process.stderr.write(`  sipp's error log begins:\n${run.errors.replace(/^/gm, '    ')}\n`);
      if (!held) break;
      best = run;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    await sut.stop();
  }
  return { path, steps, best };
}

const results: PathResult[] = [];
if (only.has('hostd')) {
  results.push(await measure('hostd (sipp → SIP server → gateway → app)', async () => ({ ...(await startHostdGateway('service', values['hostd-node-args']!.split(' ').filter(Boolean))), countSelf: true })));
}
if (only.has('sipp')) {
  results.push(await measure('sipp → sipp uas', async () => {
    const port = await freeUdpPort();
    const uas = startUas(port);
    await new Promise((r) => setTimeout(r, 300));
    return { target: `127.0.0.1:${port}`, pid: uas.child.pid!, stop: () => uas.stop() };
  }));
}
if (only.has('kamailio')) {
  results.push(await measure('sipp → Kamailio (tm) → sipp uas', async () => {
    const uasPort = await freeUdpPort();
    const uas = startUas(uasPort);
    const port = await freeUdpPort();
    const kam = await startKamailio(port, uasPort).catch(async (e) => {
      await uas.stop();
      throw e;
    });
    return { target: `127.0.0.1:${port}`, stop: async () => { await kam.stop(); await uas.stop(); } };
  }));
}

const row = (r: PathResult) => {
  const s = r.best ? summarize(r.best.setupMs) : null;
  return [r.path, r.best?.rate ?? 0, r.best ? r.best.successful / r.best.seconds : null, s?.p50, s?.p99, r.best?.cpuMsPerCall?.toFixed(3) ?? null, r.best?.busiestMsPerCall?.toFixed(3) ?? null];
};
console.log(`\nCalls per second with zero failed calls (${seconds} s per step, UDP, calls with no hold time):\n`);
console.log(renderTable(['path', 'highest rate held (calls/s)', 'completed/s at it', 'INVITE→200 p50 (ms)', 'p99 (ms)', 'far end CPU ms/call', 'its busiest thread'], results.map(row)));
const rateOf = (prefix: string) => results.find((r) => r.path.startsWith(prefix))?.best?.rate ?? null;
const hostd = rateOf('hostd');
const sipp = rateOf('sipp → sipp');
const kam = rateOf('sipp → Kamailio');
if (hostd !== null && sipp) console.log(`\nhostd / sipp-to-sipp: ${(hostd / sipp).toFixed(2)}×${kam ? `   hostd / Kamailio: ${(hostd / kam).toFixed(2)}×` : ''}`);
console.log(JSON.stringify({
  bench: 'gateway',
  seconds,
  paths: results.map((r) => ({ path: r.path, bestRate: r.best?.rate ?? 0, setupP50Ms: r.best ? summarize(r.best.setupMs).p50 : null, setupP99Ms: r.best ? summarize(r.best.setupMs).p99 : null, steps: r.steps.map((s) => ({ rate: s.rate, ok: s.successful, failed: s.failed, seconds: Number(s.seconds.toFixed(2)), cpuMsPerCall: s.cpuMsPerCall === null ? null : Number(s.cpuMsPerCall.toFixed(4)), busiestMsPerCall: s.busiestMsPerCall === null ? null : Number(s.busiestMsPerCall.toFixed(4)) })) })),
  ratioToSipp: hostd !== null && sipp ? hostd / sipp : null,
  ratioToKamailio: hostd !== null && kam ? hostd / kam : null,
}));
