/**
 * sipp as the load generator and the far end of the gateway bench: a `uas` that answers every
 * call, and a `uac` run at a fixed rate for a fixed number of calls whose outcome is read from
 * sipp's own statistics (successful and failed calls) and per-call INVITE→200 times (`-trace_rtt`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface UacRun {
  /** calls per second asked of sipp */
  rate: number;
  calls: number;
  successful: number;
  failed: number;
  /** wall time from start to the last call's end, seconds */
  seconds: number;
  /** INVITE sent → 200 received, ms, one per successful call */
  setupMs: number[];
  exitCode: number | null;
  /** the first lines of sipp's error log when calls failed */
  errors: string;
}

/** The cumulative count of a row of sipp's final statistics screen (-1 when absent). */
function statRow(out: string, name: string): number {
  const last = [...out.matchAll(new RegExp(`${name}\\s*\\|\\s*(\\d+)\\s*\\|\\s*(\\d+)`, 'g'))].at(-1);
  return last ? Number(last[2]) : -1;
}

/** Run the built-in `uac` against `target` (host:port) at `rate` calls/s for `calls` calls, over UDP. */
export async function runUac(target: string, localPort: number, rate: number, calls: number, limitMs: number): Promise<UacRun> {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-bench-uac-'));
  try {
    const args = [
      '-sn', 'uac', target, '-i', '127.0.0.1', '-p', String(localPort), '-t', 'u1', '-nostdin',
      '-r', String(rate), '-rp', '1000', '-m', String(calls), '-l', String(Math.max(100, rate * 4)),
      '-d', '0', '-max_socket', '4096', '-trace_rtt', '-rtt_freq', '1', '-timeout', `${Math.ceil(limitMs / 1000)}s`, '-timeout_error',
      '-recv_timeout', '5000', '-send_timeout', '5000', '-trace_err',
      // A provisional that arrives after the 200 (a proxy's worker processes may reorder them)
      // is legal SIP: ignored, not counted as a failed call.
      '-default_behaviors', 'all,-abortunexp',
    ];
    const started = process.hrtime.bigint();
    const child = spawn('sipp', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exitCode = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const setupMs: number[] = [];
    let errors = '';
    for (const f of readdirSync(dir)) {
      if (f.endsWith('_errors.log')) errors += readFileSync(join(dir, f), 'utf8').split('\n').slice(0, 12).join('\n');
      if (!f.endsWith('_rtt.csv')) continue;
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n').slice(1)) {
        const ms = Number(line.split(';')[1]);
        if (Number.isFinite(ms) && line.trim()) setupMs.push(ms);
      }
    }
    return { rate, calls, successful: statRow(out, 'Successful call'), failed: statRow(out, 'Failed call'), seconds, setupMs, exitCode, errors };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A sipp `uas` answering every call on 127.0.0.1:port until stopped. */
export function startUas(port: number): { stop(): Promise<void>; child: ChildProcess } {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-bench-uas-'));
  const child = spawn('sipp', ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(port), '-t', 'u1', '-nostdin', '-max_socket', '4096'], { cwd: dir, stdio: ['ignore', 'ignore', 'ignore'] });
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const done = new Promise((r) => child.once('close', r));
        child.kill('SIGKILL');
        await done;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
