/**
 * The volume actor on a real provisioned loop device, in a real actor system: slices written in
 * chunks and read back verified, corruption found per chunk, missing slices, abort, purge,
 * read-only, counters, several slices at once.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DIRECT_PIECE } from '../../actors/volume/direct-io.js';
import { provisionDisk } from '../../actors/volume/disks.js';
import { volumeActorId, type VolumeArgs, type VolumeProtocol } from '../../actors/volume/messages.js';
import { chunkOffset, encodeSliceHeader, SLICE_HEADER_BYTES, type SliceHeader } from '../../protocols/objstore/slice-format.js';
import type { ActorRef } from '../../runtime/index.js';
import { mountRoot, withLoopDevices } from '../helpers/loop.js';
import { eventually, rejectsWith, startTestSystem } from '../helpers/util.js';

const VOLUME = new URL('../../actors/volume/actor.js', import.meta.url).href;
const CHUNK = 64 * 1024;

interface Vol {
  ref: ActorRef<VolumeProtocol>;
  args: VolumeArgs;
}

async function startVolume(t: ExecutionContext, opts: Partial<VolumeArgs> = {}): Promise<Vol> {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, 320);
  const { mountPoint, device } = await provisionDisk({ blockPath: dev!, volumeId: 1, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() });
  const system = await startTestSystem(t);
  const args: VolumeArgs = { volumeId: 1, mountPoint, device, readOnly: false, ioTimeoutMs: 5000, maxInflight: 4, ...opts };
  await system.start({ id: volumeActorId(1), module: VOLUME, args, placement: { mode: 'shared', group: 'volumes' } });
  return { ref: system.ref<VolumeProtocol>(volumeActorId(1)), args };
}

/** A copy of `bytes` in an ArrayBuffer of its own, to transfer (a Buffer's .buffer is a shared pool). */
const own = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer;

let nextId = 0x1000;
/** A fresh object id ('$' + 24 hex), different last byte each time. */
const newId = () => '$' + (Date.now() * 1000 + nextId++).toString(16).padStart(24, '0');

function headerFor(objectId: string, index: number, sliceSize: number, chunkSize = CHUNK): SliceHeader {
  return { objectId, index, k: 4, m: 2, chunkSize, objectSize: sliceSize * 4, sliceSize };
}

/** Write a slice of `data` through the actor, chunk by chunk; returns the commit reply. */
async function writeSlice(ref: ActorRef<VolumeProtocol>, objectId: string, index: number, data: Uint8Array, chunkSize = CHUNK) {
  await ref.request({ type: 'create', objectId, index, header: headerFor(objectId, index, data.byteLength, chunkSize) });
  for (let c = 0, off = 0; off < data.byteLength; c++, off += chunkSize) {
    const chunk = own(data.subarray(off, off + chunkSize));
    await ref.request({ type: 'append', objectId, index, chunk: c, data: chunk }, { transfer: [chunk] });
  }
  return ref.request({ type: 'commit', objectId, index });
}

async function readChunks(ref: ActorRef<VolumeProtocol>, objectId: string, index: number, firstChunk: number, count: number) {
  const r = await ref.request({ type: 'read', objectId, index, firstChunk, count });
  return { bytes: new Uint8Array(r.data), lengths: r.lengths };
}

/** Overwrite bytes of a file on the volume, bypassing the actor (rot on the disk). */
function poke(path: string, position: number, mutate: (b: number) => number) {
  const fd = openSync(path, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, position);
    b[0] = mutate(b[0]!);
    writeSync(fd, b, 0, 1, position);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

test('a slice written in chunks is committed under its final name and reads back byte-exact, in any range', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  const data = randomBytes(5 * CHUNK + 1234);
  const { bytes } = await writeSlice(ref, id, 3, data);
  t.is(bytes, SLICE_HEADER_BYTES + data.byteLength + 6 * 4, 'commit reports the bytes of the slice file');

  const path = await ref.request({ type: 'path', objectId: id, index: 3 });
  t.is(path.split('/').slice(-3).join('/'), `slices/${id.slice(-2)}/${id.slice(1)}.3`);
  t.is(statSync(path).size, bytes);
  t.deepEqual(readdirSync(dirname(path)), [`${id.slice(1)}.3`], 'no temp file left');
  t.deepEqual(readFileSync(path).subarray(SLICE_HEADER_BYTES, SLICE_HEADER_BYTES + CHUNK), data.subarray(0, CHUNK), 'chunk 0 right after the header');

  const all = await readChunks(ref, id, 3, 0, 6);
  t.deepEqual(all.lengths, [CHUNK, CHUNK, CHUNK, CHUNK, CHUNK, 1234]);
  t.true(Buffer.from(all.bytes).equals(data));
  for (const [first, count] of [[0, 1], [2, 3], [5, 1], [4, 2], [1, 4]] as const) {
    const r = await readChunks(ref, id, 3, first, count);
    const want = data.subarray(first * CHUNK, Math.min(data.byteLength, (first + count) * CHUNK));
    t.true(Buffer.from(r.bytes).equals(want), `chunks ${first}..${first + count - 1}`);
    t.is(r.lengths.length, count);
  }
  t.deepEqual(await ref.request({ type: 'readHeader', objectId: id, index: 3 }), headerFor(id, 3, data.byteLength));
  await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 3, firstChunk: 5, count: 2 }), 'REPLY_ERROR');
});

test('a flipped byte gives CHECKSUM for that chunk only; a corrupt header is found by readHeader', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  const data = randomBytes(6 * CHUNK);
  await writeSlice(ref, id, 0, data);
  const path = await ref.request({ type: 'path', objectId: id, index: 0 });
  await readChunks(ref, id, 0, 0, 1); // the header is read and remembered before the rot

  poke(path, chunkOffset(CHUNK, 2) + 777, (b) => b ^ 0x01);
  const err = await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 2, count: 1 }), 'REPLY_ERROR');
  t.is(err.appCode, 'CHECKSUM');
  t.deepEqual(err.details, { chunk: 2 });
  const span = await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 1, count: 3 }), 'REPLY_ERROR');
  t.like(span, { appCode: 'CHECKSUM', details: { chunk: 2 } });
  t.true(Buffer.from((await readChunks(ref, id, 0, 0, 2)).bytes).equals(data.subarray(0, 2 * CHUNK)), 'chunks before it read fine');
  t.true(Buffer.from((await readChunks(ref, id, 0, 3, 3)).bytes).equals(data.subarray(3 * CHUNK)), 'chunks after it read fine');

  poke(path, chunkOffset(CHUNK, 4) + CHUNK + 1, (b) => b ^ 0x80); // a byte of chunk 4's CRC
  t.like(await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 4, count: 1 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 4 } });

  poke(path, 0x20, (b) => b ^ 0x04); // objectSize in the header
  t.like(await rejectsWith(t, ref.request({ type: 'readHeader', objectId: id, index: 0 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: -1, header: true } });
});

test('a slice that is not there is MISSING; deleting it is not an error', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  t.is((await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 1, firstChunk: 0, count: 1 }), 'REPLY_ERROR')).appCode, 'MISSING');
  t.is((await rejectsWith(t, ref.request({ type: 'readHeader', objectId: id, index: 1 }), 'REPLY_ERROR')).appCode, 'MISSING');
  t.deepEqual(await ref.request({ type: 'delete', objectId: id, index: 1 }), { existed: false });

  await writeSlice(ref, id, 1, randomBytes(100));
  t.deepEqual(await ref.request({ type: 'delete', objectId: id, index: 1 }), { existed: true });
  t.false(existsSync(await ref.request({ type: 'path', objectId: id, index: 1 })));
  t.is((await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 1, firstChunk: 0, count: 1 }), 'REPLY_ERROR')).appCode, 'MISSING');
});

test('abort leaves no file; a slice being written is invisible until commit', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  const path = await ref.request({ type: 'path', objectId: id, index: 2 });
  await ref.request({ type: 'create', objectId: id, index: 2, header: headerFor(id, 2, 2 * CHUNK) });
  const chunk = own(randomBytes(CHUNK));
  await ref.request({ type: 'append', objectId: id, index: 2, chunk: 0, data: chunk }, { transfer: [chunk] });
  t.false(existsSync(path));
  t.true(existsSync(path + '.tmp'));
  t.is((await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 2, firstChunk: 0, count: 1 }), 'REPLY_ERROR')).appCode, 'MISSING');
  t.is(await ref.request({ type: 'abort', objectId: id, index: 2 }), null);
  t.deepEqual(readdirSync(dirname(path)), []);
  t.is(await ref.request({ type: 'abort', objectId: id, index: 2 }), null, 'abort is idempotent');
  // and the slice can be written anew
  await writeSlice(ref, id, 2, randomBytes(10));
  t.true(existsSync(path));
});

test('nonsense is refused with BAD_REQUEST: chunks out of order or of the wrong size, early commit, double create, overwriting', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  const bad = async (p: Promise<unknown>, re: RegExp) => {
    const err = await rejectsWith(t, p, 'REPLY_ERROR');
    t.is(err.appCode, 'BAD_REQUEST', err.message);
    t.regex(err.message, re);
  };
  const buf = (n: number) => new ArrayBuffer(n);
  await bad(ref.request({ type: 'append', objectId: id, index: 0, chunk: 0, data: buf(CHUNK) }), /not being written/);
  await bad(ref.request({ type: 'create', objectId: 'nope', index: 0, header: headerFor(id, 0, 1) }), /object id/);
  await bad(ref.request({ type: 'create', objectId: id, index: 1, header: headerFor(id, 0, 1) }), /header names slice/);
  await bad(ref.request({ type: 'create', objectId: id, index: 0, header: { ...headerFor(id, 0, 1), k: 0 } }), /k must be/);
  await ref.request({ type: 'create', objectId: id, index: 0, header: headerFor(id, 0, 2 * CHUNK + 10) });
  await bad(ref.request({ type: 'create', objectId: id, index: 0, header: headerFor(id, 0, 2 * CHUNK + 10) }), /being written already/);
  await bad(ref.request({ type: 'append', objectId: id, index: 0, chunk: 1, data: buf(CHUNK) }), /chunk 1 out of order, expected chunk 0/);
  await bad(ref.request({ type: 'append', objectId: id, index: 0, chunk: 0, data: buf(CHUNK - 1) }), /must be 65536 bytes, got 65535/);
  await ref.request({ type: 'append', objectId: id, index: 0, chunk: 0, data: buf(CHUNK) });
  await bad(ref.request({ type: 'commit', objectId: id, index: 0 }), /commit after 1 of its 3 chunk/);
  await ref.request({ type: 'append', objectId: id, index: 0, chunk: 1, data: buf(CHUNK) });
  await bad(ref.request({ type: 'append', objectId: id, index: 0, chunk: 2, data: buf(CHUNK) }), /must be 10 bytes/);
  await ref.request({ type: 'append', objectId: id, index: 0, chunk: 2, data: buf(10) });
  await bad(ref.request({ type: 'append', objectId: id, index: 0, chunk: 3, data: buf(10) }), /chunk 3 out of order|beyond its end/);
  await ref.request({ type: 'commit', objectId: id, index: 0 });
  await bad(ref.request({ type: 'create', objectId: id, index: 0, header: headerFor(id, 0, 5) }), /exists already: slices are immutable/);
  await bad(ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 0 }), /count must be a positive integer/);
  await bad(ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 2, count: 2 }), /has 3 chunk\(s\)/);
});

test('purge removes temp files and the slices of the given objects, and nothing else', async (t) => {
  const { ref } = await startVolume(t);
  const [gone, kept, writing] = [newId(), newId(), newId()];
  for (const i of [0, 1, 2]) await writeSlice(ref, gone, i, randomBytes(1000));
  await writeSlice(ref, kept, 0, randomBytes(1000));
  await ref.request({ type: 'create', objectId: writing, index: 0, header: headerFor(writing, 0, 100) });
  const keptPath = await ref.request({ type: 'path', objectId: kept, index: 0 });
  const stray = join(dirname(keptPath), `${kept.slice(1)}.5.tmp`); // left by a crash
  writeFileSync(stray, 'half a slice');

  t.deepEqual(await ref.request({ type: 'purge', objectIds: [gone] }), { removed: 4 });
  for (const i of [0, 1, 2]) t.false(existsSync(await ref.request({ type: 'path', objectId: gone, index: i })));
  t.false(existsSync(stray));
  t.true(existsSync(keptPath));
  t.true(existsSync((await ref.request({ type: 'path', objectId: writing, index: 0 })) + '.tmp'), 'the temp file of a slice being written stays');
  await ref.request({ type: 'append', objectId: writing, index: 0, chunk: 0, data: new ArrayBuffer(100) });
  t.like(await ref.request({ type: 'commit', objectId: writing, index: 0 }), { bytes: 64 + 100 + 4 });
  t.is((await rejectsWith(t, ref.request({ type: 'purge', objectIds: ['x'] }), 'REPLY_ERROR')).appCode, 'BAD_REQUEST');
});

test('a read-only volume refuses create and append but reads and deletes', async (t) => {
  const { ref } = await startVolume(t, { readOnly: true });
  const id = newId();
  t.is((await rejectsWith(t, ref.request({ type: 'create', objectId: id, index: 0, header: headerFor(id, 0, 10) }), 'REPLY_ERROR')).appCode, 'READ_ONLY');
  t.true((await ref.request({ type: 'info' })).readOnly);

  await ref.request({ type: 'setReadOnly', readOnly: false });
  await writeSlice(ref, id, 0, randomBytes(10));
  await ref.request({ type: 'create', objectId: id, index: 1, header: headerFor(id, 1, 10) });
  await ref.request({ type: 'setReadOnly', readOnly: true });
  t.true((await ref.request({ type: 'info' })).readOnly);
  t.is((await rejectsWith(t, ref.request({ type: 'append', objectId: id, index: 1, chunk: 0, data: new ArrayBuffer(10) }), 'REPLY_ERROR')).appCode, 'READ_ONLY');
  t.is(await ref.request({ type: 'abort', objectId: id, index: 1 }), null);
  t.is((await readChunks(ref, id, 0, 0, 1)).bytes.byteLength, 10);
  t.deepEqual(await ref.request({ type: 'delete', objectId: id, index: 0 }), { existed: true });
});

test('info: capacity and counters of what was done', async (t) => {
  const { ref, args } = await startVolume(t);
  const before = await ref.request({ type: 'info' });
  t.like(before, { volumeId: 1, mountPoint: args.mountPoint, device: args.device, readOnly: false, inflight: 0 });
  t.deepEqual(before.counters, { reads: 0, writes: 0, deletes: 0, bytesRead: 0, bytesWritten: 0, errors: 0, timeouts: 0 });
  t.true(before.bytesTotal > 250 * 2 ** 20 && before.bytesFree <= before.bytesTotal);

  const id = newId();
  const data = randomBytes(3 * CHUNK + 5);
  await writeSlice(ref, id, 0, data);
  await readChunks(ref, id, 0, 0, 4);
  await readChunks(ref, id, 0, 3, 1);
  poke(await ref.request({ type: 'path', objectId: id, index: 0 }), chunkOffset(CHUNK, 1), (b) => b ^ 1);
  await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 1, count: 1 }), 'REPLY_ERROR');
  await rejectsWith(t, ref.request({ type: 'read', objectId: newId(), index: 0, firstChunk: 0, count: 1 }), 'REPLY_ERROR'); // MISSING: not a disk error
  await ref.request({ type: 'delete', objectId: id, index: 0 });

  const after = await ref.request({ type: 'info' });
  t.deepEqual(after.counters, { reads: 2, writes: 4, deletes: 1, bytesRead: data.byteLength + 5, bytesWritten: data.byteLength, errors: 1, timeouts: 0 });
  t.is(after.inflight, 0);
  t.true(after.bytesFree <= before.bytesFree + 2 ** 20);
});

test('several slices written at once, appends pipelined: each keeps its order, all read back', async (t) => {
  const { ref } = await startVolume(t);
  const slices = Array.from({ length: 8 }, (_, i) => ({ id: newId(), index: i % 6, data: randomBytes(4 * CHUNK - i * 1000) }));
  const sent: Array<Promise<unknown>> = [];
  for (const s of slices) sent.push(ref.request({ type: 'create', objectId: s.id, index: s.index, header: headerFor(s.id, s.index, s.data.byteLength) }));
  for (let c = 0; c < 4; c++) {
    for (const s of slices) {
      const chunk = own(s.data.subarray(c * CHUNK, (c + 1) * CHUNK));
      sent.push(ref.request({ type: 'append', objectId: s.id, index: s.index, chunk: c, data: chunk }, { transfer: [chunk] }));
    }
  }
  for (const s of slices) sent.push(ref.request({ type: 'commit', objectId: s.id, index: s.index }));
  await Promise.all(sent);
  for (const s of slices) t.true(Buffer.from((await readChunks(ref, s.id, s.index, 0, 4)).bytes).equals(s.data));
});

test('the actor refuses to start on a mount point that does not hold its volume', async (t) => {
  const root = mountRoot(t);
  const [dev] = await withLoopDevices(t, 1, 320);
  const { mountPoint, device } = await provisionDisk({ blockPath: dev!, volumeId: 2, instanceId: randomUUID(), mountRoot: root, createdAt: Date.now() });
  const system = await startTestSystem(t);
  const args: VolumeArgs = { volumeId: 3, mountPoint, device, readOnly: false, ioTimeoutMs: 5000, maxInflight: 4 };
  const crashed = eventually(system, 'child-crashed', (e) => e.id === volumeActorId(3));
  await system.start({ id: volumeActorId(3), module: VOLUME, args, restart: 'temporary' });
  t.regex((await crashed).message, /holds volume 2, not volume 3/);

  const elsewhere = { ...args, volumeId: 4, mountPoint: join(root, 'not-mounted') };
  const crashed2 = eventually(system, 'child-crashed', (e) => e.id === volumeActorId(4));
  await system.start({ id: volumeActorId(4), module: VOLUME, args: elsewhere, restart: 'temporary' });
  t.regex((await crashed2).message, /no identity .*: the disk is not mounted/);
});

test('reads longer than one direct read, chunks not aligned to blocks, read back exact', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  const size = DIRECT_PIECE / 2 + 4096 + 7; // three chunks span two pieces; no chunk or CRC is block-aligned
  const data = randomBytes(2 * size + 12345);
  await writeSlice(ref, id, 1, data, size);
  t.true(Buffer.from((await readChunks(ref, id, 1, 0, 3)).bytes).equals(data));
  t.true(Buffer.from((await readChunks(ref, id, 1, 1, 1)).bytes).equals(data.subarray(size, 2 * size)));
  t.true(Buffer.from((await readChunks(ref, id, 1, 2, 1)).bytes).equals(data.subarray(2 * size)));
});

test('a read of more than 128 MiB at once is refused: read in batches', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  const path = await ref.request({ type: 'path', objectId: id, index: 0 });
  // A sparse slice file whose header claims three 100 MiB chunks (no need to write them).
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, encodeSliceHeader({ objectId: id, index: 0, k: 1, m: 0, chunkSize: 100 << 20, objectSize: 300 << 20, sliceSize: 300 << 20 }));
  truncateSync(path, 64 + 3 * ((100 << 20) + 4));
  const err = await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 2 }), 'REPLY_ERROR');
  t.is(err.appCode, 'BAD_REQUEST');
  t.regex(err.message, /read in batches/);
  t.like(await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 1 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 0 } }, 'one big chunk is read (and its zeros do not verify)');
});

test('chunks as views of shared memory are copied before the reply; the last append can commit; a read fills the buffer it is given', async (t) => {
  const { ref } = await startVolume(t);
  const id = newId();
  const data = randomBytes(2 * CHUNK + 100);
  const sab = new SharedArrayBuffer(data.byteLength);
  new Uint8Array(sab).set(data);
  await ref.request({ type: 'create', objectId: id, index: 0, header: headerFor(id, 0, data.byteLength) });
  for (let c = 0; c < 3; c++) {
    const view = new Uint8Array(sab, c * CHUNK, Math.min(CHUNK, data.byteLength - c * CHUNK));
    const commit = c === 2;
    t.is(await ref.request({ type: 'append', objectId: id, index: 0, chunk: c, data: view, commit }), null, 'a view is not handed back');
    // The sender may reuse the memory once the reply came: scribbling on it changes nothing written.
    view.fill(0xee);
  }
  const path = await ref.request({ type: 'path', objectId: id, index: 0 });
  t.true(existsSync(path), 'committed by the last append: under its final name');
  t.false(existsSync(path + '.tmp'));
  const into = new ArrayBuffer(3 * CHUNK);
  const r = await ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 3, into }, { transfer: [into] });
  t.is(r.data.byteLength, 3 * CHUNK, 'the buffer given comes back');
  t.true(Buffer.from(r.data, 0, data.byteLength).equals(data), 'holding the chunks from byte 0');
  t.deepEqual(r.lengths, [CHUNK, CHUNK, 100]);
  const small = new ArrayBuffer(10);
  const r2 = await ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 2, count: 1, into: small }, { transfer: [small] });
  t.true(Buffer.from(r2.data).equals(data.subarray(2 * CHUNK)), 'a buffer too small is not used');

  const other = newId();
  await ref.request({ type: 'create', objectId: other, index: 1, header: headerFor(other, 1, 2 * CHUNK) });
  const err = await rejectsWith(t, ref.request({ type: 'append', objectId: other, index: 1, chunk: 0, data: new Uint8Array(CHUNK), commit: true }), 'REPLY_ERROR');
  t.regex(err.message, /commit with chunk 0, which is not its last \(1\)/);
  const err2 = await rejectsWith(t, ref.request({ type: 'append', objectId: other, index: 1, chunk: 0, data: 'bytes' as never }), 'REPLY_ERROR');
  t.regex(err2.message, /data must be an ArrayBuffer or a Uint8Array/);
  const err3 = await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 1, into: 'x' as never }), 'REPLY_ERROR');
  t.regex(err3.message, /into must be an ArrayBuffer/);
});
