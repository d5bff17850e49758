/** For the encryption tests: search a whole raw block device for a marker (is any plaintext on the disk?). */
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * Does the raw device hold `marker` anywhere? Its page cache is dropped first (it may still hold
 * blocks read before a discard), then it is read 4 MiB at a time, asynchronously (a test's own HTTP
 * connections stay served meanwhile).
 */
export async function deviceHolds(device: string, marker: Buffer): Promise<boolean> {
  await promisify(execFile)('blockdev', ['--flushbufs', device]);
  const fh = await open(device, 'r');
  try {
    const buf = Buffer.alloc((4 << 20) + marker.length);
    let pos = 0;
    let carry = 0;
    for (;;) {
      const { bytesRead: n } = await fh.read(buf, carry, 4 << 20, pos);
      if (n <= 0) return false;
      if (buf.subarray(0, carry + n).includes(marker)) return true;
      pos += n;
      buf.copy(buf, 0, carry + n - marker.length + 1, carry + n);
      carry = marker.length - 1;
    }
  } finally {
    await fh.close();
  }
}

/** A body that is the marker over and over: any stored run of its plaintext contains it. */
export function marked(marker: Buffer, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i += marker.length) marker.copy(b, i);
  return b;
}
