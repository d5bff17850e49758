/**
 * Disks for tests: loop devices over sparse files (design.md, "Real parts, not mocks"). Needs root.
 *
 * Every backing file lives in a directory named `hostd-loop-<pid>-*` under the temp dir (mount
 * roots in `hostd-mnt-<pid>-*`, faulty disks in `hostd-faulty-<pid>-*`), so that what a test
 * process left behind when it was killed (no teardown ran) is found and cleaned by the next test
 * process that asks for loop devices: its mounts unmounted, its loop devices detached, its files
 * removed.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scope } from './scope.js';
import { pidAlive } from '../../runtime/pid.js';

export const LOOP_DIR_PREFIX = 'hostd-loop-';

export function sh(cmd: string, args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/** A sparse file of `sizeMiB` MiB (no blocks allocated). XFS needs at least 300 MiB. */
export async function createSparseFile(path: string, sizeMiB: number): Promise<void> {
  const fh = await open(path, 'w');
  try {
    await fh.truncate(sizeMiB * 1024 * 1024);
  } finally {
    await fh.close();
  }
}

/** `losetup -f --show file`, retried when another process took the same free device first. */
export async function attachLoop(file: string, opts: { directIo?: 'on' | 'off'; device?: string; partscan?: boolean } = {}): Promise<string> {
  const args = [...(opts.directIo ? [`--direct-io=${opts.directIo}`] : []), ...(opts.partscan ? ['-P'] : []), ...(opts.device ? [opts.device] : ['-f']), '--show', file];
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sh('losetup', args)).trim();
    } catch (err) {
      if (attempt >= 10 || !/busy/i.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/** Mount points (in mount order) of the file systems on `device` and on its partitions. */
export function mountsOf(device: string): string[] {
  const name = device.replace(/^\/dev\//, '');
  const majMins = new Set<string>();
  const add = (sys: string) => {
    try {
      majMins.add(readFileSync(`${sys}/dev`, 'utf8').trim());
    } catch {
      // gone
    }
  };
  add(`/sys/class/block/${name}`);
  try {
    for (const d of readdirSync(`/sys/class/block/${name}`)) if (d.startsWith(name)) add(`/sys/class/block/${name}/${d}`);
  } catch {
    // not a block device (any more)
  }
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f[2] !== undefined && majMins.has(f[2]))
    .map((f) => f[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
}

/** Unmount everything mounted from `device` (lazily if a plain unmount is refused). */
export async function unmountAll(device: string): Promise<void> {
  for (const mp of mountsOf(device).reverse()) {
    await sh('umount', [mp]).catch(() => sh('umount', ['-l', mp]).catch(() => undefined));
  }
}

/** Unmount what is on `device`, then detach it. */
export async function detachLoop(device: string): Promise<void> {
  await unmountAll(device);
  await sh('losetup', ['-d', device]);
}

/** Loop devices attached to `file` now. */
export async function loopsOf(file: string): Promise<string[]> {
  const out = await sh('losetup', ['-n', '-O', 'NAME', '-j', file]).catch(() => '');
  return out.split('\n').map((l) => l.trim()).filter(Boolean);
}

/** Backing file of each loop device made by withLoopDevices (kept current by reattach). */
const backing = new Map<string, string>();

export function backingFileOf(device: string): string {
  const f = backing.get(device);
  if (!f) throw new Error(`${device} is not a loop device of this test process`);
  return f;
}

/**
 * Detach `device` and attach its backing file to another loop device, whose name differs: a
 * disk that was pulled and came back under another kernel name. Returns the new device.
 */
export async function reattachElsewhere(device: string): Promise<string> {
  const file = backingFileOf(device);
  for (let attempt = 1; ; attempt++) {
    // A free device taken while `device` is still attached cannot be `device`.
    const other = (await sh('losetup', ['-f'])).trim();
    await detachLoop(device).catch(() => undefined);
    try {
      const now = await attachLoop(file, { device: other });
      backing.delete(device);
      backing.set(now, file);
      return now;
    } catch (err) {
      if (attempt >= 10) throw err;
      await attachLoop(file, { device }).catch(() => undefined); // lost a race for `other`: back where it was, try again
    }
  }
}

let swept = false;

/** Prefixes of the temp directories of test disks: `<prefix><pid>-*`. */
export const STALE_PREFIXES = [LOOP_DIR_PREFIX, 'hostd-faulty-', 'hostd-mnt-'];

/**
 * Clean what killed test processes left: loop devices whose backing file is under a
 * `<prefix><dead pid>-*` temp directory (their mounts first), FUSE mounts there, and the directories.
 */
export async function sweepStale(): Promise<void> {
  if (swept) return;
  swept = true;
  const re = new RegExp(`^${tmpdir()}/(?:${STALE_PREFIXES.join('|')})(\\d+)-`);
  const isStale = (path: string) => {
    const m = re.exec(path);
    return !!m && !pidAlive(Number(m[1]));
  };
  const list = await sh('losetup', ['-l', '-n', '--raw', '-O', 'NAME,BACK-FILE']).catch(() => '');
  for (const line of list.split('\n')) {
    const [dev, file] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
    if (dev && isStale(file)) await detachLoop(dev).catch(() => undefined);
  }
  const fuse = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '');
  for (const mp of fuse.filter(isStale)) await sh('umount', ['-l', mp]).catch(() => undefined);
  for (const d of readdirSync(tmpdir())) {
    if (isStale(join(tmpdir(), d) + '/')) rmSync(join(tmpdir(), d), { recursive: true, force: true });
  }
}

/** A directory for a test's files; removed after the test, pass or fail. */
export function loopDir(t: Scope): string {
  const dir = mkdtempSync(join(tmpdir(), `${LOOP_DIR_PREFIX}${process.pid}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * `n` loop devices over sparse files of `sizeMiB` MiB each. After the test, pass or fail: what is
 * mounted from them is unmounted, they are detached (also under the name a reattach gave them)
 * and their files removed.
 */
export async function withLoopDevices(t: Scope, n: number, sizeMiB: number): Promise<string[]> {
  await sweepStale();
  const dir = loopDir(t);
  const files: string[] = [];
  t.teardown(async () => {
    for (const file of files) {
      for (const dev of await loopsOf(file)) {
        await detachLoop(dev).catch((err: Error) => t.log(`clean-up: ${err.message}`));
        backing.delete(dev);
      }
    }
  });
  const devices: string[] = [];
  for (let i = 0; i < n; i++) {
    const file = join(dir, `disk${i}.img`);
    await createSparseFile(file, sizeMiB);
    files.push(file);
    const dev = await attachLoop(file);
    backing.set(dev, file);
    devices.push(dev);
  }
  return devices;
}

/**
 * A mount root for volumes; after the test, whatever is still mounted under it is unmounted and
 * it is removed. (Registered before the loop devices, it is cleaned after them.)
 */
export function mountRoot(t: Scope): string {
  const dir = mkdtempSync(join(tmpdir(), `hostd-mnt-${process.pid}-`));
  t.teardown(async () => {
    const under = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4])
      .filter((mp): mp is string => !!mp && mp.startsWith(dir + '/'))
      .reverse();
    for (const mp of under) await sh('umount', [mp]).catch(() => sh('umount', ['-l', mp]).catch(() => undefined));
    await rm(dir, { recursive: true, force: true });
  });
  mkdirSync(dir, { recursive: true });
  return dir;
}
