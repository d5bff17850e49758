/**
 * What the store actor answers for the read-only mount (actors/objstore-mount, on its own thread
 * and process): the namespace, from the metadata, and an object's bytes, through the same verified
 * read as GET (ObjectReader: a bad slice is rebuilt from parity; an object that cannot be read is
 * refused EIO, never answered with unverified bytes), written into the mount's windows file
 * (actors/objstore-mount/window-file.ts). Paths are FUSE paths, raw as the kernel
 * gives them: no percent-decoding (a file named `a%20b` is the object `a%20b`).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { ReplyError } from '../../runtime/index.js';
import { OBJECT_ID_RE } from '../../protocols/objstore/object-id.js';
import { MAX_STAT_MANY, MOUNT_WINDOWS_FILE_RE, type MountEntry, type MountListing, type MountRefusal } from './messages.js';
import { ObjectReader, StoreError, type StoreContext } from './store/index.js';

/** Longest object path the store accepts (protocols/objstore/paths.ts): longer ones exist nowhere. */
const MAX_PATH_BYTES = 1024;

/** Largest read the mount asks for at once (its read-ahead window is smaller). */
export const MAX_MOUNT_READ = 64 << 20;

function refuse(code: MountRefusal, message: string): never {
  throw new ReplyError(code, message);
}

function objectEntry(store: StoreContext, name: string, id: string): MountEntry | null {
  const rec = store.meta.objects.get(id);
  return rec ? { name, dir: false, id: rec.id, size: rec.size } : null;
}

function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** The entry at `path`: the root, an object by id (`/$<id>`) or path, a container, or a bucket with a policy and no object yet. */
export function mountStat(store: StoreContext, path: string): MountEntry | null {
  if (path === '/') return { name: '', dir: true };
  if (!path.startsWith('/') || path.endsWith('/') || Buffer.byteLength(path) > MAX_PATH_BYTES) return null;
  const name = nameOf(path);
  if (path.lastIndexOf('/') === 0 && OBJECT_ID_RE.test(name)) return objectEntry(store, name, name);
  const id = store.meta.paths.get(path);
  if (id) return objectEntry(store, name, id);
  if ((store.meta.containers.get(path) ?? 0) > 0) return { name, dir: true };
  if (path.lastIndexOf('/') === 0 && store.meta.buckets.get(name)) return { name, dir: true };
  return null;
}

/**
 * The entries of the container at `path`, names only (the root adds buckets that have a policy
 * but no object): cheap to make and to send for 100 000 entries; their attributes come by
 * mountStatMany when something asks (ls -l), not for a plain ls.
 */
export function mountList(store: StoreContext, path: string): MountListing | null {
  const at = mountStat(store, path);
  if (!at?.dir) return null;
  const entries = store.meta.children(path);
  if (path === '/') {
    const seen = new Set(entries.map((e) => e.name));
    for (const bucket of store.meta.buckets.getKeys()) if (!seen.has(bucket)) entries.push({ name: bucket, dir: true });
  }
  return { names: entries.map((e) => e.name), dir: Uint8Array.from(entries, (e) => (e.dir ? 1 : 0)) };
}

/** The entries `names` of the container `path`, each null where there is none. */
export function mountStatMany(store: StoreContext, path: string, names: string[]): Array<MountEntry | null> {
  if (!Array.isArray(names) || names.length > MAX_STAT_MANY) refuse('EINVAL', `mountStatMany takes at most ${MAX_STAT_MANY} names`);
  const prefix = path === '/' ? '/' : `${path}/`;
  return names.map((n) => (typeof n === 'string' && n && !n.includes('/') ? mountStat(store, prefix + n) : null));
}

/**
 * Bytes [start, start + length) of object `id`, clipped at its end, verified like a GET's, written
 * into the mount's windows file `file` (which must exist) at `offset`, piece by piece straight from
 * the read buffers (no concatenation: the FUSE process reads them from there); their count.
 */
export async function mountRead(store: StoreContext, msg: { id: string; start: number; length: number; file: string; offset: number }): Promise<number> {
  const { id, start, length, file, offset } = msg;
  if (!Number.isSafeInteger(start) || start < 0 || !Number.isSafeInteger(length) || length < 0 || length > MAX_MOUNT_READ) {
    refuse('EINVAL', `a mount read takes a start >= 0 and a length from 0 to ${MAX_MOUNT_READ}, got ${start} and ${length}`);
  }
  if (typeof file !== 'string' || !MOUNT_WINDOWS_FILE_RE.test(file) || file.includes('/../') || !Number.isSafeInteger(offset) || offset < 0) {
    refuse('EINVAL', `a mount read writes into a mount windows file (.../hostd-mount-<pid>-<random>/windows) at an offset >= 0, got ${JSON.stringify(file)} at ${offset}`);
  }
  const rec = store.meta.objects.get(id);
  if (!rec) refuse('ENOENT', `object ${id} does not exist`);
  const end = Math.min(rec.size, start + length);
  const want = Math.max(0, end - start);
  if (want === 0) return 0;
  let fd: number;
  try {
    // 'r+': never created or truncated here; the mount made it.
    fd = openSync(file, 'r+');
  } catch (err) {
    refuse('EIO', `the mount's windows file: ${(err as Error).message}`);
  }
  let off = 0;
  try {
    for await (const piece of new ObjectReader(store, rec).range(start, end - 1)) {
      // Synchronous: a piece is valid until the next is asked for; tmpfs takes it as a memcpy.
      writeFullSync(fd, piece, offset + off);
      off += piece.byteLength;
    }
  } catch (err) {
    if (err instanceof StoreError && err.status === 404) refuse('ENOENT', err.message);
    store.log.warn({ objectId: id, start, length, err: (err as Error).message }, 'mount read failed: answered EIO');
    refuse('EIO', (err as Error).message);
  } finally {
    closeSync(fd);
  }
  if (off !== want) refuse('EIO', `object ${id}: read ${off} of ${want} bytes`);
  return off;
}

function writeFullSync(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.byteLength; ) done += writeSync(fd, bytes, done, bytes.byteLength - done, position + done);
}
