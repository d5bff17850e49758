/**
 * One running incarnation of an actor: its context, its live resources, its timers and
 * clean-ups, and the requests it is handling. A restart makes a new ActorInstance; the old one
 * is ended first.
 *
 * Ending is one cascade, run once whatever the reason (stop, crash, restart, shutdown): abort
 * the signal, clear the timers, onStop, close the live resources (the definition's `close`, or
 * `live.close()`), then the clean-ups in reverse order of registration.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'pino';
import type { ActorContext, ActorDefinition, StopReason } from '../actor/define.js';
import type { ActorRef, Protocol, Transferable } from '../actor/protocol.js';
import type { ChildSpec } from '../supervisor/spec.js';
import { describeError } from '../errors.js';
import type { Reply } from '../wire.js';

/** The instance whose code is running now: errors thrown from timers and promises it started are its own. */
export const currentInstance = new AsyncLocalStorage<ActorInstance>();

export interface InstanceDeps {
  log: Logger;
  ref(id: string): ActorRef;
  checkpoint(id: string, kind: string, state: unknown): Promise<void>;
  clearCheckpoint(id: string): Promise<void>;
  spawn(spec: ChildSpec, supervisor: string): Promise<void>;
  stop(id: string): Promise<void>;
  runTask(name: string, arg: unknown, transfer: Transferable[]): Promise<unknown>;
}

export type ReplyFn = (rep: Reply, transfer?: Transferable[]) => void;

export class ActorInstance {
  readonly id: string;
  readonly def: ActorDefinition<Protocol, unknown, unknown, unknown>;
  readonly ctx: ActorContext<unknown, unknown>;
  /** What `open` made; undefined until it finished (or for an actor without `open`). */
  live: unknown = undefined;
  ended = false;
  /** `open` while it runs: ending waits for it, so what it makes is closed too. */
  private opening: Promise<unknown> | null = null;
  /** Requests being handled now, so a crash can fail them at once. */
  readonly inflight = new Map<number, ReplyFn>();
  private readonly abort = new AbortController();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly cleanups: Array<() => void | Promise<void>> = [];

  constructor(id: string, def: ActorDefinition<Protocol, unknown, unknown, unknown>, args: unknown, supervisor: string, deps: InstanceDeps) {
    this.id = id;
    this.def = def;
    const self = this;
    const kind = def.kind;
    this.ctx = {
      id,
      kind,
      args,
      state: undefined,
      log: deps.log.child({ ns: kind, actor: id }),
      signal: this.abort.signal,
      ref: (target) => deps.ref(target) as never,
      checkpoint: (state) => deps.checkpoint(id, kind, state === undefined ? self.ctx.state : state),
      clearCheckpoint: () => deps.clearCheckpoint(id),
      async spawn(spec, opts) {
        await deps.spawn(spec, opts?.supervisor ?? supervisor);
        return deps.ref(spec.id) as never;
      },
      stop: (target) => deps.stop(target),
      runTask: (name, arg, transfer) => deps.runTask(name, arg, transfer ?? []) as never,
      setTimeout(fn, ms) {
        const t = setTimeout(() => {
          self.timers.delete(t);
          fn();
        }, ms);
        self.timers.add(t);
        return t;
      },
      setInterval(fn, ms) {
        const t = setInterval(fn, ms);
        self.timers.add(t);
        return t;
      },
      onCleanup(fn) {
        self.cleanups.push(fn);
      },
    };
  }

  /** Run `fn` as this instance: anything it starts is attributed to it. */
  run<T>(fn: () => T): T {
    return currentInstance.run(this, fn);
  }

  /** init (the plain state), then open (the live resources). */
  async init(restored: unknown): Promise<void> {
    this.ctx.state = await this.run(() => this.def.init(this.ctx, restored));
    const open = this.def.open;
    if (!open || this.ended) return;
    this.opening = this.run(async () => open(this.ctx));
    try {
      this.live = await this.opening;
    } finally {
      this.opening = null;
    }
  }

  /** Save ctx.state if the definition asks the runtime to after each handler. */
  /** Replies wait for a checkpoint after the handler (persist 'after-handler'). */
  get holdsReplies(): boolean {
    return this.def.persist === 'after-handler';
  }

  async persistAfterHandler(): Promise<void> {
    if (this.def.persist === 'after-handler' && !this.ended) await this.ctx.checkpoint();
  }

  /**
   * End this instance: abort its signal, clear its timers, run onStop then clean-ups, all
   * within `deadlineMs`. Resolves true when everything finished in time.
   */
  async end(reason: StopReason, deadlineMs: number): Promise<boolean> {
    if (this.ended) return true;
    this.ended = true;
    this.abort.abort(new Error(`actor ${this.id} ${reason}`));
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const work = (async () => {
      if (this.opening) {
        // Stopped while open runs: wait for it, so what it makes is closed below.
        try {
          this.live = await this.opening;
        } catch {
          // open failed: the start already counts as a crash; nothing to close.
        }
      }
      try {
        if (this.def.onStop) await this.run(() => this.def.onStop!(this.ctx, reason, this.live));
      } catch (err) {
        this.ctx.log.error({ err: describeError(err) }, 'onStop failed');
      }
      await this.closeLive(reason);
      for (const fn of this.cleanups.reverse()) {
        try {
          await fn();
        } catch (err) {
          this.ctx.log.error({ err: describeError(err) }, 'clean-up failed');
        }
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), deadlineMs);
    });
    const clean = await Promise.race([work.then(() => true as const), deadline]);
    clearTimeout(timer);
    if (!clean) this.ctx.log.warn({ deadlineMs, reason }, 'stop deadline passed; instance abandoned');
    return clean;
  }

  private async closeLive(reason: StopReason): Promise<void> {
    const live = this.live;
    if (live === undefined || live === null) return;
    this.live = undefined;
    try {
      if (this.def.close) await this.run(() => this.def.close!(live, this.ctx, reason));
      else if (typeof (live as { close?: unknown }).close === 'function') await this.run(() => (live as { close(): unknown }).close());
    } catch (err) {
      this.ctx.log.error({ err: describeError(err) }, 'closing live resources failed');
    }
  }
}
