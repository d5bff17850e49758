/**
 * The volume actor on a disk that fails for real (test/fixtures/faultyfs): the kernel returns EIO,
 * or does not answer, and the actor says so in time, never with stale bytes from a cache.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { provisionDisk } from '../../actors/volume/disks.js';
import { volumeActorId, type VolumeArgs, type VolumeProtocol } from '../../actors/volume/messages.js';
import { chunkOffset, type SliceHeader } from '../../protocols/objstore/slice-format.js';
import type { ActorRef } from '../../runtime/index.js';
import { startFaultyDisk, type FaultyDisk } from '../helpers/faulty-disk.js';
import { mountRoot, sh } from '../helpers/loop.js';
import { rejectsWith, startTestSystem, waitFor, within } from '../helpers/util.js';

const VOLUME = new URL('../../actors/volume/actor.js', import.meta.url).href;
const CHUNK = 64 * 1024;

interface Setup {
  disk: FaultyDisk;
  ref: ActorRef<VolumeProtocol>;
  args: VolumeArgs;
}

async function faultyVolume(t: ExecutionContext, opts: Partial<VolumeArgs> = {}): Promise<Setup> {
  const root = mountRoot(t);
  const disk = await startFaultyDisk(t, 320);
  const { mountPoint, device } = await provisionDisk({ blockPath: disk.device, volumeId: 1, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() });
  const system = await startTestSystem(t);
  const args: VolumeArgs = { volumeId: 1, mountPoint, device, readOnly: false, ioTimeoutMs: 5000, maxInflight: 4, ...opts };
  await system.start({ id: volumeActorId(1), module: VOLUME, args, placement: { mode: 'shared', group: 'volumes' } });
  return { disk, ref: system.ref<VolumeProtocol>(volumeActorId(1)), args };
}

const own = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer;
const ID = '$00000196a1b2c3d4e5f60718';
const header = (index: number, size: number): SliceHeader => ({ objectId: ID, index, k: 2, m: 1, chunkSize: CHUNK, objectSize: 2 * size, sliceSize: size });

async function writeSlice(ref: ActorRef<VolumeProtocol>, index: number, data: Uint8Array): Promise<void> {
  await ref.request({ type: 'create', objectId: ID, index, header: header(index, data.byteLength) });
  for (let c = 0; c * CHUNK < data.byteLength; c++) {
    const chunk = own(data.subarray(c * CHUNK, (c + 1) * CHUNK));
    await ref.request({ type: 'append', objectId: ID, index, chunk: c, data: chunk }, { transfer: [chunk] });
  }
  await ref.request({ type: 'commit', objectId: ID, index });
}

const read = (ref: ActorRef<VolumeProtocol>, index: number, firstChunk: number, count: number) => ref.request({ type: 'read', objectId: ID, index, firstChunk, count });

/** Device byte offset of a file byte on the volume (xfs_io fiemap; units of 512 bytes). */
async function deviceOffset(path: string, fileOffset: number): Promise<number> {
  const out = await sh('xfs_io', ['-r', '-c', 'fiemap -v', path]);
  for (const m of out.matchAll(/\[(\d+)\.\.(\d+)\]:\s+(\d+)\.\.(\d+)/g)) {
    const [from, to, phys] = [Number(m[1]) * 512, (Number(m[2]) + 1) * 512, Number(m[3]) * 512];
    if (fileOffset >= from && fileOffset < to) return phys + (fileOffset - from);
  }
  throw new Error(`no extent of ${path} holds offset ${fileOffset}:\n${out}`);
}

test('a dead disk gives EIO at once: not a hang, not the bytes still in the page cache; healed, the data is back', async (t) => {
  const { disk, ref } = await faultyVolume(t);
  const data = randomBytes(3 * CHUNK + 100);
  await writeSlice(ref, 0, data);
  t.true(Buffer.from((await read(ref, 0, 0, 4)).data).equals(data)); // and now it is in the page cache too

  await disk.failAll();
  const started = Date.now();
  const err = await rejectsWith(t, within(read(ref, 0, 0, 4), 4000, 'read on a dead disk'), 'REPLY_ERROR');
  t.is(err.appCode, 'EIO', err.message);
  t.like(err.details, { errno: 'EIO', chunk: 0 });
  t.true(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`);
  t.is((await rejectsWith(t, ref.request({ type: 'readHeader', objectId: ID, index: 0 }), 'REPLY_ERROR')).appCode, 'EIO');

  // A slice written now: its chunk lands in the page cache, the fsync after its last chunk reaches the disk.
  await ref.request({ type: 'create', objectId: ID, index: 1, header: header(1, 100) });
  t.is((await rejectsWith(t, ref.request({ type: 'append', objectId: ID, index: 1, chunk: 0, data: new ArrayBuffer(100) }), 'REPLY_ERROR')).appCode, 'EIO');
  const commit = await rejectsWith(t, ref.request({ type: 'commit', objectId: ID, index: 1 }), 'REPLY_ERROR');
  t.is(commit.appCode, 'EIO', 'the slice keeps its failure: it cannot be committed, only aborted');

  await disk.heal();
  await ref.request({ type: 'abort', objectId: ID, index: 1 });
  t.is((await rejectsWith(t, read(ref, 1, 0, 1), 'REPLY_ERROR')).appCode, 'MISSING', 'the failed slice never became visible');
  t.true(Buffer.from((await read(ref, 0, 0, 4)).data).equals(data));
  const info = await ref.request({ type: 'info' });
  t.true(info.counters.errors >= 3, `errors ${info.counters.errors}`);
  t.is(info.counters.timeouts, 0);
});

test('bad sectors under one chunk give EIO for that chunk only, named in the details', async (t) => {
  const { disk, ref } = await faultyVolume(t);
  const data = randomBytes(6 * CHUNK);
  await writeSlice(ref, 0, data);
  const path = await ref.request({ type: 'path', objectId: ID, index: 0 });
  // A 4 KiB block well inside chunk 3: the aligned reads of chunks 2 and 4 do not touch it.
  const block = Math.ceil((chunkOffset(CHUNK, 3) + 8192) / 4096) * 4096;
  const at = await deviceOffset(path, block);
  await disk.failRange(at, at + 4096);

  const one = await rejectsWith(t, read(ref, 0, 3, 1), 'REPLY_ERROR');
  t.like(one, { appCode: 'EIO', details: { chunk: 3 } });
  const span = await rejectsWith(t, read(ref, 0, 0, 6), 'REPLY_ERROR');
  t.like(span, { appCode: 'EIO', details: { chunk: 3 } });
  t.true(Buffer.from((await read(ref, 0, 0, 3)).data).equals(data.subarray(0, 3 * CHUNK)));
  t.true(Buffer.from((await read(ref, 0, 4, 2)).data).equals(data.subarray(4 * CHUNK)));

  await disk.heal();
  t.true(Buffer.from((await read(ref, 0, 3, 1)).data).equals(data.subarray(3 * CHUNK, 4 * CHUNK)));
});

test('a disk slower than ioTimeoutMs gives TIMEOUT, and the actor still answers info', async (t) => {
  const { disk, ref, args } = await faultyVolume(t, { ioTimeoutMs: 400, maxInflight: 2 });
  const data = randomBytes(CHUNK);
  await writeSlice(ref, 0, data);

  await disk.slow(2500);
  const started = Date.now();
  const err = await rejectsWith(t, within(read(ref, 0, 0, 1), 2000, 'read on a slow disk'), 'REPLY_ERROR');
  t.is(err.appCode, 'TIMEOUT', err.message);
  t.true(Date.now() - started < 1500, `answered in ${Date.now() - started} ms`);

  // Fill the queue with reads stuck on the disk: the ones behind them time out while waiting.
  const stuck = await Promise.allSettled([0, 1, 2, 3].map(() => read(ref, 0, 0, 1)));
  t.deepEqual(stuck.map((r) => (r.status === 'rejected' ? (r.reason as { appCode?: string }).appCode : 'ok')), ['TIMEOUT', 'TIMEOUT', 'TIMEOUT', 'TIMEOUT']);

  const infoStarted = Date.now();
  const info = await within(ref.request({ type: 'info' }), 1500, 'info on a slow disk');
  t.true(Date.now() - infoStarted < 1500);
  t.true(info.counters.timeouts >= 5, `timeouts ${info.counters.timeouts}`);
  t.true(info.inflight <= args.maxInflight, `at most maxInflight (${args.maxInflight}) file operations held by the slow disk, got ${info.inflight}`);
  t.is(info.bytesTotal > 0, true);

  await disk.heal();
  await waitFor('the stuck reads to end', async () => (await ref.request({ type: 'info' })).inflight === 0, 10_000, 100);
  t.true(Buffer.from((await read(ref, 0, 0, 1)).data).equals(data));
});

test('a pulled disk (the fixture killed) gives EIO, not a hang', async (t) => {
  const { disk, ref } = await faultyVolume(t);
  const data = randomBytes(2 * CHUNK);
  await writeSlice(ref, 0, data);
  await disk.kill();
  const err = await rejectsWith(t, within(read(ref, 0, 0, 2), 4000, 'read on a pulled disk'), 'REPLY_ERROR');
  t.is(err.appCode, 'EIO', err.message);
  t.like(await ref.request({ type: 'info' }), { volumeId: 1 });
});
