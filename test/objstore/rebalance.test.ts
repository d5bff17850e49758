/**
 * Rebalance on real loop devices: objects of very different sizes written over six volumes
 * (4+2, so every volume holds one slice of every object), then two empty disks added. The
 * rebalance sheds from the volumes above the capacity-weighted target onto the new ones,
 * biggest objects first; data slices are copied and parity slices recomputed (never copied),
 * which the records show; maxMoves stops it, DELETE cancels it at any time, PUT retunes the
 * concurrency of the next batch. Every object reads back byte-exact, and the slice files on the
 * disks are exactly what the records name. Bad requests are refused with the field named.
 */
import { statfsSync } from 'node:fs';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';
import { api, assertAllExact, assertDisksMatchRecords, putObjects, records, settled, waitFor, type ObjectRecordView } from './maint.js';
import type { RebalanceProgress } from '../../protocols/objstore/maintenance.js';

const test = anyTest as TestFn<{ store: Store; bodies: Map<string, Buffer>; bigPaths: string[]; kinds: { data: number; parity: number } }>;
const scope = new FileScope();
const MiB = 1024 * 1024;

/** GET /$/rebalance, as the protocol declares it. */
type Progress = RebalanceProgress;

interface ErrorBody {
  error: { code: string; message: string };
}

// Big objects of distinct sizes (so "biggest first" has one answer) and many small ones.
const BIG = [6 * MiB + 11, 5.6 * MiB, 5.2 * MiB + 5, 4.8 * MiB, 4.4 * MiB + 1, 4.1 * MiB].map(Math.round);
const SMALL = Array.from({ length: 24 }, (_, i) => 20_000 + i * 12_345);

test.before(async (t) => {
  const devices = await withLoopDevices(scope, 8, 512);
  const store = await startStore(scope, { devices: devices.slice(0, 6) });
  const bodies = await putObjects(store.url, 'rb', [...BIG, ...SMALL]);
  // Two empty volumes: the six first ones are now above the target fill, these below it.
  for (const d of devices.slice(6)) {
    const r = await store.provision(d);
    if (r.status !== 201) throw new Error(`provisioning ${d}: ${r.status}`);
  }
  t.context = { store, bodies, bigPaths: [...bodies.keys()].slice(0, BIG.length), kinds: { data: 0, parity: 0 } };
});
test.after.always(() => scope.run());

const isInt = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v);

/** Every field of the spec's progress table, with its type. */
function assertShape(t: ExecutionContext, p: Progress, what: string): void {
  t.is(typeof p.running, 'boolean', `${what}: running`);
  t.true(isInt(p.concurrency), `${what}: concurrency`);
  t.true(typeof p.targetFill === 'number' && p.targetFill >= 0 && p.targetFill <= 1, `${what}: targetFill ${p.targetFill}`);
  t.is(typeof p.deadband, 'number', `${what}: deadband`);
  for (const f of ['bytesToMove', 'bytesMoved', 'bytesPerSec', 'etaSeconds', 'currentMinObjectSize', 'moves', 'copied', 'reconstructed', 'noDest', 'unrecoverable', 'sourceDeleteFailed', 'duplicateRefs'] as const) {
    t.true(isInt(p[f]) && p[f] >= 0, `${what}: ${f} is a non-negative integer (${JSON.stringify(p[f])})`);
  }
  t.true(Array.isArray(p.sourceVolumeIds) && p.sourceVolumeIds.every(isInt), `${what}: sourceVolumeIds`);
  t.true(p.currentSourceVolumeId === null || isInt(p.currentSourceVolumeId), `${what}: currentSourceVolumeId`);
  t.is(typeof p.startedAt, 'string', `${what}: startedAt`);
  t.regex(p.startedAt ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, `${what}: startedAt is ISO 8601`);
  t.false(Number.isNaN(Date.parse(p.startedAt ?? '')), `${what}: startedAt parses`);
}

async function progress(store: Store): Promise<Progress> {
  const r = await api<Progress>(`${store.url}/$/rebalance`);
  if (r.status !== 200) throw new Error(`GET /$/rebalance: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function ended(store: Store): Promise<Progress> {
  return waitFor('the rebalance to end', async () => {
    const p = await progress(store);
    return p.running ? null : p;
  }, 45_000, 100);
}

/** Fill (used / total, from statfs of the mount) of every writable volume. */
async function fills(store: Store): Promise<Map<number, number>> {
  const r = await api<{ volumes: Array<{ id: number; mountPoint: string | null; isEnabled: boolean; isReadOnly: boolean; isHealthy: boolean; isDraining: boolean }> }>(`${store.url}/$/volumes`);
  const out = new Map<number, number>();
  for (const v of r.body.volumes) {
    if (!v.mountPoint || !v.isEnabled || v.isReadOnly || !v.isHealthy || v.isDraining) continue;
    const s = statfsSync(v.mountPoint);
    out.set(v.id, (s.blocks - s.bavail) / s.blocks);
  }
  return out;
}

/** The capacity-weighted target (all volumes are the same size) and the largest distance from it. */
function spread(f: Map<number, number>): { target: number; worst: number } {
  const vals = [...f.values()];
  const target = vals.reduce((a, b) => a + b, 0) / vals.length;
  return { target, worst: Math.max(...vals.map((v) => Math.abs(v - target))) };
}

/** Slices whose volume changed between two snapshots of the records. */
function movedSlices(before: ObjectRecordView[], after: ObjectRecordView[]): Array<{ path: string; index: number; k: number; from: number; to: number }> {
  const out: Array<{ path: string; index: number; k: number; from: number; to: number }> = [];
  for (const b of before) {
    const a = after.find((x) => x.id === b.id)!;
    const was = [...b.dataVolumes, ...b.parityVolumes];
    const now = [...a.dataVolumes, ...a.parityVolumes];
    was.forEach((v, index) => {
      if (now[index] !== v) out.push({ path: b.path, index, k: b.k, from: v, to: now[index]! });
    });
  }
  return out;
}

/** Check the job's counters against the slices the records show moved; tally the kinds. */
function checkKinds(t: ExecutionContext<{ kinds: { data: number; parity: number } }>, moved: ReturnType<typeof movedSlices>, p: Progress): void {
  const data = moved.filter((m) => m.index < m.k).length;
  const parity = moved.filter((m) => m.index >= m.k).length;
  t.is(data, p.copied, 'data slices moved = copied');
  t.is(parity, p.reconstructed, 'parity slices moved = reconstructed (parity is never copied)');
  t.context.kinds.data += data;
  t.context.kinds.parity += parity;
  t.log(`moved: ${moved.map((m) => `${m.path}#${m.index}(k=${m.k}) ${m.from}→${m.to}`).join(', ')}`);
}

test.serial('bad rebalance requests are refused with the field named; PUT and an idle GET with no job', async (t) => {
  const { store } = t.context;
  const idle = await progress(store);
  t.false(idle.running);
  t.is(idle.moves, 0);
  for (const [body, field] of [
    [{ deadband: 0.6 }, 'deadband'],
    [{ deadband: -1 }, 'deadband'],
    [{ deadband: 'x' }, 'deadband'],
    [{ concurrency: 0 }, 'concurrency'],
    [{ concurrency: 65 }, 'concurrency'],
    [{ concurrency: 1.5 }, 'concurrency'],
    [{ concurrency: '2' }, 'concurrency'],
    [{ deadband: 0, fast: true }, 'fast'],
  ] as const) {
    const r = await api<ErrorBody>(`${store.url}/$/rebalance`, 'POST', body);
    t.is(r.status, 400, `POST ${JSON.stringify(body)}`);
    t.regex(r.body.error.message, new RegExp(field), `POST ${JSON.stringify(body)} names ${field}`);
  }
  const notJson = await api(`${store.url}/$/rebalance`, 'POST', '{deadband');
  t.is(notJson.status, 400, 'a body that is not JSON');
  // Nothing started.
  const still = await progress(store);
  t.false(still.running);
  t.is(still.startedAt, null);

  const put = await api<ErrorBody>(`${store.url}/$/rebalance`, 'PUT', { concurrency: 3 });
  t.is(put.status, 409, 'PUT with no running job');
  for (const body of [{ concurrency: 0 }, { concurrency: 65 }, { concurrency: 1.5 }, {}, { concurrency: 2, deadband: 0.1 }]) {
    const r = await api<ErrorBody>(`${store.url}/$/rebalance`, 'PUT', body);
    t.is(r.status, 400, `PUT ${JSON.stringify(body)}`);
  }

  // The limits themselves are accepted: deadband 0.5 and concurrency 64. No volume is 50 points
  // above the target, so this job ends at once without a move.
  const edge = await api<Progress>(`${store.url}/$/rebalance`, 'POST', { deadband: 0.5, concurrency: 64 });
  t.is(edge.status, 202);
  t.is(edge.body.deadband, 0.5);
  t.is(edge.body.concurrency, 64);
  const done = await ended(store);
  t.is(done.moves, 0);
  t.deepEqual(done.sourceVolumeIds, []);
  t.regex(done.lastOutcome ?? '', /^completed/);
  // DELETE with nothing running is harmless.
  const del = await api<Progress>(`${store.url}/$/rebalance`, 'DELETE');
  t.is(del.status, 200);
  t.false(del.body.running);
  t.regex(del.body.lastOutcome ?? '', /^completed/);
});

test.serial('maxMoves stops it; the first move is of the biggest object', async (t) => {
  const { store, bodies, bigPaths } = t.context;
  const before = await records(store.url, bodies.keys());
  for (const r of before) t.is(r.k + r.m, 6, `${r.path} is spread over the six first volumes`);
  const start = await api<Progress>(`${store.url}/$/rebalance`, 'POST', { deadband: 0, maxMoves: 1, concurrency: 2 });
  t.is(start.status, 202);
  t.true(start.body.running);
  t.is(start.body.maxMoves, 1);
  const done = await ended(store);
  t.is(done.lastOutcome, 'maxMoves');
  t.is(done.moves, 1);
  t.is(done.copied + done.reconstructed, 1);
  t.deepEqual(done.lastBatch, { size: 1, concurrency: 2 }, 'the batch is cut to the moves left');
  await settled(store.url);
  const moved = movedSlices(before, await records(store.url, bodies.keys()));
  t.is(moved.length, 1, JSON.stringify(moved));
  // Every one of the six first volumes holds a slice of every object: the first move takes one
  // of the biggest object (BIG is sorted biggest first), onto a new (empty) volume.
  t.is(moved[0]!.path, bigPaths[0]!);
  t.true(moved[0]!.to > 6, `the slice went to a new volume: ${JSON.stringify(moved[0])}`);
  checkKinds(t, moved, done);
  await assertAllExact(t, store.url, bodies);
  await assertDisksMatchRecords(t, store.url, store.stateDir, bodies.keys());
});

test.serial('DELETE cancels a running rebalance at any time: nothing lost, nothing left twice', async (t) => {
  const { store, bodies } = t.context;
  const before = await records(store.url, bodies.keys());
  // Cancelled at once (its first batch may be in flight).
  const first = await api<Progress>(`${store.url}/$/rebalance`, 'POST', { deadband: 0, concurrency: 1 });
  t.is(first.status, 202);
  const del0 = await api<Progress>(`${store.url}/$/rebalance`, 'DELETE');
  t.is(del0.status, 200);
  t.false(del0.body.running);
  t.is(del0.body.lastOutcome, 'cancelled');
  await settled(store.url);
  const early = await progress(store);
  t.true(early.moves <= 1, `at most the batch in flight completed (${early.moves})`);
  t.false(early.running);

  // Cancelled after it has moved.
  const start = await api<Progress>(`${store.url}/$/rebalance`, 'POST', { deadband: 0, concurrency: 1 });
  t.is(start.status, 202);
  t.is(start.body.moves, 0, 'a new job counts from zero');
  await waitFor('a first move', async () => {
    const p = await progress(store);
    return p.moves >= 1 || !p.running ? p : null;
  }, 30_000, 20);
  const del = await api<Progress>(`${store.url}/$/rebalance`, 'DELETE');
  t.is(del.status, 200);
  t.false(del.body.running);
  t.is(del.body.lastOutcome, 'cancelled', 'it was still running when cancelled');
  t.is(typeof del.body.finishedAt, 'string');
  // A move in flight finishes (move-then-flip), then nothing more moves.
  await settled(store.url);
  const a = await progress(store);
  await new Promise((r) => setTimeout(r, 1000));
  const b = await progress(store);
  t.is(b.moves, a.moves, 'no move after the cancel');
  t.false(b.running);
  t.true(a.moves <= del.body.moves + 1, `at most the move in flight completes (${del.body.moves} → ${a.moves})`);
  const moved = movedSlices(before, await records(store.url, bodies.keys()));
  t.is(moved.length, early.moves + b.moves);
  checkKinds(t, moved, { ...b, copied: early.copied + b.copied, reconstructed: early.reconstructed + b.reconstructed });
  await assertAllExact(t, store.url, bodies);
  await assertDisksMatchRecords(t, store.url, store.stateDir, bodies.keys());
});

test.serial('a full rebalance: retuned by PUT, parity never copied, fills end closer to the target', async (t) => {
  const { store, bodies } = t.context;
  await settled(store.url);
  const before = await records(store.url, bodies.keys());
  const fillsBefore = await fills(store);
  const spreadBefore = spread(fillsBefore);

  const start = await api<Progress>(`${store.url}/$/rebalance`, 'POST', { deadband: 0, concurrency: 2 });
  t.is(start.status, 202);
  assertShape(t, start.body, 'POST reply');
  t.true(start.body.running);
  t.is(start.body.concurrency, 2);
  t.is(start.body.deadband, 0);
  t.is(start.body.maxMoves, null);
  t.true(start.body.bytesToMove > 0, 'there is something to move');
  t.true(Math.abs(Date.parse(start.body.startedAt!) - Date.now()) < 10_000, 'startedAt is now');

  // Retune at once: the batch in flight keeps its concurrency, the next ones take the new one.
  const tune = await api<Progress>(`${store.url}/$/rebalance`, 'PUT', { concurrency: 4 });
  t.is(tune.status, 200);
  t.is(tune.body.concurrency, 4);
  const again = await api<ErrorBody>(`${store.url}/$/rebalance`, 'POST', { deadband: 0 });
  t.is(again.status, 409, 'POST while running');
  for (const body of [{ concurrency: 65 }, { concurrency: 0 }, { speed: 2 }]) {
    t.is((await api(`${store.url}/$/rebalance`, 'PUT', body)).status, 400, `PUT ${JSON.stringify(body)} while running`);
  }

  // Sample the progress until it ends.
  const samples: Progress[] = [];
  for (;;) {
    const p = await progress(store);
    samples.push(p);
    if (!p.running) break;
    if (samples.length > 2000) throw new Error('the rebalance did not end');
    await new Promise((r) => setTimeout(r, 30));
  }
  const done = samples.at(-1)!;
  const runningSamples = samples.filter((p) => p.running);
  t.true(runningSamples.length >= 1);
  for (const p of runningSamples.slice(0, 3)) assertShape(t, p, 'GET while running');
  t.is(done.lastOutcome, 'completed');
  t.is(done.concurrency, 4);
  t.truthy(done.lastBatch, 'a batch ran');
  t.is(done.lastBatch!.concurrency, 4, 'the batches after the PUT run with the new concurrency');
  const wide = samples.filter((p) => p.lastBatch && p.lastBatch.size > 2);
  t.true(wide.length >= 1 && wide.every((p) => p.lastBatch!.concurrency === 4), 'a batch after the PUT was wider than the old concurrency of 2');
  t.true(samples.every((p) => !p.lastBatch || p.lastBatch.size <= p.lastBatch.concurrency), 'no batch is wider than its concurrency');

  // The sources were the volumes above the target (measured on the disks before the start).
  const firstPlanned = samples.find((p) => p.sourceVolumeIds.length > 0);
  t.truthy(firstPlanned);
  for (const id of firstPlanned!.sourceVolumeIds) {
    t.true(fillsBefore.get(id)! > spreadBefore.target, `source ${id} was above the target fill (${fillsBefore.get(id)} > ${spreadBefore.target})`);
  }
  t.true(runningSamples.some((p) => p.currentSourceVolumeId !== null && p.sourceVolumeIds.includes(p.currentSourceVolumeId)), 'the current source is one of the sources');
  t.true(done.moves >= 3, `it moved slices (${done.moves})`);
  t.true(done.bytesMoved > 0);
  t.true(done.bytesToMove < start.body.bytesToMove, `bytesToMove fell (${start.body.bytesToMove} → ${done.bytesToMove})`);
  t.is(done.unrecoverable + done.duplicateRefs + done.sourceDeleteFailed, 0);

  await settled(store.url);
  // What moved, from the records: data slices (index < k) copied, parity slices reconstructed.
  const moved = movedSlices(before, await records(store.url, bodies.keys()));
  t.is(moved.length, done.moves, 'each move moved one slice once');
  checkKinds(t, moved, done);
  // Over this file's jobs both kinds moved, so the check above was not vacuous.
  t.true(t.context.kinds.data >= 1 && t.context.kinds.parity >= 1, `data and parity slices moved: ${JSON.stringify(t.context.kinds)}`);
  // Slices left volumes that were above the target at the start; the empty volumes (below it)
  // took most of them. (A source shed below the target can take slices from another source.)
  for (const m of moved) t.true(fillsBefore.get(m.from)! > spreadBefore.target, `moved from a volume above target: ${JSON.stringify(m)}`);
  const ontoEmpty = moved.filter((m) => fillsBefore.get(m.to)! < spreadBefore.target).length;
  t.true(ontoEmpty > moved.length / 2, `most slices went to the volumes below the target (${ontoEmpty} of ${moved.length})`);
  const spreadAfter = spread(await fills(store));
  t.true(spreadAfter.worst < spreadBefore.worst, `fills closer to the target (worst distance ${spreadBefore.worst.toFixed(4)} → ${spreadAfter.worst.toFixed(4)})`);
  await assertAllExact(t, store.url, bodies);
  await assertDisksMatchRecords(t, store.url, store.stateDir, bodies.keys());
});
