import test from 'ava';
import { hkdfSync, randomBytes } from 'node:crypto';
import { crc32c } from '@node-rs/crc32';
import { decodeSliceRecord, encodeSliceRecord, MAX_PAYLOAD_BYTES, RECORD_HEAD_BYTES, recordKey, SliceRecordError, type SliceRecord } from '../../../protocols/objstore/slice-record.js';

const rec: SliceRecord = {
  objectId: '$0123456789abcdef01234567',
  index: 2,
  path: '/bucket/dir/naïve file.txt',
  size: 1_000_003,
  mime: 'text/plain; charset=utf-8',
  md5: 'd41d8cd98f00b204e9800998ecf8427e',
  createdAt: 1_764_000_000_123,
  k: 4,
  m: 2,
  chunkSize: 65536,
  volumes: [3, 1, 7, 2, 9, 4],
  instanceId: '0b7e2c1a-1234-4abc-8def-0123456789ab',
  writtenAt: 1_764_000_000_456,
  by: 'put',
};
const volumeKey = new Uint8Array(randomBytes(32));
const seal = () => ({ volumeKey, keyGen: 2, nonce: new Uint8Array(randomBytes(12)) });
const expect = { objectId: rec.objectId, index: rec.index };

/** Recompute the trailing CRC after an edit, so the check under test is the one that refuses. */
function recrc(b: Uint8Array): Uint8Array {
  new DataView(b.buffer, b.byteOffset).setUint32(b.byteLength - 4, crc32c(b.subarray(0, b.byteLength - 4)));
  return b;
}

test('a plain record round-trips every field, with the documented header', (t) => {
  const b = encodeSliceRecord(rec);
  const dv = new DataView(b.buffer);
  t.is(Buffer.from(b.subarray(0, 4)).toString('latin1'), 'HREC');
  t.is(dv.getUint16(4), 1);
  t.is(b[6], 0, 'cipher 0: plain');
  t.is(dv.getUint32(8), 0);
  t.is(dv.getUint32(12), b.byteLength - RECORD_HEAD_BYTES - 4);
  t.deepEqual(decodeSliceRecord(b), rec);
  t.deepEqual(decodeSliceRecord(b, { expect }), rec);
  t.true(Buffer.from(b).includes(Buffer.from(rec.path)), 'plain: the path is readable on the disk');
});

test('a sealed record round-trips, hides its payload, and opens only with the key and for its own slice', (t) => {
  const b = encodeSliceRecord(rec, seal());
  t.is(b[6], 1);
  t.is(new DataView(b.buffer).getUint32(8), 2);
  t.false(Buffer.from(b).includes(Buffer.from('bucket')), 'the path is not in the clear');
  t.false(Buffer.from(b).includes(Buffer.from(rec.md5)), 'nor the MD5');
  t.deepEqual(decodeSliceRecord(b, { key: (g) => (g === 2 ? volumeKey : null), expect }), rec);
  t.throws(() => decodeSliceRecord(b, { expect }), { instanceOf: SliceRecordError, message: /key generation 2, and no such key/ });
  t.throws(() => decodeSliceRecord(b, { key: () => new Uint8Array(randomBytes(32)), expect }), { message: /does not open/ });
  t.throws(() => decodeSliceRecord(b, { key: () => volumeKey, expect: { ...expect, index: 3 } }), { message: /does not open/ });
  t.throws(() => decodeSliceRecord(b, { key: () => volumeKey }), { message: /expect is required/ });
  const a = encodeSliceRecord(rec, seal());
  t.notDeepEqual(a, b, 'a fresh nonce each time');
});

test('each field is checked, by name', (t) => {
  const bad: Array<[Partial<Record<keyof SliceRecord, unknown>>, RegExp]> = [
    [{ objectId: '$0123' }, /objectId is malformed/],
    [{ objectId: '$0123456789ABCDEF01234567' }, /objectId is malformed/],
    [{ index: 6 }, /index must be an integer from 0 to 5/],
    [{ path: 'no-slash' }, /path is malformed/],
    [{ path: 7 }, /path must be a string/],
    [{ size: -1 }, /size must be/],
    [{ size: 1.5 }, /size must be/],
    [{ mime: null }, /mime must be a string/],
    [{ md5: 'xyz' }, /md5 is malformed/],
    [{ createdAt: -5 }, /createdAt/],
    [{ k: 0 }, /k must be/],
    [{ m: 256 }, /m must be/],
    [{ k: 200, m: 57, volumes: new Array(257).fill(1) }, /k \+ m must be at most 256/],
    [{ chunkSize: 0 }, /chunkSize/],
    [{ volumes: [1, 2, 3] }, /volumes must list 6 volume ids/],
    [{ volumes: [1, 2, 3, 4, 5, -1] }, /volumes\[5\]/],
    [{ instanceId: 'nope' }, /instanceId is malformed/],
    [{ writtenAt: 'now' }, /writtenAt/],
    [{ by: 'Put!' }, /by is malformed/],
  ];
  for (const [patch, re] of bad) t.throws(() => encodeSliceRecord({ ...rec, ...patch } as SliceRecord), { instanceOf: SliceRecordError, message: re }, JSON.stringify(patch));
  const { md5: _md5, ...missing } = rec;
  t.throws(() => encodeSliceRecord(missing as SliceRecord), { message: /field md5 is missing/ });
  t.throws(() => encodeSliceRecord({ ...rec, path: '/' + 'x'.repeat(1100) }), { message: /path must be a string of at most 1024/ });
  t.true(MAX_PAYLOAD_BYTES >= 8 * 1024);
});

test('a torn record (every shorter length) is refused, never decoded', (t) => {
  for (const b of [encodeSliceRecord(rec), encodeSliceRecord(rec, seal())]) {
    for (let n = 0; n < b.byteLength; n++) {
      t.throws(() => decodeSliceRecord(b.subarray(0, n), { key: () => volumeKey, expect }), { instanceOf: SliceRecordError }, `length ${n}`);
    }
    const longer = new Uint8Array(b.byteLength + 3);
    longer.set(b);
    t.throws(() => decodeSliceRecord(longer, { key: () => volumeKey, expect }), { message: /torn or corrupt/ });
  }
});

test('a flipped bit anywhere is refused', (t) => {
  const good = encodeSliceRecord(rec);
  for (let i = 0; i < good.byteLength; i++) {
    const b = good.slice();
    b[i]! ^= 0x04;
    t.throws(() => decodeSliceRecord(b, { expect }), { instanceOf: SliceRecordError }, `byte ${i}`);
  }
});

test('bad magic, unknown version and cipher, a foreign slice and a non-JSON payload are refused clearly', (t) => {
  const b = encodeSliceRecord(rec);
  const magic = b.slice();
  magic[0] = 0x58;
  t.throws(() => decodeSliceRecord(recrc(magic)), { message: /bad magic "XREC" \(expected "HREC"\): not a record sidecar/ });
  const ver = b.slice();
  new DataView(ver.buffer).setUint16(4, 2);
  t.throws(() => decodeSliceRecord(recrc(ver)), { message: /version 2 is not supported/ });
  const cipher = b.slice();
  cipher[6] = 5;
  t.throws(() => decodeSliceRecord(recrc(cipher)), { message: /cipher 5 is not supported/ });
  t.throws(() => decodeSliceRecord(b, { expect: { objectId: rec.objectId, index: 0 } }), { message: /names slice \$0123456789abcdef01234567\.2, but sits beside slice \$0123456789abcdef01234567\.0/ });
  const junk = b.slice();
  junk[RECORD_HEAD_BYTES] = 0x7b + 1;
  t.throws(() => decodeSliceRecord(recrc(junk)), { message: /payload is not JSON/ });
  const hugeLen = b.slice();
  new DataView(hugeLen.buffer).setUint32(12, MAX_PAYLOAD_BYTES + 1);
  t.throws(() => decodeSliceRecord(recrc(hugeLen)), { message: /impossible payload length/ });
});

test('a record key is HKDF-SHA256 of the volume key (RFC 5869, empty salt) over the record key info: the bytes sealed sidecars were written with', (t) => {
  for (let n = 0; n < 20; n++) {
    const vk = new Uint8Array(randomBytes(32));
    const id = '$' + randomBytes(12).toString('hex');
    const info = Buffer.concat([Buffer.from('hostd objstore slice record key v1', 'latin1'), Buffer.from(id.slice(1), 'hex'), Buffer.from([n]), Buffer.from([0, 0, 0, n + 1])]);
    t.deepEqual(Buffer.from(recordKey(vk, id, n, n + 1)), Buffer.from(hkdfSync('sha256', vk, new Uint8Array(0), info, 32)), `slice ${id}.${n}`);
  }
});
