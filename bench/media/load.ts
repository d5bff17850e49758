/**
 * One load run: N two-leg PCMU calls through a relay, measured by the generator's own
 * sender/receiver. The method is rtp-load.mjs's (shared/peers/rtpengine), kept as is so both
 * relays are measured alike:
 *  - per call two UDP sockets on 127.0.0.1 (leg A, leg B), connected to the relay's ports;
 *    172-byte PCMU packets (12 + 160) every 20 ms both ways; in SRTP mode leg A sends and
 *    receives SRTP (generator-side JS SRTP), leg B plain RTP;
 *  - calls spread over `slots` phase groups per 20 ms tick, one timer;
 *  - each payload carries its send time (float64 ms), so the receiver measures the added
 *    jitter |ΔR − ΔS| per stream (relay + kernel + the receiver's event loop), latency, and
 *    the inter-arrival deviation from 20 ms;
 *  - 1 s warm-up, then CPU snapshots (relay from /proc, generator, machine) around the
 *    measured window; 500 ms drain after sending stops.
 * Added here: packets sent inside the CPU window (µs of relay CPU per relayed packet), the
 * CPU of every other process (per-process sums, beside the recipe's /proc/stat estimate), and
 * the relay's busiest thread by name.
 */
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import os from 'node:os';
import { Hist } from './hist.js';
import { cpuDelta, ksoftirqdTicks, machineBusy, otherPct, otherTicks, procCpu, readTicks, sleep, sysCpu, udpSnmp, HZ } from './proc.js';
import type { Relay } from './relay.js';
import { HOST } from './sdp.js';
import { srtpKeys, srtpProtect, srtpUnprotect, type SrtpKeys } from './srtp.js';

export interface LoadOptions {
  duration: number;
  slots: number;
  srtp: boolean;
  warmup: number;
  concurrency: number;
  /** Pids whose CPU is ours (generator, relays): excluded from "other". */
  exclude: ReadonlySet<number>;
}

export interface RunResult {
  relay: string;
  mode: 'plain' | 'srtp';
  calls: number;
  streams: number;
  duration_s: number;
  slots: number;
  setup_ms: number;
  sent: number;
  recv: number;
  loss_pct: number;
  loss_ab_pct: number;
  loss_ba_pct: number;
  ooo_dup: number;
  bad: number;
  pps_in: number;
  relay_rx_pkts: number | null;
  transit_jitter_ms: { p50: number; p99: number; max: number };
  iat_dev_ms: { p50: number; p99: number; max: number };
  latency_ms: { p50: number; p99: number };
  send_late_ms: { p50: number; p99: number; max: number };
  relay_cpu_pct: number;
  /** Of relay_cpu_pct, the kernel's share (stime: sendmsg/recvmsg, wake-ups). */
  relay_sys_pct: number;
  relay_max_thread_pct: number;
  relay_max_thread: string;
  relay_threads: number;
  relay_top_threads: Array<{ thread: string; pct: number }>;
  relay_runq_wait_pct: number;
  /** Relay CPU per packet it received in the window (each relayed once), in µs. */
  relay_us_per_pkt: number;
  window_pkts: number;
  gen_cpu_pct: number;
  gen_main_thread_pct: number;
  gen_runq_wait_pct: number;
  machine_busy_pct: number;
  ksoftirqd_pct: number;
  steal_pct: number;
  /** rtp-load.mjs's estimate: machine busy minus generator, relay, ksoftirqd, steal (% of one core). */
  other_cpu_pct: number;
  /** Sum over every other process (% of one core). */
  other_procs_pct: number;
  udp_rcvbuf_errors: number;
  udp_sndbuf_errors: number;
  ncpu: number;
  loadavg_1m: number;
}

interface Call {
  i: number;
  a: dgram.Socket;
  b: dgram.Socket;
  ssrcA: number;
  ssrcB: number;
  seqA: number;
  seqB: number;
  tsA: number;
  tsB: number;
  rocA: number;
  rocB: number;
  txK: SrtpKeys | null;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export async function runOnce(relay: Relay, N: number, opt: LoadOptions): Promise<RunResult> {
  const tag = `${Date.now().toString(36)}${process.pid}`;
  const S = 2 * N; // stream s<N: A->B received at B[s]; s>=N: B->A received at A[s-N]
  const cnt = new Float64Array(S);
  const lastSeq = new Int32Array(S).fill(-1);
  const lastArr = new Float64Array(S);
  const lastSnd = new Float64Array(S);
  const ooo = new Float64Array(S);
  const bad = new Float64Array(S);
  const rxRoc = new Int32Array(S);
  const hT = new Hist(); // transit jitter |dR-dS|
  const hI = new Hist(); // inter-arrival deviation from 20 ms * seq step
  const hL = new Hist(); // one-way latency
  let measuring = false;
  const calls: Call[] = [];
  const mkSock = () =>
    new Promise<dgram.Socket>((res) => {
      const s = dgram.createSocket('udp4');
      s.bind(0, HOST, () => res(s));
    });
  const onPkt = (sid: number, srtpK: SrtpKeys | null) => (msg: Buffer) => {
    const now = performance.now();
    if (msg.length < 12 + 8) {
      bad[sid]!++;
      return;
    }
    const seq = (msg[2]! << 8) | msg[3]!;
    if (srtpK) {
      // leg A receives SRTP from the relay: verify + decrypt
      const ssrc = msg.readUInt32BE(8);
      let roc = rxRoc[sid]!;
      if (lastSeq[sid]! >= 0 && seq < 16384 && lastSeq[sid]! > 49152) roc++;
      if (srtpUnprotect(srtpK, msg, ssrc, seq, roc) < 0) {
        bad[sid]!++;
        return;
      }
      rxRoc[sid] = roc;
      msg = msg.subarray(0, msg.length - 10);
    }
    const snd = msg.readDoubleLE(12);
    const ls = lastSeq[sid]!;
    if (ls >= 0) {
      const ds = (seq - ls) & 0xffff;
      if (ds === 0 || ds > 32768) {
        ooo[sid]!++;
        cnt[sid]!++;
        return;
      }
      if (measuring) {
        hT.add(now - lastArr[sid]! - (snd - lastSnd[sid]!));
        hI.add(now - lastArr[sid]! - 20 * ds);
        hL.add(now - snd);
      }
    }
    cnt[sid]!++;
    lastSeq[sid] = seq;
    lastArr[sid] = now;
    lastSnd[sid] = snd;
  };

  // --- set up calls (bounded concurrency) ---
  const run = await relay.begin(N, tag, opt.concurrency);
  const tSetup = performance.now();
  let next = 0;
  let failures = 0;
  let firstError = '';
  const setupOne = async (i: number) => {
    const a = await mkSock();
    const b = await mkSock();
    const c: Call = {
      i, a, b,
      ssrcA: crypto.randomInt(1, 2 ** 31) >>> 0, ssrcB: crypto.randomInt(1, 2 ** 31) >>> 0,
      seqA: crypto.randomInt(0, 65536), seqB: crypto.randomInt(0, 65536),
      tsA: crypto.randomInt(0, 2 ** 31), tsB: crypto.randomInt(0, 2 ** 31),
      rocA: 0, rocB: 0, txK: null,
    };
    calls[i] = c;
    const master = opt.srtp ? crypto.randomBytes(30) : null;
    if (master) c.txK = srtpKeys(master);
    const legs = await run.setup(i, a.address().port, b.address().port, master);
    const rxK = legs.rxKeyA ? srtpKeys(legs.rxKeyA) : null;
    await Promise.all([new Promise<void>((r) => a.connect(legs.toA, HOST, () => r())), new Promise<void>((r) => b.connect(legs.toB, HOST, () => r()))]);
    b.on('message', onPkt(i, null));
    a.on('message', onPkt(N + i, rxK));
  };
  await Promise.all(
    Array.from({ length: Math.min(opt.concurrency, N) }, async () => {
      while (next < N) {
        const i = next++;
        try {
          await setupOne(i);
        } catch (e) {
          failures++;
          firstError ||= (e as Error).message;
        }
      }
    }),
  );
  const closeAll = () => {
    for (const c of calls) {
      if (!c) continue;
      c.a.close();
      c.b.close();
    }
  };
  if (failures) {
    await run.finish().catch(() => undefined);
    closeAll();
    throw new Error(`${relay.name}: ${failures} of ${N} calls failed to set up; first: ${firstError}`);
  }
  const setupMs = performance.now() - tSetup;

  // --- send loop: `slots` phase groups per 20 ms tick, one timer ---
  const fill = Buffer.alloc(160, 0xff); // PCMU silence
  const ticks = Math.round((opt.duration * 1000) / 20);
  const slotMs = 20 / opt.slots;
  const groups: Call[][] = Array.from({ length: opt.slots }, () => []);
  for (const c of calls) groups[c.i % opt.slots]!.push(c);
  const hLate = new Hist();
  let sentA = 0;
  let sentB = 0;
  const sendPkt = (sock: dgram.Socket, c: Call, leg: 'A' | 'B', first: boolean) => {
    const srtp = leg === 'A' ? c.txK : null;
    const buf = Buffer.allocUnsafe(172 + (srtp ? 10 : 0));
    fill.copy(buf, 12);
    buf[0] = 0x80;
    buf[1] = first ? 0x80 : 0x00;
    const seq = leg === 'A' ? c.seqA : c.seqB;
    buf.writeUInt16BE(seq, 2);
    buf.writeUInt32BE(leg === 'A' ? c.tsA : c.tsB, 4);
    buf.writeUInt32BE(leg === 'A' ? c.ssrcA : c.ssrcB, 8);
    buf.writeDoubleLE(performance.now(), 12);
    let len = 172;
    if (srtp) len = srtpProtect(srtp, buf, 172, c.ssrcA, seq, c.rocA);
    sock.send(len === buf.length ? buf : buf.subarray(0, len));
    if (leg === 'A') {
      c.seqA = (seq + 1) & 0xffff;
      if (c.seqA === 0) c.rocA++;
      c.tsA = (c.tsA + 160) >>> 0;
      sentA++;
    } else {
      c.seqB = (seq + 1) & 0xffff;
      if (c.seqB === 0) c.rocB++;
      c.tsB = (c.tsB + 160) >>> 0;
      sentB++;
    }
  };
  const totalSlots = ticks * opt.slots;
  const warmSlots = Math.round((opt.warmup * 1000) / slotMs);
  let k = 0;
  const t0 = performance.now() + 20;
  const snapshot = () => ({
    t: performance.now(),
    sent: sentA + sentB,
    ks: ksoftirqdTicks(),
    relay: procCpu(relay.pid),
    gen: procCpu(process.pid),
    me: process.cpuUsage(),
    meMain: readTicks(`/proc/${process.pid}/task/${process.pid}/stat`),
    sys: sysCpu(),
    others: otherTicks(opt.exclude),
  });
  type Snap = ReturnType<typeof snapshot>;
  let cpu0: Snap | null = null;
  let cpu1: Snap | null = null;
  const udp0 = udpSnmp();
  await new Promise<void>((done) => {
    const loop = () => {
      const now = performance.now();
      while (k < totalSlots && t0 + k * slotMs <= now) {
        if (k === warmSlots) {
          measuring = true;
          cpu0 = snapshot();
        }
        const sched = t0 + k * slotMs;
        hLate.add(performance.now() - sched);
        const tick = Math.floor(k / opt.slots);
        for (const c of groups[k % opt.slots]!) {
          sendPkt(c.a, c, 'A', tick === 0);
          sendPkt(c.b, c, 'B', tick === 0);
        }
        k++;
      }
      if (k >= totalSlots) {
        cpu1 = snapshot();
        done();
        return;
      }
      setTimeout(loop, Math.max(0, t0 + k * slotMs - performance.now() - 0.2));
    };
    setTimeout(loop, 20);
  });
  await sleep(500); // drain in-flight packets
  measuring = false;
  const udp1 = udpSnmp();
  const { relayRxPkts } = await run.finish();
  closeAll();

  // --- results ---
  const c0 = cpu0 as unknown as Snap;
  const c1 = cpu1 as unknown as Snap;
  let rxAB = 0;
  let rxBA = 0;
  let oooN = 0;
  let badN = 0;
  for (let s = 0; s < N; s++) rxAB += cnt[s]!;
  for (let s = N; s < S; s++) rxBA += cnt[s]!;
  for (let s = 0; s < S; s++) {
    oooN += ooo[s]!;
    badN += bad[s]!;
  }
  const dt = (c1.t - c0.t) / 1000;
  const pct = (ticks: number) => Math.round((ticks / HZ / dt) * 1000) / 10;
  const rel = cpuDelta(c0.relay, c1.relay, dt);
  const gen = cpuDelta(c0.gen, c1.gen, dt);
  const meCpu = Math.round(((c1.me.user - c0.me.user + (c1.me.system - c0.me.system)) / 1e4 / dt) * 10) / 10;
  const mb = machineBusy(c0.sys, c1.sys, dt);
  const ks = pct(c1.ks - c0.ks);
  const sent = sentA + sentB;
  const recv = rxAB + rxBA;
  const windowPkts = c1.sent - c0.sent;
  return {
    relay: relay.name,
    mode: opt.srtp ? 'srtp' : 'plain',
    calls: N,
    streams: 2 * N,
    duration_s: opt.duration,
    slots: opt.slots,
    setup_ms: Math.round(setupMs),
    sent,
    recv,
    loss_pct: r3(((sent - recv) / sent) * 100),
    loss_ab_pct: r3(((sentA - rxAB) / sentA) * 100),
    loss_ba_pct: r3(((sentB - rxBA) / sentB) * 100),
    ooo_dup: oooN,
    bad: badN,
    pps_in: Math.round(sent / opt.duration),
    relay_rx_pkts: relayRxPkts,
    transit_jitter_ms: { p50: r3(hT.pct(50)), p99: r3(hT.pct(99)), max: r3(hT.max) },
    iat_dev_ms: { p50: r3(hI.pct(50)), p99: r3(hI.pct(99)), max: r3(hI.max) },
    latency_ms: { p50: r3(hL.pct(50)), p99: r3(hL.pct(99)) },
    send_late_ms: { p50: r3(hLate.pct(50)), p99: r3(hLate.pct(99)), max: r3(hLate.max) },
    relay_cpu_pct: rel.pct,
    relay_sys_pct: rel.sysPct,
    relay_max_thread_pct: rel.maxThreadPct,
    relay_max_thread: rel.maxThread,
    relay_threads: rel.threads,
    relay_top_threads: rel.top,
    relay_runq_wait_pct: rel.runqWaitPct,
    relay_us_per_pkt: windowPkts > 0 ? Math.round((rel.ticks / HZ / windowPkts) * 1e6 * 10) / 10 : Number.NaN,
    window_pkts: windowPkts,
    gen_cpu_pct: meCpu,
    gen_main_thread_pct: pct(c1.meMain - c0.meMain),
    gen_runq_wait_pct: gen.runqWaitPct,
    machine_busy_pct: mb.busyPct,
    ksoftirqd_pct: ks,
    steal_pct: mb.stealPct,
    other_cpu_pct: Math.round(mb.busyPct - meCpu - rel.pct - ks - mb.stealPct),
    other_procs_pct: otherPct(c0.others, c1.others, dt),
    udp_rcvbuf_errors: (udp1.RcvbufErrors ?? 0) - (udp0.RcvbufErrors ?? 0),
    udp_sndbuf_errors: (udp1.SndbufErrors ?? 0) - (udp0.SndbufErrors ?? 0),
    ncpu: os.cpus().length,
    loadavg_1m: Math.round(os.loadavg()[0]! * 100) / 100,
  };
}
