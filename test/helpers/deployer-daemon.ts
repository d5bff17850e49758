/**
 * The real daemon (`hostd daemon --services deployer`) as a child process, for the deployer's
 * kill -9 and SIGTERM tests: started on a state directory and a free port with a seeded admin
 * token (and any extra environment, e.g. short monitor intervals), killed at teardown.
 */
import type { ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../workers/main.js', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** `t` null (a bench): the caller kills the process. */
export async function daemon(t: ExecutionContext | null, stateDir: string, port: number, token: string, env: Record<string, string> = {}, metricsPort = 0): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [MAIN, 'daemon', '--services', 'deployer', '--state-dir', stateDir, '--metrics-port', String(metricsPort), '--deployer-port', String(port), '--log-level', 'warn'], {
    env: { ...process.env, DEPLOYER_ADMIN_TOKEN: token, ...env },
    stdio: 'ignore',
    // A process group of its own: the teardown kills the daemon and the git processes it started
    // (a git still writing into the state directory made the directory's removal fail, ENOTEMPTY).
    detached: true,
  });
  t?.teardown(async () => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // the group is gone already
    }
    await exited(proc);
  });
  // up to 30 s: a loaded 2-core machine (other tests, dockerd) can take that long to start a daemon
  for (let i = 0; i < 600; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/api/session/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.ok, () => false);
    if (up) return proc;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the daemon did not start');
}

export const exited = (proc: ChildProcess): Promise<void> => (proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : new Promise((r) => proc.once('exit', () => r())));
