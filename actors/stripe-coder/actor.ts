/**
 * The stripe coder: MD5 and parity of PUT stripes, off the thread that receives the bodies.
 *
 * The object store's thread receives every body; hashing it there (MD5 runs at about 600 MiB/s
 * on one core) made that thread the limit of a PUT stream. A stream's MD5 must see its bytes in
 * order, which a pool of interchangeable workers does not guarantee, so each PUT is pinned to one
 * coder (`objstore.stripes.N`, a dedicated thread each) and its stripes arrive in order on one
 * channel. The parity of a stripe is computed here too (the Reed–Solomon wrapper of the object
 * store's data-path library, actors/objstore/store/erasure.ts), which saves the pool's round trip.
 *
 * Order: the runtime starts handlers in arrival order, and a stripe's handler checks it and adds
 * it to the hash synchronously, before its first await; only the parity is awaited. So several
 * stripes are handled at once (their parity computed in parallel on the libuv pool) while the hash
 * still sees them in order. With one stripe at a time, a PUT's stripes queued behind each other's
 * parity and the PUT's body was held back more than half the time.
 */
import { createHash, type Hash } from 'node:crypto';
import { defineActor, ReplyError, withTransfer } from '../../runtime/index.js';
// The wrapper alone, not the library's face: this thread needs no metadata (LMDB) or volumes.
import { encodeInto } from '../objstore/store/erasure.js';
import type { StripeCoderArgs, StripeCoderProtocol } from './messages.js';

interface Put {
  hash: Hash;
  next: number;
}

const bad = (message: string) => new ReplyError('BAD_REQUEST', message);
const isCount = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/**
 * The live value: the running MD5 of each PUT, by its object id. Hash objects are not plain data,
 * so they are never state (nothing is checkpointed: a restarted coder refuses the PUTs it held).
 */
type Hashes = Map<string, Put>;

export default defineActor<StripeCoderProtocol, null, StripeCoderArgs, Hashes>({
  kind: 'stripe-coder',
  concurrency: 32,
  init: () => null,
  open: () => new Map(),
  handlers: {
    async stripe(msg, ctx, puts) {
      const { put, seq, k, m, shard, data, filled, lengths, parity } = msg;
      if (typeof put !== 'string' || put === '') throw bad('put must name the PUT (its object id)');
      if (!isCount(seq, 0, Number.MAX_SAFE_INTEGER)) throw bad(`seq must be a stripe number, got ${JSON.stringify(seq)}`);
      if (!isCount(k, 1, 24) || !isCount(m, 0, 6)) throw bad(`k must be 1..24 and m 0..6, got ${k}+${m}`);
      if (!isCount(shard, 8, 1 << 30) || shard % 8 !== 0) throw bad(`shard must be a positive multiple of 8, got ${JSON.stringify(shard)}`);
      if (!(data instanceof ArrayBuffer) && !(data instanceof SharedArrayBuffer)) throw bad('data must be an ArrayBuffer or a SharedArrayBuffer');
      if (!isCount(filled, 0, data.byteLength)) throw bad(`filled must be 0..${data.byteLength}, got ${JSON.stringify(filled)}`);
      // Every check before the PUT's state is touched: a refused stripe changes nothing.
      if (lengths !== null) {
        if (!Array.isArray(lengths) || lengths.length !== k || !lengths.every((l) => isCount(l, 0, shard))) throw bad(`lengths must be ${k} chunk lengths of at most ${shard} bytes`);
        const sum = lengths.reduce((a, b) => a + b, 0);
        if (sum !== filled) throw bad(`lengths add up to ${sum} bytes, the stripe holds ${filled}`);
      } else if (data.byteLength !== k * shard || filled !== k * shard) throw bad(`a full stripe is k * shard = ${k * shard} bytes, got ${filled} of ${data.byteLength}`);
      if (m > 0 && (!(parity instanceof ArrayBuffer || parity instanceof SharedArrayBuffer) || parity.byteLength !== m * shard)) throw bad(`parity must be an ArrayBuffer or a SharedArrayBuffer of m * shard = ${m * shard} bytes`);
      let state = puts.get(put);
      if (!state && seq !== 0) throw new ReplyError('OUT_OF_ORDER', `stripe ${seq} of ${put} came first: the coder holds no hash of that PUT (restarted?)`);
      if (state && seq !== state.next) throw new ReplyError('OUT_OF_ORDER', `stripe ${seq} of ${put} came when stripe ${state.next} was expected`);
      if (!state) {
        if (puts.size >= (ctx.args.maxPuts ?? 4096)) puts.delete(puts.keys().next().value!);
        state = { hash: createHash('md5'), next: 0 };
        puts.set(put, state);
      }
      state.next++;
      state.hash.update(new Uint8Array(data, 0, filled));
      let laid: ArrayBuffer | SharedArrayBuffer = data;
      if (lengths !== null) {
        const out = new Uint8Array(k * shard);
        const src = new Uint8Array(data);
        let from = 0;
        lengths.forEach((len, i) => {
          out.set(src.subarray(from, from + len), i * shard);
          from += len;
        });
        laid = out.buffer;
      }
      if (m > 0) await encodeInto(k, m, shard, new Uint8Array(laid, 0, k * shard), new Uint8Array(parity!, 0, m * shard));
      // ArrayBuffers go back moved; shared memory is shared (it cannot be moved).
      const moved = [laid, parity].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
      return withTransfer({ data: laid, parity: m > 0 ? parity! : null }, moved);
    },
    digest(msg, _ctx, puts) {
      const state = puts.get(msg.put);
      if (!state && msg.stripes === 0) return createHash('md5').digest('hex');
      if (!state) throw new ReplyError('OUT_OF_ORDER', `no hash of ${msg.put} here (no stripe came, or the coder restarted)`);
      if (state.next !== msg.stripes) throw new ReplyError('OUT_OF_ORDER', `${msg.put}: ${state.next} stripes hashed, the writer sent ${msg.stripes}`);
      puts.delete(msg.put);
      return state.hash.digest('hex');
    },
    forget(msg, _ctx, puts) {
      puts.delete(msg.put);
      return null;
    },
  },
});
