/**
 * Draining a volume on real loop devices: objects written over six volumes (4+2), a seventh
 * disk added, then one of the six drained. Every slice leaves it (copied when the disk reads,
 * rebuilt from the others when the disk fails for real with EIO), the records flip, the old
 * slices are deleted, every object reads back byte-exact, the slice files on the disks are
 * exactly what the records name, and the volume can then be deleted (not before).
 */
import anyTest, { type TestFn } from 'ava';
import { startFaultyDisk, type FaultyDisk } from '../helpers/faulty-disk.js';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';
import { api, assertAllExact, assertDisksMatchRecords, putObjects, records, settled, waitFor } from './maint.js';

const test = anyTest as TestFn<{ store: Store; faulty: FaultyDisk; spare: string[]; bodies: Map<string, Buffer> }>;
const scope = new FileScope();

interface Drain {
  volumeId: number;
  state: string;
  moved: number;
  copied: number;
  reconstructed: number;
  remaining: number;
  stuck: unknown[];
}

test.before(async (t) => {
  const good = await withLoopDevices(scope, 7, 512);
  const faulty = await startFaultyDisk(scope, 512);
  // Volumes 1..6 (the faulty disk is volume 1); two spare disks are provisioned later.
  const store = await startStore(scope, { devices: [faulty.device, ...good.slice(0, 5)], scheduler: { drainConcurrency: 2 } });
  const bodies = await putObjects(store.url, 'dr', [1, 4096, 100_000, 1024 * 1024 + 3, 3 * 1024 * 1024 + 77, 5000, 250_000, 0, 777_777, 2 * 1024 * 1024]);
  t.context = { store, faulty, spare: good.slice(5), bodies };
});
test.after.always(() => scope.run());

async function drainTo(store: Store, volumeId: number, state: string): Promise<Drain> {
  return waitFor(`drain of ${volumeId} to be ${state}`, async () => {
    const r = await api<{ drain: Drain }>(`${store.url}/$/volumes/${volumeId}/drain`);
    return r.status === 200 && r.body.drain.state === state ? r.body.drain : null;
  }, 120_000);
}

test.serial('bad drain requests are refused with the field named; nothing starts', async (t) => {
  const { store } = t.context;
  const r1 = await api(`${store.url}/$/volumes/99/drain`, 'POST');
  t.is(r1.status, 404);
  const r2 = await api(`${store.url}/$/volumes/abc/drain`, 'POST');
  t.is(r2.status, 400);
  const r3 = await api<{ error: { code: string; message: string } }>(`${store.url}/$/volumes/2/drain`, 'POST', { fast: true });
  t.is(r3.status, 400);
  t.regex(r3.body.error.message, /fast/);
  const r4 = await api(`${store.url}/$/volumes/2/drain`, 'DELETE');
  t.is(r4.status, 409, 'cancelling a drain that never started');
  const v = await api<{ volume: { isDraining: boolean; isReadOnly: boolean } }>(`${store.url}/$/volumes/2`);
  t.false(v.body.volume.isDraining);
  t.false(v.body.volume.isReadOnly);
});

test.serial('a live disk drains onto a new disk: slices copied, records flipped, old slices gone, bytes exact', async (t) => {
  const { store, bodies } = t.context;
  t.is((await store.provision(t.context.spare[0]!)).status, 201);
  const before = await records(store.url, bodies.keys());
  const on2 = before.filter((r) => [...r.dataVolumes, ...r.parityVolumes].includes(2)).length;
  // Usually all ten (4+2 over six volumes); one CI run under heavy load saw eight (placement
  // then left volume 2 out of two PUTs). The drain below moves exactly the ones there.
  t.true(on2 >= 6, `most objects have a slice on volume 2 (${on2})`);

  const del = await api<{ error: { message: string } }>(`${store.url}/$/volumes/2`, 'DELETE');
  t.is(del.status, 409);
  t.regex(del.body.error.message, /^volume 2 still holds \d+ live object slice\(s\); drain it first: POST \/\$\/volumes\/2\/drain$/);

  const start = await api<{ drain: Drain }>(`${store.url}/$/volumes/2/drain`, 'POST');
  t.is(start.status, 202);
  t.is(start.body.drain.state, 'running');
  const v = await api<{ volume: { isDraining: boolean; isReadOnly: boolean } }>(`${store.url}/$/volumes/2`);
  t.true(v.body.volume.isDraining);
  t.true(v.body.volume.isReadOnly);

  const done = await drainTo(store, 2, 'completed');
  t.is(done.remaining, 0);
  t.is(done.moved, on2);
  t.is(done.copied + done.reconstructed, done.moved);
  t.true(done.copied >= 1, 'data slices are copied from a readable disk');
  await settled(store.url);
  const after = await records(store.url, bodies.keys());
  for (const r of after) {
    const vols = [...r.dataVolumes, ...r.parityVolumes];
    t.false(vols.includes(2), `${r.path} has no slice on volume 2`);
    t.is(new Set(vols).size, vols.length, `${r.path}: one slice per volume`);
  }
  await assertAllExact(t, store.url, bodies);
  await assertDisksMatchRecords(t, store.url, store.stateDir, bodies.keys());
  const metrics = await store.system.metrics();
  const copied = /^objstore_relocations_total\{by="drain",how="copied"\} (\d+)$/m.exec(metrics);
  t.is(Number(copied?.[1]), done.copied, 'the relocation counter agrees with the drain');

  // PUTs go on during and after; new objects avoid the draining volume.
  const more = await putObjects(store.url, 'dr2', [12345]);
  const [rec] = await records(store.url, more.keys());
  t.false([...rec!.dataVolumes, ...rec!.parityVolumes].includes(2));
  for (const [k, b] of more) bodies.set(k, b);

  // Now the volume can be deleted; cancelling the drain afterwards keeps it read-only.
  const cancel = await api<{ drain: Drain }>(`${store.url}/$/volumes/2/drain`, 'DELETE');
  t.is(cancel.status, 200);
  const v2 = await api<{ volume: { isDraining: boolean; isReadOnly: boolean } }>(`${store.url}/$/volumes/2`);
  t.false(v2.body.volume.isDraining);
  t.true(v2.body.volume.isReadOnly);
  const gone = await api(`${store.url}/$/volumes/2`, 'DELETE');
  t.is(gone.status, 200);
  // The deleted volume's disk is retired (unmounted): it can be provisioned again, under a new id.
  const device = (await api<{ volume: { lastDevice: string } }>(`${store.url}/$/volumes/2`)).body.volume.lastDevice;
  const again = await api<{ volume: { id: number } }>(`${store.url}/$/volumes`, 'POST', { blockPath: device, wipe: Date.now() });
  t.is(again.status, 201, JSON.stringify(again.body));
  t.true(again.body.volume.id > 7, `a new id (${again.body.volume.id})`);
});

test.serial('a disk that fails for real (EIO) drains: its slices are rebuilt from the others', async (t) => {
  const { store, bodies, faulty } = t.context;
  t.is((await store.provision(t.context.spare[1]!)).status, 201);
  const before = await records(store.url, bodies.keys());
  const on1 = before.filter((r) => [...r.dataVolumes, ...r.parityVolumes].includes(1)).length;
  t.true(on1 >= 1);
  await faulty.failAll();
  const start = await api<{ drain: Drain }>(`${store.url}/$/volumes/1/drain`, 'POST');
  t.is(start.status, 202);
  const done = await drainTo(store, 1, 'completed');
  t.is(done.remaining, 0, JSON.stringify(done.stuck));
  t.is(done.moved, on1);
  t.is(done.reconstructed, on1, 'nothing can be copied from a dead disk');
  await waitFor('relocations to settle except the dead disk', async () => {
    const d = await api<{ scheduler: { moves: { copying: number } } }>(`${store.url}/$/debug`);
    return d.body.scheduler.moves.copying === 0;
  });
  const after = await records(store.url, bodies.keys());
  for (const r of after) t.false([...r.dataVolumes, ...r.parityVolumes].includes(1), `${r.path} has no slice on volume 1`);
  await assertAllExact(t, store.url, bodies);
  // The dead disk's old slices cannot be deleted: those moves wait for it (shown in debug) until
  // the volume is retired; the drained volume holds no live slice, so DELETE is allowed.
  const d = await api<{ scheduler: { moves: { flipped: number } } }>(`${store.url}/$/debug`);
  // (an unlink can still succeed on a dead disk: XFS may complete it in memory)
  const flipped = d.body.scheduler.moves.flipped;
  t.true(flipped >= 1 && flipped <= on1, `old slices of the dead disk wait: ${flipped} of ${on1}`);
  t.is((await api(`${store.url}/$/volumes/1`, 'DELETE')).status, 200);
  await settled(store.url);
  await faulty.heal();
  await assertDisksMatchRecords(t, store.url, store.stateDir, bodies.keys());
});
