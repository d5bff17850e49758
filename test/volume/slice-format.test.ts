import test from 'ava';
import { crc32c } from '@node-rs/crc32';
import {
  CHUNK_CRC_BYTES,
  chunkCount,
  chunkCrc,
  chunkLength,
  chunkOffset,
  decodeSliceHeader,
  encodeSliceHeader,
  headerMismatch,
  headerVersion,
  SLICE_HEADER_BYTES,
  sliceFileSize,
  SliceFormatError,
  type SliceHeader,
} from '../../protocols/objstore/slice-format.js';

const header: SliceHeader = { objectId: '$0123456789abcdef01234567', index: 5, k: 4, m: 2, chunkSize: 65536, objectSize: 2 ** 40 + 3, sliceSize: 2 ** 38 + 1 };

test('a header encodes to 64 bytes at the documented offsets and decodes to itself', (t) => {
  const b = encodeSliceHeader(header);
  t.is(b.byteLength, SLICE_HEADER_BYTES);
  const dv = new DataView(b.buffer, b.byteOffset);
  t.is(Buffer.from(b.subarray(0, 4)).toString('latin1'), 'HSLC');
  t.is(dv.getUint16(0x04), 3);
  t.is(Buffer.from(b.subarray(0x06, 0x12)).toString('hex'), '0123456789abcdef01234567');
  t.is(b[0x12], 5);
  t.is(b[0x13], 4);
  t.is(b[0x14], 2);
  t.is(dv.getUint32(0x18), 65536);
  t.is(dv.getBigUint64(0x20), BigInt(2 ** 40 + 3));
  t.is(dv.getBigUint64(0x28), BigInt(2 ** 38 + 1));
  t.deepEqual([...b.subarray(0x15, 0x18), ...b.subarray(0x1c, 0x20), ...b.subarray(0x30, 0x3c)], new Array(19).fill(0));
  t.is(dv.getUint32(0x3c), crc32c(b.subarray(0, 0x3c)));
  t.deepEqual(decodeSliceHeader(b), header);
});

test('upper-case hex in an object id decodes in lower case', (t) => {
  t.is(decodeSliceHeader(encodeSliceHeader({ ...header, objectId: '$ABCDEF0123456789ABCDEF01' })).objectId, '$abcdef0123456789abcdef01');
});

test('decoding reads the first 64 bytes of a longer buffer at any offset', (t) => {
  const big = new Uint8Array(200);
  big.set(encodeSliceHeader(header), 7);
  t.deepEqual(decodeSliceHeader(big.subarray(7)), header);
});

test('a flipped bit anywhere in the header is a CRC error', (t) => {
  const good = encodeSliceHeader(header);
  for (let i = 4; i < SLICE_HEADER_BYTES; i++) {
    const b = good.slice();
    b[i]! ^= 0x10;
    const err = t.throws(() => decodeSliceHeader(b), { instanceOf: SliceFormatError }, `byte ${i}`);
    t.regex(err!.message, /CRC32C mismatch/);
  }
});

test('bad magic, unknown version, short buffer and impossible fields are refused with clear errors', (t) => {
  const b = encodeSliceHeader(header);
  const magic = b.slice();
  magic[0] = 0x58;
  t.throws(() => decodeSliceHeader(magic), { instanceOf: SliceFormatError, message: /bad magic "XSLC".*not a slice file/ });
  t.throws(() => decodeSliceHeader(b.subarray(0, 63)), { message: /need 64 bytes, got 63/ });
  const reseal = (f: (dv: DataView, u: Uint8Array) => void) => {
    const u = b.slice();
    const dv = new DataView(u.buffer);
    f(dv, u);
    dv.setUint32(0x3c, crc32c(u.subarray(0, 0x3c)));
    return u;
  };
  t.throws(() => decodeSliceHeader(reseal((dv) => dv.setUint16(4, 4))), { message: /format version 4 is not supported/ });
  t.throws(() => decodeSliceHeader(reseal((_dv, u) => (u[0x12] = 6))), { message: /index must be an integer from 0 to 5/ });
  t.throws(() => decodeSliceHeader(reseal((_dv, u) => (u[0x13] = 0))), { message: /k must be/ });
  t.throws(() => decodeSliceHeader(reseal((dv) => dv.setUint32(0x18, 0))), { message: /chunkSize/ });
  t.throws(() => decodeSliceHeader(reseal((dv) => dv.setBigUint64(0x28, 2n ** 60n))), { message: /beyond 2\^53/ });
});

test('encoding refuses what cannot be stored', (t) => {
  t.throws(() => encodeSliceHeader({ ...header, objectId: '0123456789abcdef01234567' }), { message: /object id/ });
  t.throws(() => encodeSliceHeader({ ...header, objectId: '$0123' }), { message: /object id/ });
  t.throws(() => encodeSliceHeader({ ...header, index: 6 }), { message: /index/ });
  t.throws(() => encodeSliceHeader({ ...header, k: 200, m: 57 }), { message: /k \+ m must be at most 256/ });
  t.throws(() => encodeSliceHeader({ ...header, chunkSize: 2 ** 32 }), { message: /chunkSize/ });
  t.throws(() => encodeSliceHeader({ ...header, sliceSize: -1 }), { message: /sliceSize/ });
  t.throws(() => encodeSliceHeader({ ...header, objectSize: 1.5 }), { message: /objectSize/ });
});

test('chunk geometry: offsets, counts, lengths and file size agree', (t) => {
  t.is(chunkOffset(1000, 0), 64);
  t.is(chunkOffset(1000, 3), 64 + 3 * 1004);
  const h = { chunkSize: 1000, sliceSize: 3500 };
  t.is(chunkCount(h), 4);
  t.deepEqual([0, 1, 2, 3, 4].map((c) => chunkLength(h, c)), [1000, 1000, 1000, 500, 0]);
  t.is(sliceFileSize([1000, 1000, 1000, 500]), 64 + 3500 + 4 * CHUNK_CRC_BYTES);
  t.is(sliceFileSize([1000, 1000, 1000, 500]), chunkOffset(1000, 3) + 500 + 4);
  t.is(chunkCount({ chunkSize: 1000, sliceSize: 0 }), 0);
  t.is(sliceFileSize([]), 64);
  t.is(chunkCount({ chunkSize: 1000, sliceSize: 3000 }), 3);
});

test('chunkCrc is CRC32C (the check value of "123456789" is e3069283)', (t) => {
  t.is(chunkCrc(Buffer.from('123456789')), 0xe3069283);
});

test('headerMismatch: null when a header read back is the one expected (object id in any case)', (t) => {
  const want: SliceHeader = { objectId: '$0123456789abcdef01234567', index: 2, k: 4, m: 2, chunkSize: 65536, objectSize: 1_000_000, sliceSize: 262144 };
  t.is(headerMismatch({ ...want }, want), null);
  t.is(headerMismatch({ ...want, objectId: want.objectId.toUpperCase().replace('$', '$') }, want), null);
});

test('headerMismatch: names another slice, or every geometry field that differs with the record\'s value', (t) => {
  const want: SliceHeader = { objectId: '$0123456789abcdef01234567', index: 2, k: 4, m: 2, chunkSize: 65536, objectSize: 1_000_000, sliceSize: 262144 };
  t.is(headerMismatch({ ...want, index: 3 }, want), `the header names slice ${want.objectId}.3`);
  t.is(headerMismatch({ ...want, objectId: '$ffffffffffffffffffffffff' }, want), 'the header names slice $ffffffffffffffffffffffff.2');
  t.is(headerMismatch({ ...want, m: 1, sliceSize: 100 }, want), 'header fields differ from the record: m 1 (record: 2), sliceSize 100 (record: 262144)');
});

test('old formats still read: version 1 (plain) and 2 (sealed) decode with `legacy` and re-encode to the same bytes', (t) => {
  const v1 = encodeSliceHeader({ ...header, legacy: 1 });
  t.is(new DataView(v1.buffer).getUint16(4), 1);
  const d1 = decodeSliceHeader(v1);
  t.is(d1.legacy, 1);
  t.is(d1.sealed, undefined);
  t.deepEqual(encodeSliceHeader(d1), v1, 'the same bytes (a sealed chunk\'s AAD is its header)');
  const v2 = encodeSliceHeader({ ...header, sealed: { keyGen: 3 }, legacy: 2 });
  t.is(new DataView(v2.buffer).getUint16(4), 2);
  t.like(decodeSliceHeader(v2), { legacy: 2, sealed: { keyGen: 3 } });
  t.deepEqual(encodeSliceHeader(decodeSliceHeader(v2)), v2);
  t.is(decodeSliceHeader(encodeSliceHeader(header)).legacy, undefined, 'the current format has no legacy field');
  t.is(headerVersion(header), 3);
  t.is(headerVersion(d1), 1);
});

test('legacy versions must match the cipher; version 3 refuses an unknown cipher byte', (t) => {
  t.throws(() => encodeSliceHeader({ ...header, legacy: 2 }), { message: /format version 2 is sealed only/ });
  t.throws(() => encodeSliceHeader({ ...header, sealed: { keyGen: 1 }, legacy: 1 }), { message: /format version 1 is plain only/ });
  t.throws(() => encodeSliceHeader({ ...header, legacy: 3 as never }), { message: /legacy must be 1 or 2/ });
  const b = encodeSliceHeader(header);
  b[0x15] = 7;
  new DataView(b.buffer).setUint32(0x3c, crc32c(b.subarray(0, 0x3c)));
  t.throws(() => decodeSliceHeader(b), { instanceOf: SliceFormatError, message: /cipher 7 is not supported/ });
  const sealed = decodeSliceHeader(encodeSliceHeader({ ...header, sealed: { keyGen: 9 } }));
  t.deepEqual(sealed, { ...header, sealed: { keyGen: 9 } });
});
