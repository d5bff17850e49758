/**
 * Drains that finish, on real loop devices (four volumes, 3+1, and two spares): a drain blocked by
 * slice faults finishes by itself once the repair has fixed them. Object o0 has its parity slice
 * on the drained volume and a rotten data slice: the parity cannot be recomputed (two of three
 * sources left), so the slice waits; the repair rebuilds the rotten slice, and the drain's retry
 * moves the parity. Object o1 has lost two of its four slices, one on the drained volume: below
 * quorum, the repair is refused and the drain ends with that slice listed as a hard failure, with
 * its reason. Finished, the drain's status says that old copies wait for their grace period, then
 * that it is done.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import anyTest, { type TestFn } from 'ava';
import { withLoopDevices } from '../helpers/loop.js';
import type { DrainProgress } from '../../protocols/objstore/maintenance.js';
import { FileScope, startStore, type Store } from './harness.js';
import { api, assertAllExact, flipByte, waitFor, type ObjectRecordView } from './maint.js';

interface FileInfo {
  object: ObjectRecordView;
  slices: Array<{ index: number; volumeId: number; path: string }>;
}
const test = anyTest as TestFn<{ store: Store; spares: string[] }>;
const scope = new FileScope();

test.before(async (t) => {
  const devices = await withLoopDevices(scope, 6, 400);
  const store = await startStore(scope, { devices: devices.slice(0, 4), scheduler: { repairIntervalMs: 3000, moveGraceMs: 4000, drainConcurrency: 2 } });
  t.context = { store, spares: devices.slice(4) };
});
test.after.always(() => scope.run());

async function fileinfo(base: string, path: string): Promise<FileInfo> {
  const r = await api<FileInfo>(`${base}/$/fileinfo${path}`);
  if (r.status !== 200) throw new Error(`fileinfo ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

test.serial('a drain blocked by slice faults finishes by itself after the repair; a slice below quorum is left with its reason', async (t) => {
  const { store, spares } = t.context;
  const bodies = new Map<string, Buffer>();
  for (const [name, size] of [['o0', 1024 * 1024 + 3], ['o1', 600_000], ['o2', 5000], ['o3', 70_000], ['o4', 100]] as const) {
    const body = randomBytes(size);
    const res = await fetch(`${store.url}/dr/${name}`, { method: 'PUT', body });
    t.is(res.status, 201, `PUT ${name}`);
    bodies.set(`/dr/${name}`, body);
  }
  const o0 = await fileinfo(store.url, '/dr/o0');
  t.is(o0.object.k, 3);
  t.is(o0.object.m, 1);
  const x = o0.slices[3]!.volumeId; // o0's parity slice is on the volume drained
  const o1 = await fileinfo(store.url, '/dr/o1');
  const onX = o1.slices.find((s) => s.volumeId === x)!;
  const other = o1.slices.find((s) => s.volumeId !== x)!;
  for (const d of spares) t.is((await store.provision(d)).status, 201);

  // o0: a rotten data slice (its CRC fails). o1: its slice on x and another gone.
  flipByte(o0.slices[0]!.path, false);
  rmSync(onX.path);
  rmSync(other.path);

  const start = await api<{ drain: DrainProgress }>(`${store.url}/$/volumes/${x}/drain`, 'POST');
  t.is(start.status, 202);
  t.is(start.body.drain.phase, 'moving');
  // Watch the drain: it waits with o0's slice soft-stuck (the repair is pending for its fault).
  let sawWaiting: DrainProgress | null = null;
  let last: DrainProgress | null = null;
  t.teardown(() => void (last?.state === 'running' && t.log(JSON.stringify(last))));
  const done = await waitFor('the drain to finish', async () => {
    const r = await api<{ drain: DrainProgress }>(`${store.url}/$/volumes/${x}/drain`);
    const d = (last = r.body.drain);
    if (d.phase === 'waiting' && d.stuck.some((s) => s.objectId === o0.object.id && !s.hard)) sawWaiting ??= d;
    return d.state === 'completed' ? d : null;
  }, 90_000, 100);
  // o0's slice could not move at first (its rotten slice is found by the drain itself, so it
  // cannot have been repaired before), then moved in a later pass: the drain retried by itself.
  t.true(done.movedOnRetry >= 1, `o0's parity moved on a retry (${done.movedOnRetry})`);
  // Whether a poll caught the drain waiting depends on when the repair ran (every 3 s): when it
  // did, the wait has o0 soft-stuck with its reason.
  const seen = sawWaiting as DrainProgress | null;
  if (seen) {
    t.log(JSON.stringify({ drain: seen }));
    const soft = seen.stuck.find((s) => s.objectId === o0.object.id)!;
    t.is(soft.index, 3);
    t.regex(soft.reason, /^insufficient-slices until the repair of its faults: /);
    t.truthy(seen.waiting?.since);
    t.truthy(seen.waiting?.until);
  }
  t.log(JSON.stringify({ drain: done }));

  // Finished: only o1's slice is left, a hard failure with its reason.
  t.is(done.remaining, 1);
  t.deepEqual(done.stuck.map((s) => [s.objectId, s.index, s.hard]), [[o1.object.id, onX.index, true]]);
  t.regex(done.stuck[0]!.reason, /^insufficient-slices: /);
  t.true(done.passes >= 2, `more than one pass (${done.passes})`);
  t.true(done.moved >= 1);
  // The old copies wait for their grace period, then the drain is done.
  t.is(done.phase, 'old-copies-waiting');
  t.true(done.oldCopies.waiting >= 1);
  t.true(Date.parse(done.oldCopies.graceEndsAt!) > Date.parse(done.finishedAt!) - 1000);
  const after = await waitFor('the old copies to go', async () => {
    const r = await api<{ drain: DrainProgress }>(`${store.url}/$/volumes/${x}/drain`);
    return r.body.drain.phase === 'done' ? r.body.drain : null;
  }, 30_000, 200);
  t.deepEqual(after.oldCopies, { waiting: 0, graceEndsAt: null });

  // o0 moved off x and reads byte-exact; its rotten slice was repaired; o1's faults stay blocked.
  const now = await fileinfo(store.url, '/dr/o0');
  t.false(now.slices.some((s) => s.volumeId === x));
  bodies.delete('/dr/o1');
  await assertAllExact(t, store.url, bodies);
  const faults = await api<{ faults: Array<{ objectId: string; repairStatus: string; repairBlockedReason: string | null }> }>(`${store.url}/$/faults`);
  t.false(faults.body.faults.some((f) => f.objectId === o0.object.id), 'o0 has no fault left');
  const f1 = faults.body.faults.filter((f) => f.objectId === o1.object.id);
  t.true(f1.length >= 1, 'the gone slice the drain read is a fault');
  t.true(f1.every((f) => f.repairStatus === 'blocked' && f.repairBlockedReason === 'insufficient-slices'));
  // The volume still holds o1's slice: it cannot be deleted.
  t.is((await api(`${store.url}/$/volumes/${x}`, 'DELETE')).status, 409);
});
