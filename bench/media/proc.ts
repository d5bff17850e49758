/**
 * CPU accounting from /proc, as the rtpengine peer recipe (rtp-load.mjs) does it: a relay's
 * utime+stime over all its threads, its busiest thread, the time its threads waited on a run
 * queue (schedstat), the machine's busy/steal ticks, ksoftirqd, and UDP buffer errors.
 * Besides that recipe's "other" figure (machine busy minus what we account for), `otherTicks`
 * sums every other process's CPU directly: on a shared machine the two should agree.
 */
import fs from 'node:fs';
import os from 'node:os';

export const HZ = 100; // USER_HZ on Linux

/** utime+stime ticks of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat (NaN when gone). */
export function readTicks(path: string): number {
  try {
    const s = fs.readFileSync(path, 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return Number.NaN;
  }
}

function schedWait(path: string): number {
  try {
    return Number(fs.readFileSync(path, 'latin1').split(' ')[1]); // ns runnable but not running
  } catch {
    return 0;
  }
}

/** [utime, stime] ticks of a process (all threads). */
export function readUserSys(path: string): [number, number] {
  try {
    const s = fs.readFileSync(path, 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return [Number(f[11]), Number(f[12])];
  } catch {
    return [Number.NaN, Number.NaN];
  }
}

export interface ProcCpu {
  total: number;
  /** Kernel-mode ticks (stime) of all threads. */
  sys: number;
  threads: Map<string, number>;
  names: Map<string, string>;
  waitNs: number;
}

/** A process's CPU ticks in total and per thread, and its threads' run-queue wait. */
export function procCpu(pid: number): ProcCpu {
  const threads = new Map<string, number>();
  const names = new Map<string, string>();
  let waitNs = 0;
  try {
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
      threads.set(t, readTicks(`/proc/${pid}/task/${t}/stat`));
      waitNs += schedWait(`/proc/${pid}/task/${t}/schedstat`);
      try {
        names.set(t, fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'latin1').trim());
      } catch {
        /* gone */
      }
    }
  } catch {
    /* gone */
  }
  const [u, k] = readUserSys(`/proc/${pid}/stat`);
  return { total: u + k, sys: k, threads, names, waitNs };
}

export interface CpuDelta {
  /** % of one core, all threads. */
  pct: number;
  /** Of `pct`, the part in the kernel (stime). */
  sysPct: number;
  /** % of one core of the busiest thread, and its name. */
  maxThreadPct: number;
  maxThread: string;
  /** The three busiest threads: `name:tid` and % of one core. */
  top: Array<{ thread: string; pct: number }>;
  /** % of one core its threads spent runnable but waiting for a CPU (summed). */
  runqWaitPct: number;
  threads: number;
  ticks: number;
}

export function cpuDelta(a: ProcCpu, b: ProcCpu, seconds: number): CpuDelta {
  const pct = (ticks: number) => Math.round((ticks / HZ / seconds) * 1000) / 10;
  const per = [...b.threads].map(([t, v]) => ({ thread: `${b.names.get(t) ?? '?'}:${t}`, ticks: v - (a.threads.get(t) ?? 0) })).sort((x, y) => y.ticks - x.ticks);
  return {
    pct: pct(b.total - a.total),
    sysPct: pct(b.sys - a.sys),
    maxThreadPct: pct(per[0]?.ticks ?? 0),
    maxThread: per[0]?.thread ?? '',
    top: per.slice(0, 3).map((x) => ({ thread: x.thread, pct: pct(x.ticks) })),
    runqWaitPct: Math.round(((b.waitNs - a.waitNs) / 1e7 / seconds) * 10) / 10,
    threads: b.threads.size,
    ticks: b.total - a.total,
  };
}

export interface SysCpu {
  idle: number;
  total: number;
  steal: number;
}

export function sysCpu(): SysCpu {
  const f = fs.readFileSync('/proc/stat', 'latin1').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: f[3]! + f[4]!, total: f.slice(0, 8).reduce((x, y) => x + y, 0), steal: f[7]! };
}

/** Machine busy over an interval, in % of ONE core (0..100*ncpu), and steal in % of one core. */
export function machineBusy(a: SysCpu, b: SysCpu, seconds: number): { busyPct: number; stealPct: number } {
  const frac = 1 - (b.idle - a.idle) / Math.max(1, b.total - a.total);
  return { busyPct: Math.round(frac * os.cpus().length * 1000) / 10, stealPct: Math.round(((b.steal - a.steal) / HZ / seconds) * 1000) / 10 };
}

export function udpSnmp(): Record<string, number> {
  const l = fs.readFileSync('/proc/net/snmp', 'latin1').split('\n').filter((x) => x.startsWith('Udp:'));
  const k = l[0]!.split(/\s+/);
  const v = l[1]!.split(/\s+/).map(Number);
  const o: Record<string, number> = {};
  k.forEach((n, i) => {
    if (i) o[n] = v[i]!;
  });
  return o;
}

const allPids = (): string[] => fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));

let ksoft: string[] | null = null;
export function ksoftirqdTicks(): number {
  ksoft ??= allPids().filter((d) => {
    try {
      return fs.readFileSync(`/proc/${d}/comm`, 'latin1').startsWith('ksoftirqd');
    } catch {
      return false;
    }
  });
  return ksoft.reduce((s, d) => s + (readTicks(`/proc/${d}/stat`) || 0), 0);
}

/**
 * utime+stime+cutime+cstime of every process except `exclude` (and ksoftirqd), by pid: the
 * CPU of everything else on the machine. Children that exit inside the window show in their
 * parent's cutime once reaped.
 */
export function otherTicks(exclude: ReadonlySet<number>): Map<number, number> {
  const m = new Map<number, number>();
  for (const d of allPids()) {
    const pid = Number(d);
    if (exclude.has(pid) || ksoft?.includes(d)) continue;
    try {
      const s = fs.readFileSync(`/proc/${d}/stat`, 'latin1');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      m.set(pid, Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]));
    } catch {
      /* gone */
    }
  }
  return m;
}

/** % of one core used by other processes between two `otherTicks` snapshots (new processes count from 0). */
export function otherPct(a: Map<number, number>, b: Map<number, number>, seconds: number): number {
  let t = 0;
  for (const [pid, v] of b) t += Math.max(0, v - (a.get(pid) ?? 0));
  return Math.round((t / HZ / seconds) * 10) / 10;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Wait (up to `maxWaitS`) until the rest of the machine is quiet: CPU used by anything but
 * `exclude` below `maxOtherPct / 2` % of one core over 1 s, twice in a row (rtp-load.mjs's
 * rule). Returns the last reading and how long it waited.
 */
export async function waitQuiet(exclude: ReadonlySet<number>, maxOtherPct: number, maxWaitS: number): Promise<{ otherPct: number; waitedS: number }> {
  const t0 = Date.now();
  let good = 0;
  let last = 0;
  while (Date.now() - t0 < maxWaitS * 1000) {
    const a = otherTicks(exclude);
    const e0 = ticksOf(exclude);
    const s0 = sysCpu();
    await sleep(1000);
    const b = otherTicks(exclude);
    const e1 = ticksOf(exclude);
    const s1 = sysCpu();
    // the larger of two estimates: per-process sums miss short-lived processes, /proc/stat does not
    last = Math.max(otherPct(a, b, 1), machineBusy(s0, s1, 1).busyPct - (e1 - e0) / HZ * 100);
    good = last < maxOtherPct / 2 ? good + 1 : 0;
    if (good >= 2) break;
  }
  return { otherPct: Math.round(last), waitedS: Math.round((Date.now() - t0) / 1000) };
}

/** utime+stime ticks of a set of processes (all threads each). */
export function ticksOf(pids: Iterable<number>): number {
  let t = 0;
  for (const p of pids) t += readTicks(`/proc/${p}/stat`) || 0;
  return t;
}
