/**
 * Finding volumes again by the identity on the disk, not by kernel name. Each test looks at its
 * own devices only (`devices`), so that tests running at once do not take each other's disks.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { discoverVolumes, provisionDisk, unmountVolume, type SkippedDisk } from '../../actors/volume/disks.js';
import { mountRoot, mountsOf, reattachElsewhere, sh, withLoopDevices } from '../helpers/loop.js';

const SIZE_MIB = 320;

test('a provisioned disk is found by its identity after an unmount, and an existing mount is reused', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  const instanceId = randomUUID();
  const createdAt = Date.now();
  const { mountPoint } = await provisionDisk({ blockPath: dev!, volumeId: 17, instanceId, mountRoot: root, createdAt });
  writeFileSync(join(mountPoint, 'objstore/slices/marker'), 'here');
  await unmountVolume(mountPoint);
  t.deepEqual(mountsOf(dev!), []);

  const found = await discoverVolumes({ mountRoot: root, instanceId, devices: [dev!] });
  t.deepEqual(found, [{ volumeId: 17, device: dev!, mountPoint: join(root, 'vol-17'), identity: { instanceId, volumeId: 17, createdAt } }]);
  t.deepEqual(mountsOf(dev!), [join(root, 'vol-17')]);
  t.deepEqual(readdirSync(join(root, 'vol-17/objstore/slices')), ['marker'], 'the same file system, data intact');
  t.deepEqual(readdirSync(root), ['vol-17'], 'no probe directory left behind');

  const again = await discoverVolumes({ mountRoot: root, instanceId, devices: [dev!] });
  t.deepEqual(again, found);
  t.deepEqual(mountsOf(dev!), [join(root, 'vol-17')], 'mounted once, not twice');
});

test('a disk that comes back under another loop name keeps its volume id', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  const instanceId = randomUUID();
  const { mountPoint } = await provisionDisk({ blockPath: dev!, volumeId: 23, instanceId, mountRoot: root, createdAt: Date.now() });
  await unmountVolume(mountPoint);
  const moved = await reattachElsewhere(dev!);
  t.not(moved, dev, `reattached as ${moved}`);

  const found = await discoverVolumes({ mountRoot: root, instanceId, devices: [moved] });
  t.is(found.length, 1);
  t.like(found[0], { volumeId: 23, device: moved, mountPoint: join(root, 'vol-23') });
  t.deepEqual(mountsOf(moved), [join(root, 'vol-23')]);
});

test("another instance's disk, and a disk without identity, are reported and left unmounted", async (t) => {
  const root = mountRoot(t);
  const [foreign, blank] = await withLoopDevices(t, 2, SIZE_MIB);
  const other = randomUUID();
  const { mountPoint } = await provisionDisk({ blockPath: foreign!, volumeId: 5, instanceId: other, mountRoot: root, createdAt: Date.now() });
  await unmountVolume(mountPoint);
  await sh('mkfs.xfs', ['-q', '-L', 'objstore', blank!]); // labelled, but provisioning never wrote its identity

  const skipped: SkippedDisk[] = [];
  const found = await discoverVolumes({ mountRoot: root, instanceId: randomUUID(), devices: [foreign!, blank!], onSkip: (s) => skipped.push(s) });
  t.deepEqual(found, []);
  const byDevice = new Map(skipped.map((s) => [s.device, s]));
  t.is(byDevice.get(foreign!)?.reason, 'other-instance');
  t.is(byDevice.get(foreign!)?.identity?.instanceId, other);
  t.regex(byDevice.get(foreign!)!.message, /belongs to another hostd instance/);
  t.is(byDevice.get(blank!)?.reason, 'no-identity');
  t.deepEqual(mountsOf(foreign!), []);
  t.deepEqual(mountsOf(blank!), []);
  t.deepEqual(readdirSync(root), [], 'no probe or volume directory left behind');
});

test('two disks claiming one volume id (a cloned disk): the first is taken, the second reported', async (t) => {
  const root = mountRoot(t);
  const [a, b] = await withLoopDevices(t, 2, SIZE_MIB);
  const instanceId = randomUUID();
  const createdAt = Date.now();
  for (const [dev, sub] of [[a!, 'x'], [b!, 'y']] as const) {
    const { mountPoint } = await provisionDisk({ blockPath: dev, volumeId: 31, instanceId, mountRoot: join(root, sub), createdAt });
    await unmountVolume(mountPoint);
  }
  const skipped: SkippedDisk[] = [];
  const found = await discoverVolumes({ mountRoot: root, instanceId, devices: [a!, b!], onSkip: (s) => skipped.push(s) });
  t.is(found.length, 1);
  t.is(found[0]!.volumeId, 31);
  t.is(skipped.length, 1);
  t.is(skipped[0]!.reason, 'duplicate-id');
  t.not(skipped[0]!.device, found[0]!.device);
  t.deepEqual(mountsOf(skipped[0]!.device), []);
});
