import test from 'ava';
import { backoffDelay, choosePlacement, recordRestart, type ThreadLoad } from '../runtime/supervisor/policy.js';
import type { BackoffSpec, IntensitySpec } from '../runtime/supervisor/spec.js';

// ---------------------------------------------------------------- backoffDelay

test('backoffDelay: attempt 1 waits initialMs, then grows by the factor each attempt', (t) => {
  const spec: BackoffSpec = { initialMs: 20, factor: 2, maxMs: 100_000 };
  const delays = [1, 2, 3, 4, 5, 6].map((a) => backoffDelay(spec, a));
  t.deepEqual(delays, [20, 40, 80, 160, 320, 640]);
  for (let i = 1; i < delays.length; i++) t.is(delays[i]! / delays[i - 1]!, spec.factor);
});

test('backoffDelay: a factor other than 2 is honoured', (t) => {
  const spec: BackoffSpec = { initialMs: 10, factor: 3, maxMs: 100_000 };
  t.deepEqual([1, 2, 3, 4].map((a) => backoffDelay(spec, a)), [10, 30, 90, 270]);
});

test('backoffDelay: capped at maxMs, and stays there', (t) => {
  const spec: BackoffSpec = { initialMs: 100, factor: 2, maxMs: 1000 };
  t.deepEqual([1, 2, 3, 4, 5, 6, 7, 50].map((a) => backoffDelay(spec, a)), [100, 200, 400, 800, 1000, 1000, 1000, 1000]);
  // Far beyond any float range the cap still holds (Infinity is capped too).
  t.is(backoffDelay(spec, 5000), 1000);
});

test('backoffDelay: initialMs above maxMs is capped from the first attempt', (t) => {
  t.is(backoffDelay({ initialMs: 5000, factor: 2, maxMs: 1000 }, 1), 1000);
});

test('backoffDelay: attempts below 1 count as the first attempt', (t) => {
  const spec: BackoffSpec = { initialMs: 50, factor: 2, maxMs: 1000 };
  t.is(backoffDelay(spec, 0), 50);
  t.is(backoffDelay(spec, -3), 50);
});

test('backoffDelay: fractional results are rounded to whole milliseconds', (t) => {
  const spec: BackoffSpec = { initialMs: 10, factor: 1.5, maxMs: 1000 };
  const got = [1, 2, 3, 4].map((a) => backoffDelay(spec, a));
  t.deepEqual(got, [10, 15, 23, 34]); // 10, 15, 22.5, 33.75
  for (const d of got) t.true(Number.isInteger(d));
});

test('backoffDelay: factor 1 is a constant delay', (t) => {
  const spec: BackoffSpec = { initialMs: 70, factor: 1, maxMs: 1000 };
  t.deepEqual([1, 2, 10].map((a) => backoffDelay(spec, a)), [70, 70, 70]);
});

// ---------------------------------------------------------------- recordRestart

const I: IntensitySpec = { maxRestarts: 3, withinMs: 1000 };

test('recordRestart: appends now and keeps restarts inside the window', (t) => {
  const r = recordRestart([100, 500], 900, I);
  t.deepEqual(r.history, [100, 500, 900]);
  t.false(r.exceeded);
});

test('recordRestart: prunes restarts that are withinMs old or older', (t) => {
  // now - t < withinMs is kept: 1001 and 1000 ms old are out, 501 ms old is in.
  t.deepEqual(recordRestart([0, 1, 500], 1001, I).history, [500, 1001]);
  t.deepEqual(recordRestart([0], 1000, I).history, [1000]);
  t.deepEqual(recordRestart([1], 1000, I).history, [1, 1000]);
});

test('recordRestart: exactly maxRestarts within the window is allowed; one more is exceeded', (t) => {
  let h: number[] = [];
  const flags: boolean[] = [];
  for (const now of [10, 20, 30, 40]) {
    const r = recordRestart(h, now, I);
    h = r.history;
    flags.push(r.exceeded);
  }
  t.deepEqual(flags, [false, false, false, true]);
  t.is(h.length, 4);
});

test('recordRestart: restarts spread wider than the window never exceed', (t) => {
  let h: number[] = [];
  for (let i = 0; i < 50; i++) {
    const r = recordRestart(h, i * 400, I); // at most 3 within any 1000 ms
    t.false(r.exceeded, `restart ${i}`);
    t.true(r.history.length <= 3);
    h = r.history;
  }
});

test('recordRestart: maxRestarts 0 means the first restart already exceeds', (t) => {
  t.true(recordRestart([], 5, { maxRestarts: 0, withinMs: 1000 }).exceeded);
});

test('recordRestart: does not mutate the history it is given', (t) => {
  const h = Object.freeze([0, 100]) as readonly number[];
  const r = recordRestart(h, 5000, I);
  t.deepEqual([...h], [0, 100]);
  t.deepEqual(r.history, [5000]);
  t.not(r.history, h);
});

test('recordRestart: a burst after a quiet period starts a fresh window', (t) => {
  let h: number[] = [];
  for (const now of [0, 10, 20]) h = recordRestart(h, now, I).history;
  t.true(recordRestart(h, 30, I).exceeded); // a 4th within the window
  const later = recordRestart(h, 5000, I);
  t.false(later.exceeded);
  t.deepEqual(later.history, [5000]);
});

// ---------------------------------------------------------------- choosePlacement

const th = (threadId: number, group: string | null, actors: number, alive = true): ThreadLoad => ({ threadId, group, actors, alive });

test('choosePlacement: dedicated is always a new thread of no group', (t) => {
  t.deepEqual(choosePlacement([], { mode: 'dedicated' }, 4), { kind: 'new', group: null });
  t.deepEqual(choosePlacement([th(1, null, 0), th(2, 'g', 0)], { mode: 'dedicated' }, 4), { kind: 'new', group: null });
  t.deepEqual(choosePlacement([th(1, 'g', 0)], { mode: 'dedicated' }, 1), { kind: 'new', group: null });
});

test('choosePlacement: shared with no thread in the group starts one for the group', (t) => {
  t.deepEqual(choosePlacement([], { mode: 'shared', group: 'g' }, 3), { kind: 'new', group: 'g' });
});

test('choosePlacement: shared spreads over new threads until groupSize', (t) => {
  const threads: ThreadLoad[] = [];
  const choices = [];
  let next = 10;
  for (let i = 0; i < 6; i++) {
    const c = choosePlacement(threads, { mode: 'shared', group: 'g' }, 3);
    choices.push(c.kind);
    if (c.kind === 'new') threads.push(th(next++, 'g', 1));
    else threads.find((x) => x.threadId === c.threadId)!.actors++;
  }
  t.deepEqual(choices, ['new', 'new', 'new', 'existing', 'existing', 'existing']);
  t.is(threads.length, 3);
  // After spreading, the load is even.
  t.deepEqual(threads.map((x) => x.actors), [2, 2, 2]);
});

test('choosePlacement: an idle thread of the group is used before a new one is started', (t) => {
  const c = choosePlacement([th(1, 'g', 2), th(2, 'g', 0)], { mode: 'shared', group: 'g' }, 4);
  t.deepEqual(c, { kind: 'existing', threadId: 2 });
});

test('choosePlacement: at groupSize, the least-loaded thread', (t) => {
  const c = choosePlacement([th(1, 'g', 5), th(2, 'g', 2), th(3, 'g', 4)], { mode: 'shared', group: 'g' }, 3);
  t.deepEqual(c, { kind: 'existing', threadId: 2 });
});

test('choosePlacement: ties go to the lowest thread id, whatever the input order', (t) => {
  const a = [th(7, 'g', 3), th(3, 'g', 3), th(5, 'g', 3)];
  const want = { kind: 'existing', threadId: 3 };
  t.deepEqual(choosePlacement(a, { mode: 'shared', group: 'g' }, 3), want);
  t.deepEqual(choosePlacement([...a].reverse(), { mode: 'shared', group: 'g' }, 3), want);
  // Ties among idle threads too.
  t.deepEqual(choosePlacement([th(9, 'g', 0), th(4, 'g', 0)], { mode: 'shared', group: 'g' }, 3), { kind: 'existing', threadId: 4 });
});

test('choosePlacement: does not reorder its input', (t) => {
  const a = [th(7, 'g', 3), th(3, 'g', 1), th(5, 'g', 2)];
  const copy = a.map((x) => ({ ...x }));
  choosePlacement(a, { mode: 'shared', group: 'g' }, 3);
  t.deepEqual(a, copy);
});

test('choosePlacement: dead threads are ignored (neither chosen nor counted)', (t) => {
  // The dead thread is idle and the lowest id: still not chosen.
  t.deepEqual(choosePlacement([th(1, 'g', 0, false), th(2, 'g', 3)], { mode: 'shared', group: 'g' }, 2), { kind: 'new', group: 'g' });
  // A dead thread does not count towards groupSize: a new one replaces it.
  t.deepEqual(choosePlacement([th(1, 'g', 1, false), th(2, 'g', 1, false)], { mode: 'shared', group: 'g' }, 2), { kind: 'new', group: 'g' });
  // At size with live threads, the least-loaded live one, even if a dead one is emptier.
  t.deepEqual(choosePlacement([th(1, 'g', 0, false), th(2, 'g', 5), th(3, 'g', 4)], { mode: 'shared', group: 'g' }, 2), { kind: 'existing', threadId: 3 });
});

test('choosePlacement: threads of other groups and dedicated threads are ignored', (t) => {
  const threads = [th(1, 'other', 0), th(2, null, 0), th(3, 'g', 4)];
  t.deepEqual(choosePlacement(threads, { mode: 'shared', group: 'g' }, 2), { kind: 'new', group: 'g' });
  t.deepEqual(choosePlacement(threads, { mode: 'shared', group: 'g' }, 1), { kind: 'existing', threadId: 3 });
  t.deepEqual(choosePlacement(threads, { mode: 'shared', group: 'h' }, 1), { kind: 'new', group: 'h' });
});

test('choosePlacement: groupSize below 1 behaves as 1', (t) => {
  t.deepEqual(choosePlacement([], { mode: 'shared', group: 'g' }, 0), { kind: 'new', group: 'g' });
  t.deepEqual(choosePlacement([th(1, 'g', 3)], { mode: 'shared', group: 'g' }, 0), { kind: 'existing', threadId: 1 });
});

test('choosePlacement: over groupSize (threads left from a larger setting) still picks least-loaded, no new thread', (t) => {
  const c = choosePlacement([th(1, 'g', 3), th(2, 'g', 1), th(3, 'g', 2)], { mode: 'shared', group: 'g' }, 2);
  t.deepEqual(c, { kind: 'existing', threadId: 2 });
});

test('choosePlacement "with": the anchor\'s live thread, else the fallback', (t) => {
  const threads = [
    { threadId: 1, group: 'g', actors: 3, alive: true },
    { threadId: 2, group: 'g', actors: 0, alive: true },
    { threadId: 3, group: 'g', actors: 1, alive: false },
  ];
  const fallback = { mode: 'shared', group: 'g' } as const;
  const locate = (id: string) => ({ a: 1, dead: 3 } as Record<string, number>)[id] ?? null;
  t.deepEqual(choosePlacement(threads, { mode: 'with', actor: 'a', fallback }, 2, locate), { kind: 'existing', threadId: 1 });
  t.deepEqual(choosePlacement(threads, { mode: 'with', actor: 'dead', fallback }, 2, locate), { kind: 'existing', threadId: 2 }, 'anchor on a dead thread');
  t.deepEqual(choosePlacement(threads, { mode: 'with', actor: 'missing', fallback: { mode: 'dedicated' } }, 2, locate), { kind: 'new', group: null });
});
