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
