import test from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ActorSystem, CheckpointStore } from '../runtime/system.js';
import { ENV_FILE, openEnvironment } from '../runtime/checkpoint/store.js';
import type { ProbeProtocol, ProbeState } from './fixtures/probe/messages.js';
import { PROBE } from './helpers/system.js';
import { tempDir } from './helpers/util.js';

function openStore(t: import('ava').ExecutionContext, dir: string, readOnly = false): CheckpointStore {
  const store = CheckpointStore.open(dir, { readOnly });
  t.teardown(() => store.close());
  return store;
}

test('save then load round-trips a record, with kind and updatedAt', async (t) => {
  const dir = tempDir(t);
  const store = openStore(t, dir);
  const before = Date.now();
  await store.save('vol-1', 'volume', { id: 1, mountPoint: '/mnt/v1', readOnly: false, faults: 0 });
  const after = Date.now();
  const rec = store.load<{ id: number; mountPoint: string }>('vol-1');
  t.truthy(rec);
  t.is(rec!.id, 'vol-1');
  t.is(rec!.kind, 'volume');
  t.deepEqual(rec!.state, { id: 1, mountPoint: '/mnt/v1', readOnly: false, faults: 0 });
  t.true(rec!.updatedAt >= before && rec!.updatedAt <= after);
  t.true(existsSync(join(dir, ENV_FILE)));
  t.is(store.load('nope'), undefined);
});

test('a save asked before a saveSync through another root of the environment never commits over it', async (t) => {
  const dir = tempDir(t);
  const host = openStore(t, dir);
  const root = openEnvironment(dir);
  t.teardown(() => root.close());
  const records = CheckpointStore.within(root);
  // The host's asynchronous save is queued; the records' root commits a newer state at once.
  const pending = host.save('scheduler', 'scheduler', { moved: 29 });
  records.saveSync('scheduler', 'scheduler', { moved: 31 });
  await pending;
  t.deepEqual(host.load('scheduler')?.state, { moved: 31 }, 'the older state was not put back');
  // A save asked after it writes as usual; and a save keeps the state as it was when asked.
  const state = { moved: 32 };
  const later = host.save('scheduler', 'scheduler', state);
  state.moved = 99;
  await later;
  t.deepEqual(records.load('scheduler')?.state, { moved: 32 });
});

test('a second save replaces the record and moves updatedAt forward', async (t) => {
  const store = openStore(t, tempDir(t));
  await store.save('a', 'k', { v: 1 });
  const first = store.load('a')!.updatedAt;
  await new Promise((r) => setTimeout(r, 5));
  await store.save('a', 'k2', { v: 2 });
  const rec = store.load<{ v: number }>('a')!;
  t.deepEqual(rec.state, { v: 2 });
  t.is(rec.kind, 'k2');
  t.true(rec.updatedAt > first);
  t.is(store.list().length, 1);
});

test('list() gives every record with kind, updatedAt and encoded size', async (t) => {
  const store = openStore(t, tempDir(t));
  t.deepEqual(store.list(), []);
  const t0 = Date.now();
  await store.save('small', 'probe', { n: 1 });
  await store.save('big', 'blob', { text: 'x'.repeat(10_000) });
  await store.save('mid', 'probe', { items: Array.from({ length: 50 }, (_, i) => i) });
  const t1 = Date.now();
  const list = store.list();
  t.deepEqual(list.map((s) => s.id).sort(), ['big', 'mid', 'small']);
  const by = Object.fromEntries(list.map((s) => [s.id, s]));
  t.is(by.small!.kind, 'probe');
  t.is(by.big!.kind, 'blob');
  t.is(by.mid!.kind, 'probe');
  for (const s of list) {
    t.true(s.updatedAt >= t0 && s.updatedAt <= t1, `${s.id} updatedAt in range`);
    t.true(Number.isInteger(s.size) && s.size > 0, `${s.id} has a size`);
  }
  // The size is of the encoded record: the 10 kB string shows, and orders the records.
  t.true(by.big!.size > 10_000);
  t.true(by.small!.size < by.mid!.size);
  t.true(by.mid!.size < by.big!.size);
});

test('delete removes a record; deleting a missing one is harmless', async (t) => {
  const store = openStore(t, tempDir(t));
  await store.save('a', 'k', 1);
  await store.save('b', 'k', 2);
  await store.delete('a');
  t.is(store.load('a'), undefined);
  t.is(store.load<number>('b')!.state, 2);
  t.deepEqual(store.list().map((s) => s.id), ['b']);
  await store.delete('a');
  await store.delete('never-there');
  t.deepEqual(store.list().map((s) => s.id), ['b']);
});

test('a second, read-only store on the same state directory sees the data', async (t) => {
  const dir = tempDir(t);
  const writer = openStore(t, dir);
  await writer.save('x', 'probe', { n: 42 });
  await writer.save('y', 'probe', { n: 7 });
  await writer.delete('y');
  const reader = openStore(t, dir, true);
  t.deepEqual(reader.load('x')?.state, { n: 42 });
  t.is(reader.load('y'), undefined);
  t.deepEqual(reader.list().map((s) => [s.id, s.kind]), [['x', 'probe']]);
});

test('data survives closing the store and opening the directory again', async (t) => {
  const dir = tempDir(t);
  const first = CheckpointStore.open(dir);
  await first.save('x', 'probe', { n: 1, tags: ['a'] });
  await first.close();
  const reader = openStore(t, dir, true);
  t.deepEqual(reader.load('x')?.state, { n: 1, tags: ['a'] });
});

test('state with Map, Set, Date, nested and shared references survives (structured clone)', async (t) => {
  const dir = tempDir(t);
  const store = openStore(t, dir);
  const shared = { name: 'shared' };
  const when = new Date('2024-05-06T07:08:09.123Z');
  const state = {
    map: new Map<string, unknown>([['a', 1], ['b', { deep: [1, 2, 3] }]]),
    numKeys: new Map<number, string>([[1, 'one'], [2, 'two']]),
    set: new Set(['x', 'y', 'z']),
    when,
    nested: { dates: [when, new Date(0)], set: new Set([1, 2]) },
    left: shared,
    right: shared,
    bytes: new Uint8Array([1, 2, 3, 250]),
  };
  await store.save('rich', 'probe', state);
  for (const s of [store, openStore(t, dir, true)]) {
    const got = s.load<typeof state>('rich')!.state;
    t.true(got.map instanceof Map);
    t.deepEqual([...got.map.entries()], [['a', 1], ['b', { deep: [1, 2, 3] }]]);
    t.true(got.numKeys instanceof Map);
    t.is(got.numKeys.get(2), 'two');
    t.true(got.set instanceof Set);
    t.deepEqual([...got.set], ['x', 'y', 'z']);
    t.true(got.when instanceof Date);
    t.is(got.when.getTime(), when.getTime());
    t.true(got.nested.dates[1] instanceof Date);
    t.is(got.nested.dates[1]!.getTime(), 0);
    t.true(got.nested.set instanceof Set && got.nested.set.has(2));
    t.is(got.left, got.right, 'a shared reference stays shared');
    t.deepEqual([...got.bytes], [1, 2, 3, 250]);
  }
});

test("an actor's checkpoint survives a full shutdown; a new system on the same state dir restores it", async (t) => {
  const stateDir = tempDir(t);
  const first = await ActorSystem.start({ stateDir, logLevel: 'silent', groupThreads: 1, poolThreads: 1 });
  let firstDown = false;
  t.teardown(async () => {
    if (!firstDown) await first.shutdown();
  });
  await first.start({ id: 'keeper', module: PROBE });
  const p1 = first.ref<ProbeProtocol>('keeper');
  p1.send({ type: 'inc', by: 41 });
  await p1.request({ type: 'save' });
  p1.send({ type: 'inc', by: 1000 }); // never checkpointed: must not come back
  t.is(await p1.request({ type: 'get' }), 1041);
  t.is((await p1.request({ type: 'info' })).starts, 1);
  await first.shutdown();
  firstDown = true;

  // Offline, the checkpoint is there (what the inspection tool would see).
  const reader = CheckpointStore.open(stateDir, { readOnly: true });
  const rec = reader.load<ProbeState>('keeper');
  const summary = reader.list().find((s) => s.id === 'keeper');
  await reader.close();
  t.is(rec?.kind, 'probe');
  t.deepEqual(rec?.state, { n: 41, starts: 1 });
  t.is(summary?.kind, 'probe');

  const second = await ActorSystem.start({ stateDir, logLevel: 'silent', groupThreads: 1, poolThreads: 1 });
  t.teardown(() => second.shutdown());
  await second.start({ id: 'keeper', module: PROBE });
  const p2 = second.ref<ProbeProtocol>('keeper');
  t.is(await p2.request({ type: 'get' }), 41);
  t.is((await p2.request({ type: 'info' })).starts, 2);
  // A different id on the same directory starts from nothing.
  await second.start({ id: 'fresh', module: PROBE });
  t.deepEqual(await second.ref<ProbeProtocol>('fresh').request({ type: 'info' }).then((i) => [i.n, i.starts]), [0, 1]);
});
