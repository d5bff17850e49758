/**
 * The kernel-log watcher. The line parser on real kernel lines (block layer, XFS, SCSI, and the
 * look-alikes that must not match), the record format and facility, partitions to disks. Then on a
 * real failing disk (the faultyfs fixture under a loop device, one of six volumes): a line written
 * to /dev/kmsg by a user process (facility user) naming a volume's device arms nothing; the disk
 * made to return EIO and read makes the kernel log `I/O error, dev loopN` and the watcher arms a
 * targeted full verify run of that volume, its run record holding the trigger (device, signal
 * `ioerror`, the line), told as a warning notification; more errors within the cooldown arm no
 * second run.
 */
import anyTest, { type TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { basename } from 'node:path';
import { diskOf, matchIoError, parseKmsgRecord } from '../../protocols/objstore/kmsg.js';
import { startFaultyDisk, type FaultyDisk } from '../helpers/faulty-disk.js';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';
import { startSink, type Sink } from './notify-sink.js';

const test = anyTest as TestFn<{ store: Store; faulty: FaultyDisk; sink: Sink; good: string[] }>;
const scope = new FileScope();

test('parser: real I/O-error lines give their device and form', (t) => {
  const cases: Array<[string, string, string]> = [
    ['I/O error, dev loop7, sector 262336 op 0x0:(READ) flags 0x8800 phys_seg 65 prio class 2', 'loop7', 'block'],
    ['I/O error, dev loop0, sector 0 op 0x1:(WRITE) flags 0x800 phys_seg 0 prio class 2', 'loop0', 'block'],
    ['critical medium error, dev sdb, sector 1953524992 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 0', 'sdb', 'block'],
    ['critical target error, dev nvme0n1, sector 8 op 0x1:(WRITE) flags 0x0 phys_seg 1 prio class 0', 'nvme0n1', 'block'],
    ['Buffer I/O error on dev sdc1, logical block 0, async page read', 'sdc1', 'block'],
    ['loop8: writeback error on inode 655489, offset 131072, sector 459200', 'loop8', 'block'],
    ['XFS (loop0): metadata I/O error in "__xfs_buf_ioend+0x1e0/0x580" at daddr 0x0 len 1 error 5', 'loop0', 'xfs'],
    ['XFS (sdd): log I/O error -5', 'sdd', 'xfs'],
    ['XFS (loop3): SB validate failed with error -5.', 'loop3', 'xfs'],
    ['XFS (sde1): Filesystem has been shut down due to log error (0x2).', 'sde1', 'xfs'],
    ['XFS (sde): Corruption of in-memory data (0x8) detected at xfs_trans_cancel+0x12f/0x160 (fs/xfs/xfs_trans.c:1097).  Shutting down filesystem.', 'sde', 'xfs'],
    ['sd 2:0:0:0: [sdb] tag#3 Sense Key : Medium Error [current]', 'sdb', 'scsi'],
    ['sd 2:0:0:0: [sdb] tag#3 Add. Sense: Unrecovered read error - auto reallocate failed', 'sdb', 'scsi'],
    ['sd 0:0:1:0: [sdf] tag#12 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK cmd_age=3s', 'sdf', 'scsi'],
    ['sd 0:0:1:0: [sdf] rejecting I/O to offline device', 'sdf', 'scsi'],
  ];
  for (const [line, device, form] of cases) t.deepEqual(matchIoError(line), { device, form }, line);
  for (const line of [
    'operation not supported error, dev loop5, sector 0 op 0x3:(DISCARD) flags 0x800 phys_seg 1 prio class 2',
    'operation not supported error, dev loop0, sector 524336 op 0x9:(WRITE_ZEROES) flags 0x20000800 phys_seg 0 prio class 2',
    'XFS (loop9): Mounting V5 Filesystem 8df90a41-24c1-4253-8881-d636580a5e8b',
    'XFS (loop9): Ending clean mount',
    'loop3: detected capacity change from 0 to 1048576',
    'sd 2:0:0:0: [sdb] 1953525168 512-byte logical blocks: (1.00 TB/932 GiB)',
    'EXT4-fs (sda1): mounted filesystem with ordered data mode',
    '',
  ]) t.is(matchIoError(line), null, line);
});

test('parser: the kmsg record, its facility and level; partitions to their disk', (t) => {
  t.deepEqual(parseKmsgRecord('3,25201,21211004534,-;I/O error, dev loop7, sector 8 op 0x0:(READ)\n SUBSYSTEM=block\n DEVICE=b7:7\n'), {
    facility: 0,
    level: 3,
    seq: 25201,
    usec: 21211004534,
    message: 'I/O error, dev loop7, sector 8 op 0x0:(READ)',
  });
  t.is(parseKmsgRecord('11,5,100,-;I/O error, dev loop1, sector 0\n')!.facility, 1, 'a user process writing <3> gets facility user (1)');
  t.is(parseKmsgRecord('6,25195,19928099983,c;XFS (loop0): Ending clean mount\n')!.message, 'XFS (loop0): Ending clean mount');
  for (const bad of ['', 'no semicolon', 'x,1,2,-;m', '3,,2,-;m', '3,1,-;m']) t.is(parseKmsgRecord(bad), null, bad);
  for (const [p, d] of <Array<[string, string]>>[['sdf1', 'sdf'], ['sdf', 'sdf'], ['nvme0n1p2', 'nvme0n1'], ['nvme0n1', 'nvme0n1'], ['mmcblk0p1', 'mmcblk0'], ['loop3p1', 'loop3'], ['loop3', 'loop3'], ['vdb12', 'vdb'], ['dm-0', 'dm-0']]) t.is(diskOf(p), d, p);
});

test.serial.before(async (t) => {
  const sink = await startSink(scope);
  const good = await withLoopDevices(scope, 5, 400);
  const faulty = await startFaultyDisk(scope, 400);
  const store = await startStore(scope, { devices: [faulty.device, ...good], values: { chatWebhookUrl: sink.url, syslogWatchIntervalMs: 300, syslogVerifyCooldownMs: 3_600_000 } });
  t.context = { store, faulty, sink, good };
});
test.after.always(() => scope.run());

interface Run {
  id: string;
  trigger: { kind: string; device?: string; signal?: string; detail?: string };
  volumeIds: number[] | null;
  mode: string;
}
const faultRuns = async (url: string) => ((await (await fetch(`${url}/$/verify-runs`)).json()) as { runs: Run[] }).runs.filter((r) => r.trigger.kind === 'fault');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.serial('a user process writing an I/O-error line to /dev/kmsg arms nothing', async (t) => {
  const { store, good } = t.context;
  appendFileSync('/dev/kmsg', `<3>I/O error, dev ${basename(good[0]!)}, sector 0 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0\n`);
  await sleep(1200);
  t.deepEqual(await faultRuns(store.url), []);
});

test.serial('the failing disk logs `I/O error, dev loopN`: a targeted verify run of its volume records the line; no second run within the cooldown', async (t) => {
  const { store, faulty, sink } = t.context;
  const name = basename(faulty.device);
  const vols = ((await (await fetch(`${store.url}/$/volumes`)).json()) as { volumes: Array<{ id: number; device: string }> }).volumes;
  const vol = vols.find((v) => v.device === faulty.device)!;
  t.truthy(vol);
  const bodies: Buffer[] = [];
  for (let i = 0; i < 4; i++) {
    const b = randomBytes(600_000);
    t.is((await fetch(`${store.url}/km/o${i}`, { method: 'PUT', body: b })).status, 201);
    bodies.push(b);
  }
  await faulty.failAll();
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${store.url}/km/o${i}`);
    t.is(res.status, 200);
    t.true(Buffer.from(await res.arrayBuffer()).equals(bodies[i]!));
  }
  const end = Date.now() + 15_000;
  let runs: Run[] = [];
  while (Date.now() < end && !(runs = await faultRuns(store.url)).length) await sleep(200);
  t.is(runs.length, 1, 'one run armed');
  const run = runs[0]!;
  t.deepEqual(run.volumeIds, [vol.id]);
  t.is(run.mode, 'full');
  t.is(run.trigger.signal, 'ioerror');
  t.is(diskOf(run.trigger.device!), name);
  t.regex(run.trigger.detail!, new RegExp(`I/O error.*${name}|${name}.*I/O error|XFS \\(${name}\\)`));
  await sink.waitFor(1);
  t.true(sink.bodies.some((b) => b.text.startsWith(`[WARNING] *Kernel I/O error on volume ${vol.id}: verify run started*`)), JSON.stringify(sink.bodies));
  // more errors, within the cooldown: no second run
  for (let i = 0; i < 4; i++) await (await fetch(`${store.url}/km/o${i}`)).arrayBuffer();
  await sleep(1500);
  t.is((await faultRuns(store.url)).length, 1);
  // the run, on a dead disk, finds errors: that is told too
  const until = Date.now() + 30_000;
  while (Date.now() < until && !sink.bodies.some((b) => b.text.includes('*Verify run found'))) await sleep(200);
  t.true(sink.bodies.some((b) => /^\[WARNING\] \*Verify run found \d+ error\(s\)\*/.test(b.text)), JSON.stringify(sink.bodies));
  await faulty.heal();
});
