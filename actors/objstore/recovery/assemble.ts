/**
 * Recovery from the disks, the rules: from every slice found on the volumes (with its header and
 * record sidecar, scan.ts) to the object records to write and the objects skipped, each with why.
 * Pure (no I/O): the same slices give the same plan.
 *
 * - An object is rebuilt from its newest readable sidecar (every sidecar holds the whole record;
 *   the newest one's layout is the latest its writers knew). Its layout is taken from where its
 *   slices are found, not from what a sidecar says: a slice moved by a drain or a rebalance has a
 *   sidecar on its new volume, the other slices' sidecars still name the old one.
 * - A slice index found on two volumes (the old copy of a move that was waiting for its grace
 *   period): the copy the newest sidecar names wins, else the lowest volume id; the other is
 *   reported as a duplicate and left on its disk.
 * - Slices whose header disagrees with the record (another geometry) do not count.
 * - Fewer than k readable slices: not recorded (`insufficient-slices`). At least k but not all:
 *   recorded, the missing slices' volumes as the newest sidecar names them (a scrub or a GET then
 *   finds them missing and repair rebuilds them), and reported as degraded.
 * - No readable sidecar: not recorded. Old-format slices (versions 1 and 2) never had one: their
 *   objects are reported as `no-record-info-old-format` (their path, MIME type and MD5 exist
 *   nowhere on the disks); a current-format slice whose sidecar is gone or does not verify as
 *   `no-record-info`.
 */
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import type { SliceHeader } from '../../../protocols/objstore/slice-format.js';
import type { SliceRecord } from '../../../protocols/objstore/slice-record.js';

/** One slice file found on a volume. */
export interface FoundSlice {
  volumeId: number;
  objectId: string;
  index: number;
  /** null when the header does not decode (problem says why) */
  header: SliceHeader | null;
  /** the file is whole: its header decodes and its length is what the header says */
  readable: boolean;
  problem?: string;
  /** its sidecar, decoded; null when there is none or it does not verify (recordProblem says why) */
  record: SliceRecord | null;
  recordProblem?: string;
}

export type SkipReason = 'no-record-info-old-format' | 'no-record-info' | 'insufficient-slices' | 'other-instance' | 'path-conflict';

export interface Skipped {
  objectId: string;
  reason: SkipReason;
  message: string;
  /** the path, when a sidecar said it */
  path?: string;
}

export interface Planned {
  record: ObjectRecord;
  /** slice indexes not found readable (repair rebuilds them) */
  missing: number[];
  /** copies of a slice found on a second volume, left in place */
  duplicates: Array<{ index: number; volumeId: number }>;
  /** slices that do not count, and why */
  ignored: Array<{ index: number; volumeId: number; why: string }>;
}

export interface Plan {
  objects: Planned[];
  skipped: Skipped[];
}

const GEOMETRY = ['k', 'm', 'chunkSize'] as const;

/** Group the slices found by object, and decide each object. `instanceId`: this installation's. */
export function assemble(found: readonly FoundSlice[], instanceId: string): Plan {
  const byObject = new Map<string, FoundSlice[]>();
  for (const s of found) {
    const id = s.objectId.toLowerCase();
    let list = byObject.get(id);
    if (!list) byObject.set(id, (list = []));
    list.push(s);
  }
  const plan: Plan = { objects: [], skipped: [] };
  for (const [objectId, slices] of [...byObject].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const decided = decide(objectId, slices, instanceId.toLowerCase());
    if ('reason' in decided) plan.skipped.push(decided);
    else plan.objects.push(decided);
  }
  return plan;
}

function decide(objectId: string, slices: FoundSlice[], instanceId: string): Planned | Skipped {
  const records = slices.map((s) => s.record).filter((r): r is SliceRecord => r !== null);
  if (!records.length) {
    const old = slices.filter((s) => s.header?.legacy);
    if (old.length) {
      const versions = [...new Set(old.map((s) => `v${s.header!.legacy}`))].sort().join('/');
      return { objectId, reason: 'no-record-info-old-format', message: `no record info (format ${versions}): cannot restore path/mime/md5 (${slices.length} slice file(s) on volume(s) ${volumesOf(slices)}; left on the disks)` };
    }
    const why = [...new Set(slices.map((s) => s.recordProblem ?? s.problem ?? 'no sidecar'))].join('; ');
    return { objectId, reason: 'no-record-info', message: `no readable record sidecar among its ${slices.length} slice file(s) on volume(s) ${volumesOf(slices)}: ${why}` };
  }
  const newest = records.reduce((a, b) => (b.writtenAt > a.writtenAt ? b : a));
  if (newest.instanceId !== instanceId) {
    return { objectId, reason: 'other-instance', path: newest.path, message: `its sidecars are of installation ${newest.instanceId}, not this one (${instanceId}): left alone` };
  }
  const ignored: Planned['ignored'] = [];
  const byIndex = new Map<number, FoundSlice[]>();
  for (const s of slices) {
    const why = !s.readable ? (s.problem ?? 'not readable') : geometryProblem(s.header!, newest);
    if (why) {
      ignored.push({ index: s.index, volumeId: s.volumeId, why });
      continue;
    }
    let list = byIndex.get(s.index);
    if (!list) byIndex.set(s.index, (list = []));
    list.push(s);
  }
  const n = newest.k + newest.m;
  const volumes: number[] = [];
  const missing: number[] = [];
  const duplicates: Planned['duplicates'] = [];
  for (let i = 0; i < n; i++) {
    const copies = (byIndex.get(i) ?? []).sort((a, b) => a.volumeId - b.volumeId);
    if (!copies.length) {
      missing.push(i);
      volumes.push(newest.volumes[i]!);
      continue;
    }
    const pick = copies.find((c) => c.volumeId === newest.volumes[i]) ?? copies[0]!;
    volumes.push(pick.volumeId);
    for (const c of copies) if (c !== pick) duplicates.push({ index: i, volumeId: c.volumeId });
  }
  const present = n - missing.length;
  if (present < newest.k) {
    return { objectId, reason: 'insufficient-slices', path: newest.path, message: `only ${present} of its ${n} slices are readable and ${newest.k} are needed${ignored.length ? ` (${ignored.map((x) => `slice ${x.index} on volume ${x.volumeId}: ${x.why}`).join('; ')})` : ''}` };
  }
  const record: ObjectRecord = {
    id: objectId,
    path: newest.path,
    size: newest.size,
    mime: newest.mime,
    md5: newest.md5,
    k: newest.k,
    m: newest.m,
    chunkSize: newest.chunkSize,
    dataVolumes: volumes.slice(0, newest.k),
    parityVolumes: volumes.slice(newest.k),
    createdAt: newest.createdAt,
  };
  return { record, missing, duplicates, ignored };
}

/** Why a slice's header does not fit the object's record, or null. */
function geometryProblem(h: SliceHeader, r: SliceRecord): string | null {
  const wrong = GEOMETRY.filter((f) => h[f] !== r[f]);
  if (h.objectSize !== r.size) return `its header says an object of ${h.objectSize} bytes, the record ${r.size}`;
  return wrong.length ? `its header's ${wrong.map((f) => `${f} ${h[f]}`).join(', ')} differ from the record's` : null;
}

function volumesOf(slices: FoundSlice[]): string {
  return [...new Set(slices.map((s) => s.volumeId))].sort((a, b) => a - b).join(', ');
}
