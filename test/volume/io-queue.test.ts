import test from 'ava';
import { IoQueue, IoTimeout, ioPriority } from '../../actors/volume/io-queue.js';

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
  const q = new IoQueue(1, 100);
  let lateResult: unknown = 'not called';
  let slowDone!: Promise<unknown>;
  const slow = q.run('read', () => (slowDone = later(1500, 'done')), (r) => (lateResult = r));
  const started = Date.now();
  const err = await t.throwsAsync(slow, { instanceOf: IoTimeout });
  t.regex(err!.message, /read: no answer from the disk within 100 ms/);
  // Far sooner than the operation's end (1500 ms), with room for a loaded machine.
  t.true(Date.now() - started < 1000, `timed out after ${Date.now() - started} ms`);
  t.is(q.inflight, 1, 'the stuck syscall still holds its slot');

  // Queued behind it: times out while waiting, and never runs.
  let ran = false;
  await t.throwsAsync(q.run('write', async () => void (ran = true)), { instanceOf: IoTimeout });
  t.false(ran);
  t.is(q.queued, 0);

  await slowDone;
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

// ─── priorities ─────────────────────────────────────────────────────────────────────────────

/** An operation the test ends by hand; `log` gets its name when it starts. */
function gated(log: string[], name: string) {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  return { op: async () => (log.push(name), await gate, name), open };
}

/** Let started operations' completions run (a few turns of the microtask queue and one macrotask). */
const settle = () => later(5, null);

test('a normal operation submitted after a queue full of low ones starts before every waiting low one', async (t) => {
  const q = new IoQueue(2, 5000, { maxLowInflight: 2 });
  const log: string[] = [];
  const lows = ['l0', 'l1', 'l2', 'l3', 'l4', 'l5'].map((n) => gated(log, n));
  const lowDone = lows.map((g) => q.run('low', g.op, undefined, 'low'));
  await settle();
  t.deepEqual(log, ['l0', 'l1'], 'two low operations fill both slots');
  t.like(q.stats().low, { active: 2, queued: 4 });

  const n = gated(log, 'n');
  const nDone = q.run('normal', n.op);
  t.like(q.stats().normal, { active: 0, queued: 1 });
  lows[0]!.open();
  await settle();
  t.deepEqual(log, ['l0', 'l1', 'n'], 'the freed slot went to the normal operation');
  n.open();
  t.is(await nDone, 'n');
  for (const g of lows) g.open();
  t.deepEqual(await Promise.all(lowDone), ['l0', 'l1', 'l2', 'l3', 'l4', 'l5']);
  t.deepEqual(log, ['l0', 'l1', 'n', 'l2', 'l3', 'l4', 'l5'], 'low operations keep their order');
});

test('low operations leave the other slots to normal ones: a normal one starts at once beside a flood of low ones', async (t) => {
  const q = new IoQueue(4, 5000); // maxLowInflight defaults to 1
  const log: string[] = [];
  const lows = Array.from({ length: 10 }, (_, i) => gated(log, `l${i}`));
  const lowDone = lows.map((g) => q.run('low', g.op, undefined, 'low'));
  const normals = ['a', 'b', 'c'].map((n) => gated(log, n));
  const normalDone = normals.map((g) => q.run('normal', g.op));
  await settle();
  t.deepEqual(log, ['l0', 'a', 'b', 'c']);
  t.is(q.inflight, 4);
  t.is(q.queued, 9);
  for (const g of [...normals, ...lows]) g.open();
  await Promise.all([...lowDone, ...normalDone]);
  t.like(q.stats(), { normal: { started: 3, completed: 3, active: 0, queued: 0 }, low: { started: 10, completed: 10, active: 0, queued: 0 } });
});

test('low operations never run more than maxLowInflight at once, nor all operations more than maxInflight', async (t) => {
  const q = new IoQueue(6, 5000, { maxLowInflight: 2 });
  let low = 0;
  let all = 0;
  let peakLow = 0;
  let peakAll = 0;
  let peakLowStats = 0;
  const op = (isLow: boolean, ms: number) => async () => {
    all++;
    if (isLow) low++;
    peakAll = Math.max(peakAll, all);
    peakLow = Math.max(peakLow, low);
    peakLowStats = Math.max(peakLowStats, q.stats().low.active);
    await later(ms, null);
    all--;
    if (isLow) low--;
  };
  const runs: Array<Promise<void>> = [];
  for (let i = 0; i < 30; i++) {
    runs.push(q.run('low', op(true, 1 + (i % 7)), undefined, 'low'));
    if (i % 3 === 0) runs.push(q.run('normal', op(false, 2 + (i % 5))));
    if (i % 10 === 9) await later(3, null);
  }
  await Promise.all(runs);
  t.is(peakLow, 2);
  t.is(peakLowStats, 2);
  t.true(peakAll <= 6 && peakAll >= 3, `peak ${peakAll}`);
  t.like(q.stats(), { normal: { started: 10, completed: 10 }, low: { started: 30, completed: 30 } });
});

test('a low operation waiting longer than timeoutMs behind normal ones does not time out; normal ones keep their timeout, waiting included', async (t) => {
  const q = new IoQueue(1, 1000);
  const log: string[] = [];
  // Five normal operations of 400 ms one after the other, each submitted halfway through the one
  // before (so each waits ~200 ms: well within its 1000 ms, with room for a loaded machine): the
  // low one waits ~2000 ms behind them, twice its timeout.
  const normals: Array<Promise<string>> = [];
  const submit = (i: number) => {
    normals.push(
      q.run(`n${i}`, async () => {
        log.push(`n${i}`);
        await later(200, null);
        if (i < 4) submit(i + 1);
        await later(200, null);
        return `n${i}`;
      }),
    );
  };
  submit(0);
  const t0 = Date.now();
  const low = q.run('l', async () => (log.push('l'), 'l'), undefined, 'low');
  await later(60, null);
  // A normal operation stuck behind a hung one times out while waiting, as it always did.
  const hung = new IoQueue(1, 100);
  void hung.run('hung', () => later(300, null)).catch(() => undefined);
  await t.throwsAsync(hung.run('waiting', async () => 1), { instanceOf: IoTimeout, message: /waiting: no answer from the disk within 100 ms/ });

  t.is(await low, 'l');
  const waited = Date.now() - t0;
  t.true(waited > 1000, `the low operation waited ${waited} ms`);
  t.deepEqual(await Promise.all(normals), ['n0', 'n1', 'n2', 'n3', 'n4']);
  t.deepEqual(log, ['n0', 'n1', 'n2', 'n3', 'n4', 'l']);
  t.true(q.stats().low.waitMsMax > 1000, `low waited at most ${q.stats().low.waitMsMax} ms`);
  t.true(q.stats().normal.waitMsMax < 1000, `normal waited at most ${q.stats().normal.waitMsMax} ms`);
});

test('a low operation that runs too long times out timeoutMs after it started, not after it was submitted', async (t) => {
  const q = new IoQueue(1, 200);
  const busy = q.run('busy', () => later(150, 'busy'));
  const t0 = Date.now();
  let lateResult: unknown = 'not called';
  const slowLow = q.run('scrub read', () => later(500, 'slow'), (r) => (lateResult = r), 'low');
  t.is(await busy, 'busy');
  await t.throwsAsync(slowLow, { instanceOf: IoTimeout, message: /scrub read: no answer from the disk within 200 ms/ });
  const after = Date.now() - t0;
  t.true(after >= 320, `timed out ${after} ms after submission, expected about 150 + 200`);
  t.like(q.stats().low, { active: 1, completed: 0 }, 'the timed-out low operation keeps its slot until it ends');
  await later(400, null);
  t.is(lateResult, 'slow');
  t.like(q.stats(), { low: { started: 1, completed: 1, active: 0 }, normal: { started: 1, completed: 1 } });
});

test('stats: started, completed, active, queued and wait times per priority', async (t) => {
  const q = new IoQueue(1, 5000);
  t.deepEqual(q.stats(), {
    normal: { started: 0, completed: 0, active: 0, queued: 0, waitMsTotal: 0, waitMsMax: 0 },
    low: { started: 0, completed: 0, active: 0, queued: 0, waitMsTotal: 0, waitMsMax: 0 },
  });
  const log: string[] = [];
  const a = gated(log, 'a');
  const order: string[] = [];
  // From before the submissions: the waits are counted from them, and a loaded machine may take
  // several milliseconds between a submission and the next line.
  const t0 = Date.now();
  const aDone = q.run('a', a.op);
  const bDone = q.run('b', async () => order.push('b'));
  const lDone = q.run('l', async () => order.push('l'), undefined, 'low');
  t.like(q.stats(), { normal: { started: 1, active: 1, queued: 1 }, low: { started: 0, queued: 1 } });
  await later(120, null);
  a.open();
  await Promise.all([aDone, bDone, lDone]);
  const waited = Date.now() - t0;
  const s = q.stats();
  t.like(s, { normal: { started: 2, completed: 2, active: 0, queued: 0 }, low: { started: 1, completed: 1, active: 0, queued: 0 } });
  t.true(s.normal.waitMsMax >= 110 && s.normal.waitMsMax <= waited + 5, `normal waitMsMax ${s.normal.waitMsMax}`);
  t.true(s.normal.waitMsTotal >= s.normal.waitMsMax && s.normal.waitMsTotal < s.normal.waitMsMax + 20, 'a started at once, b waited');
  t.deepEqual(order, ['b', 'l'], 'the low one started after b');
  // l waited behind a like b did (it was submitted a moment after b — milliseconds later on a
  // loaded machine — and started after b).
  t.true(s.low.waitMsMax >= 110 && s.low.waitMsMax <= waited + 5, `low waitMsMax ${s.low.waitMsMax}, normal ${s.normal.waitMsMax}`);
  t.is(s.low.waitMsTotal, s.low.waitMsMax);
});

test('the priority comes from the async context (ioPriority) through awaits, unless given explicitly', async (t) => {
  const q = new IoQueue(2, 5000);
  await ioPriority.run('low', async () => {
    await later(5, null);
    await q.run('x', async () => 1);
    await Promise.resolve();
    await Promise.all([q.run('y', async () => 2), q.run('z', async () => 3)]);
    await q.run('explicit', async () => 4, undefined, 'normal');
  });
  await q.run('outside', async () => 5);
  await ioPriority.run('normal', () => q.run('normal context', async () => 6));
  t.like(q.stats(), { low: { started: 3, completed: 3 }, normal: { started: 3, completed: 3 } });
  t.is(ioPriority.getStore(), undefined);
});

test('an operation started later, by another one ending, runs in its submitter\'s async context', async (t) => {
  const q = new IoQueue(2, 5000, { maxLowInflight: 2 });
  const log: string[] = [];
  const [a, b] = [gated(log, 'a'), gated(log, 'b')];
  const normals = [q.run('a', a.op), q.run('b', b.op)]; // both slots, outside any context
  // Queued; started by a's completion. It submits another operation from inside: that one must be low too.
  const outer = ioPriority.run('low', () => q.run('outer', async () => [ioPriority.getStore(), await q.run('inner', async () => ioPriority.getStore())]));
  t.like(q.stats(), { low: { started: 0, queued: 1 } });
  a.open();
  await settle();
  t.like(q.stats(), { low: { started: 1, active: 1, queued: 1 } }, 'inner waits for a slot, in the low queue');
  b.open();
  t.deepEqual(await outer, ['low', 'low']);
  await Promise.all(normals);
  t.like(q.stats(), { normal: { started: 2, completed: 2 }, low: { started: 2, completed: 2 } });
});

test('bad priority settings are refused', (t) => {
  for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
    t.throws(() => new IoQueue(4, 10, { maxLowInflight: bad }), { instanceOf: RangeError, message: /maxLowInflight/ }, String(bad));
  }
  t.notThrows(() => new IoQueue(4, 10, { maxLowInflight: 4 }));
  const q = new IoQueue(1, 10);
  t.throws(() => q.run('x', async () => 1, undefined, 'high' as never), { instanceOf: RangeError, message: /priority/ });
  t.throws(() => ioPriority.run('urgent' as never, () => q.run('x', async () => 1)), { instanceOf: RangeError });
  t.is(q.inflight, 0);
});
