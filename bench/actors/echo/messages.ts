import type { Protocol } from '../../../runtime/index.js';
import type { CastLoad, CastResult, EchoRequest, LoadResult, RequestLoad } from '../../lib/load.js';

/** The benchmark's actor: answers echoes, counts casts, and drives load at another echo actor. */
export type EchoMsg =
  /** Reply the byte length of `data` (0 without), or `data` itself moved back when `back`. */
  | EchoRequest
  /** Cast: counted, nothing else. */
  | { type: 'tick' }
  /** Casts counted since start. */
  | { type: 'count' }
  /** Run a request/reply load against the echo actor `target` from this thread. */
  | { type: 'drive'; target: string; load: RequestLoad }
  /** Send casts to the echo actor `target` from this thread. */
  | { type: 'flood'; target: string; load: CastLoad }
  /** Thread id and heap of the thread this actor runs on (after a full GC with `gc`, if exposed). */
  | { type: 'where'; gc?: boolean };

export interface WhereReply {
  threadId: number;
  /** V8 heap of this thread's isolate, bytes. */
  heapUsed: number;
  heapTotal: number;
}

export interface EchoReplies {
  echo: number | ArrayBuffer;
  count: number;
  drive: LoadResult;
  flood: CastResult;
  where: WhereReply;
}

export type EchoProtocol = Protocol<EchoMsg, EchoReplies>;

export interface EchoState {
  ticks: number;
}
