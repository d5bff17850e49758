/**
 * The rules of recovery from the disks (actors/objstore/recovery/assemble.ts), pure: which
 * sidecar wins, where the layout comes from, duplicates, degraded and lost objects, old formats.
 */
import test from 'ava';
import { assemble, type FoundSlice } from '../../actors/objstore/recovery/assemble.js';
import type { SliceHeader } from '../../protocols/objstore/slice-format.js';
import type { SliceRecord } from '../../protocols/objstore/slice-record.js';

const INSTANCE = '0b7e2c1a-1234-4abc-8def-0123456789ab';
const ID = '$0123456789abcdef01234567';

const record = (index: number, patch: Partial<SliceRecord> = {}): SliceRecord => ({
  objectId: ID,
  index,
  path: '/b/o',
  size: 1000,
  mime: 'text/plain',
  md5: 'd41d8cd98f00b204e9800998ecf8427e',
  createdAt: 1000,
  k: 2,
  m: 1,
  chunkSize: 504,
  volumes: [1, 2, 3],
  instanceId: INSTANCE,
  writtenAt: 5000,
  by: 'put',
  ...patch,
});
const header = (index: number, patch: Partial<SliceHeader> = {}): SliceHeader => ({ objectId: ID, index, k: 2, m: 1, chunkSize: 504, objectSize: 1000, sliceSize: 504, ...patch });
const slice = (index: number, volumeId: number, patch: Partial<FoundSlice> = {}): FoundSlice => ({ volumeId, objectId: ID, index, header: header(index), readable: true, record: record(index), ...patch });

test('every slice where its sidecars say: one record, the layout as found', (t) => {
  const plan = assemble([slice(0, 1), slice(1, 2), slice(2, 3)], INSTANCE);
  t.deepEqual(plan.skipped, []);
  t.is(plan.objects.length, 1);
  t.deepEqual(plan.objects[0], {
    record: { id: ID, path: '/b/o', size: 1000, mime: 'text/plain', md5: 'd41d8cd98f00b204e9800998ecf8427e', k: 2, m: 1, chunkSize: 504, dataVolumes: [1, 2], parityVolumes: [3], createdAt: 1000 },
    missing: [],
    duplicates: [],
    ignored: [],
  });
});

test('a moved slice: the layout follows the slice, whatever the older sidecars say', (t) => {
  const moved = slice(1, 5, { record: record(1, { volumes: [1, 5, 3], writtenAt: 9000, by: 'drain' }) });
  const plan = assemble([slice(0, 1), moved, slice(2, 3)], INSTANCE);
  t.deepEqual(plan.objects[0]!.record.dataVolumes, [1, 5]);
  t.deepEqual(plan.objects[0]!.duplicates, []);
});

test('a slice on two volumes (a move\'s old copy): the newest sidecar\'s volume wins, the other is a duplicate', (t) => {
  const moved = slice(1, 5, { record: record(1, { volumes: [1, 5, 3], writtenAt: 9000 }) });
  const plan = assemble([slice(0, 1), slice(1, 2), moved, slice(2, 3)], INSTANCE);
  t.deepEqual(plan.objects[0]!.record.dataVolumes, [1, 5]);
  t.deepEqual(plan.objects[0]!.duplicates, [{ index: 1, volumeId: 2 }]);
  // With no sidecar naming either copy, the lower volume id wins.
  const plain = assemble([slice(0, 1), slice(1, 7, { record: null }), slice(1, 6, { record: null }), slice(2, 3, { record: record(2, { volumes: [1, 9, 3] }) })], INSTANCE);
  t.deepEqual(plain.objects[0]!.record.dataVolumes, [1, 6]);
  t.deepEqual(plain.objects[0]!.duplicates, [{ index: 1, volumeId: 7 }]);
});

test('one readable sidecar is enough; missing slices leave it degraded, named where the sidecar says', (t) => {
  const plan = assemble([slice(0, 1, { record: null, recordProblem: 'no sidecar' }), slice(2, 3)], INSTANCE);
  t.is(plan.objects.length, 1);
  t.deepEqual(plan.objects[0]!.missing, [1]);
  t.deepEqual(plan.objects[0]!.record.dataVolumes, [1, 2]);
});

test('fewer than k readable slices: skipped as insufficient-slices, with each unreadable one and why', (t) => {
  const plan = assemble([slice(0, 1, { readable: false, problem: 'the file is 10 bytes long, its header says 572 (torn or truncated)' }), slice(2, 3)], INSTANCE);
  t.deepEqual(plan.objects, []);
  t.is(plan.skipped.length, 1);
  t.like(plan.skipped[0], { objectId: ID, reason: 'insufficient-slices', path: '/b/o' });
  t.regex(plan.skipped[0]!.message, /^only 1 of its 3 slices are readable and 2 are needed \(slice 0 on volume 1: the file is 10 bytes long.*\)$/);
});

test('a slice whose header disagrees with the record does not count', (t) => {
  const plan = assemble([slice(0, 1), slice(1, 2, { header: header(1, { chunkSize: 1024 }) }), slice(2, 3)], INSTANCE);
  t.deepEqual(plan.objects[0]!.missing, [1]);
  t.deepEqual(plan.objects[0]!.ignored, [{ index: 1, volumeId: 2, why: "its header's chunkSize 1024 differ from the record's" }]);
  const size = assemble([slice(0, 1, { header: header(0, { objectSize: 5 }) }), slice(1, 2), slice(2, 3)], INSTANCE);
  t.regex(size.objects[0]!.ignored[0]!.why, /an object of 5 bytes, the record 1000/);
});

test('no record info: old formats say so, current-format slices say why their sidecars failed', (t) => {
  const old = assemble([slice(0, 1, { header: header(0, { legacy: 1 }), record: null }), slice(1, 4, { header: header(1, { legacy: 2, sealed: { keyGen: 1 } }), record: null })], INSTANCE);
  t.deepEqual(old.objects, []);
  t.deepEqual(old.skipped, [{ objectId: ID, reason: 'no-record-info-old-format', message: 'no record info (format v1/v2): cannot restore path/mime/md5 (2 slice file(s) on volume(s) 1, 4; left on the disks)' }]);
  const torn = assemble([slice(0, 1, { record: null, recordProblem: 'the record sidecar of slice x: CRC32C mismatch' })], INSTANCE);
  t.like(torn.skipped[0], { reason: 'no-record-info' });
  t.regex(torn.skipped[0]!.message, /no readable record sidecar among its 1 slice file\(s\) on volume\(s\) 1: the record sidecar of slice x: CRC32C mismatch/);
});

test('sidecars of another installation are left alone; objects come out in id order', (t) => {
  const other = assemble([slice(0, 1, { record: record(0, { instanceId: 'ffffffff-1234-4abc-8def-0123456789ab' }) })], INSTANCE);
  t.like(other.skipped[0], { reason: 'other-instance' });
  const id2 = '$0023456789abcdef01234567';
  const two = assemble([slice(0, 1), slice(1, 2), { ...slice(0, 1), objectId: id2, record: { ...record(0), objectId: id2 } }, { ...slice(1, 2), objectId: id2, record: null }], INSTANCE.toUpperCase());
  t.deepEqual(two.objects.map((o) => o.record.id), [id2, ID]);
});
