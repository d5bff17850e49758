/** The pure encryption formats (protocols/objstore/crypto-format.ts): tamper anywhere or use the wrong key, and nothing opens. */
import test from 'ava';
import { hkdfSync, randomBytes } from 'node:crypto';
import { crc32c } from '@node-rs/crc32';
import {
  chunkNonce,
  decodeKeyFile,
  decodeKeySlots,
  decodeSealedPassphrase,
  encodeKeySlots,
  encodeSealedPassphrase,
  formatPassphrase,
  keyId,
  makeKeySlots,
  normalizePassphrase,
  openPassphrase,
  openWithKeyFile,
  openWithPassphrase,
  PASSPHRASE_BYTES,
  rewrapKeyFile,
  rewrapPassphrase,
  sealPassphrase,
  SealError,
  VolumeKdf,
  SliceSealer,
  sliceKey,
  type ScryptParams,
} from '../../protocols/objstore/crypto-format.js';
import { CHUNK_TAG_BYTES, chunkOffset, decodeSliceHeader, encodeSliceHeader, SliceFormatError, trailerBytes, type SliceHeader } from '../../protocols/objstore/slice-format.js';

const FAST: ScryptParams = { logN: 10, r: 8, p: 1 };
const volumeKey = new Uint8Array(randomBytes(32));
const kek = new Uint8Array(randomBytes(32));
const instanceId = '3f2a9c1e-4b5d-4e6f-8a7b-9c0d1e2f3a4b';
const header: SliceHeader = { objectId: '$0123456789abcdef01234567', index: 2, k: 4, m: 2, chunkSize: 1024, objectSize: 10_000, sliceSize: 2500, sealed: { keyGen: 1 } };
const passphrase = formatPassphrase(new Uint8Array(randomBytes(PASSPHRASE_BYTES)));

function slots() {
  return makeKeySlots({ volumeId: 7, instanceId, keyGen: 1, volumeKey, kek, passphrase, ivK: randomBytes(12), ivR: randomBytes(12), salt: randomBytes(16), scrypt: FAST });
}

test('a sealed header is version 3 with the cipher and key generation, decodes to itself, and its chunks are tag-strided', (t) => {
  const b = encodeSliceHeader(header);
  const dv = new DataView(b.buffer);
  t.is(dv.getUint16(4), 3);
  t.is(b[0x15], 1);
  t.is(dv.getUint32(0x1c), 1);
  t.deepEqual(decodeSliceHeader(b), header);
  t.is(trailerBytes(header), CHUNK_TAG_BYTES);
  t.is(chunkOffset(1024, 2, trailerBytes(header)), 64 + 2 * (1024 + 16));
  const plain = { ...header, sealed: undefined };
  delete plain.sealed;
  t.is(new DataView(encodeSliceHeader(plain).buffer).getUint16(4), 3);
  t.is(encodeSliceHeader(plain)[0x15], 0);
  t.is(decodeSliceHeader(encodeSliceHeader(plain)).sealed, undefined);
  t.throws(() => encodeSliceHeader({ ...header, sealed: { keyGen: 0 } }), { instanceOf: SliceFormatError, message: /sealed.keyGen must be an integer from 1/ });
});

test('a sealed header with an unknown cipher byte is refused', (t) => {
  const b = encodeSliceHeader(header);
  b[0x15] = 9;
  new DataView(b.buffer).setUint32(0x3c, crc32c(b.subarray(0, 0x3c)));
  t.throws(() => decodeSliceHeader(b), { message: /cipher 9 is not supported/ });
});

test('a chunk round-trips, its ciphertext is not its plaintext, and the nonce is the chunk index', (t) => {
  const s = new SliceSealer(volumeKey, header);
  const plain = new Uint8Array(randomBytes(1024));
  const { ciphertext, tag } = s.seal(1, plain);
  t.is(ciphertext.byteLength, 1024);
  t.is(tag.byteLength, 16);
  t.notDeepEqual(Buffer.from(ciphertext), Buffer.from(plain));
  t.deepEqual(Buffer.from(s.open(1, ciphertext, tag)), Buffer.from(plain));
  t.deepEqual([...chunkNonce(258)], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
  // The same chunk sealed again (a repair) is byte-identical: no new nonce use with other data.
  t.deepEqual(Buffer.from(s.seal(1, plain).ciphertext), Buffer.from(ciphertext));
});

test('a flipped bit anywhere in a sealed chunk or its tag is refused', (t) => {
  const s = new SliceSealer(volumeKey, header);
  const plain = new Uint8Array(randomBytes(100));
  const { ciphertext, tag } = s.seal(0, plain);
  for (let i = 0; i < ciphertext.length; i++) {
    const c = Uint8Array.from(ciphertext);
    c[i]! ^= 1 << i % 8;
    t.throws(() => s.open(0, c, tag), { instanceOf: SealError, message: /chunk 0: the AES-GCM tag does not verify/ });
  }
  for (let i = 0; i < 16; i++) {
    const g = Uint8Array.from(tag);
    g[i]! ^= 0x80;
    t.throws(() => s.open(0, ciphertext, g), { instanceOf: SealError });
  }
});

test('a chunk does not open at another position, in another slice, under another header or another key', (t) => {
  const s = new SliceSealer(volumeKey, header);
  const { ciphertext, tag } = s.seal(1, new Uint8Array(1024).fill(7));
  t.throws(() => s.open(2, ciphertext, tag), { instanceOf: SealError }, 'chunks swapped');
  t.throws(() => new SliceSealer(volumeKey, { ...header, index: 3 }).open(1, ciphertext, tag), { instanceOf: SealError }, 'another slice');
  t.throws(() => new SliceSealer(volumeKey, { ...header, objectId: '$0123456789abcdef01234568' }).open(1, ciphertext, tag), { instanceOf: SealError }, 'another object');
  for (const f of ['k', 'm', 'chunkSize', 'objectSize', 'sliceSize'] as const) {
    t.throws(() => new SliceSealer(volumeKey, { ...header, [f]: header[f] + 1 }).open(1, ciphertext, tag), { instanceOf: SealError }, `header field ${f}`);
  }
  t.throws(() => new SliceSealer(volumeKey, { ...header, sealed: { keyGen: 2 } }).open(1, ciphertext, tag), { instanceOf: SealError }, 'another key generation');
  t.throws(() => new SliceSealer(new Uint8Array(randomBytes(32)), header).open(1, ciphertext, tag), { instanceOf: SealError }, 'another volume key');
});

test('a slice key is HKDF-SHA256 of the volume key (RFC 5869, empty salt) over its identity: VolumeKdf gives hkdfSync\'s bytes', (t) => {
  for (let n = 0; n < 50; n++) {
    const vk = new Uint8Array(randomBytes(32));
    const id = '$' + randomBytes(12).toString('hex');
    const index = n % 256;
    const keyGen = 1 + ((n * 7919) % 0xffff_ffff);
    const info = Buffer.alloc(27 + 12 + 1 + 4);
    info.write('hostd objstore slice key v1', 0, 'latin1');
    Buffer.from(id.slice(1), 'hex').copy(info, 27);
    info[39] = index;
    info.writeUInt32BE(keyGen, 40);
    const expected = Buffer.from(hkdfSync('sha256', vk, new Uint8Array(0), info, 32));
    const kdf = new VolumeKdf(vk);
    t.deepEqual(Buffer.from(kdf.sliceKey(id, index, keyGen)), expected, `slice ${id}.${index} generation ${keyGen}`);
    t.deepEqual(Buffer.from(kdf.sliceKey(id.toUpperCase().replace('$', '$'), index, keyGen)), expected, 'and again, the id in capitals');
    t.deepEqual(Buffer.from(sliceKey(vk, id, index, keyGen)), expected, 'sliceKey, one slice');
  }
  t.throws(() => new VolumeKdf(new Uint8Array(31)), { message: /volume key must be 32 bytes, got 31/ });
});

test('slice keys differ per slice, per object and per generation; bad inputs are refused by name', (t) => {
  const k = (id: string, i: number, g: number) => Buffer.from(sliceKey(volumeKey, id, i, g)).toString('hex');
  const base = k(header.objectId, 0, 1);
  t.is(k(header.objectId.toUpperCase().replace('$', '$'), 0, 1), base, 'the object id is case-blind');
  t.not(k(header.objectId, 1, 1), base);
  t.not(k(header.objectId, 0, 2), base);
  t.not(k('$0123456789abcdef01234568', 0, 1), base);
  t.throws(() => sliceKey(new Uint8Array(16), header.objectId, 0, 1), { message: /volume key must be 32 bytes, got 16/ });
  t.throws(() => sliceKey(volumeKey, 'abc', 0, 1), { message: /object id must be/ });
  t.throws(() => sliceKey(volumeKey, header.objectId, 256, 1), { message: /index must be 0..255/ });
  t.throws(() => sliceKey(volumeKey, header.objectId, 0, 0), { message: /key generation must be/ });
  t.throws(() => new SliceSealer(volumeKey, { ...header, sealed: undefined }), { message: /not a sealed one/ });
});

test('the passphrase: 8 groups of 4 from the 32-character alphabet; typed back loosely, refused when wrong', (t) => {
  t.regex(passphrase, /^([0-9A-HJKMNP-TV-Z]{4}-){7}[0-9A-HJKMNP-TV-Z]{4}$/);
  t.is(formatPassphrase(new Uint8Array(20)), '0000-0000-0000-0000-0000-0000-0000-0000');
  t.is(formatPassphrase(new Uint8Array(20).fill(255)), 'ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZ');
  t.is(normalizePassphrase(passphrase.toLowerCase().replace(/-/g, ' ')), passphrase);
  t.is(normalizePassphrase('oooo iiii llll 0000 1111 2222 3333 4444'), '0000-1111-1111-0000-1111-2222-3333-4444');
  t.throws(() => normalizePassphrase('UUUU-0000-0000-0000-0000-0000-0000-0000'), { message: /holds "U", which is not one of its characters/ });
  t.throws(() => normalizePassphrase('0000-0000'), { message: /has 8 characters, not 32/ });
  t.throws(() => formatPassphrase(new Uint8Array(19)), { message: /must be 20 bytes/ });
});

test('key slots: the volume key opens from the key file and from the passphrase, and survives encoding', (t) => {
  const s = decodeKeySlots(encodeKeySlots(slots()));
  t.is(s.volumeId, 7);
  t.is(s.instanceId, instanceId);
  t.deepEqual(Buffer.from(openWithKeyFile(s, kek)), Buffer.from(volumeKey));
  t.deepEqual(Buffer.from(openWithPassphrase(s, passphrase.toLowerCase())), Buffer.from(volumeKey));
  t.false(encodeKeySlots(s).includes(Buffer.from(volumeKey).toString('base64')), 'the volume key is not in the file');
});

test('key slots: a wrong key file, a wrong passphrase, and every tampered field are refused', (t) => {
  const s = slots();
  const other = new Uint8Array(randomBytes(32));
  t.throws(() => openWithKeyFile(s, other), { instanceOf: SealError, message: new RegExp(`encrypted with key file ${keyId(kek)}, and the key file here is ${keyId(other)}`) });
  t.throws(() => openWithKeyFile({ ...s, keyFile: { ...s.keyFile, keyId: keyId(other) } }, other), { message: /key-file slot does not open/ });
  const wrongPass = formatPassphrase(new Uint8Array(randomBytes(20)));
  t.throws(() => openWithPassphrase(s, wrongPass), { message: /passphrase slot \(a wrong passphrase\?\) does not open/ });
  // Bound fields: volume id, installation, key generation.
  t.throws(() => openWithKeyFile({ ...s, volumeId: 8 }, kek), { instanceOf: SealError });
  t.throws(() => openWithKeyFile({ ...s, keyGen: 2 }, kek), { instanceOf: SealError });
  t.throws(() => openWithPassphrase({ ...s, instanceId: '00000000-0000-4000-8000-000000000000' }, passphrase), { instanceOf: SealError });
  // Any byte of either slot's iv, ciphertext, tag or salt.
  for (const slot of ['keyFile', 'passphrase'] as const) {
    for (const part of ['iv', 'ciphertext', 'tag', ...(slot === 'passphrase' ? ['salt'] : [])] as const) {
      const len = (s[slot] as unknown as Record<string, Uint8Array>)[part]!.byteLength;
      for (let i = 0; i < len; i += 5) {
        const b = Uint8Array.from((s[slot] as unknown as Record<string, Uint8Array>)[part]!);
        b[i]! ^= 1;
        const bad = { ...s, [slot]: { ...s[slot], [part]: b } };
        t.throws(() => (slot === 'keyFile' ? openWithKeyFile(bad, kek) : openWithPassphrase(bad, passphrase)), { instanceOf: SealError }, `${slot}.${part}[${i}]`);
      }
    }
  }
});

test('key slots: a malformed file is refused, naming what is wrong', (t) => {
  const good = JSON.parse(encodeKeySlots(slots())) as Record<string, any>;
  const bad = (edit: (j: Record<string, any>) => void) => {
    const j = structuredClone(good);
    edit(j);
    return JSON.stringify(j);
  };
  t.throws(() => decodeKeySlots('{'), { message: /key slots: not JSON/ });
  t.throws(() => decodeKeySlots('[]'), { message: /the file must be an object/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.format = 'x'))), { message: /not a key-slot file/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.version = 2))), { message: /version 2 is not supported/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.cipher = 'aes-128-cbc'))), { message: /cipher "aes-128-cbc" is not supported/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.volumeId = -1))), { message: /volumeId must be an integer/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.keyGen = 0))), { message: /keyGen must be an integer from 1/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.instanceId = 'nope'))), { message: /instanceId must be a UUID/ });
  t.throws(() => decodeKeySlots(bad((j) => delete j.slots.passphrase)), { message: /slots.passphrase must be an object/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.slots.keyFile.iv = 'AAAA'))), { message: /slots.keyFile.iv must be 12 bytes, got 3/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.slots.keyFile.tag = '!!'))), { message: /slots.keyFile.tag must be base64/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.slots.keyFile.keyId = 'xyz'))), { message: /keyId must be 16 hex/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.slots.passphrase.kdf = 'pbkdf2'))), { message: /kdf must be "scrypt"/ });
  t.throws(() => decodeKeySlots(bad((j) => (j.slots.passphrase.logN = 30))), { message: /logN must be an integer from 10 to 20/ });
});

test('rewrapping: a new key file or a new passphrase opens; the old one no longer does', (t) => {
  const s = slots();
  const kek2 = new Uint8Array(randomBytes(32));
  const s2 = rewrapKeyFile(s, volumeKey, kek2, randomBytes(12));
  t.deepEqual(Buffer.from(openWithKeyFile(s2, kek2)), Buffer.from(volumeKey));
  t.throws(() => openWithKeyFile(s2, kek), { instanceOf: SealError });
  t.deepEqual(Buffer.from(openWithPassphrase(s2, passphrase)), Buffer.from(volumeKey), 'the passphrase slot is untouched');
  const pass2 = formatPassphrase(new Uint8Array(randomBytes(20)));
  const s3 = rewrapPassphrase(s2, volumeKey, pass2, randomBytes(12), randomBytes(16), FAST);
  t.deepEqual(Buffer.from(openWithPassphrase(s3, pass2)), Buffer.from(volumeKey));
  t.throws(() => openWithPassphrase(s3, passphrase), { instanceOf: SealError });
});

test('the sealed passphrase opens under its key file only, and any tampering is refused', (t) => {
  const sealed = sealPassphrase(kek, instanceId, passphrase, randomBytes(16), randomBytes(12), 1_700_000_000_000);
  const round = decodeSealedPassphrase(encodeSealedPassphrase(sealed));
  t.is(openPassphrase(kek, round), passphrase);
  t.is(round.revealedAt, null);
  t.false(encodeSealedPassphrase(sealed).includes(passphrase));
  t.throws(() => openPassphrase(new Uint8Array(randomBytes(32)), round), { message: /sealed under key file/ });
  const c = Uint8Array.from(round.sealed.ciphertext);
  c[3]! ^= 4;
  t.throws(() => openPassphrase(kek, { ...round, sealed: { ...round.sealed, ciphertext: c } }), { message: /sealed recovery passphrase does not open/ });
  t.throws(() => openPassphrase(kek, { ...round, instanceId: '00000000-0000-4000-8000-000000000000' }), { instanceOf: SealError });
  t.throws(() => decodeSealedPassphrase('{"format":"x"}'), { message: /not a version 1 hostd-objstore-recovery file/ });
  t.throws(() => decodeSealedPassphrase('nope'), { message: /not JSON/ });
});

test('the key file holds exactly 32 bytes', (t) => {
  t.is(decodeKeyFile(new Uint8Array(32)).byteLength, 32);
  t.throws(() => decodeKeyFile(new Uint8Array(31)), { message: /must hold 32 bytes, it holds 31/ });
  t.throws(() => decodeKeyFile(new Uint8Array(0)), { message: /it holds 0/ });
});

test('a chunk sealed under an old version-2 header still opens with the header decoded from its file', (t) => {
  const v2: SliceHeader = { ...header, legacy: 2 };
  const plain = new Uint8Array(randomBytes(1000));
  const { ciphertext, tag } = new SliceSealer(volumeKey, v2).seal(3, plain);
  const decoded = decodeSliceHeader(encodeSliceHeader(v2));
  t.is(decoded.legacy, 2);
  t.deepEqual(new Uint8Array(new SliceSealer(volumeKey, decoded).open(3, ciphertext, tag)), plain);
  const asV3 = { ...decoded };
  delete asV3.legacy;
  t.throws(() => new SliceSealer(volumeKey, asV3).open(3, ciphertext, tag), { message: /tag does not verify/ }, 'the version is part of the AAD: keeping it is what makes old slices read');
});
