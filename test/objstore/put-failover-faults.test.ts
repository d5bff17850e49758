/**
 * The record of a PUT's failed slice write (Metadata.recordWriteFault), on the real metadata
 * (LMDB): it counts on the volume's `faults` (the health threshold), keeps the volume's write-fault
 * count and the last one, makes the volume unhealthy and read-only at the threshold (warned and
 * told once), and is not recorded for an unknown or deleted volume.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { Metadata, type VolumeRecord } from '../../actors/objstore/metadata.js';

function volume(id: number, over: Partial<VolumeRecord> = {}): VolumeRecord {
  return { id, label: `v${id}`, comment: '', isEnabled: true, isReadOnly: false, isHealthy: true, isDraining: false, isDeleted: false, encrypted: false, lastDevice: `/dev/loop${id}`, serial: null, model: null, createdAt: 1, wipe: 1, faults: 0, ...over };
}

test('a failed slice write counts toward the health threshold and keeps the last one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-writefaults-'));
  const root = openEnvironment(dir);
  t.teardown(async () => {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const warned: string[] = [];
  const told: number[] = [];
  const meta = new Metadata(root, { healthFaultThreshold: 3, log: { warn: (_obj, msg) => warned.push(msg) }, onUnhealthy: (v) => told.push(v.id) });
  await meta.volumes.put(1, volume(1, { faults: 1 }));
  await meta.volumes.put(2, volume(2, { isDeleted: true }));

  await meta.recordWriteFault(1, { objectId: '$a', sliceIndex: 2, code: 'EIO', message: 'volume 1: write failed' });
  const v1 = meta.volumes.get(1)!;
  t.like(v1, { faults: 2, isHealthy: true, isReadOnly: false });
  t.is(v1.writeFaults!.count, 1);
  t.like(v1.writeFaults!.last, { objectId: '$a', sliceIndex: 2, code: 'EIO', message: 'volume 1: write failed' });
  t.true(Math.abs(v1.writeFaults!.last.at - Date.now()) < 5000);
  t.deepEqual(warned, []);

  // The third fault reaches the threshold: unhealthy and read-only, warned and told once.
  await meta.recordWriteFault(1, { objectId: '$b', sliceIndex: 0, code: 'TIMEOUT', message: 'volume 1: no answer' });
  t.like(meta.volumes.get(1), { faults: 3, isHealthy: false, isReadOnly: true });
  t.is(meta.volumes.get(1)!.writeFaults!.count, 2);
  t.is(meta.volumes.get(1)!.writeFaults!.last.code, 'TIMEOUT');
  t.is(warned.length, 1);
  t.regex(warned[0]!, /^volume 1 is now unhealthy and read-only: 3 distinct faulty slices/);
  t.deepEqual(told, [1]);
  await meta.recordWriteFault(1, { objectId: '$c', sliceIndex: 1, code: 'EIO', message: 'again' });
  t.is(meta.volumes.get(1)!.faults, 4);
  t.is(warned.length, 1, 'told once, when it turned unhealthy');
  t.deepEqual(told, [1]);

  // A deleted volume (a tombstone) or an unknown one records nothing.
  await meta.recordWriteFault(2, { objectId: '$d', sliceIndex: 0, code: 'EIO', message: 'x' });
  t.like(meta.volumes.get(2), { faults: 0 });
  t.is(meta.volumes.get(2)!.writeFaults, undefined);
  await meta.recordWriteFault(99, { objectId: '$d', sliceIndex: 0, code: 'EIO', message: 'x' });
  t.is(meta.volumes.get(99), undefined);
});
