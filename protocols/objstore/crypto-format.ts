/**
 * Encryption at rest, the pure part: the key hierarchy and every format it writes. node:crypto only
 * (the well-kept library here); no I/O, no clocks: random bytes (keys, IVs, salts) come in as
 * arguments, so every function is deterministic and testable.
 *
 * Key hierarchy (docs/object-store.md, "Encryption at rest"):
 *
 *   key file (KEK, 32 random bytes, /var/lib/objstore/objstore.key)    recovery passphrase (scrypt)
 *            \ slot "keyFile": AES-256-GCM wrap                   slot "passphrase" //
 *                          volume key (DEK, 32 random bytes, one per encrypted volume)
 *                                           | HKDF-SHA256(info = object id, slice index, key generation)
 *                          slice key (one per slice file)
 *                                           | AES-256-GCM, nonce = chunk index, AAD = slice header + chunk index
 *                          sealed chunks (the 16-byte tag in place of the chunk's CRC32C)
 *
 * The wrapped volume key lives on the disk itself (the key-slot file beside `.identity`), so a disk
 * plus the key file, or a disk plus the passphrase, opens it without the record database.
 *
 * Nonces never repeat under one key: a slice key is used for one slice of one object (object ids
 * are unique), chunk c always has nonce c, and a slice rewritten (a repair, a move back) carries the
 * same plaintext (parity is recomputed from data, deterministically), so the same (key, nonce) seals
 * the same bytes. A volume encrypted again gets a new volume key and a higher key generation.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, scryptSync, type DecipherGCM } from 'node:crypto';
import { encodeSliceHeader, SLICE_HEADER_BYTES, type SliceHeader } from './slice-format.js';

export const KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;
export const SALT_BYTES = 16;
const CIPHER = 'aes-256-gcm';

/** Anything that does not open: a wrong key, a tampered byte, a malformed file. Says which. */
export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

function checkKey(what: string, key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.byteLength !== KEY_BYTES) throw new SealError(`${what} must be ${KEY_BYTES} bytes, got ${key instanceof Uint8Array ? key.byteLength : typeof key}`);
}

function checkBytes(what: string, b: Uint8Array, n: number): void {
  if (!(b instanceof Uint8Array) || b.byteLength !== n) throw new SealError(`${what} must be ${n} bytes, got ${b instanceof Uint8Array ? b.byteLength : typeof b}`);
}

// ─── slices ────────────────────────────────────────────────────────────────────────────────────

const SLICE_KEY_INFO = 'hostd objstore slice key v1';

/**
 * The keys derived from one volume key: HKDF-SHA256 (RFC 5869, salt empty) of the volume key over
 * an info string (a slice's key: its object id, slice index and key generation; a slice record's:
 * slice-record.ts). The extract step (the pseudo-random key) is the same for every key of the
 * volume, so it is done once here; each key is then the expand step alone, one HMAC for its 32
 * bytes. The bytes are hkdfSync's (the test checks them against it); hkdfSync runs both steps at
 * every call and costs ~4× as much, which a GET of a small sealed object paid each time.
 */
export class VolumeKdf {
  private readonly prk: Buffer;

  constructor(volumeKey: Uint8Array) {
    checkKey('volume key', volumeKey);
    this.prk = createHmac('sha256', Buffer.alloc(32)).update(volumeKey).digest();
  }

  /** The 32-byte key for `info` (the expand step's one block). */
  expand(info: Uint8Array): Uint8Array {
    return new Uint8Array(createHmac('sha256', this.prk).update(info).update(BLOCK_ONE).digest());
  }

  /** The key of one slice. */
  sliceKey(objectId: string, index: number, keyGen: number): Uint8Array {
    if (!/^\$[0-9a-fA-F]{24}$/.test(objectId)) throw new SealError(`slice key: object id must be '$' and 24 hex characters, got ${JSON.stringify(objectId)}`);
    if (!Number.isSafeInteger(index) || index < 0 || index > 255) throw new SealError(`slice key: index must be 0..255, got ${String(index)}`);
    if (!Number.isSafeInteger(keyGen) || keyGen < 1 || keyGen > 0xffff_ffff) throw new SealError(`slice key: key generation must be 1..2^32-1, got ${String(keyGen)}`);
    const info = Buffer.alloc(SLICE_KEY_INFO.length + 12 + 1 + 4);
    info.write(SLICE_KEY_INFO, 0, 'latin1');
    info.write(objectId.slice(1), SLICE_KEY_INFO.length, 'hex');
    info[SLICE_KEY_INFO.length + 12] = index;
    info.writeUInt32BE(keyGen, SLICE_KEY_INFO.length + 13);
    return this.expand(info);
  }
}

const BLOCK_ONE = new Uint8Array([1]);
const kdfs = new WeakMap<Uint8Array, VolumeKdf>();

/**
 * The KDF of a volume key, kept as long as that key's bytes object lives (a memo: the same keys
 * come out either way). Volume keys are never changed in place.
 */
export function volumeKdf(volumeKey: Uint8Array): VolumeKdf {
  let kdf = kdfs.get(volumeKey);
  if (!kdf) kdfs.set(volumeKey, (kdf = new VolumeKdf(volumeKey)));
  return kdf;
}

/** The key of one slice. */
export function sliceKey(volumeKey: Uint8Array, objectId: string, index: number, keyGen: number): Uint8Array {
  return volumeKdf(volumeKey).sliceKey(objectId, index, keyGen);
}

/** The nonce of chunk `c`: its index, 96 bits big-endian. */
export function chunkNonce(c: number): Uint8Array {
  if (!Number.isSafeInteger(c) || c < 0) throw new SealError(`chunk index must be a non-negative integer, got ${String(c)}`);
  const n = Buffer.alloc(IV_BYTES);
  n.writeUIntBE(c, IV_BYTES - 6, 6);
  return n;
}

/**
 * The authenticated data of chunk `c`: the slice header's 64 bytes (its canonical encoding: object
 * id, index, geometry, key generation) and the chunk index. A chunk moved to another slice, another
 * position, or under an edited header does not open.
 */
export function chunkAad(header: SliceHeader, c: number): Uint8Array {
  const aad = Buffer.alloc(SLICE_HEADER_BYTES + 8);
  aad.set(encodeSliceHeader(header), 0);
  aad.writeBigUInt64BE(BigInt(c), SLICE_HEADER_BYTES);
  return aad;
}

/** The sealer of one slice: its key and header, derived once, then chunk by chunk. */
export class SliceSealer {
  private readonly key: Uint8Array;
  private readonly aad: Buffer;

  constructor(
    volumeKey: Uint8Array,
    readonly header: SliceHeader,
  ) {
    if (!header.sealed) throw new SealError(`slice ${header.objectId}.${header.index}: the header is not a sealed one (no key generation)`);
    this.key = sliceKey(volumeKey, header.objectId, header.index, header.sealed.keyGen);
    this.aad = Buffer.from(chunkAad(header, 0));
  }

  private aadOf(c: number): Buffer {
    this.aad.writeBigUInt64BE(BigInt(c), SLICE_HEADER_BYTES);
    return this.aad;
  }

  /** Chunk `c` sealed: its ciphertext (as long as the chunk) and its tag. */
  seal(c: number, plain: Uint8Array): { ciphertext: Uint8Array; tag: Uint8Array } {
    const cipher = createCipheriv(CIPHER, this.key, chunkNonce(c), { authTagLength: TAG_BYTES });
    cipher.setAAD(this.aadOf(c));
    const ciphertext = cipher.update(plain);
    cipher.final();
    return { ciphertext, tag: cipher.getAuthTag() };
  }

  /**
   * A decipher for chunk `c`, to feed its ciphertext piece by piece (update), then setAuthTag and
   * final, which throws when the chunk does not open. Its output is not to be trusted before final.
   */
  decipher(c: number): DecipherGCM {
    const d = createDecipheriv(CIPHER, this.key, chunkNonce(c), { authTagLength: TAG_BYTES });
    d.setAAD(this.aadOf(c));
    return d;
  }

  /** Chunk `c` opened whole; throws SealError when the tag does not verify. */
  open(c: number, ciphertext: Uint8Array, tag: Uint8Array): Uint8Array {
    const d = this.decipher(c);
    const plain = d.update(ciphertext);
    d.setAuthTag(tag);
    try {
      d.final();
    } catch {
      throw new SealError(`chunk ${c}: the AES-GCM tag does not verify (tampered, moved, or sealed with another key)`);
    }
    return plain;
  }
}

// ─── wrapping a key (the key slots, the sealed passphrase) ──────────────────────────────────────

export interface Wrapped {
  iv: Uint8Array;
  ciphertext: Uint8Array;
  tag: Uint8Array;
}

export function wrap(kek: Uint8Array, iv: Uint8Array, secret: Uint8Array, aad: string): Wrapped {
  checkKey('wrapping key', kek);
  checkBytes('iv', iv, IV_BYTES);
  const c = createCipheriv(CIPHER, kek, iv, { authTagLength: TAG_BYTES });
  c.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([c.update(secret), c.final()]);
  return { iv, ciphertext, tag: c.getAuthTag() };
}

/** Throws SealError (`what` names it) unless `w` opens under `kek` with this `aad`. */
export function unwrap(kek: Uint8Array, w: Wrapped, aad: string, what: string): Uint8Array {
  checkKey('wrapping key', kek);
  checkBytes(`${what}: iv`, w.iv, IV_BYTES);
  checkBytes(`${what}: tag`, w.tag, TAG_BYTES);
  const d = createDecipheriv(CIPHER, kek, w.iv, { authTagLength: TAG_BYTES });
  d.setAAD(Buffer.from(aad, 'utf8'));
  d.setAuthTag(w.tag);
  const plain = d.update(w.ciphertext);
  try {
    d.final();
  } catch {
    throw new SealError(`${what} does not open: wrong key, or the stored bytes were altered`);
  }
  return plain;
}

/** A short public fingerprint of a key file's key: which key file a slot was made with. */
export function keyId(kek: Uint8Array): string {
  checkKey('key', kek);
  return createHash('sha256').update('hostd objstore key id').update(kek).digest('hex').slice(0, 16);
}

// ─── the recovery passphrase ──────────────────────────────────────────────────────────────────

/** Crockford's base32: no I, L, O, U (nothing to misread when typing it back). */
const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Random bytes in a passphrase: 20 bytes = 160 bits = 32 characters, shown in 8 groups of 4. */
export const PASSPHRASE_BYTES = 20;

/** The passphrase made from PASSPHRASE_BYTES random bytes: 'XXXX-XXXX-...' (8 groups of 4). */
export function formatPassphrase(random: Uint8Array): string {
  checkBytes('passphrase randomness', random, PASSPHRASE_BYTES);
  let bits = 0;
  let acc = 0;
  let out = '';
  for (const b of random) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += B32[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out.match(/.{4}/g)!.join('-');
}

/**
 * A passphrase as typed back: case, spaces and dashes do not matter, and O, I, L read as 0, 1, 1.
 * Throws SealError naming the first character that is not one of the alphabet, or a wrong length.
 */
export function normalizePassphrase(typed: string): string {
  if (typeof typed !== 'string') throw new SealError('the passphrase must be a string');
  const s = typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  const bad = [...s].find((ch) => !B32.includes(ch));
  if (bad !== undefined) throw new SealError(`the passphrase holds ${JSON.stringify(bad)}, which is not one of its characters (0-9, A-Z without I, L, O, U)`);
  if (s.length !== 32) throw new SealError(`the passphrase has ${s.length} characters, not 32 (8 groups of 4)`);
  return s.match(/.{4}/g)!.join('-');
}

export interface ScryptParams {
  /** log2 of scrypt's N (cost) */
  logN: number;
  r: number;
  p: number;
}

/** 2^15 × 8 × 128 B = 32 MiB and ~0.1 s per derivation: once per volume open by passphrase. */
export const SCRYPT_DEFAULT: ScryptParams = { logN: 15, r: 8, p: 1 };

export function passphraseKey(passphrase: string, salt: Uint8Array, params: ScryptParams): Uint8Array {
  checkBytes('salt', salt, SALT_BYTES);
  const { logN, r, p } = params;
  if (!Number.isSafeInteger(logN) || logN < 10 || logN > 20) throw new SealError(`scrypt logN must be 10..20, got ${String(logN)}`);
  if (!Number.isSafeInteger(r) || r < 1 || r > 32 || !Number.isSafeInteger(p) || p < 1 || p > 16) throw new SealError(`scrypt r must be 1..32 and p 1..16, got r=${String(r)} p=${String(p)}`);
  const N = 2 ** logN;
  return new Uint8Array(scryptSync(normalizePassphrase(passphrase), salt, KEY_BYTES, { N, r, p, maxmem: 256 * N * r + (1 << 20) }));
}

// ─── the key-slot file on a disk ─────────────────────────────────────────────────────────────

/** The key-slot file, beside `.identity` in the volume's service directory. */
export const KEYSLOTS_FILE = '.keyslots';
const KEYSLOTS_FORMAT = 'hostd-objstore-keyslots';

export interface KeySlots {
  volumeId: number;
  instanceId: string;
  /** generation of the volume key (1 at the first encryption; +1 each time the volume is encrypted again) */
  keyGen: number;
  /** the volume key wrapped by the key file's key */
  keyFile: Wrapped & { keyId: string };
  /** the volume key wrapped by the recovery passphrase (scrypt) */
  passphrase: Wrapped & ScryptParams & { salt: Uint8Array };
}

/** What a slot's wrap is bound to: the installation, the volume, the key generation and the slot. */
export function slotAad(s: Pick<KeySlots, 'volumeId' | 'instanceId' | 'keyGen'>, slot: 'keyFile' | 'passphrase'): string {
  return `${KEYSLOTS_FORMAT} v1|${s.instanceId.toLowerCase()}|volume ${s.volumeId}|gen ${s.keyGen}|${slot}`;
}

export interface NewSlots {
  volumeId: number;
  instanceId: string;
  keyGen: number;
  volumeKey: Uint8Array;
  kek: Uint8Array;
  passphrase: string;
  /** random: two IVs and a salt */
  ivK: Uint8Array;
  ivR: Uint8Array;
  salt: Uint8Array;
  scrypt?: ScryptParams;
}

export function makeKeySlots(n: NewSlots): KeySlots {
  checkKey('volume key', n.volumeKey);
  const id = { volumeId: n.volumeId, instanceId: n.instanceId, keyGen: n.keyGen };
  const params = n.scrypt ?? SCRYPT_DEFAULT;
  return {
    ...id,
    keyFile: { ...wrap(n.kek, n.ivK, n.volumeKey, slotAad(id, 'keyFile')), keyId: keyId(n.kek) },
    passphrase: { ...wrap(passphraseKey(n.passphrase, n.salt, params), n.ivR, n.volumeKey, slotAad(id, 'passphrase')), ...params, salt: n.salt },
  };
}

/** The volume key, from the slot of the key file. SealError says whether the key file is another one. */
export function openWithKeyFile(s: KeySlots, kek: Uint8Array): Uint8Array {
  const mine = keyId(kek);
  if (mine !== s.keyFile.keyId) {
    throw new SealError(`volume ${s.volumeId} was encrypted with key file ${s.keyFile.keyId}, and the key file here is ${mine}: restore the right key file, or recover with the passphrase`);
  }
  return unwrap(kek, s.keyFile, slotAad(s, 'keyFile'), `volume ${s.volumeId}: the key-file slot`);
}

/** The volume key, from the passphrase slot. */
export function openWithPassphrase(s: KeySlots, passphrase: string): Uint8Array {
  const key = passphraseKey(passphrase, s.passphrase.salt, s.passphrase);
  return unwrap(key, s.passphrase, slotAad(s, 'passphrase'), `volume ${s.volumeId}: the passphrase slot (a wrong passphrase?)`);
}

/** The same slots with the key-file slot made anew under another key file (recovery, key file rotation). */
export function rewrapKeyFile(s: KeySlots, volumeKey: Uint8Array, kek: Uint8Array, iv: Uint8Array): KeySlots {
  return { ...s, keyFile: { ...wrap(kek, iv, volumeKey, slotAad(s, 'keyFile')), keyId: keyId(kek) } };
}

/** The same slots with the passphrase slot made anew (passphrase rotation). */
export function rewrapPassphrase(s: KeySlots, volumeKey: Uint8Array, passphrase: string, iv: Uint8Array, salt: Uint8Array, params = SCRYPT_DEFAULT): KeySlots {
  return { ...s, passphrase: { ...wrap(passphraseKey(passphrase, salt, params), iv, volumeKey, slotAad(s, 'passphrase')), ...params, salt } };
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

function wrappedJson(w: Wrapped): Record<string, string> {
  return { iv: b64(w.iv), ciphertext: b64(w.ciphertext), tag: b64(w.tag) };
}

export function encodeKeySlots(s: KeySlots): string {
  const body = {
    format: KEYSLOTS_FORMAT,
    version: 1,
    cipher: CIPHER,
    volumeId: s.volumeId,
    instanceId: s.instanceId,
    keyGen: s.keyGen,
    slots: {
      keyFile: { ...wrappedJson(s.keyFile), keyId: s.keyFile.keyId },
      passphrase: { kdf: 'scrypt', logN: s.passphrase.logN, r: s.passphrase.r, p: s.passphrase.p, salt: b64(s.passphrase.salt), ...wrappedJson(s.passphrase) },
    },
  };
  return JSON.stringify(body, null, 2) + '\n';
}

/** Decodes a key-slot file; throws SealError naming the first thing wrong. (The tags check the rest.) */
export function decodeKeySlots(text: string): KeySlots {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (err) {
    throw new SealError(`key slots: not JSON (${(err as Error).message})`);
  }
  const obj = (v: unknown, what: string): Record<string, unknown> => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new SealError(`key slots: ${what} must be an object`);
    return v as Record<string, unknown>;
  };
  const int = (o: Record<string, unknown>, k: string, min: number, max: number): number => {
    const v = o[k];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) throw new SealError(`key slots: ${k} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return v;
  };
  const bytes = (o: Record<string, unknown>, k: string, n: number | null, what: string): Uint8Array => {
    const v = o[k];
    if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) throw new SealError(`key slots: ${what}.${k} must be base64`);
    const b = new Uint8Array(Buffer.from(v, 'base64'));
    if (n !== null && b.byteLength !== n) throw new SealError(`key slots: ${what}.${k} must be ${n} bytes, got ${b.byteLength}`);
    return b;
  };
  const top = obj(j, 'the file');
  if (top.format !== KEYSLOTS_FORMAT) throw new SealError(`key slots: format must be ${JSON.stringify(KEYSLOTS_FORMAT)}, got ${JSON.stringify(top.format)}: not a key-slot file`);
  if (top.version !== 1) throw new SealError(`key slots: version ${JSON.stringify(top.version)} is not supported (this build reads version 1)`);
  if (top.cipher !== CIPHER) throw new SealError(`key slots: cipher ${JSON.stringify(top.cipher)} is not supported (this build knows ${CIPHER})`);
  if (typeof top.instanceId !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(top.instanceId)) throw new SealError('key slots: instanceId must be a UUID');
  const slots = obj(top.slots, 'slots');
  const k = obj(slots.keyFile, 'slots.keyFile');
  const r = obj(slots.passphrase, 'slots.passphrase');
  if (typeof k.keyId !== 'string' || !/^[0-9a-f]{16}$/.test(k.keyId)) throw new SealError('key slots: slots.keyFile.keyId must be 16 hex characters');
  if (r.kdf !== 'scrypt') throw new SealError(`key slots: slots.passphrase.kdf must be "scrypt", got ${JSON.stringify(r.kdf)}`);
  const wrapped = (o: Record<string, unknown>, what: string): Wrapped => ({ iv: bytes(o, 'iv', IV_BYTES, what), ciphertext: bytes(o, 'ciphertext', KEY_BYTES, what), tag: bytes(o, 'tag', TAG_BYTES, what) });
  return {
    volumeId: int(top, 'volumeId', 0, 0xffff_ffff),
    instanceId: top.instanceId.toLowerCase(),
    keyGen: int(top, 'keyGen', 1, 0xffff_ffff),
    keyFile: { ...wrapped(k, 'slots.keyFile'), keyId: k.keyId },
    passphrase: { ...wrapped(r, 'slots.passphrase'), logN: int(r, 'logN', 10, 20), r: int(r, 'r', 1, 32), p: int(r, 'p', 1, 16), salt: bytes(r, 'salt', SALT_BYTES, 'slots.passphrase') },
  };
}

// ─── the key file and the sealed passphrase (state directory) ─────────────────────────────────

/** The key file: its key and nothing else (32 bytes). */
export function decodeKeyFile(bytes: Uint8Array): Uint8Array {
  if (bytes.byteLength !== KEY_BYTES) throw new SealError(`the key file must hold ${KEY_BYTES} bytes, it holds ${bytes.byteLength}`);
  return new Uint8Array(bytes);
}

export interface SealedPassphrase {
  instanceId: string;
  /** the key file it is sealed under (keyId) */
  keyId: string;
  salt: Uint8Array;
  sealed: Wrapped;
  createdAt: number;
  /** when an operator read it (it is shown once); null until then */
  revealedAt: number | null;
}

const SEAL_INFO = 'hostd objstore recovery passphrase seal v1';

function sealKey(kek: Uint8Array, salt: Uint8Array): Uint8Array {
  checkBytes('salt', salt, SALT_BYTES);
  return new Uint8Array(hkdfSync('sha256', kek, salt, SEAL_INFO, KEY_BYTES));
}

/**
 * The passphrase sealed under a key derived from the key file's key (HKDF, its own salt and
 * purpose). Whoever can open it holds the key file, which opens every disk already: the seal
 * widens nothing, and lets the service wrap new volumes' passphrase slots unattended.
 */
export function sealPassphrase(kek: Uint8Array, instanceId: string, passphrase: string, salt: Uint8Array, iv: Uint8Array, createdAt: number): SealedPassphrase {
  const p = normalizePassphrase(passphrase);
  return { instanceId, keyId: keyId(kek), salt, sealed: wrap(sealKey(kek, salt), iv, Buffer.from(p, 'utf8'), `${SEAL_INFO}|${instanceId}`), createdAt, revealedAt: null };
}

export function openPassphrase(kek: Uint8Array, s: SealedPassphrase): string {
  if (keyId(kek) !== s.keyId) throw new SealError(`the recovery passphrase is sealed under key file ${s.keyId}, and the key file here is ${keyId(kek)}`);
  const plain = unwrap(sealKey(kek, s.salt), s.sealed, `${SEAL_INFO}|${s.instanceId}`, 'the sealed recovery passphrase');
  return normalizePassphrase(Buffer.from(plain).toString('utf8'));
}

export function encodeSealedPassphrase(s: SealedPassphrase): string {
  return JSON.stringify({ format: 'hostd-objstore-recovery', version: 1, instanceId: s.instanceId, keyId: s.keyId, salt: b64(s.salt), ...wrappedJson(s.sealed), createdAt: s.createdAt, revealedAt: s.revealedAt }, null, 2) + '\n';
}

export function decodeSealedPassphrase(text: string): SealedPassphrase {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new SealError(`sealed passphrase: not JSON (${(err as Error).message})`);
  }
  if (typeof j !== 'object' || j === null || j.format !== 'hostd-objstore-recovery' || j.version !== 1) throw new SealError('sealed passphrase: not a version 1 hostd-objstore-recovery file');
  const b = (k: string, n: number | null): Uint8Array => {
    const v = j[k];
    if (typeof v !== 'string') throw new SealError(`sealed passphrase: ${k} must be base64`);
    const out = new Uint8Array(Buffer.from(v, 'base64'));
    if (n !== null && out.byteLength !== n) throw new SealError(`sealed passphrase: ${k} must be ${n} bytes`);
    return out;
  };
  if (typeof j.instanceId !== 'string' || typeof j.keyId !== 'string') throw new SealError('sealed passphrase: instanceId and keyId must be strings');
  if (typeof j.createdAt !== 'number' || (j.revealedAt !== null && typeof j.revealedAt !== 'number')) throw new SealError('sealed passphrase: createdAt must be a number and revealedAt a number or null');
  return { instanceId: j.instanceId, keyId: j.keyId, salt: b('salt', SALT_BYTES), sealed: { iv: b('iv', IV_BYTES), ciphertext: b('ciphertext', null), tag: b('tag', TAG_BYTES) }, createdAt: j.createdAt, revealedAt: j.revealedAt as number | null };
}

