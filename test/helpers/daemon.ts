/** Start the real `hostd` binary as a child process and read its JSON log lines. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';

export const BIN = fileURLToPath(new URL('../../workers/main.js', import.meta.url));

export interface LogLine {
  level: string;
  msg: string;
  ns?: string;
  [k: string]: unknown;
}

export interface Daemon {
  proc: ChildProcess;
  lines: LogLine[];
  stderr: () => string;
  waitFor(pred: (l: LogLine) => boolean, ms?: number): Promise<LogLine>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `wrap`: a command the daemon runs under, e.g. `['ip', 'netns', 'exec', 'h1']` (it must exec
 * the daemon, so that the child's pid and exit are the daemon's).
 */
export function startDaemon(t: ExecutionContext, args: string[], env: Record<string, string> = {}, wrap: string[] = []): Daemon {
  const command = [...wrap, process.execPath, '--enable-source-maps', BIN, 'daemon', ...args];
  const proc = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  let err = '';
  let buf = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        lines.push({ level: 'raw', msg: line });
      }
      for (const w of waiters) w();
    }
  });
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => {
      resolve({ code, signal });
      for (const w of waiters) w();
    }),
  );
  t.teardown(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    waitFor(pred, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(pred);
          if (hit) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(hit);
          } else if (proc.exitCode !== null || proc.signalCode !== null) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`daemon exited (${proc.exitCode ?? proc.signalCode}) before the expected log line; stderr: ${err}; last lines: ${JSON.stringify(lines.slice(-5))}`));
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching log line within ${ms} ms; last lines: ${JSON.stringify(lines.slice(-5))}; stderr: ${err}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
}

/** Run `hostd <args>` to completion. */
export function runCli(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
