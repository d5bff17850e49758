/**
 * The SMART summary of the volume list (actors/objstore/smart-cache.ts): a loop device is said
 * plainly without running smartctl; a real disk of this machine (virtio: smartctl cannot read it)
 * is read in the background and its reason kept with the time it was read; the summary of a
 * drive's data keeps the figures that tell a failing disk (reallocated and pending sectors, media
 * errors), and a pending-sector count that rises (the `pending` signal). The volume list itself answers it for loop volumes (test/objstore/hotplug.test.ts).
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { pendingRise, SmartCache, summarize, type SmartSummary } from '../../actors/objstore/smart-cache.js';

test('a loop device: no SMART data, said plainly; an absent disk too', (t) => {
  const c = new SmartCache();
  t.deepEqual(c.summary('/dev/loop7'), { available: false, reason: '/dev/loop7 is a loop device (a file-backed virtual disk): it has no SMART data', updatedAt: null });
  t.like(c.summary(null), { available: false, reason: 'the disk is not present' });
  t.regex((c.summary('/dev/sdz') as { reason: string }).reason, /not read yet/);
});

test('a real disk is read in the background: what smartctl says, and when', async (t) => {
  const disk = ['/dev/vda', '/dev/sda', '/dev/nvme0n1'].find((d) => existsSync(d));
  if (!disk) return t.pass('no non-loop disk on this machine');
  const c = new SmartCache();
  const before = Date.now();
  await c.refresh([disk, '/dev/loop1']);
  const s = c.summary(disk);
  t.truthy(s.updatedAt);
  t.true(Date.parse(s.updatedAt!) >= before - 1000);
  if (!s.available) t.true(s.reason.length > 0, 'smartctl says why');
  await c.refresh([]);
  t.regex((c.summary(disk) as { reason: string }).reason, /not read yet/, 'a disk gone is dropped from the cache');
});

test('summarize: the figures of a failing drive, and an NVMe drive', (t) => {
  const at = Date.UTC(2026, 10, 26);
  const ata = summarize(
    {
      available: true,
      passed: false,
      model: 'WDC WD40EFRX',
      serial: 'WD-1',
      temperatureC: 41,
      powerOnHours: 40_000,
      attributes: [
        { id: 5, name: 'Reallocated_Sector_Ct', value: 150, worst: 150, thresh: 140, raw: 392 },
        { id: 197, name: 'Current_Pending_Sector', value: 200, worst: 200, thresh: 0, raw: 12 },
      ],
      nvmeHealth: null,
      messages: [],
    },
    at,
  );
  t.deepEqual(ata, { available: true, passed: false, temperatureC: 41, powerOnHours: 40_000, reallocatedSectors: 392, pendingSectors: 12, mediaErrors: null, updatedAt: '2026-11-26T00:00:00.000Z' });
  const nvme = summarize({ available: true, passed: true, model: 'x', serial: 'y', temperatureC: 35, powerOnHours: 10, attributes: [], nvmeHealth: { media_errors: 3 }, messages: [] }, at);
  t.like(nvme, { reallocatedSectors: null, pendingSectors: null, mediaErrors: 3 });
  t.deepEqual(summarize({ available: false, reason: 'no' }, at), { available: false, reason: 'no', updatedAt: '2026-11-26T00:00:00.000Z' });
});

test('pendingRise: only a count above the highest seen before; the first reading sets the mark', (t) => {
  const at = (n: number | null): SmartSummary => ({ available: true, passed: true, temperatureC: null, powerOnHours: null, reallocatedSectors: 0, pendingSectors: n, mediaErrors: null, updatedAt: '' });
  t.is(pendingRise(undefined, at(8)), null, 'first reading');
  t.is(pendingRise(8, at(8)), null, 'the same count again');
  t.is(pendingRise(8, at(3)), null, 'fewer (reallocated)');
  t.deepEqual(pendingRise(8, at(9)), { from: 8, to: 9 });
  t.deepEqual(pendingRise(0, at(1)), { from: 0, to: 1 });
  t.is(pendingRise(0, at(null)), null, 'a drive without the attribute');
  t.is(pendingRise(0, { available: false, reason: 'x', updatedAt: null }), null);
});
