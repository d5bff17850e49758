/**
 * Writing one object: the body arrives in pieces, is cut into stripes of k chunks, each stripe
 * is erasure-coded in the CPU pool (m parity chunks), and every chunk is appended to its slice
 * on its own volume. Nothing is visible until every slice is committed (fsynced) and the
 * record is committed in LMDB, last. An intent record, written first, lets a crash at any
 * point be cleaned up at boot.
 *
 * A volume that fails mid-write (EIO, a timeout, its actor gone) does not fail the PUT: the
 * failure is recorded on the volume (Metadata.recordWriteFault: the health monitor counts it), the
 * volume is left out of new PUTs for a while, and the failed slice is written again on another
 * writable volume that holds no slice of the object. Objects up to FAILOVER_WINDOW_BYTES keep the
 * body's stripes until the end and rewrite the slice from them; a larger object keeps writing its
 * other slices (while at least k are left), commits them when the body has ended, and rebuilds the
 * missing slice from them on disk (the decoder of moves and repairs: stripe-rebuild.ts), checking
 * the whole-object MD5. When no such volume is left, the object is written again (from the kept
 * stripes, or read back from its slices on disk) with the layout of the volumes left
 * (writeLayout: never without parity on a fleet of several volumes, refused below two).
 */
import { randomBytes } from 'node:crypto';
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import { chunkSizeFor, placeSlices, writeLayout } from '../../../protocols/objstore/layout.js';
import { newObjectId } from '../../../protocols/objstore/object-id.js';
import { dataChunkLength, geometry, parityChunkLength, sliceHeaderFor, type Geometry } from '../../../protocols/objstore/stripes.js';
import { ActorError, refusalOf, type ActorRef } from '../../../runtime/index.js';
import type { VolumeProtocol } from '../../volume/messages.js';
import type { StripeCoderProtocol } from '../../stripe-coder/messages.js';
import { BufferPool } from './buffers.js';
import { errorCode, StoreError, type StoreContext } from './context.js';
import { removeSlices } from './remove.js';
import { writeSliceRecords } from './slice-records.js';
import { conflictError, gone, noWritableVolume, suspectsOf, tooFewWritable } from './put-refusals.js';
import { failover, rebuildFailed, readBack, type FailedSlice, type FailingWrite } from './put-failover.js';

export { conflictError };

/**
 * Stripes and their parity live in shared memory: the stripe coder reads a stripe and writes its
 * parity where they are, and each volume copies its chunk out of them, so a stripe is neither
 * copied chunk by chunk on this thread nor moved between threads (both showed in profiles of a
 * PUT, with the garbage collection of the buffers moved). One pool per thread.
 */
const shared = new BufferPool<SharedArrayBuffer>({ shared: true });

/**
 * Objects up to this size keep their stripes until the PUT ends, so that a slice whose volume
 * fails can be written again elsewhere from memory (the memory: the body once, parity not kept;
 * docs/object-store.md, "When a disk fails during a PUT"). A larger PUT whose volume fails
 * rebuilds the slice from the slices it wrote on disk instead (one more read of the object).
 */
export const FAILOVER_WINDOW_BYTES = 64 * 1024 * 1024;


export interface PutRequest {
  path: string;
  size: number;
  mime: string;
  /** hex, lower case, when the client sent Content-MD5 */
  expectedMd5: string | null;
}

/** A stripe ready to be written: its shared buffers and the data laid out as k shards. */
interface Encoded {
  /** the shared stripe buffer (back to the pool once written) */
  stripe: SharedArrayBuffer;
  /** k shards of `shard` bytes: the stripe itself, or a laid-out copy for a short stripe */
  data: ArrayBuffer | SharedArrayBuffer;
  parity: SharedArrayBuffer | null;
  shard: number;
}

export class ObjectWriter implements FailingWrite {
  readonly id: string;
  /** The object's stripes: k, m, chunk size (protocols/objstore/stripes.ts). */
  readonly geometry: Geometry;
  readonly ctx: StoreContext;
  readonly req: PutRequest;
  /** The volume of each slice (a failed slice's replaces its failed one). */
  readonly volumes: number[];
  /** The body's stripes as received, kept until the end when the object fits the failover window. */
  readonly kept: Uint8Array[] | null;
  /** Slices whose volume failed (index → the volume and its error): rewritten elsewhere by finish. */
  readonly failed = new Map<number, FailedSlice>();
  /** Volumes that failed during this PUT, with why. */
  readonly failedVolumes = new Map<number, string>();
  /** MD5 and parity of the stripes, in order, on another thread. */
  private readonly coder: ActorRef<StripeCoderProtocol>;
  private stripe: Uint8Array;
  private filled = 0;
  private stripeNo = 0;
  private received = 0;
  private inflight = 0;
  /** Stripes go to the volumes in order: each one's appends are sent after the previous one's. */
  private order: Promise<void> = Promise.resolve();
  private pending: Array<Promise<void>> = [];
  private failure: Error | null = null;
  private drainWaiters: Array<() => void> = [];
  private created = false;
  private closed = false;
  /** Resolves once the intent record is flushed; slices are committed only after it. */
  private intentDurable: Promise<unknown> = Promise.resolve();
  private intentFlushed = false;
  /** Slices committed with their last append (the intent was durable when it was sent). */
  readonly committed = new Set<number>();
  rec: ObjectRecord | null = null;

  private constructor(ctx: StoreContext, req: PutRequest, id: string, g: Geometry, volumes: number[]) {
    this.ctx = ctx;
    this.req = req;
    this.id = id;
    this.geometry = g;
    this.volumes = volumes;
    this.coder = ctx.stripeCoder();
    this.stripe = new Uint8Array(shared.take(Math.max(1, g.stripeBytes)));
    this.kept = req.size <= FAILOVER_WINDOW_BYTES ? [] : null;
  }

  /**
   * Check the path, choose the layout and the volumes, record the intent, open the slices.
   * `failed`: volumes that failed this PUT already (a restart with the layout of the volumes left),
   * with why; they are left out.
   */
  static async begin(ctx: StoreContext, req: PutRequest, failed: ReadonlyMap<number, string> = new Map()): Promise<ObjectWriter> {
    const c = ctx.meta.conflict(req.path);
    if (c) throw conflictError(req.path, c);
    const restart = failed.size > 0;
    if (!restart && ctx.pendingPaths.has(req.path)) throw new StoreError(409, 'PATH_BUSY', `another PUT to ${req.path} is in progress`);
    const all = ctx.writable().filter((v) => !failed.has(v.id));
    if (!all.length) throw noWritableVolume(ctx, failed);
    // Volumes whose writes failed lately are left out while two others remain.
    const recent = suspectsOf(ctx);
    const fresh = all.filter((v) => !recent.has(v.id));
    const writable = fresh.length >= 2 ? fresh : all;
    const registered = ctx.unwritable().length;
    // The layout follows the volumes that have room for a slice: a full volume narrows the
    // layout instead of refusing every PUT.
    let n = writable.length;
    let scheme: { k: number; m: number } | null = null;
    let volumes: number[] | null = null;
    while (n > 0) {
      const layout = writeLayout(req.size, n, registered);
      if ('refuse' in layout) {
        if (n === writable.length) throw tooFewWritable(ctx, writable.map((v) => v.id), failed, layout.refuse);
        break;
      }
      scheme = layout;
      const room = writable.filter((v) => v.bytesFree > req.size / layout.k + 1024 * 1024);
      volumes = placeSlices(room, layout, Math.random);
      if (volumes) break;
      n = Math.min(n - 1, room.length);
    }
    if (!volumes || !scheme) throw new StoreError(507, 'INSUFFICIENT_STORAGE', `no volume has room for a slice of ${req.size} bytes`);
    const chunkSize = chunkSizeFor(req.size, scheme.k, ctx.settings.maxChunkSize);
    const g = geometry(req.size, scheme.k, scheme.m, chunkSize);
    const id = newObjectId(Date.now(), randomBytes(6));
    ctx.pendingPaths.add(req.path);
    const w = new ObjectWriter(ctx, req, id, g, volumes);
    try {
      // The intent must be on disk before any slice is committed (renamed into place), not
      // before the temp files are written: its flush overlaps the slice writes, and a temp file
      // whose intent never reached the disk is swept when its volume starts (purge at boot).
      const intent = ctx.meta.intents.put(id, { id, path: req.path, volumes, startedAt: Date.now() }).then(() => ctx.meta.root.flushed);
      w.intentDurable = intent;
      intent.then(
        () => (w.intentFlushed = true),
        () => undefined,
      );
      w.created = true;
      // Not awaited: the body's stripes follow at once (a volume takes a slice's messages in the
      // order they were sent, so its appends queue behind its create). A create that fails fails
      // the slice's appends with its own error, and the PUT with them.
      const creates = Promise.all(
        volumes.map((vol, index) => {
          const ref = ctx.volume(vol);
          if (!ref) return w.sliceFailed(index, gone(vol));
          return ref.request({ type: 'create', objectId: id, index, header: sliceHeaderFor(g, id, index) }).then(
            () => undefined,
            (err: unknown) => w.sliceFailed(index, err),
          );
        }),
      );
      w.pending.push(creates.then(() => undefined));
    } catch (err) {
      await w.abort();
      throw w.asStoreError(err);
    }
    return w;
  }

  get bytesReceived(): number {
    return this.received;
  }

  /** Take bytes of the body (copied). Returns false when the caller should pause the body. */
  push(chunk: Uint8Array): boolean {
    let off = 0;
    this.received += chunk.byteLength;
    while (off < chunk.byteLength) {
      const n = Math.min(chunk.byteLength - off, this.stripe.byteLength - this.filled);
      this.stripe.set(chunk.subarray(off, off + n), this.filled);
      this.filled += n;
      off += n;
      if (this.filled === this.geometry.stripeBytes) this.flush();
    }
    return this.inflight < this.ctx.settings.stripesInFlight;
  }

  /** Resolves when the writer can take more (after push returned false). */
  drained(): Promise<void> {
    if (this.inflight < this.ctx.settings.stripesInFlight || this.failure) return Promise.resolve();
    return new Promise((r) => this.drainWaiters.push(r));
  }

  /** The body is complete: write the last stripe, check the MD5, commit slices then record. */
  async finish(): Promise<ObjectRecord> {
    if (this.filled > 0) this.flush();
    // The coder hashes in order: the digest, asked now, comes after the last stripe's.
    const digest = this.coder.request({ type: 'digest', put: this.id, stripes: this.stripeNo });
    digest.catch(() => undefined);
    // The journal record goes out as soon as the MD5 is known (journal/journal.ts: it must be
    // durable before the record commits, not before the slices are): its flush overlaps the last
    // appends and the slice commits.
    const early = digest.then(
      // (wrapped: a promise resolving to a promise would wait for the flush)
      (md5) => ({ logged: !this.req.expectedMd5 || md5 === this.req.expectedMd5 ? this.ctx.meta.logAhead(this.record(md5)) : undefined }),
      () => ({ logged: undefined }),
    );
    const fail = async (err: unknown): Promise<never> => {
      this.ctx.meta.dropAhead((await early).logged);
      await this.abort();
      throw this.asStoreError(err);
    };
    await this.order;
    await Promise.all(this.pending);
    if (this.failure) return fail(this.failure);
    let md5: string;
    try {
      md5 = await digest;
    } catch (err) {
      return fail(err);
    }
    if (this.req.expectedMd5 && md5 !== this.req.expectedMd5) {
      await this.abort();
      throw new StoreError(456, 'MD5_MISMATCH', `Content-MD5 ${this.req.expectedMd5} does not match the received bytes (${md5}); nothing was stored`, [['X-Received-MD5', md5]]);
    }
    let rec = this.record(md5);
    let { logged } = await early;
    try {
      await this.intentDurable;
      // Failed slices are written again elsewhere; a commit that fails is one more failed slice.
      // Within the window, from the kept stripes before the others commit; beyond it, rebuilt from
      // the others once they are committed (a volume reads only committed slices).
      do {
        if (this.failed.size && this.kept && !(await failover(this))) {
          this.ctx.meta.dropAhead(logged);
          return await this.restart();
        }
        await Promise.all(this.volumes.map((_, index) => (this.committed.has(index) || this.failed.has(index) ? null : this.commitSlice(index))));
        if (this.failure) throw this.failure;
        if (this.failed.size && !this.kept && !(await rebuildFailed(this))) {
          this.ctx.meta.dropAhead(logged);
          return await this.restartFromDisk();
        }
        if (this.failure) throw this.failure;
      } while (this.failed.size);
    } catch (err) {
      return fail(err);
    }
    // A slice moved to another volume after the record was logged ahead: the record names where
    // the slices are now, and the journal gets it again (replay takes an object's last put).
    if (this.volumes.some((v, i) => v !== [...rec.dataVolumes, ...rec.parityVolumes][i])) {
      this.ctx.meta.dropAhead(logged);
      rec = this.rec = { ...rec, dataVolumes: this.volumes.slice(0, this.geometry.k), parityVolumes: this.volumes.slice(this.geometry.k) };
      logged = this.ctx.meta.logAhead(rec);
    }
    // The record sidecars beside the slices (recovery from the disks), written with the record.
    const sidecars = writeSliceRecords(this.ctx, rec, 'put');
    const c = await this.ctx.meta.commitObject(rec, logged);
    await sidecars;
    if (c) {
      await this.abort();
      throw conflictError(rec.path, c);
    }
    // 201 means durable: wait for the record's commit to reach the disk (LMDB flushes commits
    // of concurrent PUTs together: the group commit).
    await this.ctx.meta.root.flushed;
    this.closed = true;
    this.ctx.pendingPaths.delete(this.req.path);
    this.giveKept();
    return rec;
  }

  /** The object's record (made once: the journal's copy and the database's are the same). */
  private record(md5: string): ObjectRecord {
    this.rec ??= {
      id: this.id,
      path: this.req.path,
      size: this.geometry.size,
      mime: this.req.mime,
      md5,
      k: this.geometry.k,
      m: this.geometry.m,
      chunkSize: this.geometry.chunkSize,
      dataVolumes: this.volumes.slice(0, this.geometry.k),
      parityVolumes: this.volumes.slice(this.geometry.k),
      createdAt: Date.now(),
    };
    return this.rec;
  }

  /** Remove every trace: temp or committed slices, the intent. Safe to call more than once. */
  async abort(): Promise<void> {
    if (this.closed) return;
    this.ctx.pendingPaths.delete(this.req.path);
    await this.discard();
  }

  /** abort, except that the path stays taken (a restart writes it again). */
  private async discard(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.created) return;
    await Promise.allSettled([...this.pending, this.intentDurable]);
    this.giveKept();
    this.coder.send({ type: 'forget', put: this.id });
    const why = await removeSlices(this.ctx, this.id, this.volumes, { writing: true });
    if (!why.length) await this.ctx.meta.intents.remove(this.id);
    else {
      this.ctx.log.warn({ objectId: this.id, why }, 'some slices of an aborted PUT could not be removed; the intent stays and boot clean-up retries');
    }
  }

  async commitSlice(index: number): Promise<void> {
    const vol = this.volumes[index]!;
    const ref = this.ctx.volume(vol);
    if (!ref) return this.sliceFailed(index, gone(vol));
    try {
      await ref.request({ type: 'commit', objectId: this.id, index });
      this.committed.add(index);
    } catch (err) {
      this.sliceFailed(index, err);
    }
  }

  private giveKept(): void {
    if (!this.kept) return;
    for (const b of this.kept.splice(0)) shared.give(b.buffer as SharedArrayBuffer);
  }

  /**
   * Slice `index` failed on its volume: it is only noted (no more chunks go to it; finish writes
   * it elsewhere), and its volume is left out of new PUTs for a while. Beyond the failover window,
   * a failure that leaves fewer than k slices to rebuild from fails the PUT.
   */
  sliceFailed(index: number, err: unknown): void {
    if (this.failed.has(index)) return;
    if (!this.kept && this.volumes.length - this.failed.size - 1 < this.geometry.k) {
      this.failure ??= err as Error;
      return;
    }
    const volume = this.volumes[index]!;
    const why = `${errorCode(err)}: ${(err as Error)?.message ?? String(err)}`;
    this.failed.set(index, { volume, err });
    this.failedVolumes.set(volume, why);
    this.committed.delete(index);
    suspectsOf(this.ctx).set(volume, { at: Date.now(), why });
    this.ctx.log.warn({ objectId: this.id, path: this.req.path, index, volumeId: volume, err: why }, 'PUT: a slice write failed; the slice is written again on another volume');
    // Recorded on the volume (counted by the health monitor; a volume made read-only meanwhile is
    // not a fault of its disk); its partial slice is dropped.
    if (errorCode(err) !== 'READ_ONLY') {
      void this.ctx.meta.recordWriteFault(volume, { objectId: this.id, sliceIndex: index, code: errorCode(err), message: (err as Error)?.message ?? String(err) }).catch(() => undefined);
    }
    const ref = this.ctx.volume(volume);
    if (ref) void Promise.resolve(ref.request({ type: 'abort', objectId: this.id, index })).then(() => ref.request({ type: 'delete', objectId: this.id, index })).catch(() => undefined);
  }

  /** Name the slices' volumes in the intent (boot clean-up finds a new slice); resolves once it is durable. */
  async renameIntent(): Promise<void> {
    await this.ctx.meta.intents.put(this.id, { id: this.id, path: this.req.path, volumes: [...this.volumes], startedAt: Date.now() });
    await this.ctx.meta.root.flushed;
  }

  /**
   * Too few volumes are left to replace the failed slices: drop this attempt's slices and write
   * the object again from the kept stripes, laid out over the writable volumes that did not fail
   * (ObjectWriter.begin refuses below two).
   */
  private async restart(): Promise<ObjectRecord> {
    const failed = new Map(this.failedVolumes);
    const kept = this.kept!.splice(0);
    this.ctx.log.warn({ objectId: this.id, path: this.req.path, failed: Object.fromEntries(failed) }, 'PUT: no volume left to replace a failed slice; writing the object again with the layout of the volumes left');
    await this.discard();
    try {
      const next = await ObjectWriter.begin(this.ctx, this.req, failed);
      for (const part of kept) if (!next.push(part)) await next.drained();
      return await next.finish();
    } catch (err) {
      this.ctx.pendingPaths.delete(this.req.path);
      throw err;
    } finally {
      for (const b of kept) shared.give(b.buffer as SharedArrayBuffer);
    }
  }

  /**
   * Beyond the failover window, too few volumes are left to replace the failed slices: write the
   * object again, read back from the slices this attempt committed, laid out over the writable
   * volumes that did not fail; this attempt's slices are dropped once the new one is stored.
   */
  private async restartFromDisk(): Promise<ObjectRecord> {
    const failed = new Map(this.failedVolumes);
    this.ctx.log.warn({ objectId: this.id, path: this.req.path, failed: Object.fromEntries(failed) }, 'PUT: no volume left to replace a failed slice; writing the object again, from its slices on disk, with the layout of the volumes left');
    let next: ObjectWriter | null = null;
    try {
      next = await ObjectWriter.begin(this.ctx, this.req, failed);
      for await (const { first, last, slices } of readBack(this, new Set())) {
        for (let s = first; s <= last; s++) {
          for (let i = 0; i < this.geometry.k; i++) {
            const len = dataChunkLength(this.geometry, s, i);
            if (len > 0 && !next.push(slices[i]![s - first]!.subarray(0, len))) await next.drained();
          }
        }
      }
      return await next.finish();
    } catch (err) {
      await next?.abort();
      this.ctx.pendingPaths.delete(this.req.path);
      throw err;
    } finally {
      await this.discard();
    }
  }

  private flush(): void {
    const s = this.stripeNo++;
    const full = this.stripe;
    const filled = this.filled;
    this.stripe = new Uint8Array(shared.take(this.geometry.stripeBytes));
    this.filled = 0;
    this.inflight++;
    this.kept?.push(full.subarray(0, filled));
    const encoded = this.encode(s, full, filled);
    // Appends go out in stripe order (each slice's chunks must arrive in order), but a stripe's
    // appends do not wait for the previous stripe's to complete: only to be sent.
    const issued = this.order.then(async () => {
      const e = await encoded;
      // The last stripe waits for the intent (if it is not on disk yet: small objects), so that its
      // appends can commit their slices: one round trip to the volumes instead of two.
      if (s === this.geometry.stripes - 1) await this.intentDurable;
      return { written: this.append(s, e) };
    });
    this.order = issued.then(
      () => undefined,
      () => undefined,
    );
    const done = issued
      .then((x) => x.written)
      .then(
        () => undefined,
        (err: Error) => {
          this.failure ??= err;
        },
      )
      .finally(() => {
        this.inflight--;
        if (this.inflight < this.ctx.settings.stripesInFlight || this.failure) for (const w of this.drainWaiters.splice(0)) w();
      });
    this.pending.push(done);
  }

  /**
   * Hash the stripe and compute its parity (the coder, in stripe order). The coder lays a short
   * stripe out as k shards of the stripe's shard size, padded with zeros (in a new buffer).
   */
  private async encode(s: number, buf: Uint8Array, filled: number): Promise<Encoded> {
    const { k, m: parityCount, chunkSize } = this.geometry;
    const shard = parityChunkLength(this.geometry, s);
    const full = shard === chunkSize && filled === k * chunkSize && buf.byteOffset === 0 && buf.buffer.byteLength === filled;
    const lengths = full ? null : Array.from({ length: k }, (_, i) => dataChunkLength(this.geometry, s, i));
    const stripe = buf.buffer as SharedArrayBuffer;
    const parity = parityCount > 0 ? shared.take(parityCount * shard) : null;
    // If this fails, the coder may still be reading the stripe or writing the parity: neither
    // goes back to the pool (append gives them back, only after every volume answered).
    const r = await this.coder.request({ type: 'stripe', put: this.id, seq: s, k, m: parityCount, shard, data: stripe, filled, lengths, parity }, { timeoutMs: this.ctx.settings.ioTimeoutMs });
    return { stripe, data: r.data, parity, shard };
  }

  /**
   * Send the stripe's chunks to their volumes now, as views of the shared stripe and parity (each
   * volume copies its chunk before it answers); the promise tells when all are written, and the
   * buffers go back to the pool then (a kept stripe at the end of the PUT). The last stripe's
   * appends also commit their slices (the intent is durable by then: flush waits for it); slices
   * with no chunk in the last stripe are committed by finish. A slice whose volume fails is
   * sliceFailed's (no more chunks go to it).
   */
  private append(s: number, e: Encoded): Promise<unknown> {
    const { k, m: parityCount } = this.geometry;
    const { data, parity, shard } = e;
    const writes: Array<Promise<unknown>> = [];
    const commit = s === this.geometry.stripes - 1 && this.intentFlushed;
    const send = (index: number, from: ArrayBuffer | SharedArrayBuffer, offset: number, len: number) => {
      if (this.failed.has(index)) return;
      const vol = this.volumes[index]!;
      const ref = this.ctx.volume(vol);
      if (!ref) return this.sliceFailed(index, gone(vol));
      if (commit) this.committed.add(index);
      writes.push(ref.request({ type: 'append', objectId: this.id, index, chunk: s, data: new Uint8Array(from, offset, len), commit }).catch((err: unknown) => this.sliceFailed(index, err)));
    };
    for (let i = 0; i < k; i++) {
      const len = dataChunkLength(this.geometry, s, i);
      if (len > 0) send(i, data, i * shard, len);
    }
    for (let j = 0; j < parityCount; j++) send(k + j, parity!, j * shard, shard);
    // Reused only when every volume answered: one that timed out may still read its chunk.
    return Promise.all(writes).then(() => {
      if (!this.kept) shared.give(e.stripe);
      shared.give(parity);
    });
  }

  asStoreError(err: unknown): StoreError {
    if (err instanceof StoreError) return err;
    if (err instanceof ActorError) {
      if (refusalOf<VolumeProtocol>(err) === 'READ_ONLY') return new StoreError(503, 'VOLUME_READ_ONLY', `a chosen volume refused the write: ${err.message}`);
      return new StoreError(503, 'VOLUME_WRITE_FAILED', `writing a slice failed: ${err.message}`);
    }
    return new StoreError(500, 'INTERNAL', (err as Error).message ?? String(err));
  }
}
