/**
 * What a stripe coder accepts. A PUT sends its stripes, in order, to one coder (the writer picks
 * one per PUT): the coder adds each stripe's bytes to the PUT's MD5 and computes the stripe's
 * parity, so neither costs the thread that receives the HTTP body. `digest` ends the PUT's hash
 * and returns it; `forget` drops it (an aborted PUT). Refusals are ReplyErrors: BAD_REQUEST (a
 * malformed message), OUT_OF_ORDER (a stripe that is not the PUT's next one: also what a PUT gets
 * after the coder restarted and lost its hash, so a PUT never answers with a partial MD5).
 */
import type { Protocol } from '../../runtime/index.js';

export type StripeCoderMsg =
  | {
      type: 'stripe';
      /** the PUT's object id */
      put: string;
      /** stripe number, from 0 */
      seq: number;
      k: number;
      m: number;
      /** bytes per shard of this stripe (a multiple of 8) */
      shard: number;
      /**
       * the stripe's bytes as received: `filled` of them count. Shared memory (the writer's
       * stripes are) is read where it is; an ArrayBuffer is moved in and back.
       */
      data: ArrayBuffer | SharedArrayBuffer;
      filled: number;
      /** the length of each data chunk when the stripe is not k full shards (the last stripe), else null */
      lengths: number[] | null;
      /** where the parity goes (m * shard bytes): shared, or moved in and back; null when m = 0 */
      parity: ArrayBuffer | SharedArrayBuffer | null;
    }
  | { type: 'digest'; put: string; stripes: number }
  | { type: 'forget'; put: string };

export interface StripeResult {
  /**
   * k shards of `shard` bytes back to back: the input itself when it was already laid out so (the
   * same shared memory, or the ArrayBuffer moved back), else a new ArrayBuffer
   */
  data: ArrayBuffer | SharedArrayBuffer;
  parity: ArrayBuffer | SharedArrayBuffer | null;
}

export interface StripeCoderReplies {
  stripe: StripeResult;
  /** the MD5 of every stripe's bytes, hex */
  digest: string;
  forget: null;
}

export type StripeCoderProtocol = Protocol<StripeCoderMsg, StripeCoderReplies>;

export interface StripeCoderArgs {
  /** PUTs whose hash is kept at most (a PUT that never says digest or forget is dropped first) */
  maxPuts?: number;
}

export const STRIPE_CODER_PREFIX = 'objstore.stripes.';
export const stripeCoderId = (n: number) => `${STRIPE_CODER_PREFIX}${n}`;
