/** The snapshot format and its pointer (protocols/objstore/snapshot-format.ts). */
import test from 'ava';
import { createHash } from 'node:crypto';
import { decodePointer, decodeSnapshot, encodePointer, isSnapshotId, knownSnapshots, pointerWith, SnapshotEncoder, SnapshotFormatError, snapshotId, snapshotPath, type PointerEntry } from '../../protocols/objstore/snapshot-format.js';
import type { ObjectRecord } from '../../protocols/objstore/headers.js';

const rec = (n: number): ObjectRecord => ({ id: `$0000000000000000000000${n.toString(16).padStart(2, '0')}`, path: `/b/o${n}`, size: n, mime: 'text/plain', md5: 'x', k: 1, m: 1, chunkSize: 4096, dataVolumes: [1], parityVolumes: [2], createdAt: n });
const ID = snapshotId(Date.UTC(2026, 10, 26, 22, 45, 1), Uint8Array.from([0xab, 0xcd, 0xef]));

function build(objects = 3): Buffer {
  const e = new SnapshotEncoder();
  let s = e.header({ id: ID, takenAt: 5, replayFrom: 17 });
  s += e.bucket('b', { publicRead: true, publicWrite: false, deleteProtected: true });
  s += e.volume({ id: 1, label: 'a' });
  s += e.meta('nextVolumeId', 3);
  for (let i = 0; i < objects; i++) s += e.object(rec(i));
  return Buffer.from(s + e.end().line);
}

test('ids carry the UTC time to the second and 6 hex digits; paths live in the reserved bucket', (t) => {
  t.is(ID, '20261126T224501Z-abcdef');
  t.true(isSnapshotId(ID));
  t.false(isSnapshotId('../x'));
  t.is(snapshotPath(ID), '/.hostd-snapshots/20261126T224501Z-abcdef.ndjson');
  t.throws(() => snapshotPath('nope'), { instanceOf: SnapshotFormatError });
});

test('a snapshot decodes to what was written, with its checksum', (t) => {
  const s = decodeSnapshot(build());
  t.deepEqual(s.header, { id: ID, takenAt: 5, replayFrom: 17 });
  t.deepEqual(s.buckets.get('b'), { publicRead: true, publicWrite: false, deleteProtected: true });
  t.deepEqual(s.volumes.get(1), { id: 1, label: 'a' });
  t.is(s.meta.get('nextVolumeId'), 3);
  t.deepEqual(s.objects, [rec(0), rec(1), rec(2)]);
  t.regex(s.sha256, /^[0-9a-f]{64}$/);
});

test('the encoder returns the counts and checksum it put in the trailer, and refuses misuse', (t) => {
  const e = new SnapshotEncoder();
  t.throws(() => e.bucket('b', { publicRead: false, publicWrite: false, deleteProtected: false }), { message: /header comes first/ });
  e.header({ id: ID, takenAt: 1, replayFrom: 1 });
  t.throws(() => e.header({ id: ID, takenAt: 1, replayFrom: 1 }), { message: /once/ });
  e.object(rec(1));
  const end = e.end();
  t.deepEqual(end.counts, { buckets: 0, volumes: 0, objects: 1, meta: 0 });
  t.is(JSON.parse(end.line).sha256, end.sha256);
  t.throws(() => e.object(rec(2)), { message: /already ended/ });
});

test('a snapshot cut anywhere before its trailer is never trusted', (t) => {
  const whole = build(2);
  for (let cut = 1; cut < whole.length; cut += 7) {
    t.throws(() => decodeSnapshot(whole.subarray(0, whole.length - cut)), { instanceOf: SnapshotFormatError }, `cut ${cut}`);
  }
  t.throws(() => decodeSnapshot(Buffer.alloc(0)), { message: /empty/ });
  t.throws(() => decodeSnapshot(whole.subarray(0, whole.lastIndexOf('{"op":"end"'))), { message: /no trailer/ });
});

test('a changed byte, a changed count or a forged trailer is caught, naming which', (t) => {
  const whole = build(2).toString();
  t.throws(() => decodeSnapshot(Buffer.from(whole.replace('/b/o1', '/b/o9'))), { message: /checksum does not match/ });
  const [body, trailer] = [whole.slice(0, whole.lastIndexOf('{"op":"end"')), JSON.parse(whole.slice(whole.lastIndexOf('{"op":"end"')))];
  t.throws(() => decodeSnapshot(Buffer.from(body + JSON.stringify({ ...trailer, objects: 3 }) + '\n')), { message: /trailer counts 3 objects, the snapshot holds 2/ });
  t.throws(() => decodeSnapshot(Buffer.from(body + JSON.stringify({ ...trailer, sha256: '0'.repeat(64) }) + '\n')), { message: /checksum/ });
});

test('a well-checksummed snapshot with a bad line is refused by line number', (t) => {
  const e = new SnapshotEncoder();
  let s = e.header({ id: ID, takenAt: 1, replayFrom: 1 });
  s += e.object({ ...rec(1), k: 0 } as ObjectRecord);
  t.throws(() => decodeSnapshot(Buffer.from(s + e.end().line)), { message: /snapshot line 2: object: the volume lists do not match/ });
  const e2 = new SnapshotEncoder();
  const s2 = JSON.stringify({ op: 'snapshot', version: 9, id: ID, takenAt: 1, replayFrom: 1 }) + '\n';
  e2.header({ id: ID, takenAt: 1, replayFrom: 1 });
  const sha = createHash('sha256').update(s2).digest('hex');
  t.throws(() => decodeSnapshot(Buffer.from(s2 + JSON.stringify({ op: 'end', buckets: 0, volumes: 0, objects: 0, meta: 0, sha256: sha }) + '\n')), { message: /unknown snapshot version 9/ });
});


const entry = (id: string, takenAt: number): PointerEntry => ({ id, takenAt, replayFrom: 1, sha256: 'a'.repeat(64), counts: { buckets: 0, volumes: 0, objects: 0, meta: 0 }, record: rec(1) });

test('the pointer keeps the latest two, newest first, and round-trips', (t) => {
  const a = entry(snapshotId(1000, Uint8Array.from([1, 1, 1])), 1000);
  const b = entry(snapshotId(2000, Uint8Array.from([2, 2, 2])), 2000);
  const c = entry(snapshotId(3000, Uint8Array.from([3, 3, 3])), 3000);
  const p = pointerWith(pointerWith(pointerWith(null, a), b), c);
  t.deepEqual(p.snapshots.map((s) => s.takenAt), [3000, 2000]);
  t.deepEqual(decodePointer(encodePointer(p)), p);
  t.deepEqual(knownSnapshots([p, pointerWith(null, a)]).map((s) => s.takenAt), [3000, 2000, 1000]);
  t.deepEqual(knownSnapshots([]), []);
});

test('a bad pointer file is refused, naming what is wrong', (t) => {
  t.throws(() => decodePointer('{'), { message: /not JSON/ });
  t.throws(() => decodePointer('{"version":2,"snapshots":[]}'), { message: /version 1/ });
  t.throws(() => decodePointer(JSON.stringify({ version: 1, snapshots: [{ ...entry(ID, 1), id: 'x' }] })), { message: /entry 0: needs id/ });
  t.throws(() => decodePointer(JSON.stringify({ version: 1, snapshots: [{ ...entry(ID, 1), record: { id: 'x' } }] })), { message: /entry 0: its record/ });
});
