/**
 * Provisioning real disks (loop devices over sparse files): what a provisioned volume looks like,
 * and the refusals, which must come before anything on the device is destroyed.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DiskError, listBlockDevices, provisionDisk, readIdentity, smartInfo, unmountVolume, volumeCapacity, type BlockDevice } from '../../actors/volume/disks.js';
import { attachLoop, backingFileOf, detachLoop, loopDir, mountRoot, mountsOf, sh, withLoopDevices } from '../helpers/loop.js';

const SIZE_MIB = 320;

async function probe(dev: string): Promise<Record<string, string>> {
  const out = await sh('blkid', ['-p', '-o', 'export', dev]).catch(() => '');
  return Object.fromEntries(out.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

function mountOptions(mp: string): string[] {
  const line = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => l.split(' ')[4] === mp);
  return line ? line.split(' ')[5]!.split(',') : [];
}

test('a provisioned loop device is XFS labelled objstore, mounted noatime at vol-<id>, with its identity and slices dir', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  const instanceId = randomUUID();
  const createdAt = Date.now();
  const r = await provisionDisk({ blockPath: dev!, volumeId: 42, instanceId, mountRoot: root, createdAt });
  t.deepEqual(r, { mountPoint: join(root, 'vol-42'), device: dev! });

  const sig = await probe(dev!);
  t.is(sig.TYPE, 'xfs');
  t.is(sig.LABEL, 'objstore');
  t.is(sig.PTTYPE, undefined, 'no partition table: the whole device is the file system');
  t.deepEqual(mountsOf(dev!), [r.mountPoint]);
  t.true(mountOptions(r.mountPoint).includes('noatime'));
  t.deepEqual(await readIdentity(r.mountPoint), { instanceId, volumeId: 42, createdAt });
  t.is(readFileSync(join(r.mountPoint, 'objstore/.identity')).readUInt32BE(0x25), 42, 'the volume id at byte 0x25, as the spec has it');
  t.true(statSync(join(r.mountPoint, 'objstore/slices')).isDirectory());

  const cap = await volumeCapacity(r.mountPoint);
  t.true(cap.bytesTotal > 250 * 2 ** 20 && cap.bytesTotal <= SIZE_MIB * 2 ** 20, `bytesTotal ${cap.bytesTotal}`);
  t.true(cap.bytesFree > 0 && cap.bytesFree <= cap.bytesTotal);

  const listed = (await listBlockDevices()).find((d: BlockDevice) => d.path === dev);
  t.truthy(listed, 'listBlockDevices lists the loop device');
  t.like(listed, { type: 'loop', fstype: 'xfs', label: 'objstore', size: SIZE_MIB * 2 ** 20, mountpoints: [r.mountPoint] });

  const smart = await smartInfo(dev!);
  t.false(smart.available);
  t.regex((smart as { reason: string }).reason, /loop device.*no SMART/);

  await unmountVolume(r.mountPoint);
  t.deepEqual(mountsOf(dev!), []);
  t.false(existsSync(r.mountPoint), 'the empty mount point is removed');
});

test('refusals: a missing path, something that is not a block device, a bad instance id', async (t) => {
  const root = mountRoot(t);
  const base = { volumeId: 1, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() };
  const missing = await t.throwsAsync(provisionDisk({ ...base, blockPath: '/dev/hostd-no-such-disk' }), { instanceOf: DiskError });
  t.is(missing?.code, 'NOT_FOUND');
  t.regex(missing!.message, /no such device/);

  const file = join(loopDir(t), 'plain-file');
  writeFileSync(file, 'not a disk');
  const notBlock = await t.throwsAsync(provisionDisk({ ...base, blockPath: file }), { instanceOf: DiskError });
  t.is(notBlock?.code, 'NOT_BLOCK_DEVICE');
  t.is(readFileSync(file, 'utf8'), 'not a disk');
  t.is((await t.throwsAsync(provisionDisk({ ...base, blockPath: '/dev/null' }), { instanceOf: DiskError }))?.code, 'NOT_BLOCK_DEVICE');

  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  await t.throwsAsync(provisionDisk({ ...base, blockPath: dev!, instanceId: 'nope' }), { message: /instance id must be a UUID/ });
  t.deepEqual(await probe(dev!), {}, 'nothing was written to the device');
});

test('a mounted device is refused as IN_USE and its data is left alone', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  await sh('mkfs.xfs', ['-q', '-L', 'precious', dev!]);
  const mp = join(root, 'elsewhere');
  mkdirSync(mp);
  await sh('mount', [dev!, mp]);
  writeFileSync(join(mp, 'data'), 'keep me');
  const err = await t.throwsAsync(provisionDisk({ blockPath: dev!, volumeId: 3, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() }), { instanceOf: DiskError });
  t.is(err?.code, 'IN_USE');
  t.regex(err!.message, new RegExp(`mounted at ${mp}`));
  t.is(readFileSync(join(mp, 'data'), 'utf8'), 'keep me');
  t.false(existsSync(join(root, 'vol-3')));
});

test('a device holding a mounted partition is refused as IN_USE', async (t) => {
  const root = mountRoot(t);
  const [first] = await withLoopDevices(t, 1, SIZE_MIB);
  const file = backingFileOf(first!);
  await detachLoop(first!);
  // An MBR with one Linux partition from sector 2048 to the end (no sfdisk here: fdisk is not installed).
  const mbr = Buffer.alloc(512);
  mbr[446 + 4] = 0x83;
  mbr.writeUInt32LE(2048, 446 + 8);
  mbr.writeUInt32LE(SIZE_MIB * 2048 - 2048, 446 + 12);
  mbr.writeUInt16LE(0xaa55, 510);
  const fd = openSync(file, 'r+');
  writeSync(fd, mbr, 0, 512, 0);
  closeSync(fd);
  const dev = await attachLoop(file, { partscan: true }); // cleaned by withLoopDevices: it detaches whatever is attached to its files
  await sh('partx', ['-a', dev]); // this kernel parses no partition tables itself (no CONFIG_MSDOS_PARTITION): add it by hand
  const part = `${dev}p1`;
  for (let i = 0; i < 100 && !existsSync(part); i++) await new Promise((r) => setTimeout(r, 20));
  await sh('mkfs.xfs', ['-q', '-f', part]);
  const mp = join(root, 'part');
  mkdirSync(mp);
  await sh('mount', [part, mp]);
  const err = await t.throwsAsync(provisionDisk({ blockPath: dev, volumeId: 4, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() }), { instanceOf: DiskError });
  t.is(err?.code, 'IN_USE');
  t.regex(err!.message, new RegExp(mp));
  t.is((await probe(dev)).PTTYPE, 'dos', 'the partition table is intact');
});

test('a mount point that is taken fails before the device is touched', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  mkdirSync(join(root, 'vol-7'));
  await sh('mount', ['-t', 'tmpfs', 'none', join(root, 'vol-7')]);
  const err = await t.throwsAsync(provisionDisk({ blockPath: dev!, volumeId: 7, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() }), { instanceOf: DiskError });
  t.is(err?.code, 'MOUNT_FAILED');
  t.deepEqual(await probe(dev!), {}, 'not wiped, not formatted');
});

test('two provisions of one device at once: the second is refused as IN_USE', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  const req = (volumeId: number) => provisionDisk({ blockPath: dev!, volumeId, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() });
  const results = await Promise.allSettled([req(8), req(9)]);
  const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as DiskError] : []));
  t.is(won.length, 1);
  t.is(lost.length, 1);
  t.is(lost[0]?.code, 'IN_USE');
  t.regex(lost[0]!.message, /being provisioned already/);
  t.deepEqual(mountsOf(dev!), [won[0]!.mountPoint]);
});

test('unmounting a volume with a file open on it fails with UNMOUNT_FAILED, then works once it is closed', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, SIZE_MIB);
  const { mountPoint } = await provisionDisk({ blockPath: dev!, volumeId: 11, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() });
  const fd = openSync(join(mountPoint, 'objstore/.identity'), 'r');
  try {
    const err = await t.throwsAsync(unmountVolume(mountPoint), { instanceOf: DiskError });
    t.is(err?.code, 'UNMOUNT_FAILED');
    t.deepEqual(mountsOf(dev!), [mountPoint]);
  } finally {
    closeSync(fd);
  }
  await unmountVolume(mountPoint);
  t.deepEqual(mountsOf(dev!), []);
});

test('SMART of a disk that is not a loop device is read with smartctl and reported plainly either way', async (t) => {
  const disk = (await listBlockDevices()).find((d) => d.type === 'disk' && !d.name.startsWith('zram'));
  if (!disk) {
    t.log('no disk other than loop devices on this machine');
    t.pass();
    return;
  }
  const smart = await smartInfo(disk.path);
  if (smart.available) {
    t.true(smart.passed === null || typeof smart.passed === 'boolean');
    t.true(Array.isArray(smart.attributes));
  } else {
    t.log(`${disk.path}: ${smart.reason}`);
    t.true(smart.reason.length > 0, 'a reason is given');
    t.notRegex(smart.reason, /loop device/);
  }
});
