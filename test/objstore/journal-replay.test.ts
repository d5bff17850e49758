/** The restore rules (protocols/objstore/journal-replay.ts), each pinned. */
import test from 'ava';
import { containerCounts, emptyState, replay, replayPolicy, stateFromSnapshot, type SliceCount, type SliceProbe } from '../../protocols/objstore/journal-replay.js';
import type { JournalRecord, PolicyFlags } from '../../protocols/objstore/journal-format.js';
import type { SnapshotContent } from '../../protocols/objstore/snapshot-format.js';
import type { ObjectRecord } from '../../protocols/objstore/headers.js';

const id = (n: number) => `$${n.toString(16).padStart(24, '0')}`;
const rec = (n: number, path = `/b/o${n}`): ObjectRecord => ({ id: id(n), path, size: n, mime: 'text/plain', md5: 'x', k: 2, m: 1, chunkSize: 4096, dataVolumes: [1, 2], parityVolumes: [3], createdAt: n });
const putRec = (seq: number, r: ObjectRecord): JournalRecord => ({ seq, ts: seq, op: 'put', ...r });
const delRec = (seq: number, r: ObjectRecord): JournalRecord => ({ seq, ts: seq, op: 'delete', id: r.id, path: r.path, volumes: [...r.dataVolumes, ...r.parityVolumes], k: r.k });
const pol = (seq: number, bucket: string, f: Partial<PolicyFlags>): JournalRecord => ({ seq, ts: seq, op: 'policy', bucket, publicRead: false, publicWrite: false, deleteProtected: false, ...f });
const F = (pr: boolean, pw: boolean, dp: boolean): PolicyFlags => ({ publicRead: pr, publicWrite: pw, deleteProtected: dp });

/** Disks as a map: object id -> slices present (default: all 3). */
const disks = (m: Record<string, SliceCount> = {}): SliceProbe => (r) => m[r.id] ?? { present: r.volumes.length, unknown: 0 };

function snap(objects: ObjectRecord[], buckets: Record<string, PolicyFlags> = {}): SnapshotContent {
  return { header: { id: '20260101T000000Z-000000', takenAt: 1, replayFrom: 10 }, objects, buckets: new Map(Object.entries(buckets)), volumes: new Map([[1, { id: 1, label: 'v1' }]]), meta: new Map([['nextVolumeId', 4]]) };
}

test('a snapshot sets policy exactly: it can clear deleteProtected, whatever the lost database said', (t) => {
  const { state } = stateFromSnapshot(snap([], { b: F(true, false, false), c: F(false, false, true) }), disks());
  t.deepEqual(state.buckets.get('b'), F(true, false, false));
  t.deepEqual(state.buckets.get('c'), F(false, false, true));
  t.is(state.meta.get('nextVolumeId'), 4);
  t.deepEqual(state.volumes.get(1), { id: 1, label: 'v1' });
});

test('journal replay never clears deleteProtected set on the bucket: declined and reported', (t) => {
  const { state, report } = stateFromSnapshot(snap([], { b: F(false, false, true) }), disks());
  replay(state, [pol(10, 'b', { deleteProtected: false })], disks(), 10, report);
  t.true(state.buckets.get('b')!.deleteProtected);
  t.deepEqual(report.policiesDeclined, [{ seq: 10, bucket: 'b', field: 'deleteProtected', from: true, to: false }]);
});

test('journal replay adds protection: false -> true applies, also on a bucket the snapshot did not know', (t) => {
  const { state, report } = stateFromSnapshot(snap([], { b: F(false, false, false) }), disks());
  replay(state, [pol(10, 'b', { deleteProtected: true }), pol(11, 'new', { deleteProtected: true })], disks(), 10, report);
  t.true(state.buckets.get('b')!.deleteProtected);
  t.true(state.buckets.get('new')!.deleteProtected);
  t.deepEqual(report.policiesDeclined, []);
  t.is(report.applied.policy, 2);
});

test('once set by replay, a later journalled clear is declined too (the bucket as restored so far is the live one)', (t) => {
  const s = emptyState();
  const r = replay(s, [pol(1, 'b', { deleteProtected: true }), pol(2, 'b', { deleteProtected: false })], disks());
  t.true(s.buckets.get('b')!.deleteProtected);
  t.is(r.policiesDeclined.length, 1);
});

test('publicRead and publicWrite follow the journal both ways (they are not delete protection)', (t) => {
  const s = emptyState();
  s.buckets.set('b', F(true, false, false));
  replay(s, [pol(1, 'b', { publicRead: false, publicWrite: true })], disks());
  t.deepEqual(s.buckets.get('b'), F(false, true, false));
  replay(s, [pol(2, 'b', { publicRead: true, publicWrite: false })], disks());
  t.deepEqual(s.buckets.get('b'), F(true, false, false));
});

test('the policy rule alone: every combination of live and journalled deleteProtected', (t) => {
  for (const live of [undefined, F(false, false, false), F(true, true, true), F(false, false, true)]) {
    for (const dp of [false, true]) {
      const { next, declined } = replayPolicy(live, F(true, false, dp));
      t.is(next.deleteProtected, dp || (live?.deleteProtected ?? false));
      t.is(declined.length, live?.deleteProtected && !dp ? 1 : 0);
      t.true(next.publicRead);
      t.false(next.publicWrite);
    }
  }
});

test('a journalled put is restored when its slices are on disk, skipped with why when they are not', (t) => {
  const s = emptyState();
  const r = replay(s, [putRec(1, rec(1)), putRec(2, rec(2)), putRec(3, rec(3))], disks({ [id(2)]: { present: 1, unknown: 0 }, [id(3)]: { present: 0, unknown: 0 } }));
  t.deepEqual([...s.objects.keys()], [id(1)]);
  t.is(s.paths.get('/b/o1'), id(1));
  t.is(r.applied.put, 1);
  t.deepEqual(r.skipped.map((x) => [x.seq, x.op]), [[2, 'put'], [3, 'put']]);
  t.regex(r.skipped[0]!.why, /only 1 of its 3 slices are on disk \(2 needed\)/);
});

test('a put with k slices present (one lost) is restored and counted degraded; a volume not present counts as maybe', (t) => {
  const s = emptyState();
  const r = replay(s, [putRec(1, rec(1)), putRec(2, rec(2))], disks({ [id(1)]: { present: 2, unknown: 0 }, [id(2)]: { present: 1, unknown: 1 } }));
  t.is(s.objects.size, 2);
  t.is(r.degraded, 2);
});

test('a put already in the snapshot is not applied twice; records before replayFrom are ignored', (t) => {
  const { state, report } = stateFromSnapshot(snap([rec(1)]), disks());
  replay(state, [putRec(5, rec(9)), putRec(10, rec(1)), putRec(11, rec(2))], disks(), 10, report);
  t.deepEqual([...state.objects.keys()].sort(), [id(1), id(2)]);
  t.is(report.alreadyPresent, 1);
  t.is(report.applied.put, 1);
});

test('a put to a path another object holds is skipped, naming that object', (t) => {
  const s = emptyState();
  const r = replay(s, [putRec(1, rec(1, '/b/same')), putRec(2, rec(2, '/b/same'))], disks());
  t.is(s.paths.get('/b/same'), id(1));
  t.regex(r.skipped[0]!.why, new RegExp(`names object \\${id(1)}`));
});

test('a journalled delete applies when the slices are gone, and not while the object is still readable', (t) => {
  const { state, report } = stateFromSnapshot(snap([rec(1), rec(2), rec(3)]), disks());
  replay(state, [delRec(10, rec(1)), delRec(11, rec(2)), delRec(12, rec(3))], disks({ [id(1)]: { present: 0, unknown: 0 }, [id(2)]: { present: 3, unknown: 0 }, [id(3)]: { present: 1, unknown: 0 } }), 10, report);
  t.deepEqual([...state.objects.keys()], [id(2)]);
  t.false(state.paths.has('/b/o1'));
  t.is(report.applied.delete, 2);
  t.regex(report.skipped.find((x) => x.seq === 11)!.why, /still on disk/);
});

test('put then delete then put of the same path: the last object stands', (t) => {
  const s = emptyState();
  const probe = disks({ [id(1)]: { present: 0, unknown: 0 } });
  replay(s, [putRec(1, rec(1, '/b/p')), delRec(2, rec(1, '/b/p')), putRec(3, rec(2, '/b/p'))], (r) => (r.id === id(1) ? { present: 0, unknown: 0 } : probe(r)));
  t.is(s.paths.get('/b/p'), id(2));
  t.is(s.objects.size, 1);
});

test('an object of the snapshot with every slice gone is dropped with why; one on a missing volume is kept', (t) => {
  const { state, report } = stateFromSnapshot(snap([rec(1), rec(2)]), disks({ [id(1)]: { present: 0, unknown: 0 }, [id(2)]: { present: 0, unknown: 3 } }));
  t.deepEqual([...state.objects.keys()], [id(2)]);
  t.is(report.fromSnapshot.dropped, 1);
  t.regex(report.skipped[0]!.why, /none of its slices/);
});

test('volume records replayed replace the restored ones', (t) => {
  const { state } = stateFromSnapshot(snap([]), disks());
  const r = replay(state, [{ seq: 10, ts: 1, op: 'volume', volume: { id: 1, label: 'renamed' } }, { seq: 11, ts: 1, op: 'volume', volume: { id: 2, label: 'new' } }], disks(), 10);
  t.is(state.volumes.get(1)!.label, 'renamed');
  t.is(state.volumes.size, 2);
  t.is(r.applied.volume, 2);
});

test('container counts: every ancestor of every path', (t) => {
  t.deepEqual(Object.fromEntries(containerCounts(['/a/b/c', '/a/b/d', '/a/e', '/f'])), { '/a': 3, '/a/b': 2 });
});

test("an object journalled twice by one PUT (its failed slice written elsewhere): the last record's layout is restored; a snapshot's object is not re-laid", (t) => {
  const s = emptyState();
  const first = rec(1);
  const moved = { ...first, parityVolumes: [4] };
  const r = replay(s, [putRec(1, first), putRec(2, moved)], disks());
  t.deepEqual(s.objects.get(id(1))?.parityVolumes, [4]);
  t.is(r.relaid, 1);
  t.is(r.applied.put, 1, 'one object');
  t.is(r.alreadyPresent, 0);
  // the snapshot's record stays: a journalled put of it (from before the snapshot's moves) is not newer
  const fromSnap = stateFromSnapshot(snap([moved]), disks());
  replay(fromSnap.state, [putRec(10, first)], disks(), 10, fromSnap.report);
  t.deepEqual(fromSnap.state.objects.get(id(1))?.parityVolumes, [4]);
  t.is(fromSnap.report.relaid, 0);
  t.is(fromSnap.report.alreadyPresent, 1);
});

const moveRec = (seq: number, r: ObjectRecord, slices: Array<{ index: number; from: number; to: number }>): JournalRecord => ({ seq, ts: seq, op: 'move', id: r.id, slices });

test('a journalled move re-points a snapshot object whose slice moved after the snapshot', (t) => {
  const { state, report } = stateFromSnapshot(snap([rec(1), rec(2)]), disks());
  // Slice 1 of o1 went 2 -> 4 (a drain), slice 2 (parity) of o2 went 3 -> 5 (a rebalance).
  replay(state, [moveRec(10, rec(1), [{ index: 1, from: 2, to: 4 }]), moveRec(11, rec(2), [{ index: 2, from: 3, to: 5 }])], disks(), 10, report);
  t.deepEqual(state.objects.get(id(1))!.dataVolumes, [1, 4]);
  t.deepEqual(state.objects.get(id(2))!.parityVolumes, [5]);
  t.is(report.applied.move, 2);
  t.deepEqual(report.skipped, []);
});

test('a move whose new slice is not on disk (it did not finish) is skipped with why; the old location is kept', (t) => {
  const { state, report } = stateFromSnapshot(snap([rec(1)]), disks());
  // On disk: the old layout has 3 slices, the moved one only 2 (nothing on volume 4).
  const probe: SliceProbe = (r) => ({ present: r.volumes.includes(4) ? 2 : 3, unknown: 0 });
  replay(state, [moveRec(10, rec(1), [{ index: 0, from: 1, to: 4 }])], probe, 10, report);
  t.deepEqual(state.objects.get(id(1))!.dataVolumes, [1, 2]);
  t.is(report.applied.move, 0);
  t.is(report.skipped.length, 1);
  t.like(report.skipped[0], { seq: 10, op: 'move' });
  t.regex(report.skipped[0]!.why, /slice\(s\) 0 to volume 4 not found there: the move did not finish/);
});

test('a move of an object not restored, or of a slice named elsewhere already, changes nothing', (t) => {
  const { state, report } = stateFromSnapshot(snap([rec(1)]), disks());
  replay(state, [moveRec(10, rec(7), [{ index: 0, from: 1, to: 4 }]), moveRec(11, rec(1), [{ index: 0, from: 9, to: 4 }]), moveRec(12, rec(1), [{ index: 5, from: 1, to: 4 }])], disks(), 10, report);
  t.deepEqual(state.objects.get(id(1))!.dataVolumes, [1, 2]);
  t.false(state.objects.has(id(7)));
  t.is(report.applied.move, 0);
  t.deepEqual(report.skipped, []);
});
