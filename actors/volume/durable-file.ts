/**
 * Replacing a small file on a volume durably: a temp file, fsync, rename over, fsync of the
 * directory. A crash leaves the old file or the new one, never half of one. The key slots
 * (volume-key.ts) and the snapshot pointer (objstore/journal/pointer.ts) are written this way.
 */
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

export async function writeFileDurably(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const temp = `${path}.tmp`;
  const fh = await open(temp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
