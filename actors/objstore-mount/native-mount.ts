/**
 * The mount served by the libfuse 3 program (native/objstore-fuse), from the FUSE process: this
 * side starts it on the mount point and the windows file, and answers its frames (native-wire.ts):
 * the namespace with the same rules as the fuse-native mount (ops.ts mountNamespace), a window's
 * fetch by taking a slot and asking the store to fill it (the program then answers every kernel
 * request in that window itself, one pread each, with no JavaScript in the way), a slot given back.
 * The program unmounts and exits on SIGTERM and when this process goes away (its stdin closes).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setReadAhead } from './bdi.js';
import { mountNamespace, type Attr, type Errnos, type Source } from './ops.js';
import { AHEAD, WINDOW, type Window } from './read-ahead.js';
import { answer, attrBody, fetchBody, FrameReader, hintsBody, MAX_HINTS, namesBody, OP, openBody, type Frame } from './native-wire.js';

/** The program, as `npm run build` makes it (build:native); absent: the mount uses fuse-native. */
export const NATIVE_FUSE = fileURLToPath(new URL('../../../native/objstore-fuse/build/objstore-fuse', import.meta.url));

export function nativeFuseBuilt(): boolean {
  return existsSync(NATIVE_FUSE);
}

/** Linux errno numbers, negative, as the program returns them to the kernel. */
const E = Object.fromEntries(['ENOENT', 'EIO', 'EROFS', 'ENOTDIR', 'EISDIR', 'EBADF', 'EINVAL', 'ETIMEDOUT', 'ENAMETOOLONG'].map((k) => [k, -constants.errno[k as keyof typeof constants.errno]])) as Errnos;
const EAGAIN = -constants.errno.EAGAIN;

export interface NativeMountOptions {
  path: string;
  windows: string;
  source: Omit<Source, 'read'>;
  /** a window into a slot of the windows file: its offset and the window (null: a fetch ahead declined) */
  fetch(id: string, start: number, length: number, ahead: boolean): Promise<{ offset: number; win: Window }> | null;
  /** the kernel's read-ahead for the mount (bdi.ts), in KiB; 0 leaves the kernel's */
  readAheadKb: number;
  mounted(readAheadError?: string): void;
  /** the program exited (code, and what it wrote to stderr last) */
  exited(code: number | null, stderr: string): void;
}

/** Start the program; stop() asks it to unmount and exit. */
export function startNativeMount(o: NativeMountOptions): { stop(): void } {
  try {
    mkdirSync(o.path, { recursive: true });
  } catch {
    // a stale mount point is cleared by the actor before this; the program says what is wrong
  }
  const child = spawn(NATIVE_FUSE, [o.path, o.windows, String(WINDOW), String(AHEAD)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const ns = mountNamespace(o.source, E);
  const held = new Map<number, Window>();
  const reader = new FrameReader();
  let stderr = '';
  const send = (b: Buffer) => {
    if (child.stdin.writable) child.stdin.write(b);
  };
  child.stdin.on('error', () => undefined);
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr = (stderr + c).slice(-2000);
    process.stderr.write(c);
  });
  child.on('error', (err) => (stderr += err.message));
  child.on('exit', (code, signal) => {
    for (const win of held.values()) win.release();
    held.clear();
    o.exited(code ?? (signal ? -1 : null), stderr);
  });

  const serve = (f: Frame): void => {
    switch (f.op) {
      case OP.MOUNTED:
        if (o.readAheadKb <= 0) return o.mounted();
        return void setReadAhead(o.path, o.readAheadKb).then(() => o.mounted(), (err: Error) => o.mounted(err.message));
      case OP.GETATTR:
        return ns.getattr(f.path, (code, a) => send(code ? answer(f.n, code) : answer(f.n, 0, Buffer.concat([attrBody(a as Attr), hintsBody(ns.following(f.path, MAX_HINTS))]))));
      case OP.READDIR:
        return ns.readdir(f.path, (code, names) => send(code ? answer(f.n, code) : answer(f.n, 0, namesBody(names as string[]))));
      case OP.OPEN:
        return ns.resolve(f.path, f.flags, (code, e) => send(code || !e ? answer(f.n, code || E.EIO) : answer(f.n, 0, openBody(e.size!, e.id!))));
      case OP.FETCH: {
        const fetching = o.fetch(f.id, f.start, f.length, f.ahead);
        if (!fetching) return send(answer(f.n, EAGAIN));
        fetching.then(
          ({ offset, win }) => {
            held.set(offset, win);
            send(answer(f.n, 0, fetchBody(offset, win.byteLength)));
          },
          (err: { errno?: keyof Errnos }) => send(answer(f.n, E[err.errno ?? 'EIO'] ?? E.EIO)),
        );
        return;
      }
      case OP.RELEASE:
        held.get(f.slot)?.release();
        held.delete(f.slot);
    }
  };
  child.stdout.on('data', (chunk: Buffer) => {
    try {
      for (const f of reader.push(chunk)) serve(f);
    } catch (err) {
      stderr += (err as Error).message;
      child.kill('SIGTERM');
    }
  });
  return { stop: () => child.kill('SIGTERM') };
}
