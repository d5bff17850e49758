/** Child processes and CPU accounting for the benchmark. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command; rejects on a non-zero exit with its stderr tail. With `echo`, stderr is
 * copied to ours as it comes (progress of long commands).
 */
export function run(cmd: string, args: string[], opts: { echo?: boolean; allowFail?: boolean; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (opts.echo) process.stderr.write(d);
    });
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : null;
    child.on('error', reject);
    child.on('close', (code, signal) => {
      live.delete(child);
      if (timer) clearTimeout(timer);
      const res = { code: code ?? (signal ? 128 : 1), stdout, stderr };
      if (res.code !== 0 && !opts.allowFail) {
        reject(new Error(`${cmd} ${args.join(' ')} exited ${signal ?? code}: ${stderr.trim().split('\n').slice(-8).join('\n')}`));
      } else resolve(res);
    });
  });
}

/** Children still running, so a signal can stop them before the clean-up runs. */
const live = new Set<ChildProcess>();

export function killChildren(signal: NodeJS.Signals = 'SIGTERM'): void {
  for (const c of live) c.kill(signal);
}

const TICK = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far, or 0 if it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields after the name start at field 3 (state): utime is field 14, stime field 15
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return 0;
  }
}

/** A meter of CPU used by this process and by a set of other processes, over a span of wall time. */
export class CpuMeter {
  private t0 = 0;
  private self0 = process.cpuUsage();
  private others0 = 0;

  constructor(private readonly pids: () => number[] = () => []) {}

  start(): void {
    this.t0 = performance.now();
    this.self0 = process.cpuUsage();
    this.others0 = this.pids().reduce((s, p) => s + processCpuSeconds(p), 0);
  }

  /** CPU use as cores busy on average (1.0 = one core all the time) since start(). */
  stop(): { client: number; server: number | null; wallS: number } {
    const wallS = (performance.now() - this.t0) / 1000;
    const d = process.cpuUsage(this.self0);
    const pids = this.pids();
    const server = pids.length ? (pids.reduce((s, p) => s + processCpuSeconds(p), 0) - this.others0) / wallS : null;
    return { client: (d.user + d.system) / 1e6 / wallS, server, wallS };
  }
}
