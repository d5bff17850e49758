/**
 * The mount's per-file read-ahead (actors/objstore-mount/read-ahead.ts) against a counting fetch
 * over a known buffer: the bytes of every read, what is fetched ahead for a sequential reader and
 * not for a random one, what is dropped behind, and a failed window fetched again.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { ReadAhead } from '../../actors/objstore-mount/read-ahead.js';

const W = 1000;

function source(size: number, fail = new Set<number>()) {
  const bytes = randomBytes(size);
  const fetched: number[] = [];
  const fetch = async (start: number, length: number) => {
    fetched.push(start);
    await new Promise((r) => setImmediate(r));
    if (fail.has(start)) throw Object.assign(new Error('bad window'), { errno: 'EIO' });
    return new Uint8Array(bytes.subarray(start, start + length));
  };
  return { bytes, fetched, fetch };
}

test('a sequential reader gets every byte, with the next windows fetched ahead and the ones behind dropped', async (t) => {
  const s = source(10_500);
  const ra = new ReadAhead(s.fetch, 10_500, W, 2);
  const got: Buffer[] = [];
  for (let pos = 0; pos < 10_500; pos += 300) {
    const buf = Buffer.alloc(300);
    const n = await ra.read(buf, pos, 300);
    got.push(buf.subarray(0, n));
    t.true(ra.held().length <= 4, `held ${ra.held()}`);
  }
  t.true(Buffer.concat(got).equals(s.bytes));
  t.deepEqual([...new Set(s.fetched)].sort((a, b) => a - b), [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000]);
  t.is(s.fetched.length, 11, 'each window fetched once');
  // After the first read, windows 1000 and 2000 were already on their way.
  t.deepEqual(s.fetched.slice(0, 3).sort((a, b) => a - b), [0, 1000, 2000]);
});

test('a read spanning windows, a read at the end, and past the end', async (t) => {
  const s = source(2500);
  const ra = new ReadAhead(s.fetch, 2500, W, 1);
  const buf = Buffer.alloc(1500);
  t.is(await ra.read(buf, 700, 1500), 1500);
  t.true(buf.equals(s.bytes.subarray(700, 2200)));
  const tail = Buffer.alloc(100);
  t.is(await ra.read(tail, 2450, 100), 50);
  t.true(tail.subarray(0, 50).equals(s.bytes.subarray(2450)));
  t.is(await ra.read(tail, 2500, 100), 0);
  t.is(await ra.read(tail, 9999, 100), 0);
  t.is(await ra.read(tail, 0, 0), 0);
});

test('a random reader fetches only the windows it reads', async (t) => {
  const s = source(100_000);
  const ra = new ReadAhead(s.fetch, 100_000, W, 2);
  const buf = Buffer.alloc(10);
  await ra.read(buf, 50_000, 10);
  s.fetched.length = 0;
  await ra.read(buf, 10_005, 10);
  await ra.read(buf, 80_000, 10);
  await ra.read(buf, 30_000, 10);
  t.deepEqual(s.fetched, [10_000, 80_000, 30_000]);
  t.true(buf.equals(s.bytes.subarray(30_000, 30_010)));
});

test('a failed window fails the read (EIO) and is fetched again by the next one', async (t) => {
  const fail = new Set([1000]);
  const s = source(3000, fail);
  const ra = new ReadAhead(s.fetch, 3000, W, 0);
  const buf = Buffer.alloc(100);
  await t.throwsAsync(ra.read(buf, 1100, 100), { message: 'bad window' });
  fail.clear();
  t.is(await ra.read(buf, 1100, 100), 100);
  t.true(buf.equals(s.bytes.subarray(1100, 1200)));
  t.is(s.fetched.filter((w) => w === 1000).length, 2);
});
