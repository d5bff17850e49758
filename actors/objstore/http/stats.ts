/**
 * GET /$/storage-stats and GET /$/buckets/stats: counters computed by scanning the object
 * records, which costs a pass over every record. The result is kept as a snapshot (in memory;
 * storage-stats also in LMDB, so a restart answers at once): a request with no snapshot yet does
 * the full scan and waits for it; a request on a snapshot older than SNAPSHOT_MAX_AGE_MS gets
 * that snapshot at once and starts a fresh scan in the background. Each answer says when its
 * snapshot was taken.
 */
import { geometry, sliceSize } from '../../../protocols/objstore/stripes.js';
import type { StoreContext } from '../store/context.js';

export const SNAPSHOT_MAX_AGE_MS = 60_000;

interface VolumeStats {
  volumeId: number;
  dataSlices: number;
  paritySlices: number;
  /** Slice payload bytes on the volume (headers and chunk CRCs excluded). */
  sliceBytes: number;
}

export interface StorageStats {
  takenAt: string;
  scanMs: number;
  objects: number;
  /** Sum of object sizes. */
  logicalBytes: number;
  /** Sum of slice payloads, data and parity: what the objects take on the disks. */
  storedBytes: number;
  volumes: VolumeStats[];
}

export interface BucketStats {
  takenAt: string;
  scanMs: number;
  buckets: Array<{ name: string; objects: number; logicalBytes: number }>;
}

function scanStorage(ctx: StoreContext): StorageStats {
  const started = Date.now();
  const vols = new Map<number, VolumeStats>();
  const vol = (id: number) => {
    let v = vols.get(id);
    if (!v) vols.set(id, (v = { volumeId: id, dataSlices: 0, paritySlices: 0, sliceBytes: 0 }));
    return v;
  };
  let objects = 0;
  let logicalBytes = 0;
  let storedBytes = 0;
  for (const { value: rec } of ctx.meta.objects.getRange()) {
    objects++;
    logicalBytes += rec.size;
    const g = geometry(rec.size, rec.k, rec.m, rec.chunkSize);
    [...rec.dataVolumes, ...rec.parityVolumes].forEach((id, index) => {
      const v = vol(id);
      if (index < rec.k) v.dataSlices++;
      else v.paritySlices++;
      const bytes = sliceSize(g, index);
      v.sliceBytes += bytes;
      storedBytes += bytes;
    });
  }
  for (const { value } of ctx.meta.volumes.getRange()) if (!value.isDeleted) vol(value.id);
  return {
    takenAt: new Date().toISOString(),
    scanMs: Date.now() - started,
    objects,
    logicalBytes,
    storedBytes,
    volumes: [...vols.values()].sort((a, b) => a.volumeId - b.volumeId),
  };
}

function scanBuckets(ctx: StoreContext): BucketStats {
  const started = Date.now();
  const by = new Map<string, { name: string; objects: number; logicalBytes: number }>();
  for (const { value: rec } of ctx.meta.objects.getRange()) {
    const name = rec.path.split('/')[1]!;
    let b = by.get(name);
    if (!b) by.set(name, (b = { name, objects: 0, logicalBytes: 0 }));
    b.objects++;
    b.logicalBytes += rec.size;
  }
  return { takenAt: new Date().toISOString(), scanMs: Date.now() - started, buckets: [...by.values()].sort((a, b) => (a.name < b.name ? -1 : 1)) };
}

/** A snapshot kept fresh lazily: stale answers are served while one refresh runs. */
class Snapshot<T extends { takenAt: string }> {
  private value: T | null;
  private refreshing = false;
  constructor(
    private readonly scan: () => T,
    initial: T | null,
    private readonly saved: (v: T) => Promise<unknown> = async () => undefined,
  ) {
    this.value = initial;
  }

  async get(): Promise<{ value: T; fresh: boolean }> {
    if (!this.value) {
      this.value = this.scan();
      await this.saved(this.value);
      return { value: this.value, fresh: true };
    }
    if (Date.now() - Date.parse(this.value.takenAt) > SNAPSHOT_MAX_AGE_MS && !this.refreshing) {
      this.refreshing = true;
      setImmediate(() => {
        try {
          this.value = this.scan();
          void this.saved(this.value);
        } finally {
          this.refreshing = false;
        }
      });
    }
    return { value: this.value, fresh: false };
  }
}

const storage = new WeakMap<StoreContext, Snapshot<StorageStats>>();
const buckets = new WeakMap<StoreContext, Snapshot<BucketStats>>();

export async function storageStats(ctx: StoreContext): Promise<Record<string, unknown>> {
  let s = storage.get(ctx);
  if (!s) {
    const saved = (ctx.meta.meta.get('storageStats') as StorageStats | undefined) ?? null;
    s = new Snapshot(() => scanStorage(ctx), saved, (v) => ctx.meta.meta.put('storageStats', v));
    storage.set(ctx, s);
  }
  const { value, fresh } = await s.get();
  return { ...value, snapshot: { takenAt: value.takenAt, ageMs: Date.now() - Date.parse(value.takenAt), fullScanNow: fresh } };
}

export async function bucketStats(ctx: StoreContext): Promise<Record<string, unknown>> {
  let s = buckets.get(ctx);
  if (!s) {
    s = new Snapshot(() => scanBuckets(ctx), null);
    buckets.set(ctx, s);
  }
  const { value, fresh } = await s.get();
  return { ...value, snapshot: { takenAt: value.takenAt, ageMs: Date.now() - Date.parse(value.takenAt), fullScanNow: fresh } };
}
