/**
 * CPU time of the process under test, read from /proc (utime + stime, every thread), so each
 * bench step can say what a call costs its far end in CPU — a number that moves far less than
 * the highest rate held when the machine is shared. Also the bench's own CPU (the hostd path's
 * application runs in this process).
 */
import { readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of pid in ms, or null when it cannot be read (exited, not Linux). */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name (2nd field) may contain spaces: count fields after its closing ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** This process's CPU in ms. */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
