import test from 'ava';
import { readFileSync } from 'node:fs';
import { OBJECT_ID_RE, isObjectId, newObjectId, objectIdTime } from '../../../protocols/objstore/object-id.js';

const bytes = (...b: number[]) => Uint8Array.from(b);
const zeros = new Uint8Array(6);

test('the module is pure: it imports nothing with I/O and uses no timers, clock or randomness', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/object-id.js', import.meta.url), 'utf8');
  const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]);
  t.deepEqual(imports, []);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|Math\.random|process\./);
});

test('an id is $, the time as 12 hex digits (48-bit big-endian), then the first 6 random bytes in hex', (t) => {
  t.is(newObjectId(0, zeros), '$000000000000000000000000');
  t.is(newObjectId(0x0123456789ab, bytes(0xde, 0xad, 0xbe, 0xef, 0x00, 0x0f)), '$0123456789abdeadbeef000f');
  t.is(newObjectId(1, bytes(1, 2, 3, 4, 5, 6)), '$000000000001010203040506');
  t.is(newObjectId(2 ** 48 - 1, bytes(255, 255, 255, 255, 255, 255)), '$ffffffffffffffffffffffff');
  t.is(newObjectId(Date.UTC(2024, 0, 1), zeros), '$' + Date.UTC(2024, 0, 1).toString(16).padStart(12, '0') + '000000000000');
});

test('only the first 6 random bytes are used; a Buffer works as the random source', (t) => {
  t.is(newObjectId(16, bytes(1, 2, 3, 4, 5, 6, 7, 8, 9)), '$000000000010010203040506');
  t.is(newObjectId(16, Buffer.from('a1b2c3d4e5f6ffff', 'hex')), '$000000000010a1b2c3d4e5f6');
  // a view into a larger buffer: its own first 6 bytes, not the backing buffer's
  const big = bytes(9, 9, 1, 2, 3, 4, 5, 6);
  t.is(newObjectId(0, big.subarray(2)), '$000000000000010203040506');
});

test('new ids match OBJECT_ID_RE, round-trip their time, and sort by time', (t) => {
  const times = [0, 1, 255, 256, 4095, 4096, 1_000_000, Date.UTC(1970, 0, 2), Date.UTC(2001, 8, 9, 1, 46, 40), Date.UTC(2038, 0, 19, 3, 14, 8), Date.UTC(9999, 11, 31), 2 ** 32, 2 ** 40 + 7, 2 ** 48 - 1].sort((a, b) => a - b);
  const ids: string[] = [];
  for (const [n, ms] of times.entries()) {
    const id = newObjectId(ms, bytes(n, 255 - n, n * 3, 7, 0, 128));
    t.regex(id, OBJECT_ID_RE, id);
    t.true(isObjectId(id));
    t.is(id.length, 25);
    t.is(objectIdTime(id), ms, id);
    ids.push(id);
  }
  t.deepEqual([...ids].sort(), ids, 'lexicographic order is creation order');
});

test('time outside 0..2^48-1 or not an integer is a RangeError', (t) => {
  for (const bad of [-1, 2 ** 48, 2 ** 48 + 1, Number.MAX_SAFE_INTEGER, 1.5, -0.5, NaN, Infinity, -Infinity]) {
    const e = t.throws(() => newObjectId(bad, zeros), { instanceOf: RangeError }, String(bad));
    t.regex(e!.message, /time/);
  }
  t.is(newObjectId(-0, zeros), '$000000000000000000000000', '-0 is 0');
});

test('fewer than 6 random bytes is a RangeError', (t) => {
  for (const n of [0, 1, 5]) {
    const e = t.throws(() => newObjectId(0, new Uint8Array(n)), { instanceOf: RangeError });
    t.regex(e!.message, /6 random bytes/);
  }
  t.throws(() => newObjectId(0, [1, 2, 3, 4, 5, 6] as unknown as Uint8Array), { instanceOf: RangeError }, 'a plain array is not bytes');
  t.notThrows(() => newObjectId(0, new Uint8Array(6)));
});

test('isObjectId accepts exactly $ plus 24 lowercase hex', (t) => {
  t.true(isObjectId('$0123456789abcdef01234567'));
  t.true(isObjectId('$ffffffffffffffffffffffff'));
  const bad = [
    '',
    '$',
    '0123456789abcdef01234567', // no $
    '$0123456789abcdef0123456', // 23
    '$0123456789abcdef012345678', // 25
    '$0123456789ABCDEF01234567', // uppercase
    '$0123456789abcdeF01234567', // one uppercase
    '$0123456789abcdeg01234567', // not hex
    '$$123456789abcdef01234567',
    ' $0123456789abcdef01234567',
    '$0123456789abcdef01234567 ',
    '$0123456789abcdef01234567\n',
    '/$0123456789abcdef01234567',
    '$0123456789abcdef0123456７', // fullwidth digit
    '%240123456789abcdef01234567',
  ];
  for (const s of bad) t.false(isObjectId(s), JSON.stringify(s));
  t.false(isObjectId(undefined as unknown as string));
  t.false(isObjectId(42 as unknown as string));
});

test('objectIdTime reads the embedded time and refuses anything that is not an id', (t) => {
  t.is(objectIdTime('$000000000000ffffffffffff'), 0);
  t.is(objectIdTime('$00000000000affffffffffff'), 10);
  t.is(objectIdTime('$ffffffffffff000000000000'), 2 ** 48 - 1);
  t.is(objectIdTime('$018cc251f400deadbeef0000'), Date.UTC(2024, 0, 1));
  for (const bad of ['', '$', '$018CC251F400DEADBEEF0000', '018cc251f400deadbeef0000', '$018cc251f400deadbeef000', '$018cc251f400deadbeef00000', '$-18cc251f400deadbeef0000']) {
    const e = t.throws(() => objectIdTime(bad), { instanceOf: TypeError }, bad);
    t.regex(e!.message, /not an object id/);
  }
});
