/**
 * Issue 21 item 1, the rule under the GET/DELETE race: a volume's fault count is the distinct
 * faulty slices of live objects. A fault for an object that no longer exists, or for a slice no
 * longer on that volume, is not recorded; deleting an object takes its faults off their volumes'
 * counts; reaching the threshold is logged at warn with its reason. On the real metadata (LMDB).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { Metadata, type VolumeRecord } from '../../actors/objstore/metadata.js';

function volume(id: number): VolumeRecord {
  return { id, label: `v${id}`, comment: '', isEnabled: true, isReadOnly: false, isHealthy: true, isDraining: false, isDeleted: false, encrypted: false, lastDevice: `/dev/loop${id}`, serial: null, model: null, createdAt: 1, wipe: 1, faults: 0 };
}

function object(id: string): ObjectRecord {
  return { id, path: `/b/${id}`, size: 100, mime: 'application/octet-stream', md5: 'x', k: 4, m: 2, chunkSize: 262144, dataVolumes: [1, 2, 3, 4], parityVolumes: [5, 6], createdAt: 1 };
}

test('faults count distinct faulty slices of live objects only; the volume turning unhealthy is logged at warn', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-faults-'));
  const root = openEnvironment(dir);
  t.teardown(async () => {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const warned: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const meta = new Metadata(root, { healthFaultThreshold: 2, log: { warn: (obj, msg) => warned.push({ obj: obj as Record<string, unknown>, msg }) } });
  for (let v = 1; v <= 6; v++) await meta.volumes.put(v, volume(v));
  const fault = (objectId: string, sliceIndex: number, volumeId: number) => meta.recordFault({ objectId, sliceIndex, volumeId, code: 'MISSING', message: 'ENOENT' });

  // No such object (deleted before the read's fault was recorded): nothing recorded.
  t.is(await fault('gone', 0, 1), null);
  // A slice that is not on that volume (moved): nothing recorded.
  await meta.commitObject(object('a'));
  t.is(await fault('a', 0, 2), null);
  t.is(meta.volumes.get(1)!.faults, 0);
  t.is(meta.volumes.get(2)!.faults, 0);
  t.deepEqual([...meta.faults.getKeys()], []);

  // A real fault counts once per distinct slice.
  t.is(await fault('a', 0, 1), 'a/0');
  t.is(await fault('a', 0, 1), 'a/0');
  t.like(meta.volumes.get(1), { faults: 1, isHealthy: true });
  // Deleting the object takes its fault off the volume's count.
  t.true(await meta.removeObject(object('a')));
  t.like(meta.volumes.get(1), { faults: 0, isHealthy: true });
  t.deepEqual([...meta.faults.getKeys()], []);
  t.deepEqual(warned, []);

  // Two live objects with a bad slice on volume 1 reach the threshold: unhealthy, read-only, warned.
  await meta.commitObject(object('b'));
  await meta.commitObject(object('c'));
  await fault('b', 0, 1);
  await fault('c', 0, 1);
  t.like(meta.volumes.get(1), { faults: 2, isHealthy: false, isReadOnly: true });
  t.is(warned.length, 1);
  t.like(warned[0]!.obj, { volumeId: 1, faults: 2, threshold: 2 });
  t.regex(warned[0]!.msg, /volume 1 is now unhealthy and read-only: 2 distinct faulty slices/);

  // A fault left by an object gone before this rule: dropped at boot, off its volume's count.
  await meta.faults.put('old/3', { objectId: 'old', sliceIndex: 3, volumeId: 4, code: 'MISSING', message: 'ENOENT', firstSeenAt: 1, lastSeenAt: 1, count: 1, repairStatus: 'pending', repairBlockedReason: null });
  await meta.volumes.put(4, { ...volume(4), faults: 1 });
  t.is(await meta.dropStaleFaults(), 1);
  t.is(meta.volumes.get(4)!.faults, 0);
  t.deepEqual([...meta.faults.getKeys()].sort(), ['b/0', 'c/0']);
});
