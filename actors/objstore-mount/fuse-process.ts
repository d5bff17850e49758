/**
 * The FUSE process of the mount (started by actor.ts with one JSON argument, FuseProcessArgs).
 * The file system is served from here, a process of its own, not an actor's thread: its
 * callbacks never wait behind the daemon's main thread, and a crash of native code takes this
 * process alone. Two engines (args.engine): 'libfuse3', the program native/objstore-fuse, which
 * this process starts and answers (native-mount.ts) and which serves reads itself; and
 * 'fuse-native' (libfuse 2, its callbacks on this process's main loop, every read through
 * JavaScript), used when the program is not built. Every question goes to the actor over IPC
 * (wire.ts); the bytes come through the windows file. It unmounts and exits when asked, on
 * SIGTERM, and when the actor's end of the channel goes away (the daemon died); a SIGKILL of it
 * leaves a stale mount with fuse-native (the next start clears it, stale.ts), while the libfuse 3
 * program sees its stdin close and unmounts.
 */
import { createRequire } from 'node:module';
import { READ_AHEAD_KB } from './bdi.js';
import { startNativeMount } from './native-mount.js';
import { mountOps, type Errnos, type Source } from './ops.js';
import { WINDOW, type Window } from './read-ahead.js';
import { AHEAD_SLOTS, WindowSlots } from './window-file.js';
import { type FromFuse, type FuseProcessArgs, type Question, type ToFuse } from './wire.js';
import type { MountEntry } from '../objstore/messages.js';

interface FuseInstance {
  mount(cb: (err: Error | null) => void): void;
  unmount(cb: (err: Error | null) => void): void;
}
type FuseNative = Errnos & { new (mnt: string, ops: Record<string, unknown>, opts: Record<string, unknown>): FuseInstance };

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

/** The windows file (window-file.ts): the store writes each fetched window into a slot of it. */
const slots = new WindowSlots(args.windows, WINDOW, AHEAD_SLOTS);

/** A window of object `id` fetched into a free slot; null: a fetch ahead declined (the budget is spent). */
function readSlot(id: string, start: number, length: number, ahead: boolean): Promise<{ offset: number; win: Window }> | null {
  const offset = slots.take(ahead);
  return offset === null ? null : fill(offset, id, start, length);
}

async function fill(offset: number, id: string, start: number, length: number): Promise<{ offset: number; win: Window }> {
  try {
    const a = await ask({ op: 'read', id, start, length, offset });
    return { offset, win: slots.window(offset, a.bytes ?? 0) };
  } catch (err) {
    slots.retire(offset);
    throw err;
  }
}

const source: Source = {
  stat: async (path) => (await ask({ op: 'stat', path })).entry ?? null,
  list: async (path) => (await ask({ op: 'list', path })).listing ?? null,
  statMany: async (path, names): Promise<Array<MountEntry | null>> => (await ask({ op: 'statMany', path, names })).entries ?? [],
  read: (id, start, length, ahead) => readSlot(id, start, length, ahead)?.then((s) => s.win) ?? null,
};

let mounted = false;
let closing = false;
let unmount: (done: () => void) => void = (done) => done();

/** Unmount (only a mount this process made: never another's at the same path) and exit. */
function exit(code: number): void {
  if (closing) return;
  closing = true;
  if (!mounted) process.exit(code);
  unmount(() => process.exit(code));
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

function failed(message: string): void {
  closing = true;
  process.send?.({ t: 'failed', message } satisfies FromFuse, () => process.exit(1));
}

if (args.engine === 'libfuse3') {
  const native = startNativeMount({
    path: args.path,
    windows: args.windows,
    source,
    fetch: readSlot,
    readAheadKb: READ_AHEAD_KB,
    mounted(readAhead) {
      mounted = true;
      tell({ t: 'mounted', readAhead });
    },
    exited(code, stderr) {
      const why = `objstore-fuse exited (${code})${stderr ? `: ${stderr.trim().slice(-300)}` : ''}`;
      if (!mounted) return failed(why);
      if (closing) return process.exit(0);
      process.stderr.write(`${why}\n`);
      process.exit(1);
    },
  });
  unmount = () => native.stop();
} else {
  const Fuse = createRequire(import.meta.url)('fuse-native') as FuseNative;
  const fuse = new Fuse(args.path, mountOps(source, Fuse), {
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
  unmount = (done) => fuse.unmount(() => done());
  fuse.mount((err) => {
    if (err) return failed(err.message);
    mounted = true;
    tell({ t: 'mounted' });
  });
}
