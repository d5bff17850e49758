/**
 * The worker threads that host actors: start them, wire their channels, watch them exit.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import type { HostApi, HostBoot, MainApi } from '../wire.js';
import type { Router } from '../router.js';
import type { ThreadLoad } from './policy.js';

export interface ThreadHandle {
  threadId: number;
  group: string | null;
  worker: Worker;
  api: Comlink.Remote<HostApi>;
  actors: Set<string>;
  alive: boolean;
  /** Resolves with the exit code once the thread has exited. */
  exited: Promise<number>;
}

export interface ThreadsOptions {
  hostScript: URL;
  boot: Omit<HostBoot, 'group' | 'hostPort' | 'mainPort' | 'dataPort'>;
  mainApi: MainApi;
  router: Router;
  /** Called once per thread that exits while the system is running. */
  onExit(thread: ThreadHandle, code: number): void;
  /** Deadline for a new thread to come up. */
  startTimeoutMs?: number;
}

export class Threads {
  private readonly opts: ThreadsOptions;
  private readonly threads = new Map<number, ThreadHandle>();
  private closing = false;
  /** Threads between their start and their first answer (settles either way). */
  private readonly booting = new Set<Promise<void>>();

  constructor(opts: ThreadsOptions) {
    this.opts = opts;
  }

  async start(group: string | null): Promise<ThreadHandle> {
    const host = new MessageChannel();
    const main = new MessageChannel();
    const data = new MessageChannel();
    const boot: HostBoot = { ...this.opts.boot, group, hostPort: host.port2, mainPort: main.port2, dataPort: data.port2 };
    const worker = new Worker(this.opts.hostScript, {
      workerData: boot,
      transferList: [host.port2, main.port2, data.port2],
      // The host thread must stay alive without pending handles while it hosts actors.
      stdout: false,
      stderr: false,
    });
    Comlink.expose(this.opts.mainApi, main.port1 as never);
    const api = Comlink.wrap<HostApi>(host.port1 as never);
    let resolveExit!: (code: number) => void;
    const exited = new Promise<number>((r) => (resolveExit = r));
    const handle: ThreadHandle = { threadId: worker.threadId, group, worker, api, actors: new Set(), alive: true, exited };
    this.threads.set(handle.threadId, handle);
    this.opts.router.addPort(handle.threadId, data.port1);
    worker.on('error', () => undefined); // the exit event follows and is what counts
    worker.on('exit', (code) => {
      const unexpected = this.threads.has(handle.threadId) && !this.closing;
      handle.alive = false;
      host.port1.close();
      main.port1.close();
      this.threads.delete(handle.threadId);
      resolveExit(code);
      if (unexpected) this.opts.onExit(handle, code);
    });
    const timeoutMs = this.opts.startTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const booted = Promise.race([
      api.ping(),
      exited.then((code) => Promise.reject(new Error(`worker thread exited with code ${code} during start`))),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`worker thread did not start within ${timeoutMs} ms`)), timeoutMs))),
    ]);
    const settled = booted.then(
      () => undefined,
      () => undefined,
    );
    this.booting.add(settled);
    void settled.finally(() => this.booting.delete(settled));
    try {
      await booted;
    } catch (err) {
      await worker.terminate();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return handle;
  }

  get(threadId: number): ThreadHandle | undefined {
    return this.threads.get(threadId);
  }

  all(): ThreadHandle[] {
    return [...this.threads.values()];
  }

  loads(): ThreadLoad[] {
    return this.all().map((t) => ({ threadId: t.threadId, group: t.group, actors: t.actors.size, alive: t.alive }));
  }

  /** A new data channel between two threads; the far end is handed to `to`, the near end returned. */
  async connect(from: number, to: number): Promise<MessagePort> {
    const target = this.threads.get(to);
    if (!target?.alive) throw new Error(`thread ${to} is not running`);
    const ch = new MessageChannel();
    await target.api.connect(from, Comlink.transfer(ch.port2, [ch.port2 as never]));
    return ch.port1;
  }

  /** Stop every thread (after the actors have been stopped). */
  async terminateAll(): Promise<void> {
    this.closing = true;
    // A thread still booting (a SIGTERM during start-up) is in native code (opening LMDB, loading
    // addons): terminating it there aborts the whole process. Let it finish booting first.
    await Promise.all([...this.booting]);
    await Promise.all(this.all().map((t) => t.worker.terminate()));
  }

  /** Stop one thread that hosts no actors any more. */
  async retire(threadId: number): Promise<void> {
    const t = this.threads.get(threadId);
    if (!t || t.actors.size) return;
    this.threads.delete(threadId);
    t.alive = false;
    // Its exit is expected, so onExit will not run: drop the routes to it now, here and in every
    // other thread, or a cached location would keep sending to a dead port (requests time out).
    this.opts.router.forgetThread(threadId);
    for (const other of this.threads.values()) void other.api.forgetThread(threadId).catch(() => undefined);
    await t.worker.terminate();
  }
}
