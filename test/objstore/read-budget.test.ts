/** ReadBudget (actors/objstore/store/read-budget.ts): the bound on read buffers GETs hold at once. */
import test from 'ava';
import { ReadBudget } from '../../actors/objstore/store/read-budget.js';

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

test('within the limit requests are granted at once; beyond it they wait, in arrival order', async (t) => {
  const b = new ReadBudget(100);
  await b.acquire(60);
  await b.acquire(40);
  t.is(b.inUse, 100);
  const third = b.acquire(30);
  const fourth = b.acquire(10);
  t.false(await settled(third), 'over the limit: waits');
  t.false(await settled(fourth), 'a small request does not overtake a waiting one');
  t.is(b.queued, 2);
  b.release(20);
  t.false(await settled(third), '20 free is not enough for 30');
  b.release(40);
  t.true(await settled(third));
  t.true(await settled(fourth), 'both fit now: granted in order');
  t.is(b.inUse, 80, '100 - 20 - 40 + 30 + 10');
});

test('a request larger than the whole budget passes when nothing else is held, so it never waits forever', async (t) => {
  const b = new ReadBudget(100);
  await b.acquire(500);
  t.is(b.inUse, 500);
  const next = b.acquire(1);
  t.false(await settled(next), 'the rest waits for it');
  b.release(500);
  t.true(await settled(next));
  t.is(b.inUse, 1);
});

test('bad sizes are RangeErrors; releasing more than held does not go below zero', (t) => {
  t.throws(() => new ReadBudget(0), { instanceOf: RangeError });
  t.throws(() => new ReadBudget(1.5), { instanceOf: RangeError });
  const b = new ReadBudget(10);
  t.throws(() => b.acquire(-1), { instanceOf: RangeError });
  t.throws(() => b.acquire(Number.NaN), { instanceOf: RangeError });
  b.release(5);
  t.is(b.inUse, 0);
});

test('read-ahead never takes the reserve, and a first batch is served before any read-ahead (issue 21 item 4)', async (t) => {
  const b = new ReadBudget(100, 25);
  // Slow readers: each holds a batch and asks for its next one.
  await b.acquire(30, 'first');
  await b.acquire(30, 'first');
  await b.acquire(15, 'ahead');
  t.is(b.inUse, 75, 'read-ahead up to limit - reserve');
  const ahead = b.acquire(10, 'ahead');
  t.false(await settled(ahead), 'read-ahead may not take the reserve');
  // Another client's GET: its first batch uses the reserve at once, past the waiting read-ahead.
  const first = b.acquire(20, 'first');
  t.true(await settled(first), 'a first batch is granted from the reserve');
  t.is(b.inUse, 95);
  const second = b.acquire(10, 'first');
  t.false(await settled(second), 'over the limit: waits');
  b.release(30);
  t.true(await settled(second), 'the first batch goes before the read-ahead that waited longer');
  t.false(await settled(ahead), '75 held: read-ahead still may not go past 75');
  b.release(20);
  t.true(await settled(ahead));
  t.is(b.inUse, 65);
  t.throws(() => new ReadBudget(100, 100), { instanceOf: RangeError });
});
