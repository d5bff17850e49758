/**
 * The FUSE process of the mount (started by actor.ts with one JSON argument, FuseProcessArgs).
 * fuse-native serves its callbacks on the main loop of the process that mounts, so the mount
 * lives here, in a process of its own, not on an actor's thread: its callbacks never wait behind
 * the daemon's main thread, and a crash of the native addon takes this process alone. Every
 * question goes to the actor over IPC (wire.ts). It unmounts and exits when asked, on SIGTERM,
 * and when the actor's end of the channel goes away (the daemon died); a SIGKILL of it leaves a
 * stale mount, which the next start clears (stale.ts).
 */
import { createRequire } from 'node:module';
import { mountOps, type Errnos } from './ops.js';
import { Socket } from 'node:net';
import { DATA_FD, DATA_HEADER, type FromFuse, type FuseProcessArgs, type Question, type ToFuse } from './wire.js';
import type { MountEntry } from '../objstore/messages.js';

interface FuseInstance {
  mount(cb: (err: Error | null) => void): void;
  unmount(cb: (err: Error | null) => void): void;
}
const Fuse = createRequire(import.meta.url)('fuse-native') as Errnos & {
  new (mnt: string, ops: Record<string, unknown>, opts: Record<string, unknown>): FuseInstance;
};

const args = JSON.parse(process.argv[2] ?? '{}') as FuseProcessArgs;
const tell = (m: FromFuse) => process.send?.(m);

let asked = 0;
const waiting = new Map<number, (a: Extract<ToFuse, { t: 'answer' }>) => void>();
function ask(q: Question): Promise<Extract<ToFuse, { t: 'answer' }>> {
  const n = ++asked;
  return new Promise((resolve, reject) => {
    waiting.set(n, (a) => (a.errno ? reject(Object.assign(new Error(a.message ?? a.errno), { errno: a.errno })) : resolve(a)));
    tell({ t: 'ask', n, ...q });
  });
}

/** The data pipe (wire.ts): frames of read bytes, each answering the question it names. */
let header = Buffer.alloc(0);
let frame: { n: number; data: Buffer; got: number } | null = null;
const data = new Socket({ fd: DATA_FD, readable: true, writable: false });
data.on('data', (chunk: Buffer) => {
  let off = 0;
  while (off < chunk.length) {
    if (!frame) {
      const need = DATA_HEADER - header.length;
      header = Buffer.concat([header, chunk.subarray(off, off + need)]);
      off += Math.min(need, chunk.length - off);
      if (header.length < DATA_HEADER) return;
      frame = { n: header.readUInt32BE(0), data: Buffer.allocUnsafe(header.readUInt32BE(4)), got: 0 };
      header = Buffer.alloc(0);
    }
    const take = Math.min(frame.data.length - frame.got, chunk.length - off);
    chunk.copy(frame.data, frame.got, off, off + take);
    frame.got += take;
    off += take;
    if (frame.got === frame.data.length) {
      const { n, data: bytes } = frame;
      frame = null;
      const w = waiting.get(n);
      waiting.delete(n);
      w?.({ t: 'answer', n, errno: null, data: bytes });
    }
  }
});

const ops = mountOps(
  {
    stat: async (path) => (await ask({ op: 'stat', path })).entry ?? null,
    list: async (path) => (await ask({ op: 'list', path })).listing ?? null,
    statMany: async (path, names): Promise<Array<MountEntry | null>> => (await ask({ op: 'statMany', path, names })).entries ?? [],
    read: async (id, start, length) => (await ask({ op: 'read', id, start, length })).data ?? new Uint8Array(0),
  },
  Fuse,
);

const fuse = new Fuse(args.path, ops, {
  mkdir: true,
  timeout: args.opTimeoutMs,
  // The kernel checks access against the modes (files 0444, directories 0555), for every user.
  allowOther: true,
  defaultPermissions: true,
  // A path may be deleted and stored again as another object: attributes are kept 1 s only.
  attrTimeout: 1,
  entryTimeout: 1,
  fsname: 'objstore',
  subtype: 'objstore',
});

let mounted = false;
let closing = false;
/** Unmount (only a mount this process made: never another's at the same path) and exit. */
function exit(code: number): void {
  if (closing) return;
  closing = true;
  if (!mounted) process.exit(code);
  fuse.unmount(() => process.exit(code));
  setTimeout(() => process.exit(code), 5000).unref();
}

process.on('message', (m: ToFuse) => {
  if (m.t === 'unmount') return exit(0);
  const w = waiting.get(m.n);
  waiting.delete(m.n);
  w?.(m);
});
process.on('disconnect', () => exit(0));
process.on('SIGTERM', () => exit(0));

fuse.mount((err) => {
  if (err) {
    closing = true;
    process.send?.({ t: 'failed', message: err.message } satisfies FromFuse, () => process.exit(1));
    return;
  }
  mounted = true;
  tell({ t: 'mounted' });
});
