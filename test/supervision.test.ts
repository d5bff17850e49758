import test from 'ava';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ChildSpec, SupervisionEvent } from '../runtime/system.js';
import type { CourierProtocol } from './fixtures/courier/messages.js';
import type { FlakyProtocol } from './fixtures/flaky/messages.js';
import type { ProbeArgs, ProbeProtocol } from './fixtures/probe/messages.js';
import { PROBE } from './helpers/system.js';
import { COURIER, DEDICATED, FAST_BACKOFF, FLAKY, SHARED, eventually, startTestSystem, within, ofType, recordEvents, rejectsWith, tempDir, waitFor } from './helpers/util.js';

/** A probe child on the shared thread (override `placement` for a thread of its own). */
const probe = (id: string, args: ProbeArgs | null = null, extra: Partial<ChildSpec> = {}): ChildSpec => ({ id, module: PROBE, args, backoff: FAST_BACKOFF, placement: SHARED, ...extra });

function stopLines(file: string): Array<{ id: string; reason: string; at: number }> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [id, reason, at] = l.split(' ');
      return { id: id!, reason: reason!, at: Number(at) };
    });
}

const idx = (events: SupervisionEvent[], pred: (e: SupervisionEvent) => boolean) => events.findIndex(pred);

// ---------------------------------------------------------------- restart and backoff

test('a crashing actor is restarted with exponential backoff, from its last checkpoint', async (t) => {
  const system = await startTestSystem(t, { intensity: { maxRestarts: 50, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  await system.start(probe('r'));
  const r = system.ref<ProbeProtocol>('r');
  r.send({ type: 'inc', by: 5 });
  await r.request({ type: 'save' });
  r.send({ type: 'inc', by: 3 }); // not checkpointed: lost in the crash
  t.is(await r.request({ type: 'get' }), 8);

  for (let i = 1; i <= 4; i++) {
    const restarted = eventually(system, 'child-restarted', (e) => e.id === 'r' && e.attempt === i);
    r.send({ type: 'crash', message: `crash ${i}` });
    await restarted;
    const info = await r.request({ type: 'info' });
    t.is(info.starts, i + 1, `a new instance after crash ${i}`);
    t.is(info.n, 5 + 10 * (i - 1), `state after crash ${i} is the last checkpoint`);
    r.send({ type: 'inc', by: 10 });
    await r.request({ type: 'save' });
  }

  const crashed = ofType(events, 'child-crashed', 'r');
  t.deepEqual(crashed.map((e) => [e.cause, e.message]), [1, 2, 3, 4].map((i) => ['handler', `crash ${i}`]));
  const restarting = ofType(events, 'child-restarting', 'r');
  t.deepEqual(restarting.map((e) => e.attempt), [1, 2, 3, 4]);
  const delays = restarting.map((e) => e.delayMs);
  t.is(delays[0], FAST_BACKOFF.initialMs);
  for (let i = 1; i < delays.length; i++) t.is(delays[i], delays[i - 1]! * FAST_BACKOFF.factor, `delay ${i + 1} grows by the factor`);
  // Each restart really waited its delay (timers fire no earlier than asked, give or take 1 ms).
  const restarted = ofType(events, 'child-restarted', 'r');
  t.is(restarted.length, 4);
  for (let i = 0; i < 4; i++) t.true(restarted[i]!.at - restarting[i]!.at >= delays[i]! - 2, `restart ${i + 1} waited ${restarted[i]!.at - restarting[i]!.at} ms for ${delays[i]}`);
  t.is(ofType(events, 'escalated').length, 0);
});

test('the restart delay stops growing at maxMs', async (t) => {
  const system = await startTestSystem(t, { intensity: { maxRestarts: 50, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  await system.start(probe('capped', null, { backoff: { initialMs: 10, factor: 3, maxMs: 100 } }));
  const c = system.ref<ProbeProtocol>('capped');
  for (let i = 1; i <= 5; i++) {
    const restarted = eventually(system, 'child-restarted', (e) => e.id === 'capped' && e.attempt === i);
    c.send({ type: 'crash', message: 'again' });
    await restarted;
  }
  t.deepEqual(ofType(events, 'child-restarting', 'capped').map((e) => e.delayMs), [10, 30, 90, 100, 100]);
  t.is((await c.request({ type: 'info' })).starts, 6);
});

// ---------------------------------------------------------------- escalation

test('too many restarts in a child supervisor escalate: its children stop, the parent restarts the subtree', async (t) => {
  const dir = tempDir(t);
  const stopLog = join(dir, 'stops.log');
  const system = await startTestSystem(t, { intensity: { maxRestarts: 10, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  await system.start({
    id: 'sub',
    intensity: { maxRestarts: 2, withinMs: 60_000 },
    backoff: FAST_BACKOFF,
    children: [probe('s1', { stopLog }), probe('s2', { stopLog })],
  });
  const s1 = system.ref<ProbeProtocol>('s1');
  const s2 = system.ref<ProbeProtocol>('s2');
  s2.send({ type: 'inc', by: 7 });
  await s2.request({ type: 'save' });
  s2.send({ type: 'inc', by: 1 }); // in memory only

  for (let i = 1; i <= 2; i++) {
    const restarted = eventually(system, 'child-restarted', (e) => e.id === 's1' && e.attempt === i);
    s1.send({ type: 'crash', message: `c${i}` });
    await restarted;
  }
  t.is(await s2.request({ type: 'get' }), 8, 'restarts of s1 alone leave s2 alone');
  const escalated = eventually(system, 'escalated', (e) => e.supervisor === 'sub');
  const subRestarted = eventually(system, 'child-restarted', (e) => e.id === 'sub' && e.supervisor === 'root');
  s1.send({ type: 'crash', message: 'c3' });
  const esc = await escalated;
  t.regex(esc.reason, /3 restarts/);
  t.regex(esc.reason, /s1: c3/);
  await subRestarted;

  // The sequence: escalated, then sub's children stopped (s2 first: reverse start order),
  // then the root restarts sub.
  const iEsc = idx(events, (e) => e.type === 'escalated' && e.supervisor === 'sub');
  const iStop2 = idx(events, (e) => e.type === 'child-stopped' && e.id === 's2');
  const iStop1 = idx(events, (e) => e.type === 'child-stopped' && e.id === 's1');
  const iCrashSub = idx(events, (e) => e.type === 'child-crashed' && e.id === 'sub');
  const iRestartSub = idx(events, (e) => e.type === 'child-restarting' && e.id === 'sub');
  t.true(iEsc >= 0 && iStop2 > iEsc && iStop1 > iStop2 && iCrashSub > iStop1 && iRestartSub > iCrashSub, JSON.stringify(events.map((e) => [e.type, 'id' in e ? e.id : ''])));
  t.is(ofType(events, 'child-crashed', 'sub')[0]!.cause, 'escalation');
  // onStop ran for each end of an instance: s1's three crashes, and s2 stopped by the escalation.
  t.deepEqual(stopLines(stopLog).map((l) => `${l.id} ${l.reason}`).sort(), ['s1 crash', 's1 crash', 's1 crash', 's2 shutdown']);

  // Both children run again, as new instances from their checkpoints.
  const [i1, i2] = await Promise.all([s1.request({ type: 'info' }), s2.request({ type: 'info' })]);
  t.is(i1.starts, 4, 's1: first start, two restarts, and the subtree restart');
  t.is(i2.starts, 2, 's2: restarted once, with the subtree');
  t.is(i2.n, 7, 's2 came back from its checkpoint');
  t.is(ofType(events, 'escalated').length, 1, 'the root did not escalate');
});

test('a supervisor escalates once when many children crash at the same moment', async (t) => {
  const system = await startTestSystem(t, { intensity: { maxRestarts: 10, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  await system.start({
    id: 'sub',
    intensity: { maxRestarts: 1, withinMs: 60_000 },
    backoff: FAST_BACKOFF,
    children: ['m1', 'm2', 'm3', 'm4', 'm5'].map((id) => probe(id)),
  });
  const before = await system.ref<ProbeProtocol>('m1').request({ type: 'info' });
  const subRestarted = eventually(system, 'child-restarted', (e) => e.id === 'sub');
  // One thread hosts all five: it exits, five children crash at once.
  system.ref<ProbeProtocol>('m3').send({ type: 'exitThread', code: 3 });
  await subRestarted;
  for (const id of ['m1', 'm2', 'm3', 'm4', 'm5']) {
    const info = await system.ref<ProbeProtocol>(id).request({ type: 'info' });
    t.is(info.starts, 2, `${id} started once more`);
    t.not(info.threadId, before.threadId);
  }
  // Give a second escalation (or restart) a chance to show before counting.
  await new Promise((r) => setTimeout(r, 300));
  t.is(ofType(events, 'escalated', 'sub').length, 1);
  t.is(ofType(events, 'child-restarting', 'sub').length, 1);
  t.is(ofType(events, 'child-restarted', 'sub').length, 1);
  t.is(ofType(events, 'escalated', 'root').length, 0);
});

test('at the root, too many restarts fail the system: `failed` resolves with the reason', async (t) => {
  const system = await startTestSystem(t, { intensity: { maxRestarts: 1, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  await system.start(probe('fragile'));
  const f = system.ref<ProbeProtocol>('fragile');
  const restarted = eventually(system, 'child-restarted', (e) => e.id === 'fragile');
  f.send({ type: 'crash', message: 'first' });
  await restarted;
  f.send({ type: 'crash', message: 'second' });
  const reason = await within(system.failed, 30_000, 'system.failed');
  t.regex(reason, /root/);
  t.regex(reason, /gave up/);
  t.regex(reason, /fragile: second/);
  t.is(ofType(events, 'root-failed').length, 1);
  t.is(ofType(events, 'root-failed')[0]!.reason, reason);
  t.true(ofType(events, 'child-stopped', 'fragile').length === 1, 'the root stopped its children');
  t.is(system.locate('fragile'), null);
  await rejectsWith(t, f.request({ type: 'get' }), 'NO_SUCH_ACTOR');
  await t.throwsAsync(system.start(probe('late')), { message: /root/ });
});

test('a temporary child that crashes is not restarted', async (t) => {
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  await system.start(probe('temp', null, { restart: 'temporary' }));
  await system.start(probe('perm'));
  const temp = system.ref<ProbeProtocol>('temp');
  t.is(await temp.request({ type: 'get' }), 0);
  const stopped = eventually(system, 'child-stopped', (e) => e.id === 'temp');
  temp.send({ type: 'crash', message: 'once' });
  await stopped;
  t.is(system.locate('temp'), null);
  await rejectsWith(t, temp.request({ type: 'get' }), 'NO_SUCH_ACTOR');
  // Long enough for a restart with the fast backoff to have happened.
  await new Promise((r) => setTimeout(r, 300));
  t.is(ofType(events, 'child-crashed', 'temp').length, 1);
  t.deepEqual(ofType(events, 'child-restarting', 'temp'), []);
  t.deepEqual(ofType(events, 'child-restarted', 'temp'), []);
  t.is(system.locate('temp'), null);
  t.is(await system.ref<ProbeProtocol>('perm').request({ type: 'get' }), 0);
});

// ---------------------------------------------------------------- ordered shutdown

test('shutdown stops children in reverse start order, a nested subtree before earlier siblings', async (t) => {
  const dir = tempDir(t);
  const stopLog = join(dir, 'stops.log');
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  const args = { stopLog, stopDelayMs: 80 };
  await system.start({
    id: 'top',
    children: [
      probe('a', args, { placement: DEDICATED }),
      { id: 'sub', children: [probe('b', args), probe('c', args)] },
      probe('d', args),
    ],
  });
  await system.start(probe('e', args));
  await system.shutdown();

  const lines = stopLines(stopLog);
  t.deepEqual(lines.map((l) => l.id), ['e', 'd', 'c', 'b', 'a']);
  t.true(lines.every((l) => l.reason === 'shutdown'));
  // One after the other, not at once: each onStop (80 ms) finished before the next began.
  for (let i = 1; i < lines.length; i++) t.true(lines[i]!.at - lines[i - 1]!.at >= 70, `${lines[i]!.id} stopped ${lines[i]!.at - lines[i - 1]!.at} ms after ${lines[i - 1]!.id}`);

  const seq = events
    .filter((e) => e.type === 'child-stopped' || e.type === 'supervisor-stopped')
    .map((e) => (e.type === 'child-stopped' ? `${e.supervisor}/${e.id}` : `stopped ${e.supervisor}`));
  t.deepEqual(seq, ['root/e', 'top/d', 'sub/c', 'sub/b', 'stopped sub', 'top/sub', 'top/a', 'stopped top', 'root/top', 'stopped root']);
  t.true(ofType(events, 'child-stopped').every((e) => e.clean));
  t.deepEqual(system.threadInfo(), []);
});

test('a child whose onStop overruns its shutdownMs is abandoned; shutdown still finishes in bounded time', async (t) => {
  const dir = tempDir(t);
  const stopLog = join(dir, 'stops.log');
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  await system.start(probe('first', { stopLog }));
  await system.start(probe('slow', { stopLog, stopDelayMs: 60_000 }, { shutdownMs: 300, placement: DEDICATED }));
  await system.start(probe('last', { stopLog }));
  const started = Date.now();
  await system.shutdown();
  const took = Date.now() - started;
  t.true(took < 6000, `shutdown took ${took} ms`);

  const stopped = Object.fromEntries(ofType(events, 'child-stopped').map((e) => [e.id, e]));
  t.false(stopped.slow!.clean);
  t.true(stopped.slow!.ms >= 290, `slow was given its ${300} ms (${stopped.slow!.ms})`);
  t.true(stopped.first!.clean);
  t.true(stopped.last!.clean);
  // Order kept around the abandoned one; its onStop never got to write.
  t.deepEqual(stopLines(stopLog).map((l) => l.id), ['last', 'first']);
});

test('a child whose thread is blocked cannot stop; shutdown terminates it and still finishes in bounded time', async (t) => {
  const mark = join(tempDir(t), 'spinning');
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  await system.start(probe('fine'));
  await system.start({ id: 'stuck', module: COURIER, shutdownMs: 200, placement: DEDICATED });
  system.ref<CourierProtocol>('stuck').send({ type: 'spin', ms: 60_000, mark });
  await waitFor('the thread to be blocked', () => existsSync(mark));
  const started = Date.now();
  await system.shutdown();
  const took = Date.now() - started;
  // The stop gets its 200 ms plus the runtime's 1 s grace for a thread that does not answer.
  t.true(took < 10_000, `shutdown took ${took} ms`);
  const stopped = Object.fromEntries(ofType(events, 'child-stopped').map((e) => [e.id, e]));
  t.false(stopped.stuck!.clean);
  t.true(stopped.stuck!.ms >= 1000, `stuck was waited for (${stopped.stuck!.ms} ms)`);
  t.true(stopped.fine!.clean);
  t.deepEqual(Object.keys(stopped), ['stuck', 'fine']);
});

// ---------------------------------------------------------------- start failures

test('an init failure is a crash: the actor is restarted until init succeeds', async (t) => {
  const system = await startTestSystem(t, { intensity: { maxRestarts: 10, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  await system.start({ id: 'fl', module: FLAKY, args: { failures: 2 }, backoff: FAST_BACKOFF, placement: SHARED });
  const attempts = await waitFor('init to succeed', () => system.ref<FlakyProtocol>('fl').request({ type: 'attempts' }).catch(() => 0));
  t.is(attempts, 3, 'two failed inits, then one that worked');
  const crashed = ofType(events, 'child-crashed', 'fl');
  t.is(crashed.length, 2);
  t.true(crashed.every((e) => e.cause === 'init'));
  t.regex(crashed[0]!.message, /init attempt 1 fails/);
  t.deepEqual(ofType(events, 'child-restarting', 'fl').map((e) => e.delayMs), [20, 40]);
  t.is(ofType(events, 'escalated').length, 0);
});

test('a child whose module path is wrong escalates after the restart limit instead of looping', async (t) => {
  const system = await startTestSystem(t, { intensity: { maxRestarts: 3, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  await system.start({ id: 'bad', module: pathToFileURL('/nonexistent/hostd/actor.js').href, backoff: FAST_BACKOFF });
  const reason = await within(system.failed, 30_000, 'escalation to the root');
  t.regex(reason, /bad/);
  const crashed = ofType(events, 'child-crashed', 'bad');
  t.is(crashed.length, 4, 'maxRestarts + 1 failures, then it gave up');
  t.is(ofType(events, 'child-restarting', 'bad').length, 3);
  t.is(ofType(events, 'escalated', 'root').length, 1);
  // Each try got a thread of its own and gave it back.
  t.deepEqual(system.threadInfo(), []);
  // It stays given up: no more attempts afterwards.
  await new Promise((r) => setTimeout(r, 300));
  t.is(ofType(events, 'child-crashed', 'bad').length, 4);
});

test('a child whose first spawn failed is spawned anew when restarted', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'late-actor.js');
  const system = await startTestSystem(t, { intensity: { maxRestarts: 10, withinMs: 60_000 } });
  const events = recordEvents(t, system);
  const crashed = eventually(system, 'child-crashed', (e) => e.id === 'late');
  await system.start({ id: 'late', module: pathToFileURL(file).href, backoff: { initialMs: 200, factor: 2, maxMs: 1000 } });
  const first = await crashed;
  t.regex(first.message, /late-actor\.js|Cannot find module/);
  // The module appears while the restart is pending.
  writeFileSync(file, `export { default } from ${JSON.stringify(PROBE)};\n`);
  const p = system.ref<ProbeProtocol>('late');
  const info = await waitFor('the actor to come up', () => p.request({ type: 'info' }).catch(() => null));
  t.is(info.starts, 1, JSON.stringify(events));
  t.not(system.locate('late'), null);
  t.is(ofType(events, 'escalated').length, 0);
});
