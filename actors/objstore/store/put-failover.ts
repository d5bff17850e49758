/**
 * A PUT whose volume failed mid-write (put.ts): the failed slices written again on other
 * volumes. Within the failover window, from the stripes the writer kept (`failover`); beyond it,
 * rebuilt in one read of the slices it committed (`rebuildFailed`, the decoder of moves and
 * repairs: stripe-rebuild.ts), the whole-object MD5 checked on the way (`readBack`, which also
 * feeds a restart from disk). The writer keeps the state; these functions act on it.
 */
import { createHash } from 'node:crypto';
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import { pickVolumes } from '../../../protocols/objstore/layout.js';
import { dataChunkLength, parityChunkLength, sliceHeaderFor, sliceSize, type Geometry } from '../../../protocols/objstore/stripes.js';
import type { ActorRef } from '../../../runtime/index.js';
import type { VolumeProtocol } from '../../volume/messages.js';
import { StoreError, type StoreContext } from './context.js';
import { readSliceChunks } from './get.js';
import { gone, suspectsOf } from './put-refusals.js';
import { rebuildBatch, TooFewSlices, type BatchChunks } from './stripe-rebuild.js';

/** Stripes read back from disk at once when a large PUT rebuilds a failed slice (as moves do). */
const STRIPES_PER_BATCH = 8;

/** A slice that failed on its volume: rewritten elsewhere at the end of the PUT. */
export interface FailedSlice {
  volume: number;
  err: unknown;
}

/** What the failover reads and changes of its writer (ObjectWriter, put.ts). */
export interface FailingWrite {
  readonly id: string;
  readonly geometry: Geometry;
  readonly ctx: StoreContext;
  readonly req: { readonly path: string };
  /** The volume of each slice (a failed slice's replaces its failed one). */
  readonly volumes: number[];
  /** The body's stripes as received, when the object fits the failover window. */
  readonly kept: Uint8Array[] | null;
  readonly failed: Map<number, FailedSlice>;
  readonly failedVolumes: Map<number, string>;
  readonly committed: Set<number>;
  /** The object's record, once its MD5 is known. */
  readonly rec: ObjectRecord | null;
  sliceFailed(index: number, err: unknown): void;
  commitSlice(index: number): Promise<void>;
  /** Name the slices' volumes in the intent; resolves once it is durable. */
  renameIntent(): Promise<void>;
}

function vol(w: FailingWrite, id: number): ActorRef<VolumeProtocol> {
  const ref = w.ctx.volume(id);
  if (!ref) throw gone(id);
  return ref;
}

/**
 * Write every failed slice again, from the kept stripes, on a writable volume that holds no
 * slice of the object and has not failed it (the most free first); a replacement that fails
 * too is replaced in turn. False when too few such volumes are left (finish restarts the
 * object with the layout of the volumes left).
 */
export async function failover(w: FailingWrite): Promise<boolean> {
  while (w.failed.size) {
    const index = w.failed.keys().next().value as number;
    const to = replacementFor(w, index);
    if (to === undefined) return false;
    const from = w.failed.get(index)!.volume;
    w.volumes[index] = to;
    w.failed.delete(index);
    try {
      await rewriteSlice(w, index, to);
      w.ctx.log.info({ objectId: w.id, path: w.req.path, index, from, to }, 'PUT: a failed slice was written again on another volume');
    } catch (err) {
      w.sliceFailed(index, err);
    }
  }
  return true;
}

/**
 * The volume that takes failed slice `index` instead: writable, with room, holding no slice of
 * the object and not failed by this PUT (the most free first, lately failing volumes last).
 */
function replacementFor(w: FailingWrite, index: number): number | undefined {
  const need = sliceSize(w.geometry, index) + 1024 * 1024;
  const holding = new Set(w.volumes);
  const room = w.ctx.writable().filter((v) => !holding.has(v.id) && !w.failedVolumes.has(v.id) && v.bytesFree > need);
  const recent = suspectsOf(w.ctx);
  const fresh = room.filter((v) => !recent.has(v.id));
  return pickVolumes(fresh.length ? fresh : room, 1)?.[0];
}

/**
 * Beyond the failover window: rebuild every failed slice, in one read of the object's committed
 * slices, on a replacement volume each, and commit them. False when a failed slice has no
 * replacement (finish writes the object again with the layout of the volumes left). A
 * replacement that fails is one more failed slice (finish comes back here).
 */
export async function rebuildFailed(w: FailingWrite): Promise<boolean> {
  const g = w.geometry;
  const targets = new Map<number, number>();
  for (const index of w.failed.keys()) {
    const to = replacementFor(w, index);
    if (to === undefined || [...targets.values()].includes(to)) return false;
    targets.set(index, to);
  }
  const wanted = new Set(targets.keys());
  const from = new Map([...targets.keys()].map((i) => [i, w.volumes[i]!]));
  for (const [index, to] of targets) {
    w.volumes[index] = to;
    w.failed.delete(index);
  }
  // The intent names the new volumes before their slices can be committed.
  const intent = w.renameIntent();
  intent.catch(() => undefined);
  const live = new Map<number, ActorRef<VolumeProtocol>>();
  for (const [index, to] of targets) {
    try {
      const ref = vol(w, to);
      await ref.request({ type: 'create', objectId: w.id, index, header: sliceHeaderFor(g, w.id, index) });
      live.set(index, ref);
    } catch (err) {
      w.sliceFailed(index, err);
    }
  }
  for await (const { first, last, slices } of readBack(w, wanted)) {
    // The batch's appends are all sent at once (a volume takes a slice's messages in the order
    // they were sent), to every target in parallel.
    await Promise.all(
      [...live].map(async ([index, ref]) => {
        const writes: Array<Promise<unknown>> = [];
        for (let s = first; s <= last; s++) {
          const len = index < g.k ? dataChunkLength(g, s, index) : parityChunkLength(g, s);
          if (len === 0) continue;
          const chunk = new ArrayBuffer(len);
          new Uint8Array(chunk).set(slices[index]![s - first]!.subarray(0, len));
          writes.push(ref.request({ type: 'append', objectId: w.id, index, chunk: s, data: chunk }, { transfer: [chunk] }));
        }
        try {
          await Promise.all(writes);
        } catch (err) {
          live.delete(index);
          w.sliceFailed(index, err);
        }
      }),
    );
  }
  await intent;
  await Promise.all([...live.keys()].map((index) => w.commitSlice(index)));
  for (const index of live.keys()) {
    if (w.committed.has(index)) w.ctx.log.info({ objectId: w.id, path: w.req.path, index, from: from.get(index), to: targets.get(index) }, 'PUT: a failed slice was rebuilt from the written ones on another volume');
  }
  return true;
}

/**
 * The object's stripes read back from the slices this PUT committed, batch by batch: every data
 * slice and the `wanted` ones (never read), rebuilt where a slice is missing. A slice that cannot
 * be read is one more failed slice. The whole-object MD5 is checked once the last batch is
 * taken: a rebuild that does not reproduce it fails the PUT before anything more is committed.
 */
export async function* readBack(w: FailingWrite, wanted: ReadonlySet<number>): AsyncGenerator<{ first: number; last: number; slices: BatchChunks }> {
  const g = w.geometry;
  const rec = w.rec!;
  const src: ObjectRecord = { ...rec, dataVolumes: w.volumes.slice(0, g.k), parityVolumes: w.volumes.slice(g.k) };
  const md5 = createHash('md5');
  for (let first = 0; first < g.stripes; first += STRIPES_PER_BATCH) {
    const last = Math.min(g.stripes - 1, first + STRIPES_PER_BATCH - 1);
    const slices: BatchChunks = new Array(g.k + g.m).fill(null);
    const read = async (index: number): Promise<Uint8Array[] | null> => {
      if (wanted.has(index) || w.failed.has(index)) return null;
      try {
        return await readSliceChunks(w.ctx, src, g, index, first, last);
      } catch (err) {
        w.sliceFailed(index, err);
        return null;
      }
    };
    try {
      await rebuildBatch(w.ctx, g, first, last, slices, wanted, read, w.id);
    } catch (err) {
      if (err instanceof TooFewSlices) throw new StoreError(503, 'VOLUME_WRITE_FAILED', `too many slices failed while the object was written: ${err.message}`);
      throw err;
    }
    for (let s = first; s <= last; s++) {
      for (let i = 0; i < g.k; i++) {
        const len = dataChunkLength(g, s, i);
        if (len > 0) md5.update(slices[i]![s - first]!.subarray(0, len));
      }
    }
    yield { first, last, slices };
  }
  const got = md5.digest('hex');
  if (got !== rec.md5) throw new StoreError(500, 'REBUILD_MISMATCH', `the object read back from its slices hashes to ${got}, not to the body's MD5 ${rec.md5}; nothing was stored`);
}

/** Write slice `index` from the kept stripes on volume `to`, and commit it. */
async function rewriteSlice(w: FailingWrite, index: number, to: number): Promise<void> {
  const g = w.geometry;
  // The intent names the new volume before its slice can be committed (boot clean-up finds it).
  const flushed = w.renameIntent();
  flushed.catch(() => undefined);
  const ref = vol(w, to);
  await ref.request({ type: 'create', objectId: w.id, index, header: sliceHeaderFor(g, w.id, index) });
  for (let s = 0; s < g.stripes; s++) {
    const chunk = await keptChunk(w, index, s);
    if (chunk) await ref.request({ type: 'append', objectId: w.id, index, chunk: s, data: chunk });
  }
  await flushed;
  await ref.request({ type: 'commit', objectId: w.id, index });
  w.committed.add(index);
}

/**
 * Chunk `s` of slice `index`, from the kept stripe: a data chunk is the stripe's bytes (null
 * when the short last stripe leaves the slice none), a parity chunk is encoded again in the CPU
 * pool (the same code as the stripe coder's: workers/tasks).
 */
async function keptChunk(w: FailingWrite, index: number, s: number): Promise<Uint8Array | null> {
  const g = w.geometry;
  const raw = w.kept![s]!;
  if (index < g.k) {
    const len = dataChunkLength(g, s, index);
    return len > 0 ? raw.subarray(index * g.chunkSize, index * g.chunkSize + len) : null;
  }
  const shard = parityChunkLength(g, s);
  const data = new Uint8Array(g.k * shard);
  for (let i = 0; i < g.k; i++) data.set(raw.subarray(i * g.chunkSize, i * g.chunkSize + dataChunkLength(g, s, i)), i * shard);
  const r = await w.ctx.runTask('encode', { k: g.k, m: g.m, shardSize: shard, data: data.buffer }, [data.buffer]);
  return new Uint8Array(r.parity, (index - g.k) * shard, shard);
}
