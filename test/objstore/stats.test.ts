/** GET /$/storage-stats and GET /$/buckets/stats on real loop devices: counts from a scan, kept as a snapshot. */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startStore } from './harness.js';

test('storage and bucket statistics count objects, bytes and slices; the snapshot is reused', async (t) => {
  const store = await startStore(t, { volumes: 6, sizeMiB: 320 });
  const sizes: Array<[string, number]> = [
    ['/alpha/one', 1],
    ['/alpha/two', 300_000],
    ['/beta/x/three', 70_001],
  ];
  for (const [path, size] of sizes) t.is((await fetch(store.url + path, { method: 'PUT', body: randomBytes(size) })).status, 201);
  const stats = (await (await fetch(`${store.url}/$/storage-stats`)).json()) as Record<string, any>;
  t.is(stats.objects, 3);
  t.is(stats.logicalBytes, 1 + 300_000 + 70_001);
  t.true(stats.snapshot.fullScanNow, 'no snapshot yet: a full scan now');
  const volumes = stats.volumes as Array<{ volumeId: number; dataSlices: number; paritySlices: number; sliceBytes: number }>;
  t.is(volumes.length, 6);
  t.is(volumes.reduce((n, v) => n + v.dataSlices, 0), 1 + 2 * 4, 'two objects of 4 data slices (6 volumes: 4+2), the 1-byte one of 1 (1+2)');
  t.is(volumes.reduce((n, v) => n + v.paritySlices, 0), 3 * 2);
  t.is(volumes.reduce((n, v) => n + v.sliceBytes, 0), stats.storedBytes);
  t.true(stats.storedBytes >= stats.logicalBytes * 1.5, 'parity adds half again with 4+2');
  // Cross-check one object's slices against fileinfo: every volume it names counts it.
  const info = (await (await fetch(`${store.url}/$/fileinfo/alpha/two`)).json()) as { slices: Array<{ volumeId: number }> };
  for (const s of info.slices) t.true(volumes.find((v) => v.volumeId === s.volumeId)!.dataSlices + volumes.find((v) => v.volumeId === s.volumeId)!.paritySlices >= 1);

  t.is((await fetch(`${store.url}/gamma/four`, { method: 'PUT', body: randomBytes(10) })).status, 201);
  const again = (await (await fetch(`${store.url}/$/storage-stats`)).json()) as Record<string, any>;
  t.false(again.snapshot.fullScanNow, 'a recent snapshot is served as it is');
  t.is(again.objects, 3, 'and says what it counted when it was taken');
  t.is(again.snapshot.takenAt, stats.snapshot.takenAt);

  const buckets = (await (await fetch(`${store.url}/$/buckets/stats`)).json()) as Record<string, any>;
  t.deepEqual(buckets.buckets, [
    { name: 'alpha', objects: 2, logicalBytes: 300_001 },
    { name: 'beta', objects: 1, logicalBytes: 70_001 },
    { name: 'gamma', objects: 1, logicalBytes: 10 },
  ]);
  t.true(buckets.snapshot.fullScanNow);
});
