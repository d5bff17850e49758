/**
 * Reading a byte range of an object: stripes are read from the data slices (a few stripes per
 * request, the next batch read ahead while the current one is sent). A slice that is missing,
 * unreadable (EIO, timeout) or fails its chunk checksum is recorded as a fault and the stripes
 * are rebuilt from the other slices with Reed–Solomon. With more bad slices than parity, the
 * read fails: no unverified byte is ever returned.
 */
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import { dataChunkLength, geometry, parityChunkLength, stripeOffset, stripeRange, type Geometry } from '../../../protocols/objstore/stripes.js';
import { volumeOf } from '../../../protocols/objstore/layout.js';
import type { ReadReply } from '../../volume/messages.js';
import { errorCode, StoreError, type SliceContext, type StoreSettings } from './context.js';
import { ReadBudget } from './read-budget.js';

/**
 * Batches read ahead of the one being sent. One: a GET holds at most two batches (32 MiB with
 * 256 KiB chunks and k = 4); two more in flight measured no better on the VM (the volumes' reads,
 * not the pipeline, were the limit) and would hold half as much memory again.
 */
const READ_AHEAD = 1;

/** Read buffers all GETs of this thread may hold at once (read-budget.ts). */
const budget = new ReadBudget(256 << 20);

/** The read budget's figures, for GET /$/debug. */
export function readBuffers(): { limit: number; inUse: number; queued: number } {
  return { limit: budget.limit, inUse: budget.inUse, queued: budget.queued };
}

interface Batch {
  first: number;
  last: number;
  /** pooled read buffers the batch's chunks are views of: back to the pool once it is sent */
  buffers: ArrayBuffer[];
  /** bytes of the read budget the batch holds (0 once given back) */
  held: number;
}

/** Chunks of one slice for stripes first..last (each entry one stripe's chunk, or empty). */
type SliceChunks = Uint8Array[];

/**
 * Chunks of slice `index` of an object for stripes first..last (an empty array where a data
 * slice holds no chunk), read from its volume, which checks every chunk's CRC32C.
 */
export async function readSliceChunks(ctx: SliceContext, rec: ObjectRecord, g: Geometry, index: number, first: number, last: number, kept?: ArrayBuffer[]): Promise<Uint8Array[]> {
  const isData = index < g.k;
  const lens: number[] = [];
  for (let s = first; s <= last; s++) lens.push(isData ? dataChunkLength(g, s, index) : parityChunkLength(g, s));
  const count = lens.filter((l) => l > 0).length;
  if (count === 0) return lens.map(() => new Uint8Array(0));
  const volumeId = volumeOf(rec, index);
  const ref = ctx.volume(volumeId);
  if (!ref) throw new StoreError(503, 'MISSING', `volume ${volumeId} is not present`);
  // With `kept`, the read goes into a pooled buffer, which the caller gives back once it has
  // used the chunks (they are views of it).
  const into = kept ? ctx.buffers.take(lens.reduce((a, b) => a + b, 0)) : undefined;
  const r: ReadReply = await ref.request({ type: 'read', objectId: rec.id, index, firstChunk: first, count, into }, { timeoutMs: ctx.settings.ioTimeoutMs * 2, transfer: into ? [into] : [] });
  kept?.push(r.data);
  const bytes = new Uint8Array(r.data);
  const out: Uint8Array[] = [];
  let off = 0;
  let c = 0;
  for (const want of lens) {
    if (want === 0) {
      out.push(new Uint8Array(0));
      continue;
    }
    const got = r.lengths[c++];
    if (got !== want) throw new StoreError(503, 'BAD_SLICE', `slice ${index} of ${rec.id} has a chunk of ${got} bytes where ${want} were expected`);
    out.push(bytes.subarray(off, off + got));
    off += got;
  }
  return out;
}

/** What a GET reads with: the slice side of the data path, and how many stripes to read at once. */
export type ReaderContext = SliceContext & { settings: Pick<StoreSettings, 'ioTimeoutMs' | 'stripesInFlight'> };

export class ObjectReader {
  private readonly ctx: ReaderContext;
  private readonly rec: ObjectRecord;
  private readonly g: Geometry;
  /** slices found bad during this read: not asked again */
  private readonly bad = new Set<number>();

  constructor(ctx: ReaderContext, rec: ObjectRecord) {
    this.ctx = ctx;
    this.rec = rec;
    this.g = geometry(rec.size, rec.k, rec.m, rec.chunkSize);
  }

  /**
   * The bytes start..end (inclusive), in pieces (views of pooled read buffers, valid until the
   * next piece is asked for). Stripes are read in batches of 2 × `stripesInFlight` (16 by
   * default: 4 MiB per slice read with 256 KiB chunks; on the VM, O_DIRECT reads of 4 MiB ran
   * ~1.5× faster than of 1-2 MiB), one batch read ahead while the previous one is sent.
   */
  async *range(start: number, end: number): AsyncGenerator<Uint8Array> {
    if (this.g.size === 0 || end < start) return;
    const { first, last } = stripeRange(this.g, start, end);
    const per = Math.max(1, 2 * this.ctx.settings.stripesInFlight);
    const batches: Batch[] = [];
    for (let s = first; s <= last; s += per) batches.push({ first: s, last: Math.min(last, s + per - 1), buffers: [], held: 0 });
    // Reads of the next batches run while a batch is sent (READ_AHEAD of them at most); each
    // first takes its bytes from the thread's read budget.
    const reads: Array<Promise<Uint8Array[][]>> = [];
    const startRead = (b: number) => {
      const batch = batches[b];
      if (!batch) return;
      const bytes = (batch.last - batch.first + 1) * this.g.k * this.g.chunkSize;
      // Batch 0 is this GET's first; the others are asked for while it still holds one.
      const p = budget.acquire(bytes, b === 0 ? 'first' : 'ahead').then(() => {
        batch.held = bytes;
        return this.readBatch(batch);
      });
      p.catch(() => undefined);
      reads[b] = p;
    };
    const done = (batch: Batch, reuse: boolean) => {
      if (reuse) for (const buf of batch.buffers) this.ctx.buffers.give(buf);
      budget.release(batch.held);
      batch.held = 0;
    };
    try {
      for (let b = 0; b < READ_AHEAD; b++) startRead(b);
      for (let b = 0; b < batches.length; b++) {
        const batch = batches[b]!;
        const current = await reads[b]!;
        startRead(b + READ_AHEAD);
        for (let s = batch.first; s <= batch.last; s++) {
          // A stripe is its data chunks one after the other: each piece is a view of a read buffer.
          let off = stripeOffset(this.g, s);
          for (const chunk of current[s - batch.first]!) {
            const from = Math.max(start, off) - off;
            const to = Math.min(end + 1, off + chunk.byteLength) - off;
            if (to > from) yield chunk.subarray(from, to);
            off += chunk.byteLength;
          }
        }
        // The consumer asked for more: it is done with this batch's pieces.
        done(batch, true);
      }
    } finally {
      // A read that failed, or a consumer that stopped: the budget held by every batch started
      // comes back once its read has settled (its buffers are dropped, not reused).
      for (let b = 0; b < batches.length; b++) {
        const read = reads[b];
        const batch = batches[b]!;
        if (read) void read.then(() => undefined, () => undefined).then(() => batch.held && done(batch, false));
      }
    }
  }

  /** The object bytes of stripes first..last: per stripe, its data chunks in order. */
  private async readBatch(batch: Batch): Promise<Uint8Array[][]> {
    const { k } = this.g;
    const data: Array<SliceChunks | null> = await Promise.all(
      Array.from({ length: k }, (_, i) => this.readSlice(i, batch).catch((err: unknown) => this.failed(i, err))),
    );
    const missing = data.map((d, i) => (d ? -1 : i)).filter((i) => i >= 0);
    if (missing.length) await this.rebuild(batch, data, missing);
    const out: Uint8Array[][] = [];
    for (let s = batch.first; s <= batch.last; s++) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < k; i++) {
        const len = dataChunkLength(this.g, s, i);
        if (len > 0) chunks.push(data[i]![s - batch.first]!.subarray(0, len));
      }
      out.push(chunks);
    }
    return out;
  }

  /** Chunks of slice `index` for the batch's stripes (data slices hold no chunk where the data ends). */
  private async readSlice(index: number, batch: Batch): Promise<SliceChunks> {
    if (this.bad.has(index)) throw new Error(`slice ${index} already found bad`);
    return readSliceChunks(this.ctx, this.rec, this.g, index, batch.first, batch.last, batch.buffers);
  }

  /** A slice could not be read: remember it, record the fault, return null (throws if the object is gone). */
  private failed(index: number, err: unknown): null {
    const code = errorCode(err);
    const message = (err as Error).message ?? String(err);
    if (!this.bad.has(index)) {
      this.bad.add(index);
      const volumeId = volumeOf(this.rec, index);
      // A slice gone because its object was deleted, or relocated (drain, rebalance, repair)
      // since this read began: not a fault (recordFault checks again, in its transaction).
      const now = this.ctx.meta.objects.get(this.rec.id);
      if (!now) throw new StoreError(404, 'NO_SUCH_OBJECT', `object ${this.rec.id} was deleted while it was being read`);
      if (volumeOf(now, index) !== volumeId) return null;
      this.ctx.log.warn({ objectId: this.rec.id, sliceIndex: index, volumeId, code, err: message }, 'bad slice found by a read; reconstructing');
      void this.ctx.meta.recordFault({ objectId: this.rec.id, sliceIndex: index, volumeId, code, message }).catch(() => undefined);
    }
    return null;
  }

  /** Fill in the missing data slices of a batch from the others and the parity. */
  private async rebuild(batch: Batch, data: Array<SliceChunks | null>, missing: number[]): Promise<void> {
    const { k, m } = this.g;
    const parity: Array<SliceChunks | null> = await Promise.all(
      Array.from({ length: m }, (_, j) => this.readSlice(k + j, batch).catch((err: unknown) => this.failed(k + j, err))),
    );
    const all = [...data, ...parity];
    const present = all.map((d, i) => (d ? i : -1)).filter((i) => i >= 0);
    if (present.length < k) {
      throw new StoreError(503, 'INSUFFICIENT_SLICES', `object ${this.rec.id} cannot be read: ${k + m - present.length} of its ${k + m} slices are bad and parity covers ${m}`);
    }
    const rebuilt: SliceChunks[] = missing.map(() => []);
    for (let s = batch.first; s <= batch.last; s++) {
      const shard = parityChunkLength(this.g, s);
      const shards = new Uint8Array((k + m) * shard);
      for (const i of present) shards.set(all[i]![s - batch.first]!.subarray(0, shard), i * shard);
      const r = await this.ctx.runTask('reconstruct', { k, m, shardSize: shard, shards: shards.buffer, present, wanted: missing }, [shards.buffer]);
      const out = new Uint8Array(r.shards);
      missing.forEach((i, n) => rebuilt[n]!.push(out.subarray(i * shard, i * shard + dataChunkLength(this.g, s, i))));
    }
    missing.forEach((i, n) => (data[i] = rebuilt[n]!));
  }
}
