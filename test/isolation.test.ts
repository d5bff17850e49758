import test from 'ava';
import type { ProbeMsg, ProbeProtocol } from './fixtures/probe/messages.js';
import { PROBE } from './helpers/system.js';
import { DEDICATED, FAST_BACKOFF, SHARED, eventually, startTestSystem, ofType, recordEvents, rejectsWith } from './helpers/util.js';

/** Three actors on one shared thread and one on a thread of its own, each with some state. */
async function setUp(t: import('ava').ExecutionContext) {
  const system = await startTestSystem(t, { intensity: { maxRestarts: 20, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  for (const id of ['victim', 'b1', 'b2']) await system.start({ id, module: PROBE, placement: SHARED, backoff: FAST_BACKOFF });
  await system.start({ id: 'other', module: PROBE, backoff: FAST_BACKOFF, placement: DEDICATED });
  const ref = (id: string) => system.ref<ProbeProtocol>(id);
  // Checkpointed part of the state, then a part that lives in memory only.
  const saved: Record<string, number> = { victim: 10, b1: 20, b2: 30, other: 40 };
  for (const [id, n] of Object.entries(saved)) {
    ref(id).send({ type: 'inc', by: n });
    await ref(id).request({ type: 'save' });
    ref(id).send({ type: 'inc', by: 1 });
  }
  const info = Object.fromEntries(await Promise.all(['victim', 'b1', 'b2', 'other'].map(async (id) => [id, await ref(id).request({ type: 'info' })] as const)));
  return { system, events, ref, info, saved };
}

const kinds: Array<{ name: string; msg: ProbeMsg; cause: string }> = [
  { name: 'a throw in a handler', msg: { type: 'crash', message: 'handler boom' }, cause: 'handler' },
  { name: 'a throw inside a timer', msg: { type: 'crashInTimer', message: 'timer boom' }, cause: 'uncaught' },
  { name: 'an unhandled rejection', msg: { type: 'rejectUnhandled', message: 'rejection boom' }, cause: 'unhandled-rejection' },
];

for (const kind of kinds) {
  test(`${kind.name} restarts only that actor; its thread-mates keep their state and thread`, async (t) => {
    const { system, events, ref, info, saved } = await setUp(t);
    t.is(info.victim!.threadId, info.b1!.threadId, 'victim and b1 share a thread');
    t.is(info.victim!.threadId, info.b2!.threadId, 'victim and b2 share a thread');
    t.not(info.victim!.threadId, info.other!.threadId);

    const restarted = eventually(system, 'child-restarted', (e) => e.id === 'victim');
    ref('victim').send(kind.msg);
    await restarted;

    const crashed = ofType(events, 'child-crashed');
    t.deepEqual(crashed.map((e) => [e.id, e.cause]), [['victim', kind.cause]]);
    t.regex(crashed[0]!.message, /boom/);

    const v = await ref('victim').request({ type: 'info' });
    t.is(v.starts, 2, 'the victim is a new instance');
    t.is(v.n, saved.victim!, 'from its checkpoint: the unsaved +1 is gone');
    t.is(v.threadId, info.victim!.threadId, 'restarted in place, on the same thread');
    for (const id of ['b1', 'b2', 'other']) {
      const now = await ref(id).request({ type: 'info' });
      t.is(now.starts, 1, `${id} was not restarted`);
      t.is(now.n, saved[id]! + 1, `${id} kept its in-memory state`);
      t.is(now.threadId, info[id]!.threadId, `${id} is on the same thread`);
    }
    // Everyone still takes messages.
    ref('b1').send({ type: 'inc', by: 2 });
    t.is(await ref('b1').request({ type: 'get' }), saved.b1! + 3);
    t.is(await ref('victim').request({ type: 'get' }), saved.victim!);
  });
}

test('a thread that dies restarts every actor it hosted, and only those; the same refs keep working', async (t) => {
  const { system, events, ref, info, saved } = await setUp(t);
  const deadThread = info.victim!.threadId;
  // An actor on another thread has the dead thread's route cached.
  t.is(await ref('other').request({ type: 'ask', to: 'b1', msg: { type: 'get' } }), saved.b1! + 1);
  // A request in flight on the thread when it dies.
  const inFlight = ref('b2').request({ type: 'sleep', ms: 20_000 }, { timeoutMs: 25_000 });
  await new Promise((r) => setTimeout(r, 50));

  const all = ['victim', 'b1', 'b2'].map((id) => eventually(system, 'child-restarted', (e) => e.id === id));
  ref('victim').send({ type: 'exitThread', code: 9 });
  const err = await rejectsWith(t, inFlight, 'ACTOR_CRASHED');
  t.regex(err.message, /exited/);
  await Promise.all(all);

  const crashed = ofType(events, 'child-crashed');
  t.deepEqual(crashed.map((e) => e.id).sort(), ['b1', 'b2', 'victim']);
  t.true(crashed.every((e) => e.cause === 'thread-exit' && /code 9/.test(e.message)));

  const after = Object.fromEntries(await Promise.all(['victim', 'b1', 'b2'].map(async (id) => [id, await ref(id).request({ type: 'info' })] as const)));
  for (const id of ['victim', 'b1', 'b2']) {
    t.is(after[id]!.starts, 2, `${id} restarted once`);
    t.is(after[id]!.n, saved[id]!, `${id} came back from its checkpoint`);
    t.not(after[id]!.threadId, deadThread, `${id} is on a new thread`);
  }
  t.is(after.victim!.threadId, after.b1!.threadId, 'still one thread for the group (groupThreads 1)');
  t.is(after.b1!.threadId, after.b2!.threadId);
  t.false(system.threadInfo().some((x) => x.threadId === deadThread));

  const o = await ref('other').request({ type: 'info' });
  t.deepEqual([o.starts, o.n, o.threadId], [1, saved.other! + 1, info.other!.threadId], 'the actor on the other thread is untouched');

  // Messages flow again, from the main thread and from the other thread's cached route.
  ref('b1').send({ type: 'inc', by: 5 });
  t.is(await ref('b1').request({ type: 'get' }), saved.b1! + 5);
  t.is(await ref('other').request({ type: 'ask', to: 'b1', msg: { type: 'get' } }), saved.b1! + 5);
  t.is(await ref('victim').request({ type: 'ask', to: 'other', msg: { type: 'get' } }), saved.other! + 1);
});

test('a blocked thread holds up only its own actors', async (t) => {
  const { ref, info } = await setUp(t);
  let settled = false;
  const blocked = ref('victim')
    .request({ type: 'block', ms: 4000 }, { timeoutMs: 30_000 })
    .finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 50));
  // The other thread answers while the shared one is still blocked.
  const o = await ref('other').request({ type: 'info' });
  t.is(o.threadId, info.other!.threadId);
  t.false(settled, 'answered before the blocked thread was free again');
  // The blocked thread's other actors wait for it, but nobody is restarted.
  const b1 = await ref('b1').request({ type: 'info' }, { timeoutMs: 30_000 });
  t.true(settled, 'b1 shares the blocked thread: it answers after the block');
  t.is(b1.starts, 1);
  t.is(await blocked, null);
});
