/**
 * WebRTC ↔ RTP calls through hostd's media bridge, transcoded (Opus ↔ PCMU), per core.
 *
 *   npm run bench:media-webrtc -- [--sweep 10,25,50] [--duration 10] [--rounds 3] [--threads 2] [--quick]
 *     [--hostd-node-args="--cpu-prof --cpu-prof-dir=DIR"]
 *
 * With --hostd-node-args the bridge process gets those node flags (split on spaces), e.g. a CPU
 * profile of each of its threads; bench/gateway/profile-top.ts summarises them.
 *
 * Each call is one session with a WebRTC endpoint (a werift client of this process offers Opus
 * only: ICE, DTLS, SRTP both ways) and an RTP endpoint (a UDP socket of this process offering
 * PCMU); each peer sends a 20 ms frame of a tone every 20 ms, so the bridge decodes, mixes and
 * re-encodes both ways (Opus → PCMU and PCMU → Opus) on its 20 ms clock. The bridge runs in its
 * own process (bench/media/serve.js): its CPU comes from /proc over the measured window. Bar, as
 * in bench/media.bench.ts: loss <= 0.1 % and p99 added jitter <= 5 ms; here the jitter is the
 * arrival irregularity of the bridge's streams (|inter-arrival − 20 ms|, receiver included),
 * since a transcoded stream keeps no send time. Calls per core, by CPU: 10^6 / (200 packets a
 * second per call × the bridge's µs of CPU per packet it handled), the median over rounds; the
 * "best" line is the largest N that passes the bar in its median round.
 *
 * Reference, not a side-by-side peer: mediasoup publishes ~500 consumers per core, for SFU
 * forwarding (SRTP in and out, no decoding or encoding); a consumer is one forwarded stream.
 * A transcoded call here is two streams each way through two codecs, so the figures measure
 * different work. stdout: a table of rounds, the summary, then one JSON line {"bench":"media-webrtc",...}.
 */
import { parseArgs } from 'node:util';
import { MediaBridgeClient } from '../actors/media-bridge/client.js';
import { positiveIntList } from './lib/options.js';
import { median } from './lib/stats.js';
import { renderTable } from './lib/table.js';
import { startHostd } from './media/hostd.js';
import { Hist } from './media/hist.js';
import { cpuDelta, machineBusy, procCpu, sleep, sysCpu } from './media/proc.js';
import os from 'node:os';
import { BAR } from './media/report.js';
import { closeCall, sendFrame, setUpCall, type Call, type Window } from './media/webrtc-peers.js';

const MEDIASOUP_CONSUMERS_PER_CORE = 500;

const { values: v } = parseArgs({
  options: {
    sweep: { type: 'string', default: '10,25,50' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    threads: { type: 'string', default: '2' },
    quick: { type: 'boolean', default: false },
    'hostd-node-args': { type: 'string', default: '' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});
if (v.help) {
  console.log('Usage: node dist/bench/media-webrtc.bench.js [--sweep 10,25,50] [--duration S] [--rounds N] [--threads N] [--quick] [--hostd-node-args="--cpu-prof --cpu-prof-dir=DIR"]');
  process.exit(0);
}
const sweep = v.quick ? [5] : positiveIntList(v.sweep, 'sweep');
const duration = v.quick ? 4 : Number(v.duration);
const rounds = v.quick ? 1 : Number(v.rounds);
const threads = Number(v.threads);
if (!(duration >= 2) || !(rounds >= 1) || !(threads >= 1)) throw new Error('--duration >= 2, --rounds >= 1, --threads >= 1');

interface Round {
  calls: number;
  round: number;
  setup_ms: number;
  loss_pct: number;
  loss_webrtc_pct: number;
  loss_rtp_pct: number;
  jitter_p50_ms: number;
  jitter_p99_ms: number;
  bridge_cpu_pct: number;
  us_per_packet: number;
  calls_per_core: number;
  peers_cpu_pct: number;
  /** The whole machine's busy CPU during the window (% of one core, up to 100 × cores), and the load average after it. */
  machine_busy_pct: number;
  loadavg: number;
}

async function runOnce(url: string, pid: number, calls: number, round: number): Promise<Round> {
  const c = await MediaBridgeClient.connect(url, { timeoutMs: 30_000 });
  const w: Window = { open: false, iat: new Hist() };
  const made: Call[] = [];
  const t0 = performance.now();
  try {
    for (let i = 0; i < calls; i++) made.push(await setUpCall(c, w));
    const setupMs = performance.now() - t0;
    let frame = 0;
    let next = performance.now();
    let stop = false;
    // One timer for every call, catching up on late ticks (as bench/media/load.ts sends).
    const tick = () => {
      if (stop) return;
      const now = performance.now();
      while (next <= now) {
        sendFrame(made, frame++);
        next += 20;
      }
      setTimeout(tick, Math.max(0, next - performance.now()));
    };
    tick();
    await sleep(1000); // warm-up: codecs made, ICE/DTLS settled
    w.open = true;
    const sys0 = sysCpu();
    const cpu0 = procCpu(pid);
    const me0 = process.cpuUsage();
    const start = performance.now();
    await sleep(duration * 1000);
    w.open = false;
    const seconds = (performance.now() - start) / 1000;
    const cpu = cpuDelta(cpu0, procCpu(pid), seconds);
    const me = process.cpuUsage(me0);
    const busy = machineBusy(sys0, sysCpu(), seconds).busyPct;
    stop = true;
    const expected = Math.floor((seconds * 1000) / 20);
    const lossOf = (got: (x: Call) => number) => {
      const total = made.reduce((s, x) => s + Math.min(expected, got(x)), 0);
      return Math.max(0, 100 * (1 - total / (expected * calls)));
    };
    const lossWebrtc = lossOf((x) => x.webrtc.rx.packets);
    const lossRtp = lossOf((x) => x.rtp.rx.packets);
    // Packets the bridge handled in the window: what the peers sent it (2 per call per 20 ms)
    // and what they received from it (fewer when it fell behind its clock).
    const received = made.reduce((s, x) => s + x.webrtc.rx.packets + x.rtp.rx.packets, 0);
    const packets = 2 * expected * calls + received;
    return {
      calls,
      round,
      setup_ms: Math.round(setupMs),
      loss_pct: (lossWebrtc + lossRtp) / 2,
      loss_webrtc_pct: lossWebrtc,
      loss_rtp_pct: lossRtp,
      jitter_p50_ms: w.iat.pct(50),
      jitter_p99_ms: w.iat.pct(99),
      bridge_cpu_pct: cpu.pct,
      us_per_packet: cpu.pct > 0 ? (cpu.pct / 100) * seconds * 1e6 / packets : Number.NaN,
      // By CPU: a call at full rate is 4 packets per 20 ms, 200 a second.
      calls_per_core: cpu.pct > 0 ? 1e6 / (200 * ((cpu.pct / 100) * seconds * 1e6 / packets)) : Number.NaN,
      peers_cpu_pct: Math.round(((me.user + me.system) / 1e6 / seconds) * 1000) / 10,
      machine_busy_pct: busy,
      loadavg: os.loadavg()[0]!,
    };
  } finally {
    for (const call of made) await closeCall(c, call);
    await c.close().catch(() => undefined);
  }
}

const passes = (r: Round) => r.loss_pct <= BAR.lossPct && r.jitter_p99_ms <= BAR.p99Ms;

const hostd = await startHostd({ name: 'hostd', groupThreads: threads, nodeArgs: v['hostd-node-args']!.split(' ').filter(Boolean) });
process.stderr.write(`# ${hostd.describe()}\n`);
const rows: Round[] = [];
try {
  for (const n of sweep) {
    for (let r = 1; r <= rounds; r++) {
      process.stderr.write(`# ${n} calls, round ${r}/${rounds}\n`);
      rows.push(await runOnce(hostd.url, hostd.pid, n, r));
      await sleep(500);
    }
  }
} finally {
  await hostd.stop();
}

const medianRow = (n: number) => {
  const of = rows.filter((r) => r.calls === n);
  const m = (k: keyof Round) => median(of.map((r) => r[k]));
  return { calls: n, loss_pct: m('loss_pct'), jitter_p99_ms: m('jitter_p99_ms'), bridge_cpu_pct: m('bridge_cpu_pct'), us_per_packet: m('us_per_packet'), calls_per_core: m('calls_per_core') };
};
const medians = sweep.map(medianRow);
const passing = medians.filter((m) => m.loss_pct <= BAR.lossPct && m.jitter_p99_ms <= BAR.p99Ms);
const best = passing.at(-1) ?? null;

console.log(
  renderTable(
    ['calls', 'round', 'setup ms', 'loss %', 'loss →webrtc %', 'loss →rtp %', 'jitter p50 ms', 'jitter p99 ms', 'bridge CPU %', 'µs CPU/packet', 'calls/core', 'peers CPU %', 'machine busy %', 'load', 'bar'],
    rows.map((r) => [String(r.calls), String(r.round), r.setup_ms, r.loss_pct, r.loss_webrtc_pct, r.loss_rtp_pct, r.jitter_p50_ms, r.jitter_p99_ms, r.bridge_cpu_pct, r.us_per_packet, r.calls_per_core, r.peers_cpu_pct, r.machine_busy_pct, r.loadavg, passes(r) ? 'ok' : 'MISS']),
  ),
);
console.log('');
console.log(
  renderTable(
    ['medians', 'loss %', 'jitter p99 ms', 'bridge CPU %', 'µs CPU/packet', 'calls/core'],
    [
      ...medians.map((m) => [`${m.calls} WebRTC↔RTP calls (Opus↔PCMU)`, m.loss_pct, m.jitter_p99_ms, m.bridge_cpu_pct, m.us_per_packet, m.calls_per_core]),
      ['reference: mediasoup, consumers/core (forwarding, no transcoding; published)', null, null, null, null, MEDIASOUP_CONSUMERS_PER_CORE],
    ],
  ),
);
console.log('');
console.log(
  best
    ? `best within the bar: ${best.calls} calls at ${best.bridge_cpu_pct} % of a core: ${Math.round(best.calls_per_core)} transcoded calls per core (median of ${rounds})`
    : 'no N passed the bar (loss <= 0.1 %, jitter p99 <= 5 ms) in its median round',
);
console.log(JSON.stringify({ bench: 'media-webrtc', threads, duration_s: duration, rounds, bar: BAR, rows, medians, best, reference: { mediasoup_consumers_per_core: MEDIASOUP_CONSUMERS_PER_CORE, note: 'SFU forwarding, no transcoding' } }));
