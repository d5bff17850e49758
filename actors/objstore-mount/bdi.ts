/**
 * The kernel's read-ahead for the mount. A FUSE mount has a backing device (bdi) of its own,
 * named by the mount's device number (`/sys/class/bdi/<major>:<minor>`), whose read-ahead starts
 * at what libfuse 2 negotiates: 128 KiB, one request, so a sequential reader has one 128 KiB read
 * in flight at a time and waits a round trip through the FUSE process for each. Raised after the
 * mount, the kernel sends a sequential reader's next requests while the first is answered, and
 * libfuse's threads serve them together (measured in docs/object-store.md "The mount"). Only root
 * may write it; otherwise the mount keeps the kernel's value (the caller says so).
 */
import { stat, writeFile } from 'node:fs/promises';

/** The mount's read-ahead: 4 MiB (the kernel sends it as 128 KiB requests, up to 32 in flight). */
export const READ_AHEAD_KB = 4096;

/** `major:minor` of a Linux dev_t as Node gives it (glibc's encoding). */
export function devName(dev: number): string {
  const d = BigInt(dev);
  const major = ((d >> 8n) & 0xfffn) | ((d >> 32n) & ~0xfffn);
  const minor = (d & 0xffn) | ((d >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}

/**
 * Set the read-ahead of the file system mounted at `path`; the sysfs file written. Rejects with
 * what failed. Asynchronous: called in the FUSE process, whose own loop answers the stat's getattr.
 */
export async function setReadAhead(path: string, kb = READ_AHEAD_KB): Promise<string> {
  const file = `/sys/class/bdi/${devName((await stat(path)).dev)}/read_ahead_kb`;
  await writeFile(file, `${kb}\n`);
  return file;
}
