/**
 * The mount's file-system operations, as fuse-native calls them (a callback last; errors are
 * negative errnos). Read-only, per the spec: getattr, readdir, open (read-only), read, release,
 * plus the harmless flush/fsync/opendir/releasedir/statfs; every operation that would change
 * anything answers EROFS explicitly (fuse-native answers EPERM for an operation it is not given).
 * The namespace is the object API's: containers are directories, objects files, `/$<id>` reaches
 * an object by id (not listed). Times: an object's from the creation time in its id; a
 * directory's, the mount's start (stable: nothing records when a container appeared).
 */
import { objectIdTime } from '../../protocols/objstore/object-id.js';
import type { MountEntry, MountListing } from '../objstore/messages.js';
import { ReadAhead, type Window } from './read-ahead.js';

/** Where the operations get the namespace and the bytes (the actor, over IPC). Errors carry `errno`. */
export interface Source {
  stat(path: string): Promise<MountEntry | null>;
  list(path: string): Promise<MountListing | null>;
  statMany(path: string, names: string[]): Promise<Array<MountEntry | null>>;
  /** a window of an object's bytes (where the store put them); one `ahead` of the reader may be declined (null) */
  read(id: string, start: number, length: number, ahead: boolean): Promise<Window> | null;
}

/** The errno numbers fuse-native exports (Fuse.ENOENT ...), negative. */
export type Errnos = Record<'ENOENT' | 'EIO' | 'EROFS' | 'ENOTDIR' | 'EISDIR' | 'EBADF' | 'EINVAL' | 'ETIMEDOUT' | 'ENAMETOOLONG', number>;

type Cb = (code: number, ...rest: unknown[]) => void;

/** The operations that write, each answered EROFS (names as fuse-native has them). */
export const WRITE_OPS = ['write', 'create', 'mkdir', 'unlink', 'rmdir', 'rename', 'truncate', 'ftruncate', 'chmod', 'chown', 'utimens', 'symlink', 'link', 'setxattr', 'removexattr', 'mknod'] as const;

/**
 * How long a container's listing answers getattr of its entries: `ls -l` of a large container
 * asks for their attributes in batches of STAT_BATCH (mountStatMany), not one question per entry.
 * A listing is that much behind the store at most (an entry deleted meanwhile still shows).
 */
const LISTING_TTL_MS = 5000;
const LISTINGS_KEPT = 8;
const STAT_BATCH = 5000;

interface Listing {
  at: number;
  listing: MountListing;
  index: Map<string, number>;
  /** batches of entries' attributes, asked for on the first getattr that needs one */
  batches: Map<number, Promise<Array<MountEntry | null>>>;
  /** the batches that have arrived */
  resolved: Map<number, Array<MountEntry | null>>;
}

/** Longest name of an object path segment (protocols/objstore/paths.ts): a longer one is ENAMETOOLONG, as on a disk file system. */
const MAX_NAME_BYTES = 255;

const O_ACCMODE = 3;
const O_TRUNC = 0o1000;

/** The errno (negative) of a failure: its `errno` name (wire.ts), EIO when it has none. */
function errnoOf(E: Errnos, err: unknown): number {
  return E[(err as { errno?: keyof Errnos }).errno ?? 'EIO'] ?? E.EIO;
}

/** The namespace questions, answered as fuse-native's callbacks are (also by the libfuse 3 mount, native-mount.ts). */
export interface Namespace {
  getattr(path: string, cb: Cb): void;
  readdir(path: string, cb: Cb): void;
  /** `path` opened with `flags`: cb(0, entry) for a readable object, else cb(errno) */
  resolve(path: string, flags: number, cb: (code: number, entry?: MountEntry) => void): void;
  /**
   * The attributes of up to `k` entries after `path` in its container's listing, those already
   * here (a listed container's batch that has arrived): what `ls -l` asks for next.
   */
  following(path: string, k: number): Array<{ name: string; attr: Attr }>;
}

export interface Attr {
  mode: number;
  size: number;
  nlink: number;
  mtime: Date;
}

export function mountNamespace(source: Omit<Source, 'read'>, E: Errnos, mountedAt: Date = new Date()): Namespace {
  const listings = new Map<string, Listing>();

  const errno = (err: unknown) => errnoOf(E, err);
  const attr = (e: MountEntry): Attr & Record<string, unknown> => {
    if (e.dir) return { mode: 0o40555, size: 0, nlink: 2, uid: 0, gid: 0, mtime: mountedAt, atime: mountedAt, ctime: mountedAt };
    const t = new Date(objectIdTime(e.id!));
    return { mode: 0o100444, size: e.size!, nlink: 1, uid: 0, gid: 0, blksize: 4096, blocks: Math.ceil(e.size! / 512), mtime: t, atime: t, ctime: t };
  };
  /** An entry of a container listed within LISTING_TTL_MS (its batch of attributes), else asked for alone. */
  const lookup = async (path: string): Promise<MountEntry | null> => {
    const i = path.lastIndexOf('/');
    const container = i === 0 ? '/' : path.slice(0, i);
    const name = path.slice(i + 1);
    const l = listings.get(container);
    const n = l && Date.now() - l.at < LISTING_TTL_MS ? l.index.get(name) : undefined;
    if (l === undefined || n === undefined) return source.stat(path);
    if (l.listing.dir[n]) return { name, dir: true };
    const b = Math.floor(n / STAT_BATCH);
    let batch = l.batches.get(b);
    if (!batch) {
      batch = source.statMany(container, l.listing.names.slice(b * STAT_BATCH, (b + 1) * STAT_BATCH));
      l.batches.set(b, batch);
      batch.then((entries) => l.resolved.set(b, entries), () => l.batches.delete(b));
    }
    return (await batch)[n - b * STAT_BATCH] ?? null;
  };
  return {
    getattr(path: string, cb: Cb) {
      if (Buffer.byteLength(path.slice(path.lastIndexOf('/') + 1)) > MAX_NAME_BYTES) return cb(E.ENAMETOOLONG);
      lookup(path).then((e) => (e ? cb(0, attr(e)) : cb(E.ENOENT)), (err) => cb(errno(err)));
    },
    readdir(path: string, cb: Cb) {
      source.list(path).then(
        (listing) => {
          if (!listing) return cb(E.ENOENT);
          listings.delete(path);
          listings.set(path, { at: Date.now(), listing, index: new Map(listing.names.map((name, n) => [name, n])), batches: new Map(), resolved: new Map() });
          if (listings.size > LISTINGS_KEPT) listings.delete(listings.keys().next().value!);
          cb(0, listing.names);
        },
        (err) => cb(errno(err)),
      );
    },
    resolve(path, flags, cb) {
      if ((flags & O_ACCMODE) !== 0 || flags & O_TRUNC) return cb(E.EROFS);
      lookup(path).then((e) => (!e ? cb(E.ENOENT) : e.dir ? cb(E.EISDIR) : cb(0, e)), (err) => cb(errno(err)));
    },
    following(path, k) {
      const i = path.lastIndexOf('/');
      const l = listings.get(i === 0 ? '/' : path.slice(0, i));
      const n = l && Date.now() - l.at < LISTING_TTL_MS ? l.index.get(path.slice(i + 1)) : undefined;
      if (l === undefined || n === undefined) return [];
      const out: Array<{ name: string; attr: Attr }> = [];
      for (let m = n + 1; m < Math.min(l.listing.names.length, n + 1 + k); m++) {
        const name = l.listing.names[m]!;
        if (l.listing.dir[m]) {
          out.push({ name, attr: attr({ name, dir: true }) });
          continue;
        }
        const e = l.resolved.get(Math.floor(m / STAT_BATCH))?.[m % STAT_BATCH];
        if (e === undefined) break;
        if (e) out.push({ name, attr: attr(e) });
      }
      return out;
    },
  };
}

export function mountOps(source: Source, E: Errnos, mountedAt: Date = new Date()): Record<string, (...args: never[]) => void> {
  const files = new Map<number, ReadAhead>();
  let nextFd = 1;
  const ns = mountNamespace(source, E, mountedAt);
  const errno = (err: unknown) => errnoOf(E, err);
  const erofs = (...args: unknown[]) => (args[args.length - 1] as Cb)(E.EROFS);

  const ops: Record<string, (...args: never[]) => void> = {
    getattr: (path: string, cb: Cb) => ns.getattr(path, cb),
    readdir: (path: string, cb: Cb) => ns.readdir(path, cb),
    open(path: string, flags: number, cb: Cb) {
      ns.resolve(path, flags, (code, e) => {
        if (code || !e) return cb(code);
        const fd = nextFd++;
        const id = e.id!;
        files.set(fd, new ReadAhead((start, length, ahead) => source.read(id, start, length, ahead), e.size!));
        cb(0, fd);
      });
    },
    read(_path: string, fd: number, buf: Buffer, len: number, pos: number, cb: Cb) {
      const file = files.get(fd);
      if (!file) return cb(E.EBADF);
      // Most requests of a sequential reader find their window here: answered without a wait.
      let now: number | undefined;
      try {
        now = file.readNow(buf, pos, len);
      } catch (err) {
        return cb(errno(err));
      }
      if (now !== undefined) return cb(now);
      file.read(buf, pos, len).then((n) => cb(n), (err) => cb(errno(err)));
    },
    release(_path: string, fd: number, cb: Cb) {
      files.get(fd)?.close();
      files.delete(fd);
      cb(0);
    },
    flush: (_path: string, _fd: number, cb: Cb) => cb(0),
    fsync: (_path: string, _fd: number, _datasync: boolean, cb: Cb) => cb(0),
    opendir: (_path: string, _flags: number, cb: Cb) => cb(0, 0),
    releasedir: (_path: string, _fd: number, cb: Cb) => cb(0),
  };
  for (const op of WRITE_OPS) ops[op] = erofs;
  return ops;
}
