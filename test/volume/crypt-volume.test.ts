/**
 * An encrypted volume on a real loop device: slices sealed on the disk (the raw device holds none of
 * the plaintext, while a plain volume beside it does), read back byte-exact, a flipped or moved byte
 * refused per chunk, and a disk that does not open without its key file.
 */
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, mkdtempSync, openSync, readSync, rmSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionDisk } from '../../actors/volume/disks.js';
import { volumeActorId, type VolumeArgs, type VolumeProtocol } from '../../actors/volume/messages.js';
import { readKeySlots, writeKeySlots } from '../../actors/volume/volume-key.js';
import { formatPassphrase, makeKeySlots, SliceSealer } from '../../protocols/objstore/crypto-format.js';
import { CHUNK_TAG_BYTES, chunkOffset, SLICE_HEADER_BYTES, type SliceHeader } from '../../protocols/objstore/slice-format.js';
import type { ActorRef } from '../../runtime/index.js';
import { mountRoot, withLoopDevices } from '../helpers/loop.js';
import { DIRECT_PIECE } from '../../actors/volume/direct-io.js';
import { deviceHolds, marked } from './crypt-device.js';
import { eventually, rejectsWith, startTestSystem } from '../helpers/util.js';

const VOLUME = new URL('../../actors/volume/actor.js', import.meta.url).href;
const CHUNK = 64 * 1024;
const FAST = { logN: 10, r: 8, p: 1 };

interface Disk {
  device: string;
  mountPoint: string;
  keyFile: string;
  /** the volume key sealed in its key slots (encrypted disks) */
  volumeKey: Uint8Array;
}

/** A provisioned loop device; encrypted (key slots on it, key file in a temp dir) when asked. */
async function disk(t: ExecutionContext, volumeId: number, encrypt: boolean): Promise<Disk> {
  const [dev] = await withLoopDevices(t, 1, 320);
  const instanceId = randomUUID();
  const { mountPoint, device } = await provisionDisk({ blockPath: dev!, volumeId, instanceId, mountRoot: mountRoot(t), createdAt: Date.now() });
  const dir = mkdtempSync(join(tmpdir(), 'hostd-crypt-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const keyFile = join(dir, 'objstore.key');
  const kek = randomBytes(32);
  const volumeKey = new Uint8Array(randomBytes(32));
  writeFileSync(keyFile, kek, { mode: 0o600 });
  if (encrypt) {
    const slots = makeKeySlots({ volumeId, instanceId, keyGen: 1, volumeKey, kek, passphrase: formatPassphrase(randomBytes(20)), ivK: randomBytes(12), ivR: randomBytes(12), salt: randomBytes(16), scrypt: FAST });
    await writeKeySlots(mountPoint, slots);
  }
  return { device, mountPoint, keyFile, volumeKey };
}

async function start(t: ExecutionContext, volumeId: number, d: Disk, opts: Partial<VolumeArgs> = {}): Promise<ActorRef<VolumeProtocol>> {
  const system = await startTestSystem(t);
  const args: VolumeArgs = { volumeId, mountPoint: d.mountPoint, device: d.device, readOnly: false, ioTimeoutMs: 5000, maxInflight: 4, keyFile: d.keyFile, ...opts };
  await system.start({ id: volumeActorId(volumeId), module: VOLUME, args, placement: { mode: 'shared', group: 'volumes' } });
  return system.ref<VolumeProtocol>(volumeActorId(volumeId));
}

/** The volume actor started with these args crashes in open: its message. */
async function crashOf(t: ExecutionContext, volumeId: number, d: Disk, opts: Partial<VolumeArgs> = {}): Promise<string> {
  const system = await startTestSystem(t);
  const args: VolumeArgs = { volumeId, mountPoint: d.mountPoint, device: d.device, readOnly: false, ioTimeoutMs: 5000, maxInflight: 4, keyFile: d.keyFile, ...opts };
  const crashed = eventually(system, 'child-crashed', (e) => e.id === volumeActorId(volumeId));
  await system.start({ id: volumeActorId(volumeId), module: VOLUME, args, restart: 'temporary' });
  return (await crashed).message;
}

const own = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer;
let nextId = 0x2000;
const newId = () => '$' + (Date.now() * 1000 + nextId++).toString(16).padStart(24, '0');
const headerFor = (objectId: string, index: number, sliceSize: number): SliceHeader => ({ objectId, index, k: 4, m: 2, chunkSize: CHUNK, objectSize: sliceSize * 4, sliceSize });

async function writeSlice(ref: ActorRef<VolumeProtocol>, objectId: string, index: number, data: Uint8Array) {
  await ref.request({ type: 'create', objectId, index, header: headerFor(objectId, index, data.byteLength) });
  for (let c = 0, off = 0; off < data.byteLength; c++, off += CHUNK) {
    const chunk = own(data.subarray(off, off + CHUNK));
    await ref.request({ type: 'append', objectId, index, chunk: c, data: chunk }, { transfer: [chunk] });
  }
  return ref.request({ type: 'commit', objectId, index });
}

async function read(ref: ActorRef<VolumeProtocol>, objectId: string, index: number, firstChunk: number, count: number): Promise<Buffer> {
  return Buffer.from((await ref.request({ type: 'read', objectId, index, firstChunk, count })).data);
}

function poke(path: string, position: number, mutate: (b: Buffer) => void, len = 1) {
  const fd = openSync(path, 'r+');
  try {
    const b = Buffer.alloc(len);
    readSync(fd, b, 0, len, position);
    mutate(b);
    writeSync(fd, b, 0, len, position);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

test('an encrypted volume holds none of a slice\'s bytes on its raw device and reads them back byte-exact; a plain one beside it holds them', async (t) => {
  const marker = Buffer.from(`hostd-crypt-marker-${randomBytes(12).toString('hex')}`);
  const [enc, plain] = await Promise.all([disk(t, 1, true), disk(t, 2, false)]);
  const [encRef, plainRef] = await Promise.all([start(t, 1, enc), start(t, 2, plain)]);
  t.deepEqual((await encRef.request({ type: 'info' })).encrypted, { keyGen: 1 });
  t.is((await plainRef.request({ type: 'info' })).encrypted, null);

  const data = marked(marker, 3 * CHUNK + 999);
  const id = newId();
  const encCommit = await writeSlice(encRef, id, 0, data);
  const plainCommit = await writeSlice(plainRef, id, 0, data);
  t.is(encCommit.bytes, SLICE_HEADER_BYTES + data.length + 4 * CHUNK_TAG_BYTES, 'sealed: a 16-byte tag after each chunk');
  t.is(plainCommit.bytes, SLICE_HEADER_BYTES + data.length + 4 * 4);

  t.true((await read(encRef, id, 0, 0, 4)).equals(data), 'GET side: byte-exact');
  t.true((await read(encRef, id, 0, 2, 2)).equals(data.subarray(2 * CHUNK)), 'a range of chunks');
  const h = await encRef.request({ type: 'readHeader', objectId: id, index: 0 });
  t.deepEqual(h, { ...headerFor(id, 0, data.length), sealed: { keyGen: 1 } }, 'the header says sealed; geometry as given');

  t.true(await deviceHolds(plain.device, marker), 'the search finds the marker on a plain volume (the search works)');
  t.false(await deviceHolds(enc.device, marker), 'and finds none of it on the encrypted one');
  t.false(await deviceHolds(enc.device, marker.subarray(0, 16)), 'not even its first 16 bytes');
});

test('a flipped byte in a sealed chunk or its tag, two chunks swapped, or an edited header are refused, naming the chunk', async (t) => {
  const d = await disk(t, 3, true);
  const ref = await start(t, 3, d);
  const id = newId();
  const data = randomBytes(4 * CHUNK);
  await writeSlice(ref, id, 1, data);
  const path = await ref.request({ type: 'path', objectId: id, index: 1 });
  const at = (c: number) => chunkOffset(CHUNK, c, CHUNK_TAG_BYTES);

  poke(path, at(1) + 5000, (b) => (b[0]! ^= 0x01));
  t.like(await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 1, firstChunk: 1, count: 1 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 1 } });
  t.like(await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 1, firstChunk: 0, count: 4 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 1 } });
  t.true((await read(ref, id, 1, 0, 1)).equals(data.subarray(0, CHUNK)), 'the chunk before reads');
  t.true((await read(ref, id, 1, 2, 2)).equals(data.subarray(2 * CHUNK)), 'the chunks after read');

  poke(path, at(2) + CHUNK + 3, (b) => (b[0]! ^= 0x80)); // a byte of chunk 2's tag
  t.like(await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 1, firstChunk: 2, count: 1 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 2 } });

  // Chunk 3 (the last, whole) copied with its tag over chunk 0: the AAD binds each chunk to its place.
  const fd = openSync(path, 'r');
  const three = Buffer.alloc(CHUNK + CHUNK_TAG_BYTES);
  readSync(fd, three, 0, three.length, at(3));
  closeSync(fd);
  poke(path, at(0), (b) => three.copy(b), three.length);
  const moved = await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 1, firstChunk: 0, count: 1 }), 'REPLY_ERROR');
  t.like(moved, { appCode: 'CHECKSUM', details: { chunk: 0 } });
  t.regex(moved.message, /AES-GCM tag does not verify/);
});

test('a sealed slice whose header was edited and re-checksummed does not open: the header is authenticated', async (t) => {
  const { crc32c } = await import('@node-rs/crc32');
  const d = await disk(t, 4, true);
  const ref = await start(t, 4, d);
  const id = newId();
  const data = randomBytes(2 * CHUNK);
  await writeSlice(ref, id, 2, data);
  const path = await ref.request({ type: 'path', objectId: id, index: 2 });
  // objectSize (0x20..0x27) changed and the header CRC recomputed: a valid header, not the sealed one.
  poke(path, 0, (b) => {
    b.writeBigUInt64BE(b.readBigUInt64BE(0x20) + 1n, 0x20);
    b.writeUInt32BE(crc32c(b.subarray(0, 0x3c)), 0x3c);
  }, 64);
  // A fresh actor (no header cached) reads the edited header.
  const again = await start(t, 4, d);
  t.like(await rejectsWith(t, again.request({ type: 'read', objectId: id, index: 2, firstChunk: 0, count: 1 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 0 } });
});

test('an encrypted disk does not open without its key file, with another key file, or with altered key slots, and says why', async (t) => {
  const d = await disk(t, 5, true);
  t.regex(await crashOf(t, 5, d, { keyFile: join(tmpdir(), `hostd-no-such-key-${randomUUID()}`) }), /volume 5 is encrypted and the key file .* does not open it: ENOENT/);
  const other = join(mkdtempSync(join(tmpdir(), 'hostd-crypt-')), 'other.key');
  t.teardown(() => rmSync(other, { force: true }));
  writeFileSync(other, randomBytes(32));
  t.regex(await crashOf(t, 5, d, { keyFile: other }), /was encrypted with key file [0-9a-f]{16}, and the key file here is [0-9a-f]{16}/);
  t.regex(await crashOf(t, 5, d, { keyFile: undefined }), /volume 5 is encrypted and no key file was given/);
  const slots = (await readKeySlots(d.mountPoint))!;
  const tag = Uint8Array.from(slots.keyFile.tag);
  tag[0]! ^= 1;
  await writeKeySlots(d.mountPoint, { ...slots, keyFile: { ...slots.keyFile, tag } });
  t.regex(await crashOf(t, 5, d), /key-file slot does not open/);
  await writeKeySlots(d.mountPoint, slots);
  const ref = await start(t, 5, d);
  t.deepEqual((await ref.request({ type: 'info' })).encrypted, { keyGen: 1 }, 'restored slots open again');
});

test('the store cannot ask for a sealed header: the volume decides', async (t) => {
  const d = await disk(t, 6, true);
  const ref = await start(t, 6, d);
  const id = newId();
  const err = await rejectsWith(t, ref.request({ type: 'create', objectId: id, index: 0, header: { ...headerFor(id, 0, 10), sealed: { keyGen: 1 } } }), 'REPLY_ERROR');
  t.like(err, { appCode: 'BAD_REQUEST' });
  t.regex(err.message, /never says sealed/);
});

test('chunks appended all at once, some from shared memory, are sealed in order as the reference sealer seals them; reads across read pieces open them and name the first bad chunk', async (t) => {
  const d = await disk(t, 7, true);
  const ref = await start(t, 7, d);
  const id = newId();
  const chunks = Math.ceil((DIRECT_PIECE + 20 * CHUNK) / CHUNK); // a full read spans two pieces, one chunk split between them
  const data = randomBytes(chunks * CHUNK - 100);
  await ref.request({ type: 'create', objectId: id, index: 3, header: headerFor(id, 3, data.length) });
  // Every append sent before the first answer: each is sealed on arrival, the slice's chain writes them in order.
  await Promise.all(
    Array.from({ length: chunks }, (_, c) => {
      const bytes = data.subarray(c * CHUNK, (c + 1) * CHUNK);
      if (c % 3 === 1) {
        const shared = new Uint8Array(new SharedArrayBuffer(bytes.length));
        shared.set(bytes);
        return ref.request({ type: 'append', objectId: id, index: 3, chunk: c, data: shared });
      }
      const buf = own(bytes);
      return ref.request({ type: 'append', objectId: id, index: 3, chunk: c, data: buf }, { transfer: [buf] });
    }),
  );
  await ref.request({ type: 'commit', objectId: id, index: 3 });

  // The file, read raw, opens chunk by chunk with the synchronous reference sealer.
  const path = await ref.request({ type: 'path', objectId: id, index: 3 });
  const sealer = new SliceSealer(d.volumeKey, { ...headerFor(id, 3, data.length), sealed: { keyGen: 1 } });
  const fd = openSync(path, 'r');
  t.teardown(() => closeSync(fd));
  for (let c = 0; c < chunks; c++) {
    const len = Math.min(CHUNK, data.length - c * CHUNK);
    const stored = Buffer.alloc(len + CHUNK_TAG_BYTES);
    readSync(fd, stored, 0, stored.length, chunkOffset(CHUNK, c, CHUNK_TAG_BYTES));
    const plain = sealer.open(c, stored.subarray(0, len), stored.subarray(len));
    if (!Buffer.from(plain).equals(data.subarray(c * CHUNK, c * CHUNK + len))) return t.fail(`chunk ${c} on the disk is not the reference sealing of chunk ${c}`);
  }
  t.pass('every chunk on the disk opens with SliceSealer to its plaintext');

  t.true((await read(ref, id, 3, 0, chunks)).equals(data), `one read of ${chunks} chunks (two O_DIRECT pieces) is byte-exact`);
  // Two chunks spoiled (one of them the chunk split between the pieces): the read names the first.
  const late = chunks - 2;
  const early = Math.floor(DIRECT_PIECE / (CHUNK + CHUNK_TAG_BYTES)); // the chunk split between the pieces
  poke(path, chunkOffset(CHUNK, late, CHUNK_TAG_BYTES) + 10, (b) => (b[0]! ^= 0x04));
  poke(path, chunkOffset(CHUNK, early, CHUNK_TAG_BYTES) + CHUNK - 1, (b) => (b[0]! ^= 0x04));
  const again = await start(t, 7, d); // no cached header, no page cache (O_DIRECT anyway)
  t.like(await rejectsWith(t, again.request({ type: 'read', objectId: id, index: 3, firstChunk: 0, count: chunks }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: early } });
  t.like(await rejectsWith(t, again.request({ type: 'read', objectId: id, index: 3, firstChunk: early + 1, count: chunks - early - 1 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: late } });
  t.true((await read(again, id, 3, 0, early)).equals(data.subarray(0, early * CHUNK)), 'the chunks before the first bad one read');
});

test('small chunks (a 4 KiB object\'s) are sealed to the same format: the reference sealer opens them, and a flipped byte is refused by chunk', async (t) => {
  const d = await disk(t, 8, true);
  const ref = await start(t, 8, d);
  const id = newId();
  const small = 4096; // like the one chunk of a 4 KiB object
  const header: SliceHeader = { objectId: id, index: 0, k: 1, m: 2, chunkSize: small, objectSize: 5 * small - 7, sliceSize: 5 * small - 7 };
  const data = randomBytes(header.sliceSize);
  await ref.request({ type: 'create', objectId: id, index: 0, header });
  for (let c = 0; c < 5; c++) {
    const buf = own(data.subarray(c * small, (c + 1) * small));
    await ref.request({ type: 'append', objectId: id, index: 0, chunk: c, data: buf, commit: c === 4 }, { transfer: [buf] });
  }
  t.true((await read(ref, id, 0, 0, 5)).equals(data), 'read back byte-exact');
  const path = await ref.request({ type: 'path', objectId: id, index: 0 });
  const sealer = new SliceSealer(d.volumeKey, { ...header, sealed: { keyGen: 1 } });
  const fd = openSync(path, 'r');
  t.teardown(() => closeSync(fd));
  const stored = Buffer.alloc(small - 7 + CHUNK_TAG_BYTES);
  readSync(fd, stored, 0, stored.length, chunkOffset(small, 4, CHUNK_TAG_BYTES));
  t.true(Buffer.from(sealer.open(4, stored.subarray(0, small - 7), stored.subarray(small - 7))).equals(data.subarray(4 * small)), 'the last (short) chunk opens with SliceSealer');
  poke(path, chunkOffset(small, 3, CHUNK_TAG_BYTES) + 100, (b) => (b[0]! ^= 0x10));
  t.like(await rejectsWith(t, ref.request({ type: 'read', objectId: id, index: 0, firstChunk: 0, count: 5 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 3 } });
  t.true((await read(ref, id, 0, 4, 1)).equals(data.subarray(4 * small)), 'the chunk after it reads');
});

test('a sealed slice cut short is refused as truncated at the chunk where it ends, with reads still out ahead of it', async (t) => {
  const d = await disk(t, 9, true);
  const ref = await start(t, 9, d);
  const id = newId();
  const data = randomBytes(48 * CHUNK); // 3 MiB stored: three 1 MiB pieces and a little
  await writeSlice(ref, id, 1, data);
  const path = await ref.request({ type: 'path', objectId: id, index: 1 });
  truncateSync(path, chunkOffset(CHUNK, 10, CHUNK_TAG_BYTES) + 100); // inside chunk 10, in the first piece
  const again = await start(t, 9, d);
  t.like(await rejectsWith(t, again.request({ type: 'read', objectId: id, index: 1, firstChunk: 0, count: 48 }), 'REPLY_ERROR'), { appCode: 'CHECKSUM', details: { chunk: 10, truncated: true } });
  t.true((await read(again, id, 1, 0, 10)).equals(data.subarray(0, 10 * CHUNK)), 'the chunks before the cut read');
});
