/** What the data path needs from the object store actor. */
import type { Logger } from 'pino';
import type { ActorRef, TaskArg, TaskName, TaskResult } from '../../../runtime/index.js';
import type { VolumeProtocol } from '../../volume/messages.js';
import type { StripeCoderProtocol } from '../../stripe-coder/messages.js';
import type { Metadata } from '../metadata.js';
import type { BufferPool } from './buffers.js';

export interface StoreSettings {
  ioTimeoutMs: number;
  maxObjectBytes: number;
  bodyIdleTimeoutMs: number;
  maxChunkSize: number;
  /** stripes encoded or written at once per PUT, and read ahead per GET */
  stripesInFlight: number;
}

export interface StoreContext {
  meta: Metadata;
  log: Logger;
  settings: StoreSettings;
  /** The actor of a volume that is present and running, or null. */
  volume(id: number): ActorRef<VolumeProtocol> | null;
  /** Volumes that take new slices now, with their free space. */
  writable(): Array<{ id: number; bytesFree: number }>;
  runTask<N extends TaskName>(name: N, arg: TaskArg<N>, transfer?: ArrayBuffer[]): Promise<TaskResult<N>>;
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
