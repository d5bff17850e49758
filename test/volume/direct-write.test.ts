/**
 * DirectWriter (actors/volume/direct-write.ts): a byte stream written with O_DIRECT through an
 * aligned stage, on a real file opened O_DIRECT. The file holds exactly the bytes pushed (pieces
 * of awkward sizes across stage boundaries), is cut to its exact length, and a writer that is done
 * refuses more; a write the kernel refuses fails the writer with the kernel's error.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { constants as fsc, readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectWriter, STAGE_BYTES } from '../../actors/volume/direct-write.js';
import { tempDir } from '../helpers/util.js';

const run = <T>(_what: string, op: () => Promise<T>) => op();
const FLAGS = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_DIRECT;

for (const total of [0, 1, 4095, 4096, 4097, STAGE_BYTES - 1, STAGE_BYTES, STAGE_BYTES + 1, 3 * STAGE_BYTES + 12345]) {
  test(`${total} bytes pushed in pieces of awkward sizes are the file, exactly`, async (t) => {
    const path = join(tempDir(t), 'slice');
    const fh = await open(path, FLAGS, 0o600);
    t.teardown(() => fh.close().catch(() => undefined));
    const w = new DirectWriter(fh, run);
    const bytes = randomBytes(total);
    const sizes = [64, 1, 262144, 4, 7, 700000, 4];
    for (let off = 0, i = 0; off < total; i++) {
      const n = Math.min(total - off, sizes[i % sizes.length]!);
      await w.push(bytes.subarray(off, off + n));
      off += n;
      t.is(w.length, off);
    }
    await w.finish();
    await fh.close();
    t.is(statSync(path).size, total, 'cut to its exact length');
    t.true(readFileSync(path).equals(bytes), 'every byte where it was pushed');
    await t.throwsAsync(w.push(new Uint8Array(1)), { message: /closed/ }, 'a finished writer takes no more');
  });
}

test('a piece pushed is copied: the caller may reuse its buffer at once', async (t) => {
  const path = join(tempDir(t), 'slice');
  const fh = await open(path, FLAGS, 0o600);
  t.teardown(() => fh.close().catch(() => undefined));
  const w = new DirectWriter(fh, run);
  const piece = new Uint8Array(100).fill(7);
  await w.push(piece);
  piece.fill(9);
  await w.push(piece);
  await w.finish();
  await fh.close();
  const got = readFileSync(path);
  t.true(got.subarray(0, 100).every((b) => b === 7));
  t.true(got.subarray(100, 200).every((b) => b === 9));
});

test('a write the kernel refuses (a closed handle) fails finish with the kernel\'s error', async (t) => {
  const path = join(tempDir(t), 'slice');
  const fh = await open(path, 'w');
  await fh.close(); // a closed handle: every write fails
  const w = new DirectWriter(fh, run);
  await w.push(new Uint8Array(10));
  const err = await t.throwsAsync(w.finish());
  t.truthy((err as NodeJS.ErrnoException).code, `${err?.message}`);
});
