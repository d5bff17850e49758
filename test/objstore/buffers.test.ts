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
