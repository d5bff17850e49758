/**
 * CPU time of the process under test, read from /proc (utime + stime, every thread), so each
 * bench step can say what a call costs its far end in CPU — a number that moves far less than
 * the highest rate held when the machine is shared. Also the bench's own CPU (the hostd path's
 * application runs in this process).
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function statCpuMs(path: string): number {
  const stat = readFileSync(path, 'latin1');
  // The command name (2nd field) may contain spaces: count fields after its closing ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

/** utime + stime of pid in ms, or null when it cannot be read (exited, not Linux). */
export function processCpuMs(pid: number): number | null {
  try {
    return statCpuMs(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
}

/** utime + stime of each thread of pid in ms, by thread id (empty when it cannot be read). */
export function threadCpuMs(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        out.set(Number(tid), statCpuMs(`/proc/${pid}/task/${tid}/stat`));
      } catch {
        /* the thread ended meanwhile */
      }
    }
  } catch {
    /* the process ended */
  }
  return out;
}

/** The thread that used the most CPU between two readings, and how much (ms). */
export function busiestThread(before: Map<number, number>, after: Map<number, number>): number | null {
  let best: number | null = null;
  for (const [tid, ms] of after) {
    const d = ms - (before.get(tid) ?? 0);
    if (best === null || d > best) best = d;
  }
  return best;
}

/** This process's CPU in ms. */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Busy and total jiffies of the whole machine (/proc/stat's first line). */
function machineJiffies(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

/**
 * Wait until the machine is quiet: its busy share over a 500 ms window under `share` (or
 * `maxMs` passed). After an overloaded step a far end keeps working for seconds (retransmissions,
 * transaction timers, its backlog); the next path's step must not start inside that.
 */
export async function waitQuiet(share = 0.15, maxMs = 20_000): Promise<void> {
  const until = Date.now() + maxMs;
  for (;;) {
    const a = machineJiffies();
    await new Promise((r) => setTimeout(r, 500));
    const b = machineJiffies();
    const busy = b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : 0;
    if (busy < share || Date.now() >= until) return;
  }
}
