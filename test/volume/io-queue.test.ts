import test from 'ava';
import { IoQueue, IoTimeout } from '../../actors/volume/io-queue.js';

const later = <T>(ms: number, v: T) => new Promise<T>((r) => setTimeout(() => r(v), ms));

test('at most maxInflight operations run at once; the rest wait in order', async (t) => {
  const q = new IoQueue(2, 5000);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  const op = (i: number) => async () => {
    running++;
    peak = Math.max(peak, running);
    order.push(i);
    await later(20, null);
    running--;
    return i;
  };
  t.deepEqual(await Promise.all([0, 1, 2, 3, 4, 5].map((i) => q.run('op', op(i)))), [0, 1, 2, 3, 4, 5]);
  t.is(peak, 2);
  t.deepEqual(order, [0, 1, 2, 3, 4, 5]);
  t.is(q.inflight, 0);
});

test('an operation that outlives the timeout fails with IoTimeout but keeps its slot until it ends', async (t) => {
  const q = new IoQueue(1, 50);
  let lateResult: unknown = 'not called';
  const slow = q.run('read', () => later(300, 'done'), (r) => (lateResult = r));
  const started = Date.now();
  const err = await t.throwsAsync(slow, { instanceOf: IoTimeout });
  t.regex(err!.message, /read: no answer from the disk within 50 ms/);
  t.true(Date.now() - started < 200);
  t.is(q.inflight, 1, 'the stuck syscall still holds its slot');

  // Queued behind it: times out while waiting, and never runs.
  let ran = false;
  await t.throwsAsync(q.run('write', async () => void (ran = true)), { instanceOf: IoTimeout });
  t.false(ran);
  t.is(q.queued, 0);

  await later(300, null);
  t.is(lateResult, 'done', 'late() got the result of the operation that ended after its timeout');
  t.is(q.inflight, 0);
  t.is(await q.run('next', async () => 7), 7);
});

test('errors of operations pass through; a late failure calls late() with undefined', async (t) => {
  const q = new IoQueue(1, 30);
  await t.throwsAsync(q.run('x', async () => Promise.reject(Object.assign(new Error('bad'), { code: 'EIO' }))), { message: 'bad' });
  await t.throwsAsync(q.run('x', () => { throw new Error('sync'); }), { message: 'sync' });
  let late: unknown = 'not called';
  await t.throwsAsync(q.run('x', () => later(100, null).then(() => Promise.reject(new Error('late'))), (r) => (late = r)), { instanceOf: IoTimeout });
  await later(150, null);
  t.is(late, undefined);
  t.is(q.inflight, 0);
});

test('bad settings are refused', (t) => {
  t.throws(() => new IoQueue(0, 10), { message: /maxInflight/ });
  t.throws(() => new IoQueue(1, 0), { message: /ioTimeoutMs/ });
});
