/**
 * Verification runs (scrub) on real loop devices: POST /$/verify-volumes starts a run (light or
 * full, the fleet or some volumes), a request the running run does not cover is refused with
 * accepted false, one it covers is answered by it, DELETE stops it; GET /$/verify-volumes shows
 * its progress and scope; GET /$/verify-runs is the durable history (it survives a restart).
 * A parity chunk rewritten with a valid CRC is found by `full` only (PARITY_MISMATCH); rot in a
 * data chunk is found by `full` as a checksum error. One of the six disks is the faultyfs fixture,
 * slowed on command so that a run is still going while the test talks to it.
 */
import { renameSync } from 'node:fs';
import anyTest, { type TestFn } from 'ava';
import { startFaultyDisk, type FaultyDisk } from '../helpers/faulty-disk.js';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, keptStateDir, startStore, type Store } from './harness.js';
import type { VerifyErrors, VerifyProgress, VerifyRun } from '../../protocols/objstore/maintenance.js';
import type { VerifyStartReply } from '../../actors/scheduler/messages.js';
import { api, flipByte, rewrite, assertAllExact, putObjects, records, waitFor, type ObjectRecordView } from './maint.js';

type Errors = VerifyErrors;
type Run = VerifyRun;
type Progress = VerifyProgress;
type Start = VerifyStartReply;
interface Fault {
  objectId: string;
  sliceIndex: number;
  volumeId: number;
  code: string;
  repairStatus: string;
}
interface FileInfo {
  object: ObjectRecordView;
  slices: Array<{ index: number; kind: string; volumeId: number; path: string }>;
}

interface Ctx {
  store: Store;
  faulty: FaultyDisk;
  stateDir: string;
  /** volume id of the faulty (slowable) disk */
  slowVol: number;
  /** a volume the `narrow` objects have no slice on */
  spareVol: number;
  bodies: Map<string, Buffer>;
  narrow: string[];
  wide: string[];
}

const test = anyTest as TestFn<Ctx>;
const scope = new FileScope();

const ZERO: Errors = { missing: 0, badHeader: 0, checksum: 0, unreadable: 0, timeout: 0, parityMismatch: 0, md5Mismatch: 0 };



async function fileinfo(base: string, path: string): Promise<FileInfo> {
  const r = await api<FileInfo>(`${base}/$/fileinfo${path}`);
  if (r.status !== 200) throw new Error(`fileinfo ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const verify = (base: string, body: unknown) => api<Start & { error?: { message: string } }>(`${base}/$/verify-volumes`, 'POST', body);
const progress = async (base: string) => (await api<Progress>(`${base}/$/verify-volumes`)).body;
const runs = async (base: string) => {
  const r = await api<{ runs: Run[] }>(`${base}/$/verify-runs`);
  if (r.status !== 200) throw new Error(`verify-runs: ${r.status}`);
  return r.body.runs;
};
const faults = async (base: string) => (await api<{ faults: Fault[] }>(`${base}/$/faults`)).body.faults;

/** Start a run that must be accepted and wait for it to finish; returns its history record. */
async function runToEnd(base: string, body: unknown): Promise<Run> {
  const r = await verify(base, body);
  if (r.status !== 200 || !r.body.accepted) throw new Error(`verify ${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.body)}`);
  await waitFor('the verify run to finish', async () => (await progress(base)).run === null, 60_000, 50);
  const [last] = await runs(base);
  if (!last || last.startedAt !== r.body.startedAt) throw new Error(`the newest run is not the one started at ${r.body.startedAt}: ${JSON.stringify(last)}`);
  return last;
}

test.before(async (t) => {
  const good = await withLoopDevices(scope, 5, 512);
  const faulty = await startFaultyDisk(scope, 512);
  const stateDir = keptStateDir(scope, 'hostd-scrub-');
  const store = await startStore(scope, { devices: [faulty.device, ...good], stateDir });
  const vols = (await api<{ volumes: Array<{ id: number; device: string }> }>(`${store.url}/$/volumes`)).body.volumes;
  const slowVol = vols.find((v) => v.device === faulty.device)!.id;
  const spareVol = Math.max(...vols.filter((v) => v.id !== slowVol).map((v) => v.id));
  // With one volume read-only, objects are written over the other five (3+2): they have no
  // slice on it. Then it is writable again and the rest go over all six (4+2).
  const ro = await api(`${store.url}/$/volumes/${spareVol}`, 'PUT', { isReadOnly: true });
  if (ro.status !== 200) throw new Error(`read-only: ${ro.status}`);
  const narrowBodies = await putObjects(store.url, 'narrow', [1, 5000, 70_000, 300_000, 1024 * 1024 + 5, 12_345]);
  await api(`${store.url}/$/volumes/${spareVol}`, 'PUT', { isReadOnly: false });
  const wideBodies = await putObjects(store.url, 'wide', Array.from({ length: 24 }, (_, i) => 1000 + i * 37_000));
  t.context = {
    store,
    faulty,
    stateDir,
    slowVol,
    spareVol,
    bodies: new Map([...narrowBodies, ...wideBodies]),
    narrow: [...narrowBodies.keys()],
    wide: [...wideBodies.keys()],
  };
});
test.after.always(() => scope.run());

test.serial('bad verify requests are refused naming the field; an unknown volume is 404; a freeze answers accepted false; nothing starts', async (t) => {
  const { store } = t.context;
  const cases: Array<[unknown, number, RegExp]> = [
    [{ mode: 'deep' }, 400, /mode/],
    [{ volumeIds: [] }, 400, /volumeIds/],
    [{ volumeIds: ['1'] }, 400, /volumeIds/],
    [{ volumeIds: [0] }, 400, /volumeIds/],
    [{ volumeIds: 3 }, 400, /volumeIds/],
    [{ mode: 'full', fast: true }, 400, /fast/],
    [{ volumeIds: [1, 99] }, 404, /99/],
  ];
  for (const [body, status, re] of cases) {
    const r = await api<{ error: { message: string } }>(`${store.url}/$/verify-volumes`, 'POST', body);
    t.is(r.status, status, JSON.stringify(body));
    t.regex(r.body.error.message, re, JSON.stringify(body));
  }
  // Rule 1: under a maintenance freeze the request is answered 200 with accepted false.
  t.is((await api(`${store.url}/$/maintenance-freeze`, 'PUT', { frozen: true })).status, 200);
  try {
    const frozen = await verify(store.url, { mode: 'light' });
    t.is(frozen.status, 200);
    t.false(frozen.body.accepted);
  } finally {
    await api(`${store.url}/$/maintenance-freeze`, 'PUT', { frozen: false });
  }
  const p = await progress(store.url);
  t.is(p.run, null, 'no run was started');
  t.false(p.running);
  t.deepEqual(await runs(store.url), [], 'no run in the history');
});

test.serial('a running run: progress and scope shown, an uncovered request refused, a covered one answered by it, DELETE stops it', async (t) => {
  const { store, faulty, slowVol, spareVol, bodies } = t.context;
  const all = await records(store.url, bodies.keys());
  const hasSlow = (r: (typeof all)[number]) => [...r.dataVolumes, ...r.parityVolumes].includes(slowVol);
  const onSlow = all.filter(hasSlow).length;
  // Objects of several data slices span every writable volume; small ones (one data slice) are
  // spread at random (protocols/objstore/layout.ts), so some of those may miss the slow disk.
  t.true(all.filter((r) => r.k > 1).every(hasSlow), 'every object of several data slices has a slice on the slow disk');
  t.true(onSlow >= all.length - all.filter((r) => r.k === 1).length && onSlow >= 20, `${onSlow} of ${all.length} objects have a slice on the slow disk`);
  // Every read of the faulty disk now takes 150 ms: a run over its objects lasts seconds.
  await faulty.slow(150);
  try {
    const before = Date.now();
    const first = await verify(store.url, { mode: 'light', volumeIds: [slowVol] });
    t.is(first.status, 200);
    t.true(first.body.accepted);
    t.falsy(first.body.deferred);
    const startedAt = Date.parse(first.body.startedAt);
    t.is(new Date(startedAt).toISOString(), first.body.startedAt, 'startedAt is an ISO 8601 timestamp');
    t.true(startedAt >= before - 1000 && startedAt <= Date.now() + 1000);

    const p0 = await progress(store.url);
    t.true(p0.running);
    t.like(p0.run, { status: 'running', mode: 'light', volumeIds: [slowVol], trigger: { kind: 'manual' } });
    t.is(p0.objectsTotal, onSlow, 'objectsTotal: the objects with a slice on the volume');

    // Requests the running light run on one volume does not cover: refused, 200 accepted false.
    for (const body of [{ mode: 'full', volumeIds: [slowVol] }, {}, { mode: 'light' }, { mode: 'light', volumeIds: [slowVol, spareVol] }]) {
      const r = await verify(store.url, body);
      t.is(r.status, 200, JSON.stringify(body));
      t.false(r.body.accepted, `${JSON.stringify(body)} is not covered by light on [${slowVol}]`);
    }
    // A request it covers is answered by it.
    const same = await verify(store.url, { mode: 'light', volumeIds: [slowVol] });
    t.true(same.body.accepted);
    t.is(same.body.startedAt, first.body.startedAt, 'answered by the running run');
    const history = await runs(store.url);
    t.is(history.length, 1, 'the refused and the covered requests started no run');
    t.is(history[0]!.status, 'running');

    const p1 = await waitFor('the run to check an object', async () => {
      const p = await progress(store.url);
      return p.run && p.run.objectsChecked >= 1 ? p : null;
    }, 30_000, 50);
    t.is(p1.run!.status, 'running');
    t.true(p1.run!.objectsChecked < p1.objectsTotal, 'still going');
    t.true(p1.percent > 0 && p1.percent < 100, `percent ${p1.percent}`);
    t.true(Math.abs(p1.percent - (100 * p1.run!.objectsChecked) / p1.objectsTotal) <= 0.1, `percent ${p1.percent} for ${p1.run!.objectsChecked}/${p1.objectsTotal}`);

    const stop = await api(`${store.url}/$/verify-volumes`, 'DELETE');
    t.is(stop.status, 200);
    const p2 = await progress(store.url);
    t.is(p2.run, null);
    t.false(p2.running);
    const [stopped] = await runs(store.url);
    t.like(stopped, { id: p0.run!.id, status: 'stopped', mode: 'light', volumeIds: [slowVol], trigger: { kind: 'manual' } });
    t.truthy(stopped!.finishedAt);
    t.true(stopped!.objectsChecked < onSlow, 'stopped before the end');

    // A full run of the whole fleet covers any request: light on one volume, full on another.
    const fleet = await verify(store.url, {});
    t.true(fleet.body.accepted);
    const p3 = await progress(store.url);
    t.like(p3.run, { status: 'running', mode: 'full', volumeIds: null });
    t.is(p3.objectsTotal, all.length, 'the fleet: every object');
    for (const body of [{ mode: 'light', volumeIds: [spareVol] }, { mode: 'full', volumeIds: [slowVol] }, { mode: 'light' }]) {
      const r = await verify(store.url, body);
      t.is(r.status, 200);
      t.true(r.body.accepted, `${JSON.stringify(body)} is covered by full on the fleet`);
      t.is(r.body.startedAt, fleet.body.startedAt);
    }
    t.is((await runs(store.url)).length, 2, 'covered requests start no run of their own');
    t.is((await api(`${store.url}/$/verify-volumes`, 'DELETE')).status, 200);
    const [fleetStopped] = await runs(store.url);
    t.like(fleetStopped, { status: 'stopped', mode: 'full', volumeIds: null });
  } finally {
    await faulty.heal();
  }
});

test.serial('scope: volumeIds [x] verifies exactly the objects with a slice on x', async (t) => {
  const { store, faulty, spareVol, bodies, narrow } = t.context;
  const all = await records(store.url, bodies.keys());
  const holds = (r: ObjectRecordView) => [...r.dataVolumes, ...r.parityVolumes].includes(spareVol);
  for (const p of narrow) t.false(holds(all.find((r) => r.path === p)!), `${p} has no slice on ${spareVol}`);
  const expected = all.filter(holds).length;
  t.true(expected > 0 && expected < all.length, `${expected} of ${all.length} objects are on volume ${spareVol}`);
  // A slice of an object outside the scope is taken away for the run: it must not be looked at.
  const outside = (await fileinfo(store.url, narrow[0]!)).slices[0]!.path;
  renameSync(outside, `${outside}.away`);
  try {
    await faulty.slow(100);
    try {
      const r = await verify(store.url, { mode: 'light', volumeIds: [spareVol] });
      t.true(r.body.accepted);
      const p = await progress(store.url);
      t.like(p.run, { status: 'running', volumeIds: [spareVol] });
      t.is(p.objectsTotal, expected, 'objectsTotal counts the objects with a slice on the volume');
    } finally {
      await faulty.heal();
    }
    await waitFor('the scoped run to finish', async () => (await progress(store.url)).run === null, 60_000, 50);
  } finally {
    renameSync(`${outside}.away`, outside);
  }
  const [done] = await runs(store.url);
  t.like(done, { status: 'completed', mode: 'light', volumeIds: [spareVol], objectsChecked: expected, trigger: { kind: 'manual' } });
  t.deepEqual(done!.errors, ZERO);
});

test.serial('a parity chunk rewritten with a valid CRC: light does not see it, full finds PARITY_MISMATCH', async (t) => {
  const { store, wide, bodies } = t.context;
  const target = wide[10]!;
  const info = await fileinfo(store.url, target);
  const parity = info.slices.find((s) => s.kind === 'parity')!;
  const original = flipByte(parity.path, true);
  try {
    const light = await runToEnd(store.url, { mode: 'light' });
    t.like(light, { status: 'completed', mode: 'light', objectsChecked: bodies.size });
    t.deepEqual(light.errors, ZERO, 'light reads headers only');
    t.false((await faults(store.url)).some((f) => f.objectId === info.object.id), 'no fault from light');

    const full = await runToEnd(store.url, { mode: 'full' });
    t.like(full, { status: 'completed', mode: 'full', objectsChecked: bodies.size });
    t.is(full.errors.parityMismatch, 1, JSON.stringify(full.errors));
    t.deepEqual({ ...full.errors, parityMismatch: 0 }, ZERO, 'nothing else is wrong');
    const f = (await faults(store.url)).filter((x) => x.objectId === info.object.id);
    t.is(f.length, 1, JSON.stringify(f));
    t.like(f[0], { sliceIndex: parity.index, volumeId: parity.volumeId, code: 'PARITY_MISMATCH' });
    await assertAllExact(t, store.url, new Map([[target, bodies.get(target)!]]));
  } finally {
    rewrite(parity.path, original);
  }
});

test.serial('rot in a data chunk (CRC not fixed) is found by full as a checksum error', async (t) => {
  const { store, narrow, bodies } = t.context;
  const target = narrow[3]!;
  const info = await fileinfo(store.url, target);
  const data = info.slices.find((s) => s.kind === 'data')!;
  const original = flipByte(data.path, false);
  try {
    const full = await runToEnd(store.url, {});
    t.like(full, { status: 'completed', mode: 'full', objectsChecked: bodies.size });
    t.is(full.errors.checksum, 1, JSON.stringify(full.errors));
    t.deepEqual({ ...full.errors, checksum: 0 }, ZERO, 'nothing else is wrong (the parity fault of the last test was put right and is cleared)');
    const all = await faults(store.url);
    t.is(all.length, 1, JSON.stringify(all));
    t.like(all[0], { objectId: info.object.id, sliceIndex: data.index, volumeId: data.volumeId, code: 'CHECKSUM' });
  } finally {
    rewrite(data.path, original);
  }
});

test.serial('the run history is durable: most recent first, trigger, status and errors survive a restart', async (t) => {
  const { store, stateDir, bodies } = t.context;
  const before = await runs(store.url);
  // Six runs so far: light and full stopped, light on one volume, light and full over the
  // rewritten parity, full over the rotten data chunk.
  t.deepEqual(
    before.map((r) => [r.mode, r.status]),
    [
      ['full', 'completed'],
      ['full', 'completed'],
      ['light', 'completed'],
      ['light', 'completed'],
      ['full', 'stopped'],
      ['light', 'stopped'],
    ],
  );
  for (let i = 1; i < before.length; i++) t.true(Date.parse(before[i - 1]!.requestedAt) >= Date.parse(before[i]!.requestedAt), 'most recent first');
  for (const r of before) t.deepEqual(r.trigger, { kind: 'manual' });
  t.is(before[0]!.errors.checksum, 1);
  t.is(before[1]!.errors.parityMismatch, 1);

  await store.system.shutdown();
  const again = await startStore(scope, { devices: store.devices, stateDir, provision: false });
  t.context.store = again;
  const vols = (await api<{ volumes: Array<{ isMissing: boolean }> }>(`${again.url}/$/volumes`)).body.volumes;
  t.is(vols.length, 6);
  t.true(vols.every((v) => !v.isMissing), 'every disk is found again');
  t.deepEqual(await runs(again.url), before, 'the history after the restart is the history before it');
  // The store works on: the objects read back, a new run goes to the head of the history.
  await assertAllExact(t, again.url, bodies);
  const fresh = await runToEnd(again.url, { mode: 'light' });
  t.deepEqual(fresh.errors, ZERO);
  const after = await runs(again.url);
  t.is(after.length, before.length + 1);
  t.deepEqual(after.slice(1), before);
});
