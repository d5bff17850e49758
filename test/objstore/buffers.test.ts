import test from 'ava';
import { BufferPool } from '../../actors/objstore/store/buffers.js';

test('a buffer given back is taken again for the same size', (t) => {
  const pool = new BufferPool({ minSize: 16, maxBytes: 1024 });
  const a = pool.take(64);
  pool.give(a);
  t.is(pool.pooledBytes, 64);
  t.is(pool.take(64), a);
  t.is(pool.pooledBytes, 0);
  t.not(pool.take(64), a, 'an empty pool allocates');
});

test('small, detached and surplus buffers are not kept', (t) => {
  const pool = new BufferPool({ minSize: 16, maxBytes: 100 });
  pool.give(new ArrayBuffer(8));
  t.is(pool.pooledBytes, 0);
  const moved = new ArrayBuffer(32);
  structuredClone(moved, { transfer: [moved] });
  pool.give(moved);
  t.is(pool.pooledBytes, 0);
  pool.give(new ArrayBuffer(60));
  pool.give(new ArrayBuffer(60));
  t.is(pool.pooledBytes, 60, 'the cap holds');
  pool.give(null);
  pool.give(undefined);
  t.is(pool.pooledBytes, 60);
});

test('a size nobody takes any more makes room for one that is taken', (t) => {
  const pool = new BufferPool({ minSize: 16, maxBytes: 100 });
  // 40-byte buffers come back but are never taken (as parity buffers were): they fill the pool.
  pool.give(new ArrayBuffer(40));
  pool.give(new ArrayBuffer(40));
  t.is(pool.pooledBytes, 80);
  const a = pool.take(50);
  t.is(pool.misses, 1, 'the first take of a size allocates');
  pool.give(a);
  t.is(pool.pooledBytes, 90, 'one 40-byte buffer made room for the 50-byte one');
  t.is(pool.take(50), a);
  t.is(pool.misses, 1, 'and the next take of that size finds it');
  t.is(pool.pooledBytes, 40);
  pool.take(40);
  t.is(pool.pooledBytes, 0);
  pool.give(new ArrayBuffer(40));
  pool.give(new ArrayBuffer(40));
  t.is(pool.pooledBytes, 80, 'buffers of a size taken recently are kept while they fit');
});

test('a full pool keeps what was taken more recently than the buffer coming back', (t) => {
  const pool = new BufferPool({ minSize: 16, maxBytes: 100 });
  const big = pool.take(60);
  const small = pool.take(50);
  pool.give(small);
  pool.give(big);
  t.is(pool.pooledBytes, 50, 'the 60-byte size was taken before the 50-byte one: it does not evict it');
});
