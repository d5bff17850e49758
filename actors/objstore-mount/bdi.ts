/**
 * The kernel's read-ahead for the mount served by the libfuse 3 engine (native-mount.ts). A FUSE
 * mount has a backing device (bdi) of its own, named by the mount's device number
 * (`/sys/class/bdi/<major>:<minor>`), whose read-ahead starts at 128 KiB. Raised after the mount,
 * the kernel sends a sequential reader's next requests (1 MiB each with libfuse 3) while the first
 * is answered, and the program's threads copy them from the windows file in parallel. Not used
 * with fuse-native: there every request crosses into JavaScript one at a time, and more requests
 * in flight measured worse (twice the CPU per MiB; docs/object-store.md "The mount"). Only root may
 * write it; otherwise the mount keeps the kernel's value (the actor logs why).
 */
import { stat, writeFile } from 'node:fs/promises';

/** The mount's read-ahead: 4 MiB (four 1 MiB requests in flight). */
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
