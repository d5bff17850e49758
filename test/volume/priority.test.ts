/**
 * I/O priority in the volume actor, on a real provisioned loop device: every message's file
 * operations are counted under its priority (the async context reaches every Volume method), and
 * a normal read stays fast under a flood of low reads.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { provisionDisk } from '../../actors/volume/disks.js';
import { volumeActorId, type Priority, type VolumeArgs, type VolumeProtocol } from '../../actors/volume/messages.js';
import type { SliceHeader } from '../../protocols/objstore/slice-format.js';
import type { ActorRef } from '../../runtime/index.js';
import { mountRoot, withLoopDevices } from '../helpers/loop.js';
import { rejectsWith, startTestSystem } from '../helpers/util.js';

const VOLUME = new URL('../../actors/volume/actor.js', import.meta.url).href;
const CHUNK = 64 * 1024;

async function startVolume(t: ExecutionContext, opts: Partial<VolumeArgs> = {}): Promise<ActorRef<VolumeProtocol>> {
  const [dev] = await withLoopDevices(t, 1, 320);
  const { mountPoint, device } = await provisionDisk({ blockPath: dev!, volumeId: 1, instanceId: randomUUID(), mountRoot: mountRoot(t), createdAt: Date.now() });
  const system = await startTestSystem(t);
  const args: VolumeArgs = { volumeId: 1, mountPoint, device, readOnly: false, ioTimeoutMs: 10_000, maxInflight: 4, ...opts };
  await system.start({ id: volumeActorId(1), module: VOLUME, args, placement: { mode: 'shared', group: 'volumes' } });
  return system.ref<VolumeProtocol>(volumeActorId(1));
}

let nextId = 0x2000;
const newId = () => '$' + (Date.now() * 1000 + nextId++).toString(16).padStart(24, '0');
const headerFor = (objectId: string, index: number, sliceSize: number, chunkSize = CHUNK): SliceHeader => ({ objectId, index, k: 4, m: 2, chunkSize, objectSize: sliceSize * 4, sliceSize });
const own = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer;

async function writeSlice(ref: ActorRef<VolumeProtocol>, objectId: string, data: Uint8Array, chunkSize: number, priority?: Priority) {
  await ref.request({ type: 'create', objectId, index: 0, header: headerFor(objectId, 0, data.byteLength, chunkSize), priority });
  for (let c = 0, off = 0; off < data.byteLength; c++, off += chunkSize) {
    const chunk = own(data.subarray(off, off + chunkSize));
    await ref.request({ type: 'append', objectId, index: 0, chunk: c, data: chunk, priority }, { transfer: [chunk] });
  }
  await ref.request({ type: 'commit', objectId, index: 0, priority });
}

test('every message does its file operations at its own priority (the context reaches every Volume method)', async (t) => {
  const ref = await startVolume(t);
  const stats = async () => (await ref.request({ type: 'info' })).priority;
  for (const priority of ['low', undefined, 'normal'] as const) {
    const mine = priority ?? 'normal';
    const other = mine === 'low' ? 'normal' : 'low';
    /** Send `msg` and check that its operations were all of its priority, and all ended. */
    const check = async (what: string, send: () => Promise<unknown>, staged = false) => {
      const before = await stats();
      await send();
      const after = await stats();
      const label = `${what} at ${String(priority)}`;
      // An append short of the stage (1 MiB) or of the last chunk only copies: no file operation.
      if (staged) t.is(after[mine].started, before[mine].started, `${label}: staged, no file operation`);
      else t.true(after[mine].started > before[mine].started, `${label}: operations counted under ${mine}`);
      t.is(after[mine].completed - before[mine].completed, after[mine].started - before[mine].started, `${label}: all ended`);
      t.is(after[other].started, before[other].started, `${label}: none under ${other}`);
      t.like(after[mine], { active: 0, queued: 0 });
    };
    const id = newId();
    const data = randomBytes(2 * CHUNK + 100);
    await check('create', () => ref.request({ type: 'create', objectId: id, index: 0, header: headerFor(id, 0, data.byteLength), priority }));
    for (let c = 0; c < 3; c++) {
      const chunk = own(data.subarray(c * CHUNK, (c + 1) * CHUNK));
      await check(`append ${c}`, () => ref.request({ type: 'append', objectId: id, index: 0, chunk: c, data: chunk, priority }, { transfer: [chunk] }), c < 2);
    }
    await check('commit', () => ref.request({ type: 'commit', objectId: id, index: 0, priority }));
    await check('readHeader', async () => t.deepEqual(await ref.request({ type: 'readHeader', objectId: id, index: 0, priority }), headerFor(id, 0, data.byteLength)));
    await check('read', async () => t.true(Buffer.from((await ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 3, priority })).data).equals(data)));
    await check('delete', async () => t.deepEqual(await ref.request({ type: 'delete', objectId: id, index: 0, priority }), { existed: true }));
    const aborted = newId();
    await ref.request({ type: 'create', objectId: aborted, index: 1, header: headerFor(aborted, 1, 10), priority });
    await check('abort', () => ref.request({ type: 'abort', objectId: aborted, index: 1, priority }));
    const purged = newId();
    await writeSlice(ref, purged, randomBytes(100), CHUNK, priority);
    await check('purge', async () => t.deepEqual(await ref.request({ type: 'purge', objectIds: [purged], priority }), { removed: 1 }));
  }
});

test('under a flood of low reads a normal read is served at once; low reads are counted as low', async (t) => {
  const ref = await startVolume(t); // maxInflight 4: at most 1 low operation at a time
  const id = newId();
  const chunkSize = 1 << 20;
  const data = randomBytes(4 * chunkSize);
  await writeSlice(ref, id, data, chunkSize);
  const opts = { timeoutMs: 60_000 };
  const read = (priority?: Priority) => ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 4, priority }, opts);
  await read(); // the header is cached from now on: each read is an open and the chunks
  const before = (await ref.request({ type: 'info' })).priority;

  const FLOOD = 40; // fewer than the actor's 64 handlers
  const t0 = performance.now();
  const lowLatency: number[] = [];
  const flood = Array.from({ length: FLOOD }, () =>
    read('low').then((r) => {
      lowLatency.push(performance.now() - t0);
      return r;
    }),
  );
  // Sent right behind the flood: neither may wait for it, in the mailbox or in the disk queue.
  const info = ref.request({ type: 'info' });
  const n0 = performance.now();
  const normal = await read();
  const normalLatency = performance.now() - n0;
  const during = (await info).priority;
  t.true(during.low.active <= 1, `low active ${during.low.active}`);
  t.true(during.low.queued >= 1, 'the low reads wait in the disk queue');
  t.true(Buffer.from(normal.data).equals(data));
  for (const r of await Promise.all(flood)) t.is(r.data.byteLength, data.byteLength);

  lowLatency.sort((a, b) => a - b);
  const median = lowLatency[FLOOD / 2]!;
  t.log(`normal read ${normalLatency.toFixed(1)} ms; low reads: median ${median.toFixed(1)} ms, last ${lowLatency[FLOOD - 1]!.toFixed(1)} ms`);
  t.true(normalLatency < median, `normal read took ${normalLatency.toFixed(1)} ms, the median low read ${median.toFixed(1)} ms`);

  const after = (await ref.request({ type: 'info' })).priority;
  // Each read opens the file and reads at least once: two or more operations.
  t.true(after.low.completed - before.low.completed >= 2 * FLOOD);
  t.is(after.low.completed - before.low.completed, after.low.started - before.low.started);
  const normalOps = after.normal.completed - before.normal.completed;
  t.true(normalOps >= 2 && normalOps * FLOOD <= after.low.completed - before.low.completed, `${normalOps} normal operations: one read's worth`);
  t.true(after.low.waitMsMax > after.normal.waitMsMax, 'low operations waited longer than any normal one');
  t.like(after, { normal: { active: 0, queued: 0 }, low: { active: 0, queued: 0 } });
});

test('a priority other than normal or low is refused with BAD_REQUEST', async (t) => {
  const ref = await startVolume(t);
  const id = newId();
  for (const priority of ['high', 1, null] as never[]) {
    const err = await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 1, priority }), 'REPLY_ERROR');
    t.is(err.appCode, 'BAD_REQUEST');
    t.regex(err.message, /priority must be 'normal' or 'low'/);
  }
  const info = await ref.request({ type: 'info', priority: 'low' });
  t.is(info.priority.normal.started + info.priority.low.started, info.priority.normal.completed, 'no operation of the refused messages ran (the open at start-up is normal)');
});
