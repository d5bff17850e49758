/**
 * The object store's records in LMDB (the runtime's environment under the state directory),
 * one named database per record kind. Every change that touches several records is one
 * transaction, so a path, its object and its containers always agree.
 *
 *   objects     object id  -> ObjectRecord
 *   paths       path       -> object id
 *   containers  container  -> number of objects below it (containers are implicit)
 *               (a container's entries are listed from `paths` by key range: children())
 *   intents     object id  -> PutIntent: a PUT in progress (its slices are cleaned up at boot)
 *   volumes     volume id  -> VolumeRecord
 *   buckets     bucket     -> BucketPolicy
 *   faults      "<objectId>/<slice>" -> SliceFault
 *   moves       "<objectId>/<slice>" -> MoveRecord: a slice relocation in progress (drain, rebalance,
 *               repair): redone or finished at boot, so a crash neither loses nor duplicates a slice
 *   verifyRuns  "<startedAt, 13 digits>" -> VerifyRun: the scrub history (the scheduler writes it)
 *   meta        key        -> value (next volume id; the instance id is the file <stateDir>/instance-id)
 */
import type { Database, RootDatabase } from 'lmdb';
import { volumeOf } from '../../protocols/objstore/layout.js';
import { ancestors } from '../../protocols/objstore/paths.js';
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import type { EncryptProgress } from '../../protocols/objstore/volume-view.js';
import type { JournalOp } from '../../protocols/objstore/journal-format.js';

/**
 * The metadata journal as the records see it (journal/journal.ts): a change is appended (and
 * durable) before its transaction, and settled after it, committed or not.
 */
export interface MetaJournal {
  append(op: JournalOp): Promise<number>;
  settle(seq: number): void;
}

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
  /** generation of the volume key its disk's key slots hold (encrypted volumes; +1 at each encrypt) */
  keyGen?: number;
  /** the last POST /$/volumes/{id}/encrypt: its phase as it goes, and how it ended */
  encryptProgress?: EncryptProgress;
  /** device path when last seen (kernel names change; the identity file is what counts) */
  lastDevice: string;
  serial: string | null;
  model: string | null;
  createdAt: number;
  wipe: number;
  faults: number;
  /** slice writes of PUTs that failed on this volume (each also counts in `faults`); the last one */
  writeFaults?: { count: number; last: WriteFault };
}

/** A slice write that failed during a PUT (the PUT went on on another volume: put.ts). */
export interface WriteFault {
  objectId: string;
  sliceIndex: number;
  code: string;
  message: string;
  at: number;
}

export type { EncryptProgress };

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
  /**
   * pending: waiting for the repair worker; repairing: being rebuilt now; blocked: refused, see
   * repairBlockedReason (re-armed by the next finding, except an accepted loss). A repaired
   * fault is removed (the scheduler counts repairs).
   */
  repairStatus: 'pending' | 'repairing' | 'blocked';
  repairBlockedReason: 'insufficient-slices' | 'unrecoverable' | 'target-unwritable' | 'reconstruction-mismatch' | null;
}

/**
 * A slice relocation. `copying`: the new slice is being written on `to` (a crash: it is deleted,
 * the record still names `from`). `flipped`: the record names `to`; the old slice on `from` is
 * deleted after a grace period (reads that started before the flip may still read it).
 * `from === to` is an in-place rewrite (repair on the same volume): nothing to delete.
 */
export interface MoveRecord {
  objectId: string;
  index: number;
  from: number;
  to: number;
  /** the slice's payload bytes */
  bytes: number;
  phase: 'copying' | 'flipped';
  /** what asked for it: drain, rebalance or repair */
  by: string;
  /** deleting the old slice failed at least once (counted once; the sweep keeps trying) */
  deleteFailed?: boolean;
  at: number;
}

/** One entry directly in a container: an object or a container below it (names only: keys, no values read). */
export interface ContainerEntry {
  name: string;
  dir: boolean;
}

export type PathConflict =
  | { kind: 'exists'; id: string }
  | { kind: 'ancestor-is-object'; ancestor: string }
  | { kind: 'is-container'; objects: number };

/** Distinct faulty slices on one volume that make it read-only and unhealthy (a setting). */
export const DEFAULT_HEALTH_FAULT_THRESHOLD = 32;

export const DEFAULT_POLICY: BucketPolicy = { publicRead: false, publicWrite: false, deleteProtected: false };

/** The part of a pino logger the metadata uses. */
export interface FaultLog {
  warn(obj: object, msg: string): void;
}

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
  readonly moves: Database<MoveRecord, string>;
  readonly verifyRuns: Database<Record<string, unknown>, string>;
  /** A volume with this many distinct slice faults becomes read-only and unhealthy. */
  readonly healthFaultThreshold: number;
  /** where a volume turning unhealthy is told (warn) */
  private readonly log: FaultLog | undefined;
  /** The journal every change goes to first: the store actor's (null on other threads, and when turned off). */
  journal: MetaJournal | null = null;
  /** told when a volume turns unhealthy (the notifier) */
  private readonly onUnhealthy: ((v: VolumeRecord) => void) | undefined;

  constructor(root: RootDatabase, opts: { healthFaultThreshold?: number; log?: FaultLog; onUnhealthy?: (v: VolumeRecord) => void } = {}) {
    this.healthFaultThreshold = opts.healthFaultThreshold ?? DEFAULT_HEALTH_FAULT_THRESHOLD;
    this.log = opts.log;
    this.onUnhealthy = opts.onUnhealthy;
    this.root = root;
    this.objects = root.openDB({ name: 'objstore.objects' });
    this.paths = root.openDB({ name: 'objstore.paths' });
    this.containers = root.openDB({ name: 'objstore.containers' });
    this.intents = root.openDB({ name: 'objstore.intents' });
    this.volumes = root.openDB({ name: 'objstore.volumes' });
    this.buckets = root.openDB({ name: 'objstore.buckets' });
    this.faults = root.openDB({ name: 'objstore.faults' });
    this.meta = root.openDB({ name: 'objstore.meta' });
    this.moves = root.openDB({ name: 'objstore.moves' });
    this.verifyRuns = root.openDB({ name: 'objstore.verifyRuns' });
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
   * Run a change's transaction after its journal record is durable (`logged`: appended already,
   * by the caller, ahead of time), and settle the record after, whatever the outcome.
   */
  private async journalled<T>(op: JournalOp, txn: () => Promise<T>, logged?: Promise<number>): Promise<T> {
    const seq = await (logged ?? this.journal?.append(op));
    try {
      return await txn();
    } finally {
      if (seq !== undefined) this.journal?.settle(seq);
    }
  }

  /**
   * Run another thread's transaction on the records after its journal record is durable (the
   * scheduler's slice moves: relocate.ts), and settle it after. On the scheduler's thread the
   * journal is the store actor's, reached by message (journal/remote.ts).
   */
  withJournal<T>(op: JournalOp, txn: () => Promise<T>): Promise<T> {
    return this.journalled(op, txn);
  }

  /** Journal an object ahead of its commitObject (a PUT overlaps the flush with its slice commits). */
  logAhead(rec: ObjectRecord): Promise<number> | undefined {
    return this.journal?.append({ op: 'put', ...rec });
  }

  /** A record logged ahead whose commit never came (the PUT failed): settle it. */
  dropAhead(logged: Promise<number> | undefined): void {
    logged?.then((seq) => this.journal?.settle(seq)).catch(() => undefined);
  }

  /** Set a bucket's policy (journalled first). */
  setPolicy(bucket: string, p: BucketPolicy): Promise<boolean> {
    return this.journalled({ op: 'policy', bucket, ...p }, () => this.buckets.put(bucket, p));
  }

  /** Write a volume record (journalled first). */
  putVolume(rec: VolumeRecord): Promise<boolean> {
    return this.journalled({ op: 'volume', volume: rec as unknown as { id: number } }, () => this.volumes.put(rec.id, rec));
  }

  /**
   * Publish an object: path, record and container counts, and drop its intent, in one
   * transaction that re-checks the path (two PUTs racing to one path: exactly one wins).
   * Journalled first (`logged`: by logAhead).
   */
  commitObject(rec: ObjectRecord, logged?: Promise<number>): Promise<PathConflict | null> {
    return this.journalled({ op: 'put', ...rec }, () => this.commitObjectTxn(rec), logged);
  }

  private commitObjectTxn(rec: ObjectRecord): Promise<PathConflict | null> {
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

  /** Remove an object's records at once (its slices are deleted after). Journalled first. */
  removeObject(rec: ObjectRecord): Promise<boolean> {
    return this.journalled({ op: 'delete', id: rec.id, path: rec.path, volumes: [...rec.dataVolumes, ...rec.parityVolumes], k: rec.k }, () => this.removeObjectTxn(rec));
  }

  private removeObjectTxn(rec: ObjectRecord): Promise<boolean> {
    return this.root.transaction(() => {
      if (!this.objects.get(rec.id)) return false;
      this.objects.removeSync(rec.id);
      if (this.paths.get(rec.path) === rec.id) this.paths.removeSync(rec.path);
      for (const a of ancestors(rec.path)) {
        const n = (this.containers.get(a) ?? 1) - 1;
        if (n > 0) this.containers.putSync(a, n);
        else this.containers.removeSync(a);
      }
      this.dropFaultsSync(rec.id);
      return true;
    });
  }

  /**
   * Drop the faults of an object that no longer exists (inside a transaction): each comes off
   * its volume's count, which counts distinct faulty slices of live objects only.
   */
  private dropFaultsSync(objectId: string): void {
    for (const { key, value } of this.faults.getRange({ start: `${objectId}/`, end: `${objectId}/~` })) {
      this.faults.removeSync(key);
      const v = this.volumes.get(value.volumeId);
      if (v && v.faults > 0) this.volumes.putSync(v.id, { ...v, faults: v.faults - 1 });
    }
  }

  /**
   * At boot: drop the faults left for objects that no longer exist (a fault recorded by a read
   * that raced the object's DELETE before this rule existed). Returns how many were dropped.
   */
  dropStaleFaults(): Promise<number> {
    return this.root.transaction(() => {
      const stale = new Set<string>();
      for (const { value } of this.faults.getRange()) if (!this.objects.get(value.objectId)) stale.add(value.objectId);
      let n = 0;
      for (const id of stale) {
        n += this.faultsOf(id).length;
        this.dropFaultsSync(id);
      }
      return n;
    });
  }

  /** Look an object up by path or id. */
  find(target: { kind: 'id'; id: string } | { kind: 'path'; path: string }): ObjectRecord | undefined {
    const id = target.kind === 'id' ? target.id : this.paths.get(target.path);
    return id ? this.objects.get(id) : undefined;
  }

  /**
   * The entries directly in `container` ('/' is the root: the buckets, and bucket-level objects),
   * in key order. The index is the paths database itself, sorted by key: objects directly in the
   * container are one run of keys under `container/`; a deeper key names a child container once,
   * and the scan then seeks past everything below it (to `container/name0`, '0' being the
   * character after '/'). So a listing costs one seek per child container plus one step per
   * object in it, never a walk of what lies deeper (bench/objstore-mount.bench.ts measures it).
   */
  children(container: string): ContainerEntry[] {
    const prefix = container === '/' ? '/' : `${container}/`;
    const end = `${prefix.slice(0, -1)}0`;
    const out: ContainerEntry[] = [];
    let start = prefix;
    for (;;) {
      let next: string | null = null;
      for (const key of this.paths.getKeys({ start, end })) {
        const rest = key.slice(prefix.length);
        const slash = rest.indexOf('/');
        if (slash < 0) {
          out.push({ name: rest, dir: false });
          continue;
        }
        const name = rest.slice(0, slash);
        out.push({ name, dir: true });
        next = `${prefix}${name}0`;
        break;
      }
      if (next === null) return out;
      start = next;
    }
  }

  policy(bucket: string): BucketPolicy {
    return this.buckets.get(bucket) ?? DEFAULT_POLICY;
  }

  /**
   * Record a bad slice (a read, a verify or a scrub found it). A slice already recorded is
   * counted again on its fault, not on its volume: the volume's `faults` counts distinct faulty
   * slices, and when it reaches the health threshold the volume becomes read-only and unhealthy
   * (reads go on; it is never evicted: the operator decides; the change is logged at warn with
   * its reason). A slice whose object is gone (deleted) or which is no longer on that volume
   * (moved) is not a fault: nothing is recorded, and null is returned. Else the fault's key.
   */
  async recordFault(f: Omit<SliceFault, 'firstSeenAt' | 'lastSeenAt' | 'count' | 'repairStatus' | 'repairBlockedReason'>): Promise<string | null> {
    const key = `${f.objectId}/${f.sliceIndex}`;
    const sickened = await this.root.transaction((): VolumeRecord | null | false => {
      const obj = this.objects.get(f.objectId);
      if (!obj || f.sliceIndex >= obj.k + obj.m || volumeOf(obj, f.sliceIndex) !== f.volumeId) return false;
      const now = Date.now();
      const old = this.faults.get(key);
      const blockedFor = old?.repairBlockedReason;
      // A new finding re-arms a repair that was refused for a reason that may have gone away.
      const rearm = old?.repairStatus === 'blocked' && blockedFor !== 'unrecoverable';
      this.faults.putSync(key, {
        ...f,
        firstSeenAt: old?.firstSeenAt ?? now,
        lastSeenAt: now,
        count: (old?.count ?? 0) + 1,
        repairStatus: !old || rearm ? 'pending' : old.repairStatus,
        repairBlockedReason: !old || rearm ? null : (old.repairBlockedReason ?? null),
      });
      const v = this.volumes.get(f.volumeId);
      if (v && (!old || old.volumeId !== f.volumeId)) {
        const faults = v.faults + 1;
        const sick = faults >= this.healthFaultThreshold && v.isHealthy;
        this.volumes.putSync(f.volumeId, { ...v, faults, ...(sick ? { isHealthy: false, isReadOnly: true } : {}) });
        if (sick) return { ...v, faults };
      }
      return null;
    });
    if (sickened === false) return null;
    if (sickened) this.reportUnhealthy(sickened, f);
    return key;
  }

  /**
   * Record a slice write of a PUT that failed on `volumeId` (the PUT rewrote the slice elsewhere).
   * The health monitor counts it like a faulty slice: it adds to the volume's `faults`, and at the
   * threshold the volume becomes read-only and unhealthy; the volume keeps the count of its write
   * faults and the last one (GET /$/faults lists them under writeFaults).
   */
  async recordWriteFault(volumeId: number, f: Omit<WriteFault, 'at'>): Promise<void> {
    const sickened = await this.root.transaction((): VolumeRecord | null => {
      const v = this.volumes.get(volumeId);
      if (!v || v.isDeleted) return null;
      const faults = v.faults + 1;
      const sick = faults >= this.healthFaultThreshold && v.isHealthy;
      const writeFaults = { count: (v.writeFaults?.count ?? 0) + 1, last: { ...f, at: Date.now() } };
      this.volumes.putSync(volumeId, { ...v, faults, writeFaults, ...(sick ? { isHealthy: false, isReadOnly: true } : {}) });
      return sick ? { ...v, faults } : null;
    });
    if (sickened) this.reportUnhealthy(sickened, f);
  }

  /** A fault made volume `v` unhealthy: logged at warn with its reason, and told (the notifier). */
  private reportUnhealthy(v: VolumeRecord, f: { objectId: string; sliceIndex: number; code: string; message: string }): void {
    this.log?.warn(
      { volumeId: v.id, label: v.label, faults: v.faults, threshold: this.healthFaultThreshold, lastFault: { objectId: f.objectId, sliceIndex: f.sliceIndex, code: f.code, message: f.message } },
      `volume ${v.id} is now unhealthy and read-only: ${v.faults} distinct faulty slices of live objects reached the health threshold (${this.healthFaultThreshold}); it takes no new objects until an operator declares it healthy (PUT /$/volumes/${v.id})`,
    );
    this.onUnhealthy?.(v);
  }

  /** The faults of one object. */
  faultsOf(objectId: string): SliceFault[] {
    const out: SliceFault[] = [];
    for (const { value } of this.faults.getRange({ start: `${objectId}/`, end: `${objectId}/~` })) out.push(value);
    return out;
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
