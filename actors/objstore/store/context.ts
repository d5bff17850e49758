/**
 * What the data path needs from the actor that runs it. Two sides, two interfaces:
 * - SliceContext: reading, verifying and relocating slices (the store's GETs and verify-file, and
 *   the maintenance scheduler): the metadata, the volumes, the CPU pool, read buffers.
 * - StoreContext: the store actor's full data path, which also writes objects (PUT limits, where
 *   new slices go, the stripe coders, the paths being written).
 */
import type { Logger } from 'pino';
import { ActorError, type ActorRef, type TaskArg, type TaskName, type TaskResult } from '../../../runtime/index.js';
import type { VolumeProtocol } from '../../volume/messages.js';
import type { StripeCoderProtocol } from '../../stripe-coder/messages.js';
import type { Metadata } from '../metadata.js';
import type { BufferPool } from './buffers.js';

export interface SliceSettings {
  /** a volume request's deadline is twice this */
  ioTimeoutMs: number;
}

export interface SliceContext {
  meta: Metadata;
  log: Logger;
  settings: SliceSettings;
  /** The actor of a volume that is present and running, or null. */
  volume(id: number): ActorRef<VolumeProtocol> | null;
  runTask<N extends TaskName>(name: N, arg: TaskArg<N>, transfer?: ArrayBuffer[]): Promise<TaskResult<N>>;
  /** Read buffers, reused across reads. */
  buffers: BufferPool;
}

export interface StoreSettings extends SliceSettings {
  maxObjectBytes: number;
  bodyIdleTimeoutMs: number;
  /** a GET whose client takes nothing this long is cut (http/stream.ts) */
  sendIdleTimeoutMs: number;
  /** browser origins besides the store's own allowed (protocols/objstore/origin.ts) */
  allowedOrigins: readonly string[];
  maxChunkSize: number;
  /** stripes encoded or written at once per PUT, and read ahead per GET */
  stripesInFlight: number;
}

export interface StoreContext extends SliceContext {
  settings: StoreSettings;
  /** Volumes that take new slices now, with their free space. */
  writable(): Array<{ id: number; bytesFree: number }>;
  /** Why each registered (not deleted) volume takes no new slices: absent, or its flags. */
  unwritable(): Array<{ id: number; why: string[] }>;
  /** The stripe coder a new PUT is pinned to (its MD5 and parity: actors/stripe-coder). */
  stripeCoder(): ActorRef<StripeCoderProtocol>;
  /** Paths with a PUT in progress (a second PUT to one of them is refused at once). */
  pendingPaths: Set<string>;
  /** Stripe and chunk buffers, reused across PUTs. */
  buffers: BufferPool;
}

/** A refusal with its HTTP status; the message names what was wrong. */
export class StoreError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Array<[string, string]>;
  constructor(status: number, code: string, message: string, headers: Array<[string, string]> = []) {
    super(message);
    this.name = 'StoreError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/**
 * The code of a failed slice operation, as faults record it: a volume's refusal code (EIO,
 * CHECKSUM, MISSING, ...) or the runtime's (TIMEOUT, ACTOR_STOPPED, ...), a StoreError's code,
 * else 'ERROR'.
 */
export function errorCode(err: unknown): string {
  if (err instanceof ActorError) return err.appCode ?? err.code;
  if (err instanceof StoreError) return err.code;
  return 'ERROR';
}
