/**
 * The FUSE process of the mount (started by actor.ts with one JSON argument, FuseProcessArgs).
 * fuse-native serves its callbacks on the main loop of the process that mounts, so the mount
 * lives here, in a process of its own, not on an actor's thread: its callbacks never wait behind
 * the daemon's main thread, and a crash of the native addon takes this process alone. Every
 * question goes to the actor over IPC (wire.ts); the bytes come through the windows file. It unmounts and exits when asked, on SIGTERM,
 * and when the actor's end of the channel goes away (the daemon died); a SIGKILL of it leaves a
 * stale mount, which the next start clears (stale.ts).
 */
import { createRequire } from 'node:module';
import { mountOps, type Errnos } from './ops.js';
import { WINDOW, type Window } from './read-ahead.js';
import { AHEAD_SLOTS, WindowSlots } from './window-file.js';
import { type FromFuse, type FuseProcessArgs, type Question, type ToFuse } from './wire.js';
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

/** The windows file (window-file.ts): the store writes each fetched window into a slot of it. */
const slots = new WindowSlots(args.windows, WINDOW, AHEAD_SLOTS);

function readWindow(id: string, start: number, length: number, ahead: boolean): Promise<Window> | null {
  const offset = slots.take(ahead);
  return offset === null ? null : fill(offset, id, start, length);
}

async function fill(offset: number, id: string, start: number, length: number): Promise<Window> {
  try {
    const a = await ask({ op: 'read', id, start, length, offset });
    return slots.window(offset, a.bytes ?? 0);
  } catch (err) {
    slots.retire(offset);
    throw err;
  }
}

const ops = mountOps(
  {
    stat: async (path) => (await ask({ op: 'stat', path })).entry ?? null,
    list: async (path) => (await ask({ op: 'list', path })).listing ?? null,
    statMany: async (path, names): Promise<Array<MountEntry | null>> => (await ask({ op: 'statMany', path, names })).entries ?? [],
    read: readWindow,
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
