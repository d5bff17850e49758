import type { Logger } from 'pino';
import type { ActorRef, MsgOfType, MsgType, Protocol, ReplyOf, RequestType, Transferable, Transferring } from './protocol.js';
import type { ChildSpec } from '../supervisor/spec.js';

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
  /** Run a pure CPU task in the shared piscina pool (workers/tasks). Transfer buffers, never copy. */
  runTask<R = unknown>(name: string, arg: unknown, transfer?: Transferable[]): Promise<R>;
  /** Timers tied to this instance: cleared when it ends, and errors in them count as its crash. */
  setTimeout(fn: () => void, ms: number): NodeJS.Timeout;
  setInterval(fn: () => void, ms: number): NodeJS.Timeout;
  /** Register clean-up to run when the instance ends for any reason (close sockets, files). */
  onCleanup(fn: () => void | Promise<void>): void;
}

export type Handler<P extends Protocol, S, A, K extends MsgType<P>> = (
  msg: MsgOfType<P, K>,
  ctx: ActorContext<S, A>,
) => K extends RequestType<P>
  ? MaybePromise<ReplyOf<P, K> | Transferring<ReplyOf<P, K>>>
  : MaybePromise<void>;

export type Handlers<P extends Protocol, S, A> = { [K in MsgType<P>]: Handler<P, S, A, K> };

/**
 * An actor kind: its logic and how to start it. A module in actors/<kind>/ exports one as its
 * default export; the runtime imports that module in the thread the actor is placed on.
 */
export interface ActorDefinition<P extends Protocol = Protocol, S = unknown, A = unknown> {
  kind: string;
  /**
   * Messages handled at once. 1 (default) is the classic actor: one message at a time, in order.
   * An actor that waits on I/O (a disk) may allow more; order of completion is then not guaranteed.
   */
  concurrency?: number;
  /** Build the state: `restored` is the last checkpoint (after a restart or a reboot), if any. */
  init(ctx: ActorContext<S, A>, restored: S | undefined): MaybePromise<S>;
  handlers: Handlers<P, S, A>;
  /** Runs once when the instance ends, within the child's shutdown deadline. */
  onStop?(ctx: ActorContext<S, A>, reason: StopReason): MaybePromise<void>;
}

/** Identity function that checks a definition against its protocol, state and args types. */
export function defineActor<P extends Protocol, S, A = undefined>(def: ActorDefinition<P, S, A>): ActorDefinition<P, S, A> {
  return def;
}
