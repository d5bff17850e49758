/**
 * Rebuilding slice chunks from the other slices of an object on disk, a batch of stripes at a
 * time: the one decoder of the slices written on the volumes, shared by the scheduler's moves
 * and repairs (actors/scheduler/relocate.ts) and by a large PUT whose volume failed mid-write
 * (store/put.ts: its missing slice is rebuilt from the slices it already wrote). Every data slice
 * not given is read from its volume (each chunk's CRC checked there); missing data slices are
 * reconstructed from the others and the parity (Reed–Solomon, in the CPU pool); wanted parity
 * slices are encoded again from the data.
 */
import { dataChunkLength, parityChunkLength, type Geometry } from '../../../protocols/objstore/stripes.js';
import type { SliceContext } from './context.js';

/** Fewer than k slices of the object could be read: nothing can be rebuilt. */
export class TooFewSlices extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TooFewSlices';
  }
}

/** Chunks of one slice for a batch of stripes (an empty chunk where a data slice holds none), or null: not read. */
export type BatchChunks = Array<Uint8Array[] | null>;

/**
 * Fill in `slices` (k + m entries, one per slice) for stripes first..last: every data slice, and
 * the slices in `wanted` (data or parity; they are never read: they are what is being rebuilt).
 * A data slice not given is read with `read` (null: it could not be read); parity slices are
 * read only when a data slice is missing. Returns the data slices that were reconstructed and
 * every slice that was rebuilt. Throws TooFewSlices when fewer than k slices read clean.
 */
export async function rebuildBatch(
  ctx: Pick<SliceContext, 'runTask'>,
  g: Geometry,
  first: number,
  last: number,
  slices: BatchChunks,
  wanted: ReadonlySet<number>,
  read: (index: number) => Promise<Uint8Array[] | null>,
  objectId: string,
): Promise<{ missingData: number[]; rebuilt: number[] }> {
  const { k, m } = g;
  const reads = await Promise.all(Array.from({ length: k }, (_, i) => (slices[i] || wanted.has(i) ? Promise.resolve(slices[i] ?? null) : read(i))));
  reads.forEach((r, i) => (slices[i] = r));
  const missingData = Array.from({ length: k }, (_, i) => i).filter((i) => !slices[i]);
  const missingParity = [...wanted].filter((i) => i >= k).sort((a, b) => a - b);
  if (missingData.length) {
    // Read parity (not the ones being rebuilt) to reconstruct.
    const parity = await Promise.all(Array.from({ length: m }, (_, j) => (wanted.has(k + j) ? Promise.resolve(null) : read(k + j))));
    parity.forEach((p, j) => (slices[k + j] = p));
  }
  const present = slices.map((s, i) => (s ? i : -1)).filter((i) => i >= 0);
  const rebuild = [...missingData, ...missingParity.filter((i) => !missingData.includes(i))];
  if (missingData.length && present.length < k) {
    throw new TooFewSlices(`object ${objectId}: only ${present.length} of its ${k + m} slices read clean and ${k} are needed`);
  }
  if (rebuild.length) {
    const out: Uint8Array[][] = rebuild.map(() => []);
    for (let s = first; s <= last; s++) {
      const shard = parityChunkLength(g, s);
      let result: Uint8Array;
      if (missingData.length === 0) {
        const data = new Uint8Array(k * shard);
        for (let i = 0; i < k; i++) data.set(slices[i]![s - first]!.subarray(0, dataChunkLength(g, s, i)), i * shard);
        const r = await ctx.runTask('encode', { k, m, shardSize: shard, data: data.buffer }, [data.buffer]);
        const full = new Uint8Array((k + m) * shard);
        full.set(new Uint8Array(r.data), 0);
        full.set(new Uint8Array(r.parity), k * shard);
        result = full;
      } else {
        const shards = new Uint8Array((k + m) * shard);
        for (const i of present) shards.set(slices[i]![s - first]!.subarray(0, shard), i * shard);
        const r = await ctx.runTask('reconstruct', { k, m, shardSize: shard, shards: shards.buffer, present, wanted: rebuild }, [shards.buffer]);
        result = new Uint8Array(r.shards);
      }
      rebuild.forEach((i, x) => out[x]!.push(result.subarray(i * shard, i * shard + (i < k ? dataChunkLength(g, s, i) : shard))));
    }
    rebuild.forEach((i, x) => (slices[i] = out[x]!));
  }
  return { missingData, rebuilt: rebuild };
}
