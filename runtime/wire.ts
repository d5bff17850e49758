/**
 * Everything that crosses threads, declared once as plain data (piscina's habit).
 *
 * Data plane: Envelopes on MessagePorts between routers (one port per pair of threads).
 * Control plane: comlink-wrapped MainApi (main thread, offered to hosts) and HostApi
 * (each worker thread, offered to the main thread).
 */
import type { MessagePort } from 'node:worker_threads';
import type { WireError } from './errors.js';
import type { Message, Transferable } from './actor/protocol.js';
import type { ChildSpec } from './supervisor/spec.js';
import type { StopReason } from './actor/define.js';

export type Envelope =
  | { k: 'cast'; to: string; body: Message; h?: number }
  | { k: 'req'; to: string; body: Message; rid: number; h?: number }
  | { k: 'rep'; rid: number; ok: true; value: unknown }
  | { k: 'rep'; rid: number; ok: false; error: WireError }
  /** Returned by a router that does not host `to` (stale location): the sender re-resolves once. */
  | { k: 'miss'; env: Extract<Envelope, { k: 'cast' | 'req' }> };

export type Delivery = Extract<Envelope, { k: 'cast' | 'req' }>;
export type Reply = Extract<Envelope, { k: 'rep' }>;

export interface SpawnRequest {
  id: string;
  module: string;
  args: unknown;
  /** Id of the supervisor the child belongs to (for ctx.spawn defaults). */
  supervisor: string;
  /** Deadline for onStop and clean-ups when the instance ends after a crash. */
  shutdownMs: number;
}

export interface SpawnResult {
  kind: string;
}

export interface StopResult {
  /** true: onStop finished within the deadline; false: the instance was abandoned. */
  clean: boolean;
}

/** What a worker thread's host offers the main thread. */
export interface HostApi {
  spawn(req: SpawnRequest): Promise<SpawnResult>;
  /** Restart an actor in place after a crash (same thread, fresh instance from its checkpoint). */
  restart(id: string): Promise<SpawnResult>;
  stop(id: string, reason: StopReason, deadlineMs: number): Promise<StopResult>;
  /** Take one end of a data channel to another thread. */
  connect(threadId: number, port: MessagePort): void;
  /** A thread died: drop its port and fail requests waiting on it. */
  forgetThread(threadId: number): void;
  metrics(): Promise<unknown[]>;
  ping(): string;
}

/** Crash report from a host: which actor, why. */
export interface CrashReport {
  id: string;
  kind: string;
  cause: 'handler' | 'uncaught' | 'unhandled-rejection' | 'init';
  message: string;
  stack?: string;
}

/** What the main thread offers every host. */
export interface MainApi {
  locate(id: string): number | null;
  /** Ask for a data channel to `threadId`; the other end is handed to that thread. */
  connect(fromThreadId: number, toThreadId: number): Promise<MessagePort>;
  crashed(threadId: number, report: CrashReport): void;
  spawn(spec: ChildSpec, supervisor: string): Promise<void>;
  stop(id: string): Promise<void>;
  /** `job.transfer` lists the buffers inside `job.arg` that were moved, not copied. */
  runTask(name: string, job: { arg: unknown; transfer: Transferable[] }): Promise<unknown>;
}

/** workerData of a host thread. */
export interface HostBoot {
  group: string | null;
  stateDir: string;
  logLevel: string;
  requestTimeoutMs: number;
  mailboxCapacity: number;
  /** host exposes HostApi here */
  hostPort: MessagePort;
  /** host wraps MainApi here */
  mainPort: MessagePort;
  /** data channel to the main thread's router */
  dataPort: MessagePort;
}
