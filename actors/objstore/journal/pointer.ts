/**
 * The snapshot pointer file on a volume (`<mount>/objstore/snapshot-pointer.json`, format in
 * protocols/objstore/snapshot-format.ts): read by the store and by `hostd restore`, written by
 * the snapshot job on every present volume, atomically (temp file, fsync, rename, fsync of the
 * directory), so a crash leaves the old pointer or the new one, never half of one.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SERVICE_DIR } from '../../../protocols/objstore/identity.js';
import { writeFileDurably } from '../../volume/durable-file.js';
import { decodePointer, encodePointer, POINTER_FILE, type Pointer } from '../../../protocols/objstore/snapshot-format.js';

export function pointerPath(mountPoint: string): string {
  return join(mountPoint, SERVICE_DIR, POINTER_FILE);
}

/** The pointer on a volume: null when it has none; an Error when it does not read. */
export async function readPointer(mountPoint: string): Promise<Pointer | null | Error> {
  let text: string;
  try {
    text = await readFile(pointerPath(mountPoint), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return err as Error;
  }
  try {
    return decodePointer(text);
  } catch (err) {
    return err as Error;
  }
}

export async function writePointer(mountPoint: string, p: Pointer): Promise<void> {
  await writeFileDurably(pointerPath(mountPoint), encodePointer(p));
}
