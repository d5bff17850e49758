/**
 * The windows file: how a read window's bytes get from the store to the FUSE process without
 * crossing a pipe. A file in shared memory (tmpfs: /dev/shm, else the temp directory), divided
 * in slots of one read-ahead window each. The FUSE process takes a free slot for each window it
 * fetches; the store writes the window's verified bytes into that slot (mount-source.ts, straight
 * from its read buffers: no concatenation), and the FUSE process copies each 128 KiB request from
 * the slot into the kernel's buffer (one pread). Measured against the pipe it replaced in
 * docs/object-store.md "The mount".
 *
 * The actor makes the file (mode 0600 in a 0700 directory) before it starts the FUSE process and
 * removes it when that process is gone; a killed daemon's files (the directory names its pid) are
 * removed at the next start. A slot whose fetch failed may still be written by a store read that
 * outlived its timeout, so it is never used again (retired) rather than handed to another window.
 * Once no slot is in use the file is truncated: an idle mount holds no shared memory.
 */
import { closeSync, existsSync, ftruncateSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Window } from './read-ahead.js';
import { MOUNT_WINDOWS_FILE_RE } from '../objstore/messages.js';
import { pidAlive } from '../../runtime/pid.js';

const PREFIX = 'hostd-mount-';

/**
 * Slots in use beyond which a fetch ahead of a reader is declined (a window a reader waits for is
 * always fetched): 16 windows of 16 MiB, 256 MiB of shared memory at most for read-ahead, however
 * many files are open.
 */
export const AHEAD_SLOTS = 16;

/** Where the file goes: tmpfs when there is one (a window in a disk-backed file would be written to disk). */
function baseDir(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/** Remove the windows files of daemons that are gone (a kill -9 leaves them in shared memory). */
export function sweepWindowFiles(base = baseDir()): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(base)) {
    const m = /^hostd-mount-(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    rmSync(join(base, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/** A new, empty windows file of this process; its path. */
export function createWindowFile(base = baseDir()): string {
  const dir = mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
  const path = join(dir, 'windows');
  // The store writes into no other file (MOUNT_WINDOWS_FILE_RE): the name is the contract.
  if (!MOUNT_WINDOWS_FILE_RE.test(path)) throw new Error(`windows file ${path} does not have the form the store accepts`);
  writeFileSync(path, '', { mode: 0o600 });
  return path;
}

export function removeWindowFile(path: string): void {
  rmSync(join(path, '..'), { recursive: true, force: true });
}

/** The FUSE process's side: slots of the windows file, taken, filled by the store, read, given back. */
export class WindowSlots {
  private readonly fd: number;
  private readonly free: number[] = [];
  private next = 0;
  private inUse = 0;
  private retired = 0;

  constructor(
    path: string,
    readonly slotBytes: number,
    private readonly aheadSlots = AHEAD_SLOTS,
  ) {
    this.fd = openSync(path, 'r+');
  }

  /** A free slot (the file grows by one when none is free); its byte offset in the file. Null for a fetch ahead over the budget. */
  take(ahead = false): number | null {
    if (ahead && this.inUse >= this.aheadSlots) return null;
    this.inUse++;
    return (this.free.pop() ?? this.next++) * this.slotBytes;
  }

  /** The slot at `offset` was filled with `bytes` bytes: the window reading them. */
  window(offset: number, bytes: number): Window {
    let released = false;
    return {
      byteLength: bytes,
      copy: (into, at, from, to) => {
        const n = readSync(this.fd, into, at, to - from, offset + from);
        if (n !== to - from) throw Object.assign(new Error(`windows file: read ${n} of ${to - from} bytes at ${offset + from}`), { errno: 'EIO' });
      },
      release: () => {
        if (released) return;
        released = true;
        this.give(offset);
      },
    };
  }

  /** The fetch into the slot at `offset` failed: a late write may still land there, so it is not used again. */
  retire(_offset: number): void {
    this.inUse--;
    this.retired++;
  }

  /** Slots in use, free, and retired (for tests). */
  counts(): { inUse: number; free: number; retired: number; fileSlots: number } {
    return { inUse: this.inUse, free: this.free.length, retired: this.retired, fileSlots: this.next };
  }

  close(): void {
    closeSync(this.fd);
  }

  private give(offset: number): void {
    this.inUse--;
    this.free.push(offset / this.slotBytes);
    // Idle: give the shared memory back (only while no retired slot may still be written).
    if (this.inUse === 0 && this.retired === 0) {
      ftruncateSync(this.fd, 0);
      this.free.length = 0;
      this.next = 0;
    }
  }
}
