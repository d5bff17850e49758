/**
 * The real `hostd daemon` serving the object store on port 80, over a fresh state directory
 * (with `--demo-volumes`: six sparse files under `<state-dir>/demo/` attached as loop devices,
 * formatted and mounted under `<state-dir>/mnt/`).
 *
 * The daemon leaves its volumes mounted and its demo loop devices attached when it stops (on
 * purpose: a restart finds them again), so the clean-up registered by `storeStateDir` does it,
 * pass or fail: every daemon started in the directory is killed and awaited, everything mounted
 * under the directory is unmounted, every loop device whose backing file is under it is detached,
 * and the directory is removed. The directory is named `hostd-mnt-<pid>-store-*`: what a killed
 * test process left behind (its daemon still running, its mounts and loop devices) is killed and
 * swept by the next test that asks for a state directory (killStaleDaemons, loop.ts sweepStale).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { startDaemon, type Daemon, type LogLine } from './daemon.js';
import { sh, sweepStale } from './loop.js';
import { pidAlive } from '../../runtime/pid.js';

/** The object store's fixed port in the daemon. */
export const STORE_PORT = 80;
export const STORE_URL = `http://127.0.0.1:${STORE_PORT}`;

/**
 * Size of each demo volume. `--demo-volume-mib` accepts 64 and up, but mkfs.xfs (6.1) refuses a
 * file system under 300 MB, so anything smaller crash-loops the object store actor.
 */
export const DEMO_MIB = 320;

export interface StoreDir {
  dir: string;
  /** Daemons started over this directory (killed and awaited by the clean-up). */
  daemons: Daemon[];
}

export interface RunningStore {
  d: Daemon;
  /** The 'object store listening' log line: port, present and missing volume ids. */
  listening: LogLine;
}

/** Mount points under `dir` (deepest, i.e. last mounted, first). */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((mp): mp is string => !!mp)
    .map((mp) => mp.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((mp) => mp.startsWith(dir + '/'))
    .reverse();
}

/** Loop devices whose backing file is under `dir`, as [device, file]. */
export function loopsUnder(dir: string): Array<[string, string]> {
  const out = execFileSync('losetup', ['-J', '-l', '-O', 'NAME,BACK-FILE'], { encoding: 'utf8' });
  if (!out.trim()) return [];
  const list = (JSON.parse(out) as { loopdevices?: Array<{ name: string; 'back-file': string | null }> }).loopdevices ?? [];
  return list
    .map((l) => [l.name, (l['back-file'] ?? '').replace(/ \(deleted\)$/, '')] as [string, string])
    .filter(([, f]) => f.startsWith(dir + '/'));
}

/** Unmount everything under `dir` (lazily when a plain unmount is refused). */
export async function unmountUnder(dir: string): Promise<void> {
  for (const mp of mountsUnder(dir)) await sh('umount', [mp]).catch(() => sh('umount', ['-l', mp]));
}

/** Detach every loop device backed by a file under `dir`. */
export async function detachUnder(dir: string): Promise<void> {
  for (const [dev] of loopsUnder(dir)) await sh('losetup', ['-d', dev]);
}

const STATE_DIR_RE = new RegExp(`^${tmpdir()}/hostd-mnt-(\\d+)-store-`);

/** Exited (or a zombie nobody reaps yet). */
function gone(pid: number): boolean {
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/, ''));
  } catch {
    return true;
  }
}

/**
 * Daemons left running by a test process that was killed (no teardown ran): those whose
 * --state-dir is a `hostd-mnt-<dead pid>-store-*` directory. They hold port 80 and the mounts
 * that sweepStale is about to remove, so they are killed first.
 */
async function killStaleDaemons(): Promise<void> {
  const stale: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (gone(Number(entry))) continue;
    const i = argv.indexOf('--state-dir');
    const m = i >= 0 && argv.includes('daemon') ? STATE_DIR_RE.exec(argv[i + 1] ?? '') : null;
    if (m && !pidAlive(Number(m[1]))) stale.push(Number(entry));
  }
  for (const pid of stale) process.kill(pid, 'SIGKILL');
  const end = Date.now() + 10_000;
  while (stale.some((p) => !gone(p)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

/** A fresh state directory, cleaned up completely after the test, pass or fail. */
export async function storeStateDir(t: ExecutionContext): Promise<StoreDir> {
  await killStaleDaemons();
  await sweepStale();
  const dir = mkdtempSync(join(tmpdir(), `hostd-mnt-${process.pid}-store-`));
  const s: StoreDir = { dir, daemons: [] };
  t.teardown(async () => {
    const problems: string[] = [];
    const attempt = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        problems.push(`${what}: ${(err as Error).message}`);
      }
    };
    for (const d of s.daemons) {
      await attempt('stopping a daemon', async () => {
        if (d.proc.exitCode === null && d.proc.signalCode === null) d.proc.kill('SIGKILL');
        await Promise.race([d.exited, new Promise((_, reject) => setTimeout(() => reject(new Error(`pid ${d.proc.pid} did not exit`)), 15_000))]);
      });
    }
    await attempt('unmounting', () => unmountUnder(dir));
    await attempt('detaching loop devices', () => detachUnder(dir));
    await attempt('removing the state directory', async () => rmSync(dir, { recursive: true, force: true }));
    const left = [...mountsUnder(dir), ...loopsUnder(dir).map(([dev, f]) => `${dev} (${f})`)];
    if (left.length) problems.push(`left over: ${left.join(', ')}`);
    if (problems.length) throw new Error(`clean-up of ${dir} failed: ${problems.join('; ')}`);
  });
  return s;
}

/** Wait until nothing listens on port 80 (a daemon of this test that just exited may still be closing). */
async function portFree(ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      const srv = createServer();
      srv.once('error', resolve);
      srv.listen(STORE_PORT, '0.0.0.0', () => srv.close(() => resolve(null)));
    });
    if (!err) return;
    if (err.code !== 'EADDRINUSE' || Date.now() > end) {
      const who = await sh('ss', ['-ltnp', `sport = :${STORE_PORT}`]).catch(() => '');
      throw new Error(`port ${STORE_PORT} is not free (${err.code}): another object store is running?\n${who}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Start `hostd daemon` over the state directory and wait until the object store listens and the daemon is ready. */
export async function startStore(t: ExecutionContext, s: StoreDir, args: string[] = []): Promise<RunningStore> {
  await portFree();
  const d = startDaemon(t, ['--state-dir', s.dir, '--metrics-port', '0', ...args]);
  s.daemons.push(d);
  const listening = await d.waitFor((l) => l.msg === 'object store listening', 60_000);
  // The other services (the media bridge) start after the store: wait for the whole daemon.
  await d.waitFor((l) => l.msg === 'daemon ready', 60_000);
  return { d, listening };
}

/** The daemon's flags for demo volumes of DEMO_MIB MiB. */
export const DEMO_ARGS = ['--demo-volumes', '--demo-volume-mib', String(DEMO_MIB)];

/** Stop the daemon with `signal` and wait for it to exit. */
export async function stop(d: Daemon, signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  d.proc.kill(signal);
  const exit = await d.exited;
  if (signal === 'SIGTERM' && exit.code !== 0) {
    // Say why in the test's output: the daemon's own last words.
    console.error(`daemon exit ${JSON.stringify(exit)}; stderr:\n${d.stderr().slice(-4000)}\nlast log lines:\n${d.lines.slice(-15).map((l) => JSON.stringify(l)).join('\n')}`);
  }
  return exit;
}

export interface SliceFile {
  path: string;
  /** '<24 hex>' of the object id */
  stem: string;
  index: number;
  temp: boolean;
  size: number;
}

/** Every slice file (committed or temporary) under `<state-dir>/mnt/vol-*` /objstore/slices. */
export function sliceFiles(dir: string): SliceFile[] {
  const out: SliceFile[] = [];
  const mnt = join(dir, 'mnt');
  let vols: string[] = [];
  try {
    vols = readdirSync(mnt).filter((v) => v.startsWith('vol-'));
  } catch {
    return out;
  }
  for (const v of vols) {
    const root = join(mnt, v, 'objstore', 'slices');
    let subs: string[] = [];
    try {
      subs = readdirSync(root);
    } catch {
      continue;
    }
    for (const sub of subs) {
      let names: string[] = [];
      try {
        names = readdirSync(join(root, sub));
      } catch {
        continue;
      }
      for (const name of names) {
        const m = /^([0-9a-f]{24})\.(\d+)(\.tmp)?$/.exec(name);
        const path = join(root, sub, name);
        let size = 0;
        try {
          size = statSync(path).size;
        } catch {
          continue; // removed meanwhile
        }
        out.push({ path, stem: m?.[1] ?? name, index: m ? Number(m[2]) : -1, temp: !!m?.[3] || name.endsWith('.tmp'), size });
      }
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

export interface VolumeView {
  id: number;
  device: string | null;
  lastDevice: string;
  mountPoint: string | null;
  isMissing: boolean;
  label: string;
}

export async function volumes(): Promise<VolumeView[]> {
  const res = await fetch(`${STORE_URL}/$/volumes`);
  if (res.status !== 200) throw new Error(`GET /$/volumes: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { volumes: VolumeView[] }).volumes;
}

export async function putObject(path: string, body: Uint8Array): Promise<{ status: number; id: string | null; md5: string | null; text: string }> {
  const res = await fetch(STORE_URL + path, { method: 'PUT', body, headers: { 'Content-Type': 'application/x-test' } });
  return { status: res.status, id: res.headers.get('x-object-id'), md5: res.headers.get('content-md5'), text: await res.text() };
}

export async function getObject(path: string): Promise<{ status: number; body: Buffer; headers: Headers }> {
  const res = await fetch(STORE_URL + path);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}
