/**
 * Snapshots of the whole record database, taken by the store actor on a schedule and on demand
 * (POST /$/snapshots): the records read in one LMDB read transaction (a consistent copy), encoded
 * (protocols/objstore/snapshot-format.ts), written as an ordinary object under the reserved bucket
 * (erasure-coded like any other), read back and checked (checksum, trailer, counts) before it
 * counts; then the pointer naming it and the previous one is written on every present volume,
 * snapshots older than those two are deleted, and journal segments before the older one's
 * replayFrom are dropped (so a restore from either still has its journal).
 *
 * One snapshot at a time; a kill -9 mid-way leaves the previous pointer (and a PUT intent the
 * next boot cleans up, or an unreferenced snapshot object the next snapshot deletes).
 */
import { randomBytes } from 'node:crypto';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import { decodeSnapshot, knownSnapshots, pointerWith, SNAPSHOT_BUCKET, SnapshotEncoder, snapshotId, snapshotPath, type Pointer, type PointerEntry, type SnapshotCounts } from '../../../protocols/objstore/snapshot-format.js';
import { ObjectReader, ObjectWriter, removeSlices, type StoreContext } from '../store/index.js';
import type { Journal } from './journal.js';
import { readPointer, writePointer } from './pointer.js';

export interface SnapshotView {
  id: string;
  status: 'running' | 'good' | 'failed';
  takenAt: string;
  replayFrom: number | null;
  counts: SnapshotCounts | null;
  sha256: string | null;
  bytes: number | null;
  objectId: string | null;
  path: string;
  error?: string;
}

export interface SnapshotDeps {
  store: StoreContext;
  journal: Journal | null;
  /** the volumes present now (the pointer goes on each) */
  disks: () => Array<{ id: number; mountPoint: string }>;
  log: Logger;
}

/** Bytes of the encoded snapshot handed to the writer at once. */
const PIECE = 1024 * 1024;

export class Snapshots {
  private readonly deps: SnapshotDeps;
  private current: Promise<SnapshotView> | null = null;
  /** this run's snapshots that are not (yet) in the pointer: running or failed */
  private readonly local = new Map<string, SnapshotView>();

  constructor(deps: SnapshotDeps) {
    this.deps = deps;
  }

  /** The pointer copies on the present volumes, merged: every snapshot they name, newest first. */
  async known(): Promise<PointerEntry[]> {
    const copies: Pointer[] = [];
    for (const d of this.deps.disks()) {
      const p = await readPointer(d.mountPoint);
      if (p && !(p instanceof Error)) copies.push(p);
    }
    return knownSnapshots(copies);
  }

  /** Every snapshot known: the good ones of the pointer, and this run's running or failed ones. */
  async list(): Promise<SnapshotView[]> {
    const good = (await this.known()).map(viewOf);
    const ids = new Set(good.map((g) => g.id));
    const other = [...this.local.values()].filter((v) => !ids.has(v.id));
    return [...other, ...good].sort((a, b) => (a.takenAt < b.takenAt ? 1 : -1));
  }

  get running(): boolean {
    return this.current !== null;
  }

  /** Start a snapshot (or join the one running): `started` at once, `done` when it counts or failed. */
  take(): { started: SnapshotView; done: Promise<SnapshotView> } {
    if (this.current) {
      const running = [...this.local.values()].find((v) => v.status === 'running')!;
      return { started: running, done: this.current };
    }
    const takenAt = Date.now();
    const id = snapshotId(takenAt, randomBytes(3));
    const view: SnapshotView = { id, status: 'running', takenAt: new Date(takenAt).toISOString(), replayFrom: null, counts: null, sha256: null, bytes: null, objectId: null, path: snapshotPath(id) };
    this.local.set(id, view);
    const done = this.run(view, takenAt).then(
      (v) => {
        this.local.delete(id);
        return v;
      },
      (err: Error) => {
        view.status = 'failed';
        view.error = err.message;
        this.deps.log.error({ snapshot: id, err: err.message }, `snapshot ${id} failed: ${err.message}`);
        // Only the latest failures are kept for the listing.
        for (const [k, v] of this.local) if (v.status === 'failed' && k !== id && this.local.size > 5) this.local.delete(k);
        return view;
      },
    );
    this.current = done.finally(() => (this.current = null));
    return { started: { ...view }, done: this.current };
  }

  private async run(view: SnapshotView, takenAt: number): Promise<SnapshotView> {
    const { store, journal, log } = this.deps;
    const meta = store.meta;
    // Protect the reserved bucket once: its snapshots cannot be deleted through the object API.
    if (!meta.policy(SNAPSHOT_BUCKET).deleteProtected) await meta.setPolicy(SNAPSHOT_BUCKET, { ...meta.policy(SNAPSHOT_BUCKET), deleteProtected: true });
    // Before the read transaction: every record appended before this is settled or below it.
    const replayFrom = journal?.replayFrom() ?? 1;
    view.replayFrom = replayFrom;
    const enc = new SnapshotEncoder();
    const pieces: string[] = [enc.header({ id: view.id, takenAt, replayFrom })];
    const txn = meta.root.useReadTransaction();
    try {
      for (const { key, value } of meta.buckets.getRange({ transaction: txn })) pieces.push(enc.bucket(key, value));
      for (const { value } of meta.volumes.getRange({ transaction: txn })) pieces.push(enc.volume(value as unknown as { id: number }));
      const next = meta.meta.get('nextVolumeId', { transaction: txn });
      if (next !== undefined) pieces.push(enc.meta('nextVolumeId', next));
      for (const { value } of meta.objects.getRange({ transaction: txn })) pieces.push(enc.object(value));
    } finally {
      txn.done();
    }
    const end = enc.end();
    pieces.push(end.line);
    const bytes = Buffer.from(pieces.join(''), 'utf8');
    view.counts = end.counts;
    view.sha256 = end.sha256;
    view.bytes = bytes.length;
    const rec = await this.store(view.path, bytes);
    view.objectId = rec.id;
    await this.readBack(rec, end.sha256);
    const entry: PointerEntry = { id: view.id, takenAt, replayFrom, sha256: end.sha256, counts: end.counts, record: rec };
    const pointer = pointerWith({ version: 1, snapshots: await this.known() }, entry);
    const disks = this.deps.disks();
    const wrote = await Promise.allSettled(disks.map((d) => writePointer(d.mountPoint, pointer)));
    const failed = wrote.flatMap((w, i) => (w.status === 'rejected' ? [`volume ${disks[i]!.id}: ${(w.reason as Error).message}`] : []));
    if (failed.length === disks.length) throw new Error(`no volume took the snapshot pointer (${failed.join('; ')})`);
    if (failed.length) log.warn({ snapshot: view.id, failed }, 'some volumes did not take the snapshot pointer');
    view.status = 'good';
    await this.prune(pointer);
    log.info({ snapshot: view.id, objects: end.counts.objects, bytes: bytes.length, replayFrom }, `snapshot ${view.id} taken and verified`);
    return view;
  }

  /** Write the snapshot as an object (the PUT path: erasure-coded, intent, journalled). */
  private async store(path: string, bytes: Buffer): Promise<ObjectRecord> {
    const md5 = createHash('md5').update(bytes).digest('hex');
    const w = await ObjectWriter.begin(this.deps.store, { path, size: bytes.length, mime: 'application/x-ndjson', expectedMd5: md5 });
    try {
      for (let off = 0; off < bytes.length; off += PIECE) {
        if (!w.push(bytes.subarray(off, off + PIECE))) await w.drained();
      }
      return await w.finish();
    } catch (err) {
      await w.abort();
      throw err;
    }
  }

  /** Read the stored snapshot back through the slices and check it whole before it counts. */
  private async readBack(rec: ObjectRecord, sha256: string): Promise<void> {
    const parts: Buffer[] = [];
    if (rec.size > 0) for await (const piece of new ObjectReader(this.deps.store, rec).range(0, rec.size - 1)) parts.push(Buffer.from(piece));
    const back = Buffer.concat(parts);
    const decoded = decodeSnapshot(back);
    if (decoded.sha256 !== sha256) throw new Error(`the snapshot read back does not match what was written (sha256 ${decoded.sha256}, wrote ${sha256})`);
  }

  /** Delete snapshot objects the pointer no longer names; drop journal segments no snapshot needs. */
  private async prune(pointer: Pointer): Promise<void> {
    const { meta } = this.deps.store;
    const keep = new Set(pointer.snapshots.map((s) => s.record.id));
    const prefix = `/${SNAPSHOT_BUCKET}/`;
    for (const { key, value: id } of meta.paths.getRange({ start: prefix, end: `${prefix}~` })) {
      if (keep.has(id)) continue;
      const rec = meta.objects.get(id);
      if (!rec || Date.now() - rec.createdAt < 60_000) continue; // a snapshot being written now is not ours to delete
      if (await meta.removeObject(rec)) await removeSlices(this.deps.store, rec.id, [...rec.dataVolumes, ...rec.parityVolumes]);
      this.deps.log.info({ path: key, objectId: id }, 'deleted a snapshot the pointer no longer names');
    }
    const oldest = pointer.snapshots[pointer.snapshots.length - 1];
    if (oldest && this.deps.journal) {
      const n = await this.deps.journal.dropBefore(oldest.replayFrom);
      if (n) this.deps.log.info({ segments: n, before: oldest.replayFrom }, 'dropped journal segments older than the kept snapshots');
    }
  }
}

function viewOf(e: PointerEntry): SnapshotView {
  return { id: e.id, status: 'good', takenAt: new Date(e.takenAt).toISOString(), replayFrom: e.replayFrom, counts: e.counts, sha256: e.sha256, bytes: e.record.size, objectId: e.record.id, path: e.record.path };
}
