/**
 * A disk that fails on command (design.md, "Failing disks"): the faultyfs fixture
 * (test/fixtures/faultyfs/server.ts) in a child process, and a loop device over its one file.
 * The daemon formats and mounts the loop device like any disk; then failAll / failRange / slow
 * make the kernel return EIO (or answer late) to whatever reads or writes the affected bytes, and
 * kill() pulls the disk.
 *
 * After the test, pass or fail: what is mounted from the loop device is unmounted, the device is
 * detached, the fixture is stopped (its FUSE mount removed) and its files deleted. Needs root.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scope } from './scope.js';
import { attachLoop, detachLoop, sh, sweepStale } from './loop.js';

const SERVER = fileURLToPath(new URL('../fixtures/faultyfs/server.js', import.meta.url));

export interface FaultyDisk {
  /** The loop device, e.g. /dev/loop5. */
  device: string;
  /** The FUSE mount; the device's backing file is `<mountDir>/disk`. */
  mountDir: string;
  /** Every read and write fails with EIO (a dead disk). */
  failAll(): Promise<void>;
  /** Reads and writes touching device bytes [start, end) fail with EIO (bad sectors). */
  failRange(start: number, end: number): Promise<void>;
  /** Every read and write answers after `ms` (a dying disk); 0 for normal speed. */
  slow(ms: number): Promise<void>;
  /** A good disk again. */
  heal(): Promise<void>;
  /** SIGKILL the fixture: a pulled disk. */
  kill(): Promise<void>;
}

export async function startFaultyDisk(t: Scope, sizeMiB: number): Promise<FaultyDisk> {
  await sweepStale();
  const dir = mkdtempSync(join(tmpdir(), `hostd-faulty-${process.pid}-`));
  const mountDir = join(dir, 'mnt');
  const proc: ChildProcess = spawn(process.execPath, [SERVER, mountDir, join(dir, 'backing.img'), String(sizeMiB * 1024 * 1024)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const alive = () => proc.exitCode === null && proc.signalCode === null;
  let device: string | null = null;

  // Registered first, so it runs last: after the loop device is gone.
  t.teardown(async () => {
    if (alive()) {
      proc.stdin!.end('heal\nexit\n');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (alive()) proc.kill('SIGKILL');
      await exited;
    }
    await sh('fusermount', ['-uz', mountDir]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  t.teardown(async () => {
    if (!device) return;
    if (alive()) proc.stdin!.write('heal\n'); // so that the unmount's writes go through
    await detachLoop(device).catch((err: Error) => t.log(`clean-up of ${device}: ${err.message}`));
  });

  let out = '';
  let err = '';
  const waiters: Array<{ line: string; resolve: () => void; reject: (e: Error) => void }> = [];
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    let i: number;
    while ((i = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      const w = waiters.shift();
      if (!w) continue;
      if (line === w.line) w.resolve();
      else w.reject(new Error(`faultyfs answered ${JSON.stringify(line)} to ${JSON.stringify(w.line)}`));
    }
  });
  void exited.then(() => {
    for (const w of waiters.splice(0)) w.reject(new Error(`faultyfs exited (${proc.exitCode ?? proc.signalCode}): ${err.trim()}`));
  });
  const expect = (line: string, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`faultyfs: no ${JSON.stringify(line)} within ${ms} ms; stderr: ${err.trim()}`)), ms);
      waiters.push({
        line,
        resolve: () => (clearTimeout(timer), resolve()),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  const send = async (cmd: string) => {
    if (!alive()) throw new Error('faultyfs is not running');
    const answered = expect(`ok ${cmd.split(' ')[0]}`);
    proc.stdin!.write(cmd + '\n');
    await answered;
  };

  await expect('ready');
  device = await attachLoop(join(mountDir, 'disk'), { directIo: 'off' });
  return {
    device,
    mountDir,
    failAll: () => send('fail-all'),
    failRange: (start, end) => send(`fail-range ${start} ${end}`),
    slow: (ms) => send(`slow ${ms}`),
    heal: () => send('heal'),
    async kill() {
      if (alive()) proc.kill('SIGKILL');
      await exited;
    },
  };
}
