/**
 * Slices moved after the latest snapshot, then the record database lost, on real loop devices:
 * objects on six volumes, a snapshot, a seventh volume provisioned, volume 2 drained (its slices
 * move to volume 7, the snapshot object's among them). The scheduler's record changes (each move's
 * flip, the volume's isDraining) go through the store's journal, so `hostd restore` brings every
 * object back whole — no slice named on the drained volume, a full verify clean — and volume 2
 * still draining. The snapshot object's slices are then moved by hand to other volumes (its pointer
 * names where they were): restore finds them by id on any volume and reads the snapshot.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import test from 'ava';
import { SlicePaths } from '../../actors/volume/slice-paths.js';
import { keptStateDir, startStore } from './harness.js';
import { withLoopDevices } from '../helpers/loop.js';
import { api, records, settled, waitFor, type ObjectRecordView } from './maint.js';
import { assertObjects, dropDatabase, hostd, putOne, type Stored } from './restore-helpers.js';

const volumesOf = (r: Pick<ObjectRecordView, 'dataVolumes' | 'parityVolumes'>) => [...r.dataVolumes, ...r.parityVolumes];

test('slices drained after the snapshot: restore brings the objects back whole from the journalled moves, and finds moved snapshot slices by id', async (t) => {
  const stateDir = keptStateDir(t);
  const devices = await withLoopDevices(t, 7, 512);
  const store = await startStore(t, { stateDir, devices: devices.slice(0, 6) });
  const base = store.url;
  const objects = new Map<string, Stored>();
  const sizes = [100, 5000, 70_000, 300_000, 1_000_003, 2 * 1024 * 1024 + 5];
  for (let i = 0; i < 12; i++) objects.set(`/mv/o${i}`, await putOne(base, `/mv/o${i}`, randomBytes(sizes[i % sizes.length]!), i % 2 ? 'text/plain' : 'image/png'));
  const taken = await api<{ snapshot: { id: string; status: string; objectId: string } }>(`${base}/$/snapshots?wait=true`, 'POST');
  t.is(taken.status, 201, JSON.stringify(taken.body));
  t.is(taken.body.snapshot.status, 'good');
  const snapId = taken.body.snapshot.objectId;

  // After the snapshot: a seventh volume, and volume 2 drained onto it.
  t.is((await store.provision(devices[6]!)).status, 201);
  const before = await records(base, objects.keys());
  const onTwo = before.filter((r) => volumesOf(r).includes(2)).map((r) => r.path);
  t.true(onTwo.length >= 6, `objects with a slice on volume 2: ${onTwo.length}`);
  t.is((await api(`${base}/$/volumes/2/drain`, 'POST')).status, 202);
  await waitFor('the drain of volume 2 to complete', async () => {
    const r = await api<{ drain: { state: string } }>(`${base}/$/volumes/2/drain`);
    return r.body.drain.state === 'completed';
  }, 120_000);
  await settled(base);
  const moved = await records(base, objects.keys());
  for (const r of moved) t.false(volumesOf(r).includes(2), `${r.path} left volume 2`);
  const snapRec = (await api<{ object: ObjectRecordView }>(`${base}/$/fileinfo/${snapId}`)).body.object;
  t.false(volumesOf(snapRec).includes(2), 'the snapshot object moved off volume 2 too');

  await store.system.shutdown();
  dropDatabase(stateDir);

  // Every slice of the snapshot object moved by hand to another volume: the pointer names none
  // of them where they are (more than its parity covers).
  const mount = (v: number) => join(stateDir, 'mnt', `vol-${v}`);
  const vols = volumesOf(snapRec);
  vols.forEach((from, index) => {
    const to = [1, 3, 4, 5, 6, 7].find((v) => v !== from && !vols.includes(v)) ?? vols[(index + 1) % vols.length]!;
    const src = new SlicePaths(mount(from)).final(snapId, index);
    const dst = new SlicePaths(mount(to)).final(snapId, index);
    t.true(existsSync(src), src);
    mkdirSync(dirname(dst), { recursive: true });
    copyFileSync(src, dst);
    unlinkSync(src);
  });

  const run = await hostd(['restore', '--state-dir', stateDir]);
  t.is(run.code, 0, run.stderr);
  t.log(run.stdout);
  t.regex(run.stdout, new RegExp(`snapshot: ${taken.body.snapshot.id} taken`), 'the snapshot read, its slices found elsewhere');
  const applied = /(\d+) slice moves/.exec(run.stdout);
  t.truthy(applied, 'the report counts the replayed moves');
  t.true(Number(applied![1]) >= onTwo.length, `every move replayed (${applied![1]} of at least ${onTwo.length})`);

  const again = await startStore(t, { stateDir, devices, provision: false });
  await assertObjects(t, again.url, objects);
  for (const r of await records(again.url, objects.keys())) {
    t.false(volumesOf(r).includes(2), `${r.path}: restored where its slices are`);
    const v = await api<{ clean: boolean }>(`${again.url}/$/verify-file/${r.id}`, 'POST', { mode: 'full' });
    t.true(v.body.clean, `${r.path} whole: ${JSON.stringify(v.body)}`);
  }
  const v2 = await api<{ volume: { isDraining: boolean; isReadOnly: boolean } }>(`${again.url}/$/volumes/2`);
  t.true(v2.body.volume.isDraining, 'volume 2 is still draining, as journalled');
  t.true(v2.body.volume.isReadOnly);
});
