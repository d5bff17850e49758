/** Placement on real threads: regression tests for the placement races found by the runtime bench. */
import test from 'ava';
import type { ProbeProtocol } from './fixtures/probe/messages.js';
import { PROBE, startSystem } from './helpers/system.js';

test('actors placed at the same moment spread over the shared group', async (t) => {
  const system = await startSystem(t, { groupThreads: 2 });
  await Promise.all(['a', 'b', 'c', 'd'].map((id) => system.start({ id, module: PROBE, placement: { mode: 'shared', group: 'g' } })));
  const threads = system.threadInfo().filter((th) => th.group === 'g');
  t.is(threads.length, 2);
  t.deepEqual(threads.map((th) => th.actors.length).sort(), [2, 2]);
  const ids = await Promise.all(['a', 'b', 'c', 'd'].map((id) => system.ref<ProbeProtocol>(id).request({ type: 'info' })));
  t.is(new Set(ids.map((i) => i.threadId)).size, 2, 'the actors really run on two threads');
});

test('dedicated actors each get a thread and give it back when stopped', async (t) => {
  const system = await startSystem(t);
  await Promise.all(['x', 'y'].map((id) => system.start({ id, module: PROBE })));
  const own = system.threadInfo().filter((th) => th.group === null);
  t.deepEqual(own.map((th) => th.actors).sort(), [['x'], ['y']]);
  await system.stopChild('x');
  t.deepEqual(system.threadInfo().filter((th) => th.group === null).map((th) => th.actors), [['y']]);
});

test('a burst of casts between actors on one thread is not lost to the mailbox limit', async (t) => {
  const system = await startSystem(t, { groupThreads: 1, mailboxCapacity: 50 });
  for (const id of ['sender', 'receiver']) await system.start({ id, module: PROBE, placement: { mode: 'shared', group: 'g' } });
  const sender = system.ref<ProbeProtocol>('sender');
  const receiver = system.ref<ProbeProtocol>('receiver');
  t.is((await sender.request({ type: 'info' })).threadId, (await receiver.request({ type: 'info' })).threadId);
  sender.send({ type: 'spray', to: 'receiver', count: 2000 });
  const deadline = Date.now() + 10_000;
  let n = 0;
  while (Date.now() < deadline && (n = await receiver.request({ type: 'get' })) < 2000) await new Promise((r) => setTimeout(r, 20));
  t.is(n, 2000);
});

test('an actor placed "with" another runs on its thread; with the other gone it takes its fallback', async (t) => {
  const system = await startSystem(t, { groupThreads: 2 });
  const shared = { mode: 'shared', group: 'g' } as const;
  await system.start({ id: 'anchor', module: PROBE, placement: shared });
  await system.start({ id: 'spread', module: PROBE, placement: shared });
  await system.start({ id: 'buddy', module: PROBE, placement: { mode: 'with', actor: 'anchor', fallback: shared } });
  const [anchor, spread, buddy] = await Promise.all(['anchor', 'spread', 'buddy'].map((id) => system.ref<ProbeProtocol>(id).request({ type: 'info' })));
  t.not(anchor!.threadId, spread!.threadId, 'the group spreads by default');
  t.is(buddy!.threadId, anchor!.threadId, 'the colocated actor shares the anchor\'s thread');
  await system.start({ id: 'orphan', module: PROBE, placement: { mode: 'with', actor: 'nobody', fallback: { mode: 'dedicated' } } });
  t.deepEqual(system.threadInfo().filter((th) => th.group === null).map((th) => th.actors), [['orphan']], 'no anchor: the fallback placement');
});
