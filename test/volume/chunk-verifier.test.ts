import test from 'ava';
import { randomBytes } from 'node:crypto';
import { ChecksumMismatch, ChunkVerifier } from '../../actors/volume/chunk-verifier.js';
import { chunkCrc } from '../../protocols/objstore/slice-format.js';

/** Chunks with their CRCs, back to back, as in a slice file. */
function layout(chunks: Uint8Array[]): Uint8Array {
  const parts: Buffer[] = [];
  for (const c of chunks) {
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(chunkCrc(c));
    parts.push(Buffer.from(c), crc);
  }
  return Buffer.concat(parts);
}

const chunks = [randomBytes(100), randomBytes(100), randomBytes(37)];
const lengths = chunks.map((c) => c.length);
const raw = layout(chunks);

test('chunks split into pieces at every position verify and come out back to back', (t) => {
  for (let cut = 1; cut < raw.length; cut++) {
    const out = new Uint8Array(237);
    const v = new ChunkVerifier(4, lengths, out);
    v.push(raw.subarray(0, cut));
    v.push(raw.subarray(cut));
    t.true(v.done);
    t.is(v.chunk, 7);
    t.true(Buffer.from(out).equals(Buffer.concat(chunks)), `cut at ${cut}`);
  }
  const out = new Uint8Array(237);
  const v = new ChunkVerifier(0, lengths, out);
  for (const b of raw) v.push(Uint8Array.of(b));
  t.true(v.done);
});

test('a flipped byte in a chunk or its CRC names that chunk', (t) => {
  for (const at of [0, 99, 100, 103, 104, 150, 207, 208, 240]) {
    const bad = Uint8Array.from(raw);
    bad[at]! ^= 0x40;
    const v = new ChunkVerifier(10, lengths, new Uint8Array(237));
    const err = t.throws(() => v.push(bad), { instanceOf: ChecksumMismatch });
    t.is(err!.chunk, 10 + (at < 104 ? 0 : at < 208 ? 1 : 2), `byte ${at}`);
  }
});

test('fewer bytes than the chunks leave it not done, at the chunk where they end', (t) => {
  const v = new ChunkVerifier(0, lengths, new Uint8Array(237));
  v.push(raw.subarray(0, 150));
  t.false(v.done);
  t.is(v.chunk, 1);
});
