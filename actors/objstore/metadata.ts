/**
 * The object store's records in LMDB (the runtime's environment under the state directory),
 * one named database per record kind. Every change that touches several records is one
 * transaction, so a path, its object and its containers always agree.
 *
 *   objects     object id  -> ObjectRecord
 *   paths       path       -> object id
 *   containers  container  -> number of objects below it (containers are implicit)
 *   intents     object id  -> PutIntent: a PUT in progress (its slices are cleaned up at boot)
 *   volumes     volume id  -> VolumeRecord
 *   buckets     bucket     -> BucketPolicy
 *   faults      "<objectId>/<slice>" -> SliceFault
 *   meta        key        -> value (next volume id; the instance id is the file <stateDir>/instance-id)
 */
import type { Database, RootDatabase } from 'lmdb';
import { ancestors } from '../../protocols/objstore/paths.js';
import type { ObjectRecord } from '../../protocols/objstore/headers.js';

export interface PutIntent {
  id: string;
  path: string;
  volumes: number[];
  startedAt: number;
}

export interface VolumeRecord {
  id: number;
  label: string;
  comment: string;
  isEnabled: boolean;
  isReadOnly: boolean;
  isHealthy: boolean;
  isDraining: boolean;
  isDeleted: boolean;
  encrypted: boolean;
  /** device path when last seen (kernel names change; the identity file is what counts) */
  lastDevice: string;
  serial: string | null;
  model: string | null;
  createdAt: number;
  wipe: number;
  faults: number;
}

export interface BucketPolicy {
  publicRead: boolean;
  publicWrite: boolean;
  deleteProtected: boolean;
}

export interface SliceFault {
  objectId: string;
  sliceIndex: number;
  volumeId: number;
  code: string;
  message: string;
  firstSeenAt: number;
  lastSeenAt: number;
  count: number;
  repairStatus: 'pending' | 'repairing' | 'repaired' | 'blocked';
  repairBlockedReason: 'insufficient-slices' | 'unrecoverable' | 'target-unwritable' | 'reconstruction-mismatch' | null;
}

export type PathConflict =
  | { kind: 'exists'; id: string }
  | { kind: 'ancestor-is-object'; ancestor: string }
  | { kind: 'is-container'; objects: number };

export const DEFAULT_POLICY: BucketPolicy = { publicRead: false, publicWrite: false, deleteProtected: false };

export class Metadata {
  readonly root: RootDatabase;
  readonly objects: Database<ObjectRecord, string>;
  readonly paths: Database<string, string>;
  readonly containers: Database<number, string>;
  readonly intents: Database<PutIntent, string>;
  readonly volumes: Database<VolumeRecord, number>;
  readonly buckets: Database<BucketPolicy, string>;
  readonly faults: Database<SliceFault, string>;
  readonly meta: Database<unknown, string>;

  constructor(root: RootDatabase) {
    this.root = root;
    this.objects = root.openDB({ name: 'objstore.objects' });
    this.paths = root.openDB({ name: 'objstore.paths' });
    this.containers = root.openDB({ name: 'objstore.containers' });
    this.intents = root.openDB({ name: 'objstore.intents' });
    this.volumes = root.openDB({ name: 'objstore.volumes' });
    this.buckets = root.openDB({ name: 'objstore.buckets' });
    this.faults = root.openDB({ name: 'objstore.faults' });
    this.meta = root.openDB({ name: 'objstore.meta' });
  }

  /** Why `path` cannot take a new object, or null. */
  conflict(path: string): PathConflict | null {
    const id = this.paths.get(path);
    if (id) return { kind: 'exists', id };
    for (const a of ancestors(path)) if (this.paths.get(a)) return { kind: 'ancestor-is-object', ancestor: a };
    const below = this.containers.get(path) ?? 0;
    if (below > 0) return { kind: 'is-container', objects: below };
    return null;
  }

  /**
   * Publish an object: path, record and container counts, and drop its intent, in one
   * transaction that re-checks the path (two PUTs racing to one path: exactly one wins).
   */
  commitObject(rec: ObjectRecord): Promise<PathConflict | null> {
    return this.root.transaction(() => {
      const c = this.conflict(rec.path);
      if (c) return c;
      this.objects.putSync(rec.id, rec);
      this.paths.putSync(rec.path, rec.id);
      for (const a of ancestors(rec.path)) this.containers.putSync(a, (this.containers.get(a) ?? 0) + 1);
      this.intents.removeSync(rec.id);
      return null;
    });
  }

  /** Remove an object's records at once (its slices are deleted after). */
  removeObject(rec: ObjectRecord): Promise<boolean> {
    return this.root.transaction(() => {
      if (!this.objects.get(rec.id)) return false;
      this.objects.removeSync(rec.id);
      if (this.paths.get(rec.path) === rec.id) this.paths.removeSync(rec.path);
      for (const a of ancestors(rec.path)) {
        const n = (this.containers.get(a) ?? 1) - 1;
        if (n > 0) this.containers.putSync(a, n);
        else this.containers.removeSync(a);
      }
      for (const { key } of this.faults.getRange({ start: `${rec.id}/`, end: `${rec.id}/~` })) this.faults.removeSync(key);
      return true;
    });
  }

  /** Look an object up by path or id. */
  find(target: { kind: 'id'; id: string } | { kind: 'path'; path: string }): ObjectRecord | undefined {
    const id = target.kind === 'id' ? target.id : this.paths.get(target.path);
    return id ? this.objects.get(id) : undefined;
  }

  policy(bucket: string): BucketPolicy {
    return this.buckets.get(bucket) ?? DEFAULT_POLICY;
  }

  async recordFault(f: Omit<SliceFault, 'firstSeenAt' | 'lastSeenAt' | 'count' | 'repairStatus' | 'repairBlockedReason'>): Promise<void> {
    const key = `${f.objectId}/${f.sliceIndex}`;
    await this.root.transaction(() => {
      const now = Date.now();
      const old = this.faults.get(key);
      this.faults.putSync(key, {
        ...f,
        firstSeenAt: old?.firstSeenAt ?? now,
        lastSeenAt: now,
        count: (old?.count ?? 0) + 1,
        repairStatus: old?.repairStatus ?? 'pending',
        repairBlockedReason: old?.repairBlockedReason ?? null,
      });
      const v = this.volumes.get(f.volumeId);
      if (v) this.volumes.putSync(f.volumeId, { ...v, faults: v.faults + 1 });
    });
  }

  /** Allocate a volume id: never reused, even after a volume is deleted. */
  nextVolumeId(): Promise<number> {
    return this.root.transaction(() => {
      const next = ((this.meta.get('nextVolumeId') as number | undefined) ?? 1);
      this.meta.putSync('nextVolumeId', next + 1);
      return next;
    });
  }
}
