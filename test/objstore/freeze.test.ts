/**
 * The maintenance freeze and the deferred verify, on real loop devices: objects over six volumes
 * (4+2), then empty disks added so that a rebalance has work. A freeze stops a running rebalance
 * at its next batch and refuses new work; it is persisted, so after a restart over the same
 * state and disks the rebalance is still running-but-paused and nothing moves; when it lifts,
 * a drain that waited with it completes before the rebalance moves anything, and the rebalance
 * then finishes. A verify asked for while a rebalance runs is deferred and runs once the
 * rebalance has ended. Every object reads back byte-exact and the disks match the records.
 */
import anyTest, { type TestFn } from 'ava';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, keptStateDir, startStore, type Store, type StoreOptions } from './harness.js';
import { api, assertAllExact, assertDisksMatchRecords, putObjects, records, settled, waitFor } from './maint.js';

interface Ctx {
  /** ava gives each test a shallow copy of the context: what a test changes lives in here */
  live: {
    store: Store;
    /** rebalance moves when the freeze had stopped it */
    frozenAt: number;
  };
  stateDir: string;
  devices: string[];
  spare: string[];
  bodies: Map<string, Buffer>;
}

const test = anyTest as TestFn<Ctx>;
const scope = new FileScope();
const MiB = 1024 * 1024;
// A slow drain (one object at a time), so that progress can be sampled while it runs.
const SCHEDULER: StoreOptions['scheduler'] = { drainConcurrency: 1 };

interface Rebalance {
  running: boolean;
  moves: number;
  pausedBy: string | null;
  lastOutcome: string | null;
  startedAt: string | null;
  finishedAt: string | null;
}

interface Drain {
  state: string;
  moved: number;
  remaining: number;
  finishedAt: string | null;
  pausedBy: string | null;
}

interface VerifyRun {
  id: string;
  status: string;
  requestedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  objectsChecked: number;
  errors: Record<string, number>;
}

test.before(async (t) => {
  const devices = await withLoopDevices(scope, 9, 512);
  // Our own state directory (the harness cleans only one it made): both stores run over it. It
  // is unmounted and removed after both stores have stopped, before the loop devices go.
  const stateDir = keptStateDir(scope, 'hostd-objstore-freeze-');
  const store = await startStore(scope, { devices: devices.slice(0, 6), stateDir, scheduler: SCHEDULER });
  const sizes = [6 * MiB, 5.5 * MiB, 5 * MiB, 4.5 * MiB, 4 * MiB, 3 * MiB, ...Array.from({ length: 20 }, (_, i) => 30_000 + i * 17_000)].map(Math.round);
  const bodies = await putObjects(store.url, 'fz', sizes);
  for (const d of devices.slice(6, 8)) {
    const r = await store.provision(d);
    if (r.status !== 201) throw new Error(`provisioning ${d}: ${r.status}`);
  }
  t.context = { live: { store, frozenAt: -1 }, stateDir, devices, spare: devices.slice(8), bodies };
});
test.after.always(() => scope.run());

async function rebalance(store: Store): Promise<Rebalance> {
  const r = await api<Rebalance>(`${store.url}/$/rebalance`);
  if (r.status !== 200) throw new Error(`GET /$/rebalance: ${r.status}`);
  return r.body;
}

async function freeze(store: Store, frozen: boolean): Promise<void> {
  const r = await api<{ frozen: boolean }>(`${store.url}/$/maintenance-freeze`, 'PUT', { frozen });
  if (r.status !== 200 || r.body.frozen !== frozen) throw new Error(`PUT /$/maintenance-freeze: ${r.status} ${JSON.stringify(r.body)}`);
}

/** No object is being worked on by a job (the batch in flight when the freeze came is done). */
async function idle(store: Store): Promise<void> {
  await waitFor('no object busy with a job', async () => {
    const d = await api<{ scheduler: { busyObjects: number } }>(`${store.url}/$/debug`);
    return d.status === 200 && d.body.scheduler.busyObjects === 0;
  }, 30_000, 50);
}

/** Sample `fn` every 200 ms for `ms`. */
async function sampleFor<T>(ms: number, fn: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    out.push(await fn());
    await new Promise((r) => setTimeout(r, 200));
  }
  return out;
}

const layout = async (store: Store, paths: Iterable<string>) => JSON.stringify((await records(store.url, paths)).map((r) => [r.id, r.dataVolumes, r.parityVolumes]));

test.serial('a freeze stops a running rebalance and refuses new work; bad freeze bodies are refused', async (t) => {
  const { store } = t.context.live;
  for (const body of [{ frozen: 'yes' }, {}, { frozen: true, all: true }]) {
    t.is((await api(`${store.url}/$/maintenance-freeze`, 'PUT', body)).status, 400, `PUT ${JSON.stringify(body)}`);
  }
  t.deepEqual((await api(`${store.url}/$/maintenance-freeze`)).body, { frozen: false });

  // Frozen with nothing running: a rebalance is refused, a verify not accepted.
  await freeze(store, true);
  const refused = await api<{ error: { code: string; message: string } }>(`${store.url}/$/rebalance`, 'POST', { deadband: 0 });
  t.is(refused.status, 409);
  t.regex(refused.body.error.message, /freeze/);
  t.false((await rebalance(store)).running);
  const v0 = await api<{ accepted: boolean }>(`${store.url}/$/verify-volumes`, 'POST', { mode: 'light' });
  t.is(v0.status, 200);
  t.false(v0.body.accepted);
  await freeze(store, false);

  const start = await api<Rebalance>(`${store.url}/$/rebalance`, 'POST', { deadband: 0, concurrency: 1 });
  t.is(start.status, 202);
  await waitFor('a first rebalance move', async () => {
    const p = await rebalance(store);
    return p.moves >= 1 || !p.running ? p : null;
  }, 30_000, 20);
  await freeze(store, true);
  t.deepEqual((await api(`${store.url}/$/maintenance-freeze`)).body, { frozen: true });
  await idle(store);
  const at = await rebalance(store);
  t.true(at.running, 'it was still running when the freeze came');
  t.is(at.pausedBy, 'freeze');
  t.true(at.moves >= 1);
  const samples = await sampleFor(2000, () => rebalance(store));
  for (const p of samples) {
    t.is(p.moves, at.moves, 'no move while frozen');
    t.true(p.running);
    t.is(p.pausedBy, 'freeze');
  }
  // While frozen: a second rebalance is refused; a verify is not accepted (200, accepted false).
  t.is((await api(`${store.url}/$/rebalance`, 'POST', { deadband: 0 })).status, 409);
  const v = await api<{ accepted: boolean; deferred?: boolean }>(`${store.url}/$/verify-volumes`, 'POST', {});
  t.is(v.status, 200);
  t.false(v.body.accepted);
  const vg = await api<{ running: boolean; run: unknown }>(`${store.url}/$/verify-volumes`);
  t.false(vg.body.running);
  t.is(vg.body.run, null, 'no run was queued');
  t.context.live.frozenAt = at.moves;
});

test.serial('the freeze survives a restart: the rebalance is still paused and nothing moves', async (t) => {
  const { stateDir, devices, bodies } = t.context;
  const { store } = t.context.live;
  t.true(t.context.live.frozenAt >= 1, 'the previous test froze a running rebalance');
  // (No settling first: the freeze holds the deletes of old slices too.)
  const before = await layout(store, bodies.keys());
  let at = Date.now();
  await store.system.shutdown();
  t.log(`shutdown: ${Date.now() - at} ms`);
  at = Date.now();
  const again = await startStore(scope, { stateDir, devices, provision: false, scheduler: SCHEDULER });
  t.log(`start: ${Date.now() - at} ms`);
  t.context.live.store = again;
  t.deepEqual((await api(`${again.url}/$/maintenance-freeze`)).body, { frozen: true });
  const vols = await api<{ volumes: Array<{ id: number; isMissing: boolean }> }>(`${again.url}/$/volumes`);
  t.is(vols.body.volumes.length, 8);
  t.true(vols.body.volumes.every((v) => !v.isMissing), 'every volume came back');
  const samples = await sampleFor(2000, () => rebalance(again));
  for (const p of samples) {
    t.true(p.running, 'still running (checkpointed)');
    t.is(p.pausedBy, 'freeze');
    t.is(p.moves, t.context.live.frozenAt, 'no move after the restart');
  }
  t.is(await layout(again, bodies.keys()), before, 'no slice moved');
  // Boot finished what the stop interrupted (old slices of flipped moves deleted).
  await settled(again.url);
  await assertAllExact(t, again.url, bodies);
  await assertDisksMatchRecords(t, again.url, stateDir, bodies.keys());
});

test.serial('unfreezing resumes drains first: the drain completes before the rebalance moves; then the rebalance finishes', async (t) => {
  const { stateDir, bodies } = t.context;
  const { store } = t.context.live;
  // A drain asked for while frozen waits too.
  const start = await api<{ drain: Drain }>(`${store.url}/$/volumes/1/drain`, 'POST');
  t.is(start.status, 202);
  t.is(start.body.drain.state, 'running');
  await new Promise((r) => setTimeout(r, 1000));
  const held = await api<{ drain: Drain }>(`${store.url}/$/volumes/1/drain`);
  t.is(held.body.drain.pausedBy, 'freeze');
  t.is(held.body.drain.moved, 0, 'the drain waits for the freeze');
  const m0 = (await rebalance(store)).moves;
  t.is(m0, t.context.live.frozenAt);

  await freeze(store, false);
  // Sample the rebalance, then the drain: while the drain still runs, the rebalance has not moved.
  const samples: Array<{ at: number; p: Rebalance; d: Drain }> = [];
  for (;;) {
    const at = Date.now();
    const p = await rebalance(store);
    const d = (await api<{ drain: Drain }>(`${store.url}/$/volumes/1/drain`)).body.drain;
    samples.push({ at, p, d });
    if (d.state !== 'running' && (p.moves > m0 || !p.running)) break;
    if (samples.length > 3000) throw new Error('neither the drain nor the rebalance progressed');
    await new Promise((r) => setTimeout(r, 25));
  }
  const whileDraining = samples.filter((s) => s.d.state === 'running');
  t.true(whileDraining.length >= 1, 'the drain was seen running after the freeze lifted');
  for (const s of whileDraining) {
    t.is(s.p.moves, m0, 'the rebalance does not move while the drain runs');
    t.is(s.p.pausedBy, 'drain');
  }
  t.true(whileDraining.some((s) => s.d.moved > 0), 'the drain moved slices meanwhile');
  const drained = samples.at(-1)!.d;
  t.is(drained.state, 'completed');
  t.is(drained.remaining, 0);
  const firstMove = samples.find((s) => s.p.moves > m0);
  t.truthy(firstMove, 'the rebalance moved again after the drain');
  t.true(Date.parse(drained.finishedAt!) <= firstMove!.at, `the drain finished (${drained.finishedAt}) before the rebalance's first move (seen at ${new Date(firstMove!.at).toISOString()})`);
  // The rest need not be slow.
  t.is((await api(`${store.url}/$/rebalance`, 'PUT', { concurrency: 4 })).status, 200);

  const done = await waitFor('the rebalance to finish', async () => {
    const p = await rebalance(store);
    return p.running ? null : p;
  }, 45_000, 100);
  t.is(done.lastOutcome, 'completed');
  t.true(done.moves > m0);
  await settled(store.url);
  for (const r of await records(store.url, bodies.keys())) t.false([...r.dataVolumes, ...r.parityVolumes].includes(1), `${r.path} left the drained volume`);
  await assertAllExact(t, store.url, bodies);
  await assertDisksMatchRecords(t, store.url, stateDir, bodies.keys());
});

test.serial('a verify asked for during a rebalance is deferred, then runs after it', async (t) => {
  const { stateDir, bodies } = t.context;
  const { store } = t.context.live;
  t.is((await store.provision(t.context.spare[0]!)).status, 201);
  const start = await api<Rebalance>(`${store.url}/$/rebalance`, 'POST', { deadband: 0, concurrency: 4 });
  t.is(start.status, 202);
  const v = await api<{ accepted: boolean; deferred?: boolean; startedAt: string }>(`${store.url}/$/verify-volumes`, 'POST', { mode: 'full' });
  t.is(v.status, 200);
  t.true(v.body.accepted);
  t.true(v.body.deferred);
  const during = await api<{ running: boolean; waitingOnRebalance: boolean; run: VerifyRun | null }>(`${store.url}/$/verify-volumes`);
  t.true(during.body.waitingOnRebalance);
  t.false(during.body.running);
  t.is(during.body.run?.startedAt, null, 'not started yet');
  t.true((await rebalance(store)).running, 'the rebalance was still running');
  // Asking again while it waits: the queued run covers it.
  const v2 = await api<{ accepted: boolean; deferred?: boolean }>(`${store.url}/$/verify-volumes`, 'POST', { mode: 'light' });
  t.true(v2.body.accepted);
  t.true(v2.body.deferred);

  const done = await waitFor('the rebalance to finish', async () => {
    const p = await rebalance(store);
    return p.running ? null : p;
  }, 45_000, 100);
  t.is(done.lastOutcome, 'completed');
  const run = await waitFor('the verify run to complete', async () => {
    const r = await api<{ runs: VerifyRun[] }>(`${store.url}/$/verify-runs`);
    const top = r.body.runs[0];
    return top && top.status === 'completed' ? top : null;
  }, 45_000, 100);
  const runs = (await api<{ runs: VerifyRun[] }>(`${store.url}/$/verify-runs`)).body.runs;
  t.is(runs.length, 1, 'one run (the second request was covered by it)');
  const ended = Date.parse(done.finishedAt!);
  t.true(Date.parse(run.requestedAt) < ended, 'requested while the rebalance ran');
  t.true(Date.parse(run.startedAt!) >= ended, `started (${run.startedAt}) after the rebalance ended (${done.finishedAt})`);
  t.true(Date.parse(run.finishedAt!) >= Date.parse(run.startedAt!));
  t.is(run.objectsChecked, bodies.size);
  t.true(Object.values(run.errors).every((n) => n === 0), JSON.stringify(run.errors));
  const after = await api<{ running: boolean; waitingOnRebalance: boolean }>(`${store.url}/$/verify-volumes`);
  t.false(after.body.waitingOnRebalance);
  t.false(after.body.running);
  await settled(store.url);
  await assertAllExact(t, store.url, bodies);
  await assertDisksMatchRecords(t, store.url, stateDir, bodies.keys());
});
