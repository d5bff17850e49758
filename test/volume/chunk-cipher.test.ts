/**
 * The volume's chunk cipher (actors/volume/chunk-cipher.ts) on both of its backends: the native
 * addon (native/aes-gcm, which must be built: npm run build:native) and node:crypto. Each must
 * seal to exactly what the reference sealer of crypto-format.ts (SliceSealer) seals, open what it
 * seals, piece by piece at any cut and in place, and refuse a flipped byte, a flipped tag bit,
 * another chunk's nonce or another slice's keys. The streaming read (ChunkVerifier with
 * sealedCheck) is checked over both as well.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { ChunkCipher, nativeAesGcm, nativeUnavailable, SliceKeys } from '../../actors/volume/chunk-cipher.js';
import { ChecksumMismatch, ChunkVerifier, sealedCheck } from '../../actors/volume/chunk-verifier.js';
import { SliceSealer } from '../../protocols/objstore/crypto-format.js';
import type { SliceHeader } from '../../protocols/objstore/slice-format.js';

const volumeKey = new Uint8Array(randomBytes(32));
const header: SliceHeader = { objectId: '$0123456789abcdef01234567', index: 2, k: 4, m: 2, chunkSize: 1000, objectSize: 10_000, sliceSize: 2_500, sealed: { keyGen: 3 } };
const reference = new SliceSealer(volumeKey, header);
const backends = [
  { name: 'native', make: () => new ChunkCipher() },
  { name: 'node:crypto', make: () => new ChunkCipher(false) },
];

test('the native addon is built and loads', (t) => {
  t.truthy(nativeAesGcm(), `native/aes-gcm must be built (npm run build:native): ${nativeUnavailable}`);
  t.true(new ChunkCipher().isNative);
  t.false(new ChunkCipher(false).isNative);
});

for (const { name, make } of backends) {
  test(`${name}: seals as the reference sealer does, in one piece or cut anywhere, and opens in place`, (t) => {
    const keys = new SliceKeys(volumeKey, header);
    const cipher = make();
    const plain = new Uint8Array(randomBytes(1000));
    for (const chunk of [0, 1, 7, 2 ** 40]) {
      const want = reference.seal(chunk, plain);
      for (const cut of [0, 1, 15, 16, 17, 500, 999, 1000]) {
        const out = new Uint8Array(1000);
        const tag = new Uint8Array(16);
        cipher.begin(keys, chunk, true);
        cipher.update(plain.subarray(0, cut), out.subarray(0, cut));
        cipher.update(plain.subarray(cut), out.subarray(cut));
        cipher.sealEnd(tag);
        t.deepEqual(out, new Uint8Array(want.ciphertext), `chunk ${chunk}, cut at ${cut}: the ciphertext`);
        t.deepEqual(tag, new Uint8Array(want.tag), `chunk ${chunk}, cut at ${cut}: the tag`);
      }
      const opened = new Uint8Array(want.ciphertext);
      cipher.begin(keys, chunk, false);
      if (cipher.isNative) cipher.update(opened, opened);
      else cipher.update(new Uint8Array(want.ciphertext), opened);
      t.true(cipher.openEnd(new Uint8Array(want.tag)), `chunk ${chunk} opens`);
      t.deepEqual(opened, plain);
    }
  });

  test(`${name}: a flipped byte, a flipped tag bit, another chunk index or another slice's keys do not open`, (t) => {
    const keys = new SliceKeys(volumeKey, header);
    const cipher = make();
    const plain = new Uint8Array(randomBytes(300));
    const { ciphertext, tag } = reference.seal(5, plain);
    const opens = (k: SliceKeys, chunk: number, ct: Uint8Array, tg: Uint8Array) => {
      cipher.begin(k, chunk, false);
      cipher.update(ct, new Uint8Array(ct.byteLength));
      return cipher.openEnd(tg);
    };
    t.true(opens(keys, 5, ciphertext, tag));
    for (const at of [0, 150, 299]) {
      const bad = Uint8Array.from(ciphertext);
      bad[at]! ^= 1;
      t.false(opens(keys, 5, bad, tag), `byte ${at} flipped`);
    }
    const badTag = Uint8Array.from(tag);
    badTag[15]! ^= 0x80;
    t.false(opens(keys, 5, ciphertext, badTag), 'a tag bit flipped');
    t.false(opens(keys, 6, ciphertext, tag), 'read as another chunk (its nonce and AAD)');
    t.false(opens(new SliceKeys(volumeKey, { ...header, index: 3 }), 5, ciphertext, tag), 'another slice');
    t.false(opens(new SliceKeys(volumeKey, { ...header, sealed: { keyGen: 4 } }), 5, ciphertext, tag), 'another key generation');
    t.true(opens(keys, 5, ciphertext, tag), 'and the context still works after refusals');
  });

  test(`${name}: streamed through ChunkVerifier, sealed chunks open at every cut and a bad one is named`, (t) => {
    const keys = new SliceKeys(volumeKey, header);
    const chunks = [randomBytes(1000), randomBytes(1000), randomBytes(500)];
    const stored = Buffer.concat(chunks.flatMap((c, i) => {
      const s = reference.seal(i, c);
      return [Buffer.from(s.ciphertext), Buffer.from(s.tag)];
    }));
    const lengths = chunks.map((c) => c.length);
    for (const cut of [1, 999, 1000, 1008, 1016, 1017, 2500, stored.length - 1]) {
      const out = new Uint8Array(2500);
      const v = new ChunkVerifier(0, lengths, out, sealedCheck(keys, make()));
      v.push(stored.subarray(0, cut));
      v.push(stored.subarray(cut));
      t.true(v.done, `cut at ${cut}`);
      t.true(Buffer.from(out).equals(Buffer.concat(chunks)), `cut at ${cut}: the plaintext`);
    }
    const bad = Buffer.from(stored);
    bad[1016 + 10]! ^= 4;
    const v = new ChunkVerifier(0, lengths, new Uint8Array(2500), sealedCheck(keys, make()));
    const err = t.throws(() => v.push(bad), { instanceOf: ChecksumMismatch });
    t.is(err!.chunk, 1);
  });
}

test('bad arguments to the addon are refused with what was wrong', (t) => {
  const addon = nativeAesGcm()!;
  const ctx = addon.createContext();
  t.throws(() => addon.begin(ctx, true, new Uint8Array(31), new Uint8Array(12), new Uint8Array(0)), { message: /key must be 32 bytes, got 31/ });
  t.throws(() => addon.begin(ctx, true, new Uint8Array(32), new Uint8Array(16), new Uint8Array(0)), { message: /iv must be 12 bytes, got 16/ });
  t.throws(() => addon.begin({}, true, new Uint8Array(32), new Uint8Array(12), new Uint8Array(0)), { message: /context from createContext/ });
  addon.begin(ctx, true, new Uint8Array(32), new Uint8Array(12), new Uint8Array(0));
  t.throws(() => addon.update(ctx, new Uint8Array(10), new Uint8Array(9)), { message: /dst is shorter than src/ });
  t.throws(() => addon.update(ctx, 'text' as unknown as Uint8Array, new Uint8Array(9)), { message: /src must be a Uint8Array/ });
  t.throws(() => addon.sealEnd(ctx, new Uint8Array(8)), { message: /tag must be 16 bytes, got 8/ });
  t.throws(() => new SliceKeys(volumeKey, { ...header, sealed: undefined }), { message: /not a sealed one/ });
});
