/**
 * The mount actor: keeps the object store's read-only FUSE mount served (messages.ts says why the
 * file system runs in a child process, fuse-process.ts). On its own thread in the object store's
 * supervision tree, after the store: it starts the FUSE process, answers its questions by asking
 * the store actor (mountStat, mountList, mountRead: the store's verified read path, which writes
 * the bytes into the FUSE process's windows file, window-file.ts), and so a slow
 * disk holds up a FUSE read, never the HTTP front or the supervisors.
 *
 * Start: a stale mount at the path (a killed daemon's: ENOTCONN) is cleared with `fusermount -uz`
 * first; a live one (another daemon's) is left alone and retried later. A FUSE process that dies
 * is replaced (backoff 1 s doubling to 30 s): mount failures are retried here, not crashes, so a
 * machine without FUSE never escalates the store's supervisor. The live value's close (stop,
 * crash, restart, shutdown) asks the process to unmount and exit, and kills it after 5 s, so a
 * restarted instance always mounts afresh.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { defineActor, refusalOf, ActorError, type ActorContext, type ActorRef } from '../../runtime/index.js';
import type { ObjstoreProtocol } from '../objstore/messages.js';
import type { MountArgs, MountProtocol, MountStatus } from './messages.js';
import { nativeFuseBuilt } from './native-mount.js';
import { fusermountUnmount, mountPointState } from './stale.js';
import { createWindowFile, removeWindowFile, sweepWindowFiles } from './window-file.js';
import type { FromFuse, FuseProcessArgs, Question, ToFuse } from './wire.js';

const FUSE_PROCESS = fileURLToPath(new URL('./fuse-process.js', import.meta.url));
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/** A FUSE process that has not mounted in this time is killed (and the mount retried). */
const MOUNT_DEADLINE_MS = 15_000;
const EXIT_GRACE_MS = 5000;

type Ask = Extract<FromFuse, { t: 'ask' }>;
type Answer = Extract<ToFuse, { t: 'answer' }>;

export class Mount {
  readonly status: MountStatus;
  private child: ChildProcess | null = null;
  private closed = false;
  private retryMs = FIRST_RETRY_MS;

  constructor(private readonly ctx: ActorContext<null, MountArgs>) {
    this.status = { path: ctx.args.path, mounted: false, pid: null, engine: ctx.args.engine ?? (nativeFuseBuilt() ? 'libfuse3' : 'fuse-native'), mounts: 0, lastError: null };
  }

  /** Clear a stale mount, start the FUSE process, wait until it has mounted; a failure schedules a retry. */
  async start(): Promise<void> {
    if (this.closed) return;
    const { path } = this.ctx.args;
    try {
      const state = await mountPointState(path);
      if (state === 'stale') {
        await fusermountUnmount(path);
        this.ctx.log.warn({ path }, `cleared a stale mount at ${path} (a killed daemon's; fusermount -uz)`);
      } else if (state === 'live') {
        throw new Error(`${path} is already mounted by a live file system (another daemon?); it is left alone`);
      }
      await this.spawn();
      this.retryMs = FIRST_RETRY_MS;
    } catch (err) {
      this.retry((err as Error).message);
    }
  }

  private retry(why: string): void {
    if (this.closed) return;
    this.status.lastError = why;
    this.ctx.log.error({ path: this.ctx.args.path, retryInMs: this.retryMs, err: why }, `the read-only mount is not served: ${why}`);
    this.ctx.setTimeout(() => void this.start(), this.retryMs);
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
  }

  private spawn(): Promise<void> {
    const swept = sweepWindowFiles();
    if (swept.length) this.ctx.log.warn({ swept }, `removed ${swept.length} windows file(s) of a killed daemon from shared memory`);
    const windows = createWindowFile();
    const args: FuseProcessArgs = { path: this.ctx.args.path, opTimeoutMs: this.ctx.args.ioTimeoutMs * 2 + 10_000, windows, engine: this.status.engine };
    const child = fork(FUSE_PROCESS, [JSON.stringify(args)], { serialization: 'advanced', execArgv: ['--enable-source-maps'], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.child = child;
    for (const ev of ['exit', 'error'] as const) child.once(ev, () => removeWindowFile(windows));
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      stderr = (stderr + c).slice(-2000);
      this.ctx.log.warn({ pid: child.pid, stderr: c.trim() }, 'FUSE process wrote to stderr');
    });
    return new Promise<void>((resolve, reject) => {
      let mounted = false;
      const deadline = this.ctx.setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the FUSE process did not mount ${args.path} within ${MOUNT_DEADLINE_MS} ms`));
      }, MOUNT_DEADLINE_MS);
      child.on('message', (m: FromFuse) => {
        if (m.t === 'ask') return void this.answer(child, windows, m);
        if (m.t === 'failed') return reject(new Error(`mounting ${args.path} failed: ${m.message}`));
        if (m.readAhead) this.ctx.log.warn({ path: args.path, err: m.readAhead }, `the mount's read-ahead is the kernel's (sequential reads are slower): ${m.readAhead}`);
        clearTimeout(deadline);
        mounted = true;
        this.status.mounted = true;
        this.status.pid = child.pid ?? null;
        this.status.mounts++;
        this.status.lastError = null;
        this.ctx.log.info({ path: args.path, pid: child.pid, engine: args.engine }, `read-only mount served at ${args.path} (${args.engine})`);
        resolve();
      });
      child.on('error', (err) => reject(err));
      child.on('exit', (code, signal) => {
        clearTimeout(deadline);
        if (this.child === child) this.child = null;
        this.status.mounted = false;
        this.status.pid = null;
        const why = `the FUSE process exited (${signal ?? code})${stderr ? `: ${stderr.trim().slice(-300)}` : ''}`;
        if (!mounted) return reject(new Error(why));
        if (!this.closed) this.retry(why);
      });
    });
  }

  /** One question of the FUSE process, asked of the store (a read: into its windows file); any failure is answered as an errno. */
  private async answer(child: ChildProcess, windows: string, m: Ask): Promise<void> {
    const store = this.ctx.ref<ObjstoreProtocol>(this.ctx.args.store);
    const timeoutMs = this.ctx.args.ioTimeoutMs * 2 + 5000;
    let a: Answer;
    try {
      a = { t: 'answer', n: m.n, errno: null, ...(await this.ask(store, windows, m, timeoutMs)) };
    } catch (err) {
      const code = refusalOf<ObjstoreProtocol>(err) ?? (err instanceof ActorError && err.code === 'TIMEOUT' ? 'ETIMEDOUT' : 'EIO');
      a = { t: 'answer', n: m.n, errno: code, message: (err as Error).message };
    }
    if (child.connected) child.send(a);
  }

  private async ask(s: ActorRef<ObjstoreProtocol>, windows: string, m: Question, timeoutMs: number): Promise<Partial<Answer>> {
    if (m.op === 'stat') return { entry: await s.request({ type: 'mountStat', path: m.path }, { timeoutMs }) };
    if (m.op === 'list') return { listing: await s.request({ type: 'mountList', path: m.path }, { timeoutMs }) };
    // The store writes the bytes into the FUSE process's slot of the windows file.
    if (m.op === 'read') return { bytes: await s.request({ type: 'mountRead', id: m.id, start: m.start, length: m.length, file: windows, offset: m.offset }, { timeoutMs }) };
    return { entries: await s.request({ type: 'mountStatMany', path: m.path, names: m.names }, { timeoutMs }) };
  }

  /** Unmount: ask the FUSE process, kill it after EXIT_GRACE_MS, and clear what a killed one left. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    if (child.connected) child.send({ t: 'unmount' } satisfies ToFuse);
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
    await exited;
    clearTimeout(timer);
    if ((await mountPointState(this.ctx.args.path).catch(() => 'free')) === 'stale') await fusermountUnmount(this.ctx.args.path).catch(() => undefined);
    this.ctx.log.info({ path: this.ctx.args.path }, 'read-only mount unmounted');
  }
}

export default defineActor<MountProtocol, null, MountArgs, Mount>({
  kind: 'objstore-mount',
  init: () => null,
  async open(ctx) {
    const mount = new Mount(ctx);
    await mount.start();
    return mount;
  },
  close: (mount) => mount.close(),
  handlers: {
    status: (_msg, _ctx, mount) => ({ ...mount.status }),
  },
});
