/**
 * The record sidecar of a slice: what the object's record holds (path, size, MIME type, MD5,
 * creation time, layout), written beside every slice of the current format (version 3,
 * slice-format.ts) so that the record database can be rebuilt from the disks alone
 * (`hostd recover --from-disks`). Pure: encode and decode only.
 *
 * Why a sidecar and not the slice header: the header is written first, and the MD5 is known only
 * once the whole body is in. The sidecar is written when the record is committed (put.ts), and
 * again for a slice that moves (relocate.ts), saying the layout as its writer knew it then. The
 * layouts of an object's sidecars can therefore disagree after a move: recovery takes the layout
 * from where it finds the slices, not from what a sidecar says (actors/objstore/recovery/).
 *
 * Every sidecar carries the whole record, so any one readable sidecar of an object is enough to
 * rebuild it. On an encrypted volume the payload is sealed with AES-256-GCM under a key derived
 * from the volume key (paths and MD5s are not left in the clear on an encrypted disk).
 *
 * Layout, integers big-endian:
 *
 *   0x00  4  magic 'HREC'
 *   0x04  2  version (u16) = 1
 *   0x06  1  cipher (u8): 0 = plain JSON, 1 = AES-256-GCM
 *   0x07  1  reserved, zero
 *   0x08  4  key generation (u32): 0 when plain
 *   0x0C  4  payload length n (u32, <= MAX_PAYLOAD_BYTES)
 *   0x10 12  nonce (zero when plain)
 *   0x1C  n  payload: the record as UTF-8 JSON, or its ciphertext
 *   ...  16  GCM tag (sealed only)
 *   ...   4  CRC32C of every byte before it (a torn or flipped file is refused before anything else)
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { volumeKdf } from './crypto-format.js';
import { crc32c } from '@node-rs/crc32';

export const RECORD_MAGIC = 'HREC';
export const RECORD_VERSION = 1;
export const RECORD_HEAD_BYTES = 0x1c;
export const MAX_PAYLOAD_BYTES = 64 * 1024;
const TAG_BYTES = 16;
const NONCE_BYTES = 12;
const CIPHER_PLAIN = 0;
const CIPHER_GCM = 1;
const RECORD_KEY_INFO = 'hostd objstore slice record key v1';

/** What one sidecar says: the object's record, this slice's index, and who wrote it when. */
export interface SliceRecord {
  objectId: string;
  /** the slice this sidecar sits beside */
  index: number;
  path: string;
  size: number;
  mime: string;
  /** hex, lower case */
  md5: string;
  /** ms since the epoch */
  createdAt: number;
  k: number;
  m: number;
  chunkSize: number;
  /** the volume id of each slice index 0..k+m-1, as the writer knew it (ids of `instanceId`) */
  volumes: number[];
  /** the installation whose volume ids these are (the volumes' identity files carry it too) */
  instanceId: string;
  /** ms since the epoch: a newer sidecar's layout is the later one */
  writtenAt: number;
  /** what wrote it: put, drain, rebalance, repair */
  by: string;
}

export class SliceRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SliceRecordError';
  }
}

const ID_RE = /^\$[0-9a-f]{24}$/;
const MD5_RE = /^[0-9a-f]{32}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FIELDS = ['objectId', 'index', 'path', 'size', 'mime', 'md5', 'createdAt', 'k', 'm', 'chunkSize', 'volumes', 'instanceId', 'writtenAt', 'by'] as const;

function int(name: string, v: unknown, min: number, max: number): void {
  if (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max) throw new SliceRecordError(`slice record: ${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
}

function str(name: string, v: unknown, re?: RegExp, max = 4096): void {
  if (typeof v !== 'string' || v.length > max) throw new SliceRecordError(`slice record: ${name} must be a string of at most ${max} characters, got ${JSON.stringify(v)?.slice(0, 80)}`);
  if (re && !re.test(v)) throw new SliceRecordError(`slice record: ${name} is malformed: ${JSON.stringify(v)}`);
}

/** Throws SliceRecordError, naming the field, unless `r` is a whole, consistent record. */
export function checkSliceRecord(r: SliceRecord): void {
  if (typeof r !== 'object' || r === null) throw new SliceRecordError('slice record: not an object');
  for (const f of FIELDS) if (!(f in r)) throw new SliceRecordError(`slice record: field ${f} is missing`);
  str('objectId', r.objectId, ID_RE);
  str('path', r.path, /^\/./, 1024);
  int('size', r.size, 0, Number.MAX_SAFE_INTEGER);
  str('mime', r.mime, undefined, 1024);
  str('md5', r.md5, MD5_RE);
  int('createdAt', r.createdAt, 0, Number.MAX_SAFE_INTEGER);
  int('k', r.k, 1, 255);
  int('m', r.m, 0, 255);
  if (r.k + r.m > 256) throw new SliceRecordError(`slice record: k + m must be at most 256, got ${r.k} + ${r.m}`);
  int('index', r.index, 0, r.k + r.m - 1);
  int('chunkSize', r.chunkSize, 1, 0xffff_ffff);
  if (!Array.isArray(r.volumes) || r.volumes.length !== r.k + r.m) throw new SliceRecordError(`slice record: volumes must list ${r.k + r.m} volume ids (one per slice), got ${JSON.stringify(r.volumes)}`);
  r.volumes.forEach((v, i) => int(`volumes[${i}]`, v, 0, 0xffff_ffff));
  str('instanceId', r.instanceId, UUID_RE);
  int('writtenAt', r.writtenAt, 0, Number.MAX_SAFE_INTEGER);
  str('by', r.by, /^[a-z][a-z0-9-]*$/, 64);
}

/** The key a sidecar of slice (objectId, index) is sealed with: HKDF-SHA256 of the volume key (crypto-format.ts's VolumeKdf). */
export function recordKey(volumeKey: Uint8Array, objectId: string, index: number, keyGen: number): Uint8Array {
  if (volumeKey.byteLength !== 32) throw new SliceRecordError(`slice record: the volume key must be 32 bytes, got ${volumeKey.byteLength}`);
  const gen = Buffer.alloc(4);
  gen.writeUInt32BE(keyGen);
  const info = Buffer.concat([Buffer.from(RECORD_KEY_INFO, 'latin1'), Buffer.from(objectId.slice(1).toLowerCase(), 'hex'), Buffer.from([index]), gen]);
  return volumeKdf(volumeKey).expand(info);
}

export interface RecordSeal {
  volumeKey: Uint8Array;
  keyGen: number;
  /** 12 random bytes, fresh for every write */
  nonce: Uint8Array;
}

/** Encode a sidecar; sealed when `seal` is given (an encrypted volume's). */
export function encodeSliceRecord(r: SliceRecord, seal?: RecordSeal): Uint8Array {
  checkSliceRecord(r);
  const ordered = Object.fromEntries(FIELDS.map((f) => [f, r[f]]));
  let payload = new Uint8Array(Buffer.from(JSON.stringify(ordered), 'utf8'));
  if (payload.byteLength > MAX_PAYLOAD_BYTES) throw new SliceRecordError(`slice record: ${payload.byteLength} bytes of payload, over the limit of ${MAX_PAYLOAD_BYTES}`);
  const head = new Uint8Array(RECORD_HEAD_BYTES);
  const dv = new DataView(head.buffer);
  for (let i = 0; i < 4; i++) head[i] = RECORD_MAGIC.charCodeAt(i);
  dv.setUint16(0x04, RECORD_VERSION);
  let tag = new Uint8Array(0);
  if (seal) {
    int('keyGen', seal.keyGen, 1, 0xffff_ffff);
    if (seal.nonce.byteLength !== NONCE_BYTES) throw new SliceRecordError(`slice record: the nonce must be ${NONCE_BYTES} bytes`);
    head[0x06] = CIPHER_GCM;
    dv.setUint32(0x08, seal.keyGen);
    head.set(seal.nonce, 0x10);
  }
  dv.setUint32(0x0c, payload.byteLength);
  if (seal) {
    const c = createCipheriv('aes-256-gcm', recordKey(seal.volumeKey, r.objectId, r.index, seal.keyGen), seal.nonce);
    c.setAAD(head);
    payload = new Uint8Array(Buffer.concat([c.update(payload), c.final()]));
    tag = new Uint8Array(c.getAuthTag());
  }
  const out = new Uint8Array(RECORD_HEAD_BYTES + payload.byteLength + tag.byteLength + 4);
  out.set(head, 0);
  out.set(payload, RECORD_HEAD_BYTES);
  out.set(tag, RECORD_HEAD_BYTES + payload.byteLength);
  new DataView(out.buffer).setUint32(out.byteLength - 4, crc32c(out.subarray(0, out.byteLength - 4)));
  return out;
}

/** What decodeSliceRecord needs to open a sealed sidecar: the volume key of that generation, or null. */
export type RecordKeyLookup = (keyGen: number) => Uint8Array | null;

/**
 * Decode a sidecar. `expect` (the slice it sits beside, from the slice's own header) must match.
 * Throws SliceRecordError, saying what is wrong, on a torn, corrupt, foreign or unopenable file.
 */
export function decodeSliceRecord(buf: Uint8Array, opts: { key?: RecordKeyLookup; expect?: { objectId: string; index: number } } = {}): SliceRecord {
  if (buf.byteLength < RECORD_HEAD_BYTES + 4) throw new SliceRecordError(`slice record: ${buf.byteLength} bytes, shorter than the smallest record (torn?)`);
  const magic = String.fromCharCode(buf[0]!, buf[1]!, buf[2]!, buf[3]!);
  if (magic !== RECORD_MAGIC) throw new SliceRecordError(`slice record: bad magic ${JSON.stringify(magic)} (expected ${JSON.stringify(RECORD_MAGIC)}): not a record sidecar`);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = dv.getUint32(0x0c);
  const cipher = buf[0x06]!;
  const tagBytes = cipher === CIPHER_GCM ? TAG_BYTES : 0;
  const total = RECORD_HEAD_BYTES + n + tagBytes + 4;
  if (n > MAX_PAYLOAD_BYTES || buf.byteLength !== total) throw new SliceRecordError(`slice record: ${buf.byteLength} bytes where its header says ${n > MAX_PAYLOAD_BYTES ? 'an impossible payload length' : `${total}`} (torn or corrupt)`);
  const stored = dv.getUint32(total - 4);
  const actual = crc32c(buf.subarray(0, total - 4));
  if (stored !== actual) throw new SliceRecordError(`slice record: CRC32C mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)}): the file is corrupt`);
  const version = dv.getUint16(0x04);
  if (version !== RECORD_VERSION) throw new SliceRecordError(`slice record: version ${version} is not supported (this build reads version ${RECORD_VERSION})`);
  if (cipher !== CIPHER_PLAIN && cipher !== CIPHER_GCM) throw new SliceRecordError(`slice record: cipher ${cipher} is not supported (0 plain, 1 AES-256-GCM)`);
  let payload = buf.subarray(RECORD_HEAD_BYTES, RECORD_HEAD_BYTES + n);
  let json: unknown;
  if (cipher === CIPHER_GCM) {
    const keyGen = dv.getUint32(0x08);
    const volumeKey = opts.key?.(keyGen) ?? null;
    if (!volumeKey) throw new SliceRecordError(`slice record: sealed with volume key generation ${keyGen}, and no such key is at hand (the key file opens the volume's key slots)`);
    if (!opts.expect) throw new SliceRecordError('slice record: a sealed record opens only for the slice it sits beside (expect is required)');
    try {
      const d = createDecipheriv('aes-256-gcm', recordKey(volumeKey, opts.expect.objectId, opts.expect.index, keyGen), buf.subarray(0x10, 0x1c));
      d.setAAD(buf.subarray(0, RECORD_HEAD_BYTES));
      d.setAuthTag(buf.subarray(RECORD_HEAD_BYTES + n, RECORD_HEAD_BYTES + n + TAG_BYTES));
      payload = new Uint8Array(Buffer.concat([d.update(payload), d.final()]));
    } catch {
      throw new SliceRecordError(`slice record: sealed payload does not open with volume key generation ${keyGen} (another slice's record, or altered)`);
    }
  }
  try {
    json = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'));
  } catch (err) {
    throw new SliceRecordError(`slice record: payload is not JSON: ${(err as Error).message}`);
  }
  const r = json as SliceRecord;
  checkSliceRecord(r);
  if (opts.expect && (r.objectId !== opts.expect.objectId.toLowerCase() || r.index !== opts.expect.index)) {
    throw new SliceRecordError(`slice record: it names slice ${r.objectId}.${r.index}, but sits beside slice ${opts.expect.objectId.toLowerCase()}.${opts.expect.index}`);
  }
  return Object.fromEntries(FIELDS.map((f) => [f, r[f]])) as unknown as SliceRecord;
}
