/** The journal's record format (protocols/objstore/journal-format.ts): lines, torn tails, replicas. */
import test from 'ava';
import { chooseReplicas, decodeLine, decodeSegment, droppableSegments, encodeRecord, JournalFormatError, mergeReplicas, parseSegmentName, recordProblem, segmentName, type JournalRecord } from '../../protocols/objstore/journal-format.js';

const put = (seq: number, id = '$0123456789abcdef01234567'): JournalRecord => ({ seq, ts: 1000 + seq, op: 'put', id, path: `/b/o${seq}`, size: 10, mime: 'text/plain', md5: 'd41d8cd98f00b204e9800998ecf8427e', k: 2, m: 1, chunkSize: 65536, dataVolumes: [1, 2], parityVolumes: [3], createdAt: 5 });
const policy = (seq: number, dp: boolean): JournalRecord => ({ seq, ts: 1, op: 'policy', bucket: 'b', publicRead: false, publicWrite: true, deleteProtected: dp });
const enc = (rs: JournalRecord[]) => Buffer.from(rs.map(encodeRecord).join(''));

test('a record is its JSON, a tab, its CRC32C in 8 hex digits and a newline; it decodes to itself', (t) => {
  for (const r of [put(1), policy(2, true), { seq: 3, ts: 4, op: 'delete', id: '$0123456789abcdef01234567', path: '/b/x', volumes: [1, 2, 3], k: 2 } as JournalRecord, { seq: 4, ts: 4, op: 'volume', volume: { id: 7, label: 'x' } } as JournalRecord]) {
    const line = encodeRecord(r);
    t.regex(line, /^\{.*\}\t[0-9a-f]{8}\n$/);
    t.deepEqual(decodeLine(line.slice(0, -1)), r);
  }
});

test('encoding refuses a malformed record, naming the field', (t) => {
  t.throws(() => encodeRecord({ ...put(1), seq: 0 }), { instanceOf: JournalFormatError, message: /seq/ });
  t.throws(() => encodeRecord({ ...put(1), id: 'nope' } as JournalRecord), { message: /put: id/ });
  t.throws(() => encodeRecord({ ...put(1), k: 3 } as JournalRecord), { message: /match k and m/ });
  t.throws(() => encodeRecord({ ...policy(1, true), deleteProtected: 'yes' } as unknown as JournalRecord), { message: /booleans/ });
  t.throws(() => encodeRecord({ seq: 1, ts: 1, op: 'rename' } as unknown as JournalRecord), { message: /unknown op "rename"/ });
  t.is(recordProblem([]), 'not an object');
  t.regex(recordProblem({ seq: 1, ts: 1, op: 'volume', volume: { id: 0 } })!, /volume/);
  // A slice move (the scheduler's): an object id and a non-empty list of {index, from, to}.
  const id = `$${'a'.repeat(24)}`;
  t.is(recordProblem({ seq: 1, ts: 1, op: 'move', id, slices: [{ index: 0, from: 1, to: 2 }] }), null);
  t.regex(recordProblem({ seq: 1, ts: 1, op: 'move', id: 'x', slices: [{ index: 0, from: 1, to: 2 }] })!, /move: id must be an object id/);
  t.regex(recordProblem({ seq: 1, ts: 1, op: 'move', id, slices: [] })!, /move: slices must be a non-empty list/);
  t.regex(recordProblem({ seq: 1, ts: 1, op: 'move', id, slices: [{ index: -1, from: 1, to: 2 }] })!, /move: each slice is \{index, from, to\}/);
  t.regex(recordProblem({ seq: 1, ts: 1, op: 'move', id, slices: [{ index: 0, from: 0, to: 2 }] })!, /move: each slice/);
  t.regex(recordProblem({ seq: 1, ts: 1, op: 'move', id, slices: [null] })!, /move: each slice/);
});

test('a line with a flipped byte, no checksum or bad JSON is refused with why', (t) => {
  const line = encodeRecord(policy(5, true)).slice(0, -1);
  t.is(decodeLine(line.replace('"b"', '"c"')), 'checksum mismatch');
  t.is(decodeLine(line.split('\t')[0]!), 'no checksum');
  t.is(decodeLine('{not json\t00000000'), 'checksum mismatch');
});

test('a segment decodes every record; a cut last line is a torn tail, dropped, and goodBytes is where it starts', (t) => {
  const whole = enc([put(1), policy(2, false), put(3)]);
  const r = decodeSegment(whole);
  t.deepEqual(r.records.map((x) => x.seq), [1, 2, 3]);
  t.false(r.tornTail);
  t.is(r.goodBytes, whole.length);
  for (let cut = 1; cut < encodeRecord(put(3)).length; cut++) {
    const torn = whole.subarray(0, whole.length - cut);
    const d = decodeSegment(torn);
    t.deepEqual(d.records.map((x) => x.seq), [1, 2]);
    t.true(d.tornTail);
    t.is(d.goodBytes, enc([put(1), policy(2, false)]).length);
    t.deepEqual(d.corrupt, []);
  }
});

test('goodBytes counts bytes, not characters: paths of several-byte characters, a torn tail after them', (t) => {
  const wide = (seq: number): JournalRecord => ({ ...(put(seq) as Extract<JournalRecord, { op: 'put' }>), path: `/b/\u00e9t\u00e9-\u65e5\u672c-\u{1f3b5}-${seq}` });
  const good = enc([wide(1), wide(2)]);
  const whole = Buffer.concat([good, enc([wide(3)])]);
  t.true(good.length > good.toString('utf8').length, 'the lines hold multi-byte characters');
  const d = decodeSegment(whole.subarray(0, whole.length - 5));
  t.deepEqual(d.records, [wide(1), wide(2)]);
  t.true(d.tornTail);
  t.is(d.goodBytes, good.length);
  t.is(decodeSegment(whole).goodBytes, whole.length);
});

test('a bad line in the middle is skipped and reported; the records after it are kept', (t) => {
  const lines = [put(1), policy(2, false), put(3)].map(encodeRecord);
  lines[1] = lines[1]!.replace('false', 'fals3');
  const d = decodeSegment(Buffer.from(lines.join('')));
  t.deepEqual(d.records.map((x) => x.seq), [1, 3]);
  t.deepEqual(d.corrupt, [{ line: 2, why: 'checksum mismatch' }]);
  t.false(d.tornTail);
});

test('an empty segment has no records and no torn tail', (t) => {
  t.deepEqual(decodeSegment(new Uint8Array(0)), { records: [], tornTail: false, goodBytes: 0, corrupt: [] });
});

test('replicas merge by sequence number: each once, sorted; a record one replica lost comes from another; a conflict is reported', (t) => {
  const a = [put(1), put(2), put(4)];
  const b = [put(2), put(3), put(4)];
  const { records, conflicts } = mergeReplicas([a, b]);
  t.deepEqual(records.map((r) => r.seq), [1, 2, 3, 4]);
  t.deepEqual(conflicts, []);
  const c = mergeReplicas([[put(5)], [policy(5, true)]]);
  t.deepEqual(c.conflicts, [5]);
  t.is(c.records[0]!.op, 'put');
});

test('segment names are 16 digits of the first sequence number, and parse back; other names are not segments', (t) => {
  t.is(segmentName(1), '0000000000000001.jnl');
  t.is(parseSegmentName(segmentName(123456789)), 123456789);
  t.is(parseSegmentName('0000000000000001.jnl.tmp'), null);
  t.is(parseSegmentName('snapshot-pointer.json'), null);
  t.throws(() => segmentName(0), { instanceOf: JournalFormatError });
});

test('segments wholly before replayFrom can be dropped; the last segment never', (t) => {
  t.deepEqual(droppableSegments([1, 100, 200], 150), [1]);
  t.deepEqual(droppableSegments([1, 100, 200], 200), [1, 100]);
  t.deepEqual(droppableSegments([200, 1, 100], 10_000), [1, 100]);
  t.deepEqual(droppableSegments([1], 10_000), []);
  t.deepEqual(droppableSegments([1, 100], 99), []);
});

test('replicas: one per bus group first, then the rest by preference; virtual disks count as distinct', (t) => {
  const c = [
    { id: 1, busGroup: 'sd' },
    { id: 2, busGroup: 'sd' },
    { id: 3, busGroup: 'nvme' },
    { id: 4, busGroup: 'sd' },
    { id: 5, busGroup: 'vd' },
  ];
  t.deepEqual(chooseReplicas(c, 3), [1, 3, 5]);
  t.deepEqual(chooseReplicas(c, 4), [1, 3, 5, 2]);
  t.deepEqual(chooseReplicas(c.slice(0, 2), 3), [1, 2]);
  t.deepEqual(chooseReplicas([1, 2, 3, 4].map((id) => ({ id, busGroup: 'virtual' })), 3), [1, 2, 3]);
  t.deepEqual(chooseReplicas([], 3), []);
});
