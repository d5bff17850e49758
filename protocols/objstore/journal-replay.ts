/**
 * The restore rules, pure: a snapshot sets the records exactly, then the journal after it is
 * replayed on top, each record checked against what the disks hold. `hostd restore`
 * (actors/objstore/journal/restore.ts) supplies the disks' answers (SliceProbe) and writes the
 * result; every rule of the spec's "Bucket delete-protection persistence" lives here:
 *
 * - the snapshot sets every bucket's policy exactly (it can clear deleteProtected);
 * - journal replay never clears deleteProtected on the bucket as restored so far (true stays
 *   true; a journalled false is declined and reported); it may set it (false -> true);
 * - publicRead and publicWrite are not delete protection: replay applies them as journalled (last
 *   write wins). (The spec's sentence "only adds protection and never clears a flag set" reads
 *   two opposite ways for them; this store reads it as the section's title says: delete
 *   protection.) docs/object-store.md "Backup and restore" says so;
 * - a journalled put is restored only if enough of its slices are on disk to read it (k); one
 *   whose slices sit partly on a volume not present counts those as possibly there;
 * - a journalled delete is applied only if the object's slices are gone (fewer than k left on
 *   the volumes present: it can no longer be read);
 * - an object of the snapshot whose every slice is found gone (all its volumes present, no slice
 *   on them) is not restored;
 * - a volume record replayed replaces the one restored so far;
 * - a journalled move (the scheduler relocated slices: drain, rebalance, repair) re-points the
 *   slices still named on their old volume, unless fewer of the object's slices are found on disk
 *   with the move than without it (its new slice never committed: the move did not finish).
 */
import type { ObjectRecord } from './headers.js';
import type { JournalRecord, PolicyFlags, SliceMove, VolumeEntry } from './journal-format.js';
import { volumeOf, withSliceOn } from './layout.js';
import type { SnapshotContent } from './snapshot-format.js';

export const DEFAULT_FLAGS: PolicyFlags = { publicRead: false, publicWrite: false, deleteProtected: false };

export interface RestoreState {
  objects: Map<string, ObjectRecord>;
  paths: Map<string, string>;
  buckets: Map<string, PolicyFlags>;
  volumes: Map<number, VolumeEntry>;
  meta: Map<string, unknown>;
}

/** What the disks say about one object's slices. */
export interface SliceCount {
  /** slices found, with a header naming this object */
  present: number;
  /** slices whose volume is not present: cannot be told */
  unknown: number;
}

export type SliceProbe = (rec: { id: string; k: number; volumes: readonly number[] }) => SliceCount;

export interface Skipped {
  /** journal sequence number, or 0 for an object of the snapshot */
  seq: number;
  op: string;
  target: string;
  why: string;
}

export interface DeclinedPolicy {
  seq: number;
  bucket: string;
  field: keyof PolicyFlags;
  from: boolean;
  to: boolean;
}

export interface ReplayReport {
  fromSnapshot: { objects: number; dropped: number; buckets: number; volumes: number };
  applied: { put: number; delete: number; policy: number; volume: number; move: number };
  /** puts whose object the snapshot (or an earlier record) already held */
  alreadyPresent: number;
  /** objects journalled again with their slices elsewhere (a PUT's failover): the last record taken */
  relaid: number;
  /** puts restored with some slices on volumes that are not present */
  degraded: number;
  skipped: Skipped[];
  policiesDeclined: DeclinedPolicy[];
}

const allVolumes = (r: ObjectRecord) => [...r.dataVolumes, ...r.parityVolumes];

function newReport(): ReplayReport {
  return { fromSnapshot: { objects: 0, dropped: 0, buckets: 0, volumes: 0 }, applied: { put: 0, delete: 0, policy: 0, volume: 0, move: 0 }, alreadyPresent: 0, relaid: 0, degraded: 0, skipped: [], policiesDeclined: [] };
}

/**
 * The state a snapshot gives: its records exactly (policies included: whatever the damaged
 * database said is not looked at). Objects whose every slice is found gone are left out.
 */
export function stateFromSnapshot(snap: SnapshotContent, probe: SliceProbe, report: ReplayReport = newReport()): { state: RestoreState; report: ReplayReport } {
  const state: RestoreState = { objects: new Map(), paths: new Map(), buckets: new Map(), volumes: new Map(snap.volumes), meta: new Map(snap.meta) };
  for (const [name, p] of snap.buckets) state.buckets.set(name, { ...p });
  for (const rec of snap.objects) {
    const c = probe({ id: rec.id, k: rec.k, volumes: allVolumes(rec) });
    if (c.present === 0 && c.unknown === 0) {
      report.fromSnapshot.dropped++;
      report.skipped.push({ seq: 0, op: 'object', target: `${rec.path} (${rec.id})`, why: 'in the snapshot, but none of its slices is on its volumes (deleted after the snapshot?)' });
      continue;
    }
    state.objects.set(rec.id, rec);
    state.paths.set(rec.path, rec.id);
  }
  report.fromSnapshot.objects = state.objects.size;
  report.fromSnapshot.buckets = state.buckets.size;
  report.fromSnapshot.volumes = state.volumes.size;
  return { state, report };
}

/** An empty state (no snapshot: the journal alone, from its first record). */
export function emptyState(): RestoreState {
  return { objects: new Map(), paths: new Map(), buckets: new Map(), volumes: new Map(), meta: new Map() };
}

/**
 * A journalled policy over the bucket as restored so far: deleteProtected is never cleared
 * (declined, reported), publicRead and publicWrite follow the journal.
 */
export function replayPolicy(live: PolicyFlags | undefined, journalled: PolicyFlags): { next: PolicyFlags; declined: Array<{ field: keyof PolicyFlags; from: boolean; to: boolean }> } {
  const now = live ?? DEFAULT_FLAGS;
  const declined: Array<{ field: keyof PolicyFlags; from: boolean; to: boolean }> = [];
  let deleteProtected = journalled.deleteProtected;
  if (now.deleteProtected && !journalled.deleteProtected) {
    deleteProtected = true;
    declined.push({ field: 'deleteProtected', from: true, to: false });
  }
  return { next: { publicRead: journalled.publicRead, publicWrite: journalled.publicWrite, deleteProtected }, declined };
}

/** Replay journal records (sorted by seq) over `state`, in place. Records below `from` are ignored. */
export function replay(state: RestoreState, records: readonly JournalRecord[], probe: SliceProbe, from = 1, report: ReplayReport = newReport()): ReplayReport {
  /** objects this replay put (not the snapshot's) */
  const replayed = new Set<string>();
  for (const r of records) {
    if (r.seq < from) continue;
    switch (r.op) {
      case 'put': {
        const { op: _op, seq: _seq, ts: _ts, ...rec } = r;
        const target = `${rec.path} (${rec.id})`;
        const earlier = state.objects.get(rec.id);
        if (earlier) {
          // The same object journalled again (a PUT whose failed slice was written on another
          // volume logs its record again before it commits): the last one says where its slices are.
          if (replayed.has(rec.id) && earlier.path === rec.path) {
            state.objects.set(rec.id, rec);
            report.relaid++;
          } else report.alreadyPresent++;
          break;
        }
        const taken = state.paths.get(rec.path);
        if (taken) {
          report.skipped.push({ seq: r.seq, op: 'put', target, why: `the path names object ${taken} already` });
          break;
        }
        const c = probe({ id: rec.id, k: rec.k, volumes: allVolumes(rec) });
        if (c.present + c.unknown < rec.k || c.present === 0) {
          report.skipped.push({ seq: r.seq, op: 'put', target, why: `only ${c.present} of its ${rec.k + rec.m} slices are on disk (${rec.k} needed): the PUT did not finish, or they were lost` });
          break;
        }
        if (c.present < rec.k + rec.m) report.degraded++;
        state.objects.set(rec.id, rec);
        state.paths.set(rec.path, rec.id);
        replayed.add(rec.id);
        report.applied.put++;
        break;
      }
      case 'delete': {
        const target = `${r.path} (${r.id})`;
        const rec = state.objects.get(r.id);
        if (!rec) break;
        const c = probe({ id: r.id, k: rec.k, volumes: allVolumes(rec) });
        if (c.present >= rec.k) {
          report.skipped.push({ seq: r.seq, op: 'delete', target, why: `${c.present} of its slices are still on disk (readable): the DELETE did not finish, the object is kept` });
          break;
        }
        state.objects.delete(r.id);
        if (state.paths.get(rec.path) === r.id) state.paths.delete(rec.path);
        report.applied.delete++;
        break;
      }
      case 'policy': {
        const flags: PolicyFlags = { publicRead: r.publicRead, publicWrite: r.publicWrite, deleteProtected: r.deleteProtected };
        const { next, declined } = replayPolicy(state.buckets.get(r.bucket), flags);
        for (const d of declined) report.policiesDeclined.push({ seq: r.seq, bucket: r.bucket, ...d });
        state.buckets.set(r.bucket, next);
        report.applied.policy++;
        break;
      }
      case 'volume':
        state.volumes.set(r.volume.id, r.volume);
        report.applied.volume++;
        break;
      case 'move': {
        const rec = state.objects.get(r.id);
        if (!rec) break;
        // Slices already named on their new volume (a snapshot after the move) are left as they are.
        const pending = r.slices.filter((s) => s.index < rec.k + rec.m && volumeOf(rec, s.index) === s.from && s.from !== s.to);
        if (!pending.length) break;
        const next = pending.reduce((r: ObjectRecord, s: SliceMove) => withSliceOn(r, s.index, s.to), rec);
        const before = probe({ id: rec.id, k: rec.k, volumes: allVolumes(rec) });
        const after = probe({ id: rec.id, k: rec.k, volumes: allVolumes(next) });
        if (after.present < before.present) {
          report.skipped.push({ seq: r.seq, op: 'move', target: `${rec.path} (${rec.id})`, why: `slice(s) ${pending.map((s) => `${s.index} to volume ${s.to}`).join(', ')} not found there: the move did not finish, the old location is kept` });
          break;
        }
        state.objects.set(rec.id, next);
        report.applied.move++;
        break;
      }
    }
  }
  return report;
}

/** The container counts of a set of paths ('/a/b/c' counts under '/a' and '/a/b'). */
export function containerCounts(paths: Iterable<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of paths) for (let i = p.indexOf('/', 1); i !== -1; i = p.indexOf('/', i + 1)) out.set(p.slice(0, i), (out.get(p.slice(0, i)) ?? 0) + 1);
  return out;
}

export { newReport };
