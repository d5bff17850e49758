import type { Logger } from 'pino';
import type { ActorRef, MsgOfType, MsgType, Protocol, ReplyOf, RequestType, Transferable, Transferring } from './protocol.js';
import type { ChildSpec } from '../supervisor/spec.js';
import type { TaskArg, TaskName, TaskResult } from './tasks.js';

type MaybePromise<T> = T | Promise<T>;

/** Why an actor instance ends. `crash`: a handler (or something it started) threw. */
export type StopReason = 'shutdown' | 'crash' | 'stopped';

/** What an actor sees of the runtime. One per running instance; a restart gets a fresh one. */
export interface ActorContext<S = unknown, A = unknown> {
  readonly id: string;
  readonly kind: string;
  /** The arguments of the child spec, as given at spawn (plain data). */
  readonly args: A;
  /** The actor's state: plain, structured-clone-able data. `checkpoint()` saves it as is. */
  state: S;
  /** pino child logger with `ns` = kind and `actor` = id. */
  readonly log: Logger;
  /** Aborted when this instance ends (stop or crash): pass it to anything long-running. */
  readonly signal: AbortSignal;
  /** A typed reference to another actor, by id. */
  ref<P extends Protocol>(id: string): ActorRef<P>;
  /** Save `state` (default: ctx.state) durably under this actor's id. Resolves once on disk. */
  checkpoint(state?: S): Promise<void>;
  /** Remove this actor's checkpoint (e.g. a temporary actor that finished its job). */
  clearCheckpoint(): Promise<void>;
  /** Start a child under a supervisor (default: this actor's own supervisor). */
  spawn<P extends Protocol>(spec: ChildSpec, opts?: { supervisor?: string }): Promise<ActorRef<P>>;
  /** Stop an actor by id (its supervisor will not restart it). */
  stop(id: string): Promise<void>;
  /** Run a pure CPU task in the shared piscina pool (workers/tasks, typed by TaskMap). Transfer buffers, never copy. */
  runTask<N extends TaskName>(name: N, arg: TaskArg<N>, transfer?: Transferable[]): Promise<TaskResult<N>>;
  /** Timers tied to this instance: cleared when it ends, and errors in them count as its crash. */
  setTimeout(fn: () => void, ms: number): NodeJS.Timeout;
  setInterval(fn: () => void, ms: number): NodeJS.Timeout;
  /** Register clean-up to run when the instance ends for any reason (close sockets, files). */
  onCleanup(fn: () => void | Promise<void>): void;
}

/**
 * A handler: the message, the instance's context (its plain state is `ctx.state`) and its live
 * resources (what `open` made; undefined for an actor without `open`).
 */
export type Handler<P extends Protocol, S, A, K extends MsgType<P>, L = undefined> = (
  msg: MsgOfType<P, K>,
  ctx: ActorContext<S, A>,
  live: L,
) => K extends RequestType<P>
  ? MaybePromise<ReplyOf<P, K> | Transferring<ReplyOf<P, K>>>
  : MaybePromise<void>;

export type Handlers<P extends Protocol, S, A, L = undefined> = { [K in MsgType<P>]: Handler<P, S, A, K, L> };

/**
 * When the runtime saves `ctx.state`. `manual` (default): only when the actor calls
 * ctx.checkpoint(). `after-handler`: also after every handler that did not crash (a refusal
 * included: a handler may change state before it refuses), before its reply is sent, so a reply
 * means the change is on disk and no handler can forget to save.
 */
export type PersistPolicy = 'manual' | 'after-handler';

/**
 * An actor kind: its logic and how to start it. A module in actors/<kind>/ exports one as its
 * default export; the runtime imports that module in the thread the actor is placed on.
 */
export interface ActorDefinition<P extends Protocol = Protocol, S = unknown, A = unknown, L = undefined> {
  kind: string;
  /**
   * Messages handled at once. 1 (default) is the classic actor: one message at a time, in order.
   * An actor that waits on I/O (a disk) may allow more; order of completion is then not guaranteed.
   */
  concurrency?: number;
  /**
   * Build the plain state (what a checkpoint holds): `restored` is the last checkpoint (after a
   * restart or a reboot), if any. Restore, then continue.
   */
  init(ctx: ActorContext<S, A>, restored: S | undefined): MaybePromise<S>;
  /**
   * Make what the instance holds while it runs: servers, sockets, open files, the volume, job
   * loops (mediasoup's private fields). Runs after `init`, with `ctx.state` set; its value is
   * handed to every handler. Never checkpointed. If `open` throws, the instance crashes at
   * start: whatever it made before throwing is its own to release (or to register with
   * ctx.onCleanup as it goes).
   */
  open?(ctx: ActorContext<S, A>): MaybePromise<L>;
  /**
   * Release the live resources, once, when the instance ends for any reason (stop, crash,
   * restart), after onStop and before the clean-ups registered with ctx.onCleanup. Without it,
   * the runtime calls `live.close()` when the value has such a method.
   */
  close?(live: L, ctx: ActorContext<S, A>, reason: StopReason): MaybePromise<void>;
  /** When the runtime checkpoints `ctx.state` (default `manual`). */
  persist?: PersistPolicy;
  handlers: Handlers<P, S, A, L>;
  /**
   * Runs once when the instance ends, within the child's shutdown deadline, before the live
   * resources are closed (`live` is undefined if the instance ended before `open` finished).
   */
  onStop?(ctx: ActorContext<S, A>, reason: StopReason, live: L | undefined): MaybePromise<void>;
}

/** Identity function that checks a definition against its protocol, state, args and live types. */
export function defineActor<P extends Protocol, S, A = undefined, L = undefined>(def: ActorDefinition<P, S, A, L>): ActorDefinition<P, S, A, L> {
  return def;
}
