/**
 * CONTRACT (implementation by the disks work): the on-disk format of one slice file.
 *
 * A slice file holds one slice (data or parity) of one object: a fixed header, then its chunks in
 * order, each followed by its CRC32C, so that any chunk can be read and verified on its own:
 *
 *   [header: SLICE_HEADER_BYTES][chunk 0][crc 0: u32 BE][chunk 1][crc 1] ... [chunk n-1][crc n-1]
 *
 * Every chunk but the last of the slice is exactly `chunkSize` bytes; the last may be shorter
 * (never empty, unless the slice is empty: then there are no chunks). Chunk c starts at
 * SLICE_HEADER_BYTES + c * (chunkSize + 4).
 *
 * A sealed slice (an encrypted volume's, crypto-format.ts) has the same layout with each chunk
 * sealed by AES-256-GCM and its 16-byte tag in place of the CRC: chunk c starts at
 * SLICE_HEADER_BYTES + c * (chunkSize + 16). The header stays in the clear (light verify reads it).
 *
 * Format versions: 1 (plain) and 2 (sealed) are the first formats; version 3, written since, is
 * the same header (its cipher byte says plain or sealed) and promises a record sidecar beside the
 * slice (slice-record.ts: the object's path, MIME type, MD5 and layout), so the records can be
 * rebuilt from the disks alone. Slices of versions 1 and 2 are still read (a decoded header keeps
 * its version in `legacy`, so it re-encodes to the same bytes: a sealed chunk's AAD is the header).
 */

import { crc32c } from '@node-rs/crc32';

export const SLICE_HEADER_BYTES = 64;

export interface SliceHeader {
  /** '$' + 24 hex */
  objectId: string;
  /** 0..k-1 data, k..k+m-1 parity */
  index: number;
  k: number;
  m: number;
  chunkSize: number;
  /** whole object size in bytes */
  objectSize: number;
  /** bytes of slice payload (sum of its chunk lengths, CRCs excluded) */
  sliceSize: number;
  /**
   * Set on a sealed slice only (cipher byte 1, written by an encrypted volume): the generation
   * of the volume key its chunks are sealed with. The store never sets it: the volume does.
   */
  sealed?: { keyGen: number };
  /**
   * Set when the header was read from an old-format slice (version 1 plain, version 2 sealed):
   * such a slice has no record sidecar. Absent: the current format (version 3). The store never
   * sets it.
   */
  legacy?: 1 | 2;
}

/** The header fields that describe the object's geometry (compared field by field). */
const GEOMETRY_FIELDS = ['k', 'm', 'chunkSize', 'objectSize', 'sliceSize'] as const;

/**
 * How a slice header read from a disk differs from the one its record expects (sliceHeaderFor in
 * stripes.ts): null when it matches. The object id compares without regard to case.
 */
export function headerMismatch(found: SliceHeader, expected: SliceHeader): string | null {
  if (found.objectId.toLowerCase() !== expected.objectId.toLowerCase() || found.index !== expected.index) return `the header names slice ${found.objectId}.${found.index}`;
  const wrong = GEOMETRY_FIELDS.filter((f) => found[f] !== expected[f]);
  if (!wrong.length) return null;
  return `header fields differ from the record: ${wrong.map((f) => `${f} ${found[f]} (record: ${expected[f]})`).join(', ')}`;
}

// ─── Encoding (pure) ────────────────────────────────────────────────────────────────────────────
//
// Header layout, 64 bytes, integers big-endian:
//
//   0x00  4  magic 'HSLC'
//   0x04  2  format version (u16) = 3 (1 and 2: the old plain and sealed formats, read only)
//   0x06 12  object id: the 12 bytes of the 24 hex characters after '$'
//   0x12  1  slice index (u8)
//   0x13  1  k, data slices (u8, >= 1)
//   0x14  1  m, parity slices (u8); k + m <= 256 and index < k + m
//   0x15  1  cipher (u8): 0 = plain (CRC32C trailers); 1 = AES-256-GCM (version 1: always 0;
//            version 2: always 1)
//   0x16  2  reserved, zero
//   0x18  4  chunk size (u32, >= 1)
//   0x1C  4  key generation (u32): 0 when plain; the volume key's generation when sealed
//   0x20  8  object size (u64, <= 2^53 - 1)
//   0x28  8  slice size (u64, <= 2^53 - 1): payload bytes, CRCs excluded
//   0x30 12  reserved, zero
//   0x3C  4  CRC32C of bytes 0x00..0x3B
//
// Each chunk is followed by the CRC32C of that chunk's bytes (u32 big-endian, CHUNK_CRC_BYTES),
// or in a sealed slice by its GCM tag (CHUNK_TAG_BYTES).


export const SLICE_MAGIC = 'HSLC';
/** The format written now: plain or sealed by its cipher byte, with a record sidecar. */
export const SLICE_FORMAT_VERSION = 3;
/** The first format of a plain slice (no record sidecar): read, never written. */
export const PLAIN_V1_VERSION = 1;
/** The first format of a sealed slice (no record sidecar): read, never written. */
export const SEALED_SLICE_VERSION = 2;
/** The cipher byte of a sealed slice: AES-256-GCM. */
export const CIPHER_AES_256_GCM = 1;
export const CHUNK_CRC_BYTES = 4;
/** Bytes after each chunk of a sealed slice: its AES-GCM tag. */
export const CHUNK_TAG_BYTES = 16;
const HEADER_CRC_AT = 0x3c;
const OBJECT_ID_RE = /^\$[0-9a-fA-F]{24}$/;

/** A slice header that does not decode (bad magic, version, CRC or fields). */
export class SliceFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SliceFormatError';
  }
}

function checkInt(name: string, v: number, min: number, max: number): void {
  if (!Number.isSafeInteger(v) || v < min || v > max) throw new SliceFormatError(`slice header: ${name} must be an integer from ${min} to ${max}, got ${String(v)}`);
}

/** Throws SliceFormatError unless `h` can be stored. */
export function checkSliceHeader(h: SliceHeader): void {
  if (typeof h.objectId !== 'string' || !OBJECT_ID_RE.test(h.objectId)) throw new SliceFormatError(`slice header: object id must be '$' and 24 hex characters, got ${JSON.stringify(h.objectId)}`);
  checkInt('k', h.k, 1, 255);
  checkInt('m', h.m, 0, 255);
  if (h.k + h.m > 256) throw new SliceFormatError(`slice header: k + m must be at most 256, got ${h.k} + ${h.m}`);
  checkInt('index', h.index, 0, h.k + h.m - 1);
  checkInt('chunkSize', h.chunkSize, 1, 0xffff_ffff);
  checkInt('objectSize', h.objectSize, 0, Number.MAX_SAFE_INTEGER);
  checkInt('sliceSize', h.sliceSize, 0, Number.MAX_SAFE_INTEGER);
  if (h.sealed !== undefined) checkInt('sealed.keyGen', h.sealed?.keyGen, 1, 0xffff_ffff);
  if (h.legacy !== undefined) {
    if (h.legacy !== PLAIN_V1_VERSION && h.legacy !== SEALED_SLICE_VERSION) throw new SliceFormatError(`slice header: legacy must be ${PLAIN_V1_VERSION} or ${SEALED_SLICE_VERSION}, got ${String(h.legacy)}`);
    if ((h.legacy === SEALED_SLICE_VERSION) !== !!h.sealed) throw new SliceFormatError(`slice header: format version ${h.legacy} is ${h.legacy === SEALED_SLICE_VERSION ? 'sealed' : 'plain'} only`);
  }
}

/** The format version a header is written with: its legacy version, else the current one. */
export function headerVersion(h: Pick<SliceHeader, 'legacy'>): number {
  return h.legacy ?? SLICE_FORMAT_VERSION;
}

export function encodeSliceHeader(h: SliceHeader): Uint8Array {
  checkSliceHeader(h);
  const buf = new Uint8Array(SLICE_HEADER_BYTES);
  const dv = new DataView(buf.buffer);
  for (let i = 0; i < 4; i++) buf[i] = SLICE_MAGIC.charCodeAt(i);
  dv.setUint16(0x04, headerVersion(h));
  if (h.sealed) {
    buf[0x15] = CIPHER_AES_256_GCM;
    dv.setUint32(0x1c, h.sealed.keyGen);
  }
  const hex = h.objectId.slice(1);
  for (let i = 0; i < 12; i++) buf[0x06 + i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  buf[0x12] = h.index;
  buf[0x13] = h.k;
  buf[0x14] = h.m;
  dv.setUint32(0x18, h.chunkSize);
  dv.setBigUint64(0x20, BigInt(h.objectSize));
  dv.setBigUint64(0x28, BigInt(h.sliceSize));
  dv.setUint32(HEADER_CRC_AT, crc32c(buf.subarray(0, HEADER_CRC_AT)));
  return buf;
}

/** Decodes the first SLICE_HEADER_BYTES of `buf`. Throws SliceFormatError on anything wrong. */
export function decodeSliceHeader(buf: Uint8Array): SliceHeader {
  if (buf.byteLength < SLICE_HEADER_BYTES) throw new SliceFormatError(`slice header: need ${SLICE_HEADER_BYTES} bytes, got ${buf.byteLength}`);
  const dv = new DataView(buf.buffer, buf.byteOffset, SLICE_HEADER_BYTES);
  const magic = String.fromCharCode(buf[0]!, buf[1]!, buf[2]!, buf[3]!);
  if (magic !== SLICE_MAGIC) throw new SliceFormatError(`slice header: bad magic ${JSON.stringify(magic)} (expected ${JSON.stringify(SLICE_MAGIC)}): not a slice file`);
  const stored = dv.getUint32(HEADER_CRC_AT);
  const actual = crc32c(buf.subarray(0, HEADER_CRC_AT));
  if (stored !== actual) throw new SliceFormatError(`slice header: CRC32C mismatch (stored ${hex32(stored)}, computed ${hex32(actual)}): the header is corrupt`);
  const version = dv.getUint16(0x04);
  if (version !== SLICE_FORMAT_VERSION && version !== PLAIN_V1_VERSION && version !== SEALED_SLICE_VERSION) {
    throw new SliceFormatError(`slice header: format version ${version} is not supported (this build reads versions ${PLAIN_V1_VERSION} to ${SLICE_FORMAT_VERSION})`);
  }
  const cipher = buf[0x15]!;
  if (version === SEALED_SLICE_VERSION && cipher !== CIPHER_AES_256_GCM) throw new SliceFormatError(`slice header: cipher ${cipher} is not supported (this build knows ${CIPHER_AES_256_GCM}, AES-256-GCM)`);
  if (version === SLICE_FORMAT_VERSION && cipher !== 0 && cipher !== CIPHER_AES_256_GCM) throw new SliceFormatError(`slice header: cipher ${cipher} is not supported (this build knows 0, plain, and ${CIPHER_AES_256_GCM}, AES-256-GCM)`);
  const sealed = version === SEALED_SLICE_VERSION || (version === SLICE_FORMAT_VERSION && cipher === CIPHER_AES_256_GCM);
  let id = '$';
  for (let i = 0; i < 12; i++) id += buf[0x06 + i]!.toString(16).padStart(2, '0');
  const objectSize = dv.getBigUint64(0x20);
  const sliceSize = dv.getBigUint64(0x28);
  if (objectSize > BigInt(Number.MAX_SAFE_INTEGER) || sliceSize > BigInt(Number.MAX_SAFE_INTEGER)) throw new SliceFormatError('slice header: a size is beyond 2^53 - 1');
  const h: SliceHeader = { objectId: id, index: buf[0x12]!, k: buf[0x13]!, m: buf[0x14]!, chunkSize: dv.getUint32(0x18), objectSize: Number(objectSize), sliceSize: Number(sliceSize) };
  if (sealed) h.sealed = { keyGen: dv.getUint32(0x1c) };
  if (version !== SLICE_FORMAT_VERSION) h.legacy = version as 1 | 2;
  checkSliceHeader(h);
  return h;
}

/** Bytes after each chunk of a slice: its CRC, or its GCM tag when the slice is sealed. */
export function trailerBytes(h: Pick<SliceHeader, 'sealed'>): number {
  return h.sealed ? CHUNK_TAG_BYTES : CHUNK_CRC_BYTES;
}

/** Byte offset of chunk `c` in a slice file (its CRC, or tag, follows the chunk's bytes). */
export function chunkOffset(chunkSize: number, c: number, trailer = CHUNK_CRC_BYTES): number {
  return SLICE_HEADER_BYTES + c * (chunkSize + trailer);
}

/** Size of a slice file holding chunks of these lengths. */
export function sliceFileSize(chunkLengths: readonly number[], trailer = CHUNK_CRC_BYTES): number {
  let n = SLICE_HEADER_BYTES;
  for (const len of chunkLengths) n += len + trailer;
  return n;
}

/** Number of chunks of a slice: every chunk but the last is `chunkSize` bytes. */
export function chunkCount(h: Pick<SliceHeader, 'chunkSize' | 'sliceSize'>): number {
  return Math.ceil(h.sliceSize / h.chunkSize);
}

/** Length of chunk `c` of a slice (0 when c is past its last chunk). */
export function chunkLength(h: Pick<SliceHeader, 'chunkSize' | 'sliceSize'>, c: number): number {
  return Math.max(0, Math.min(h.chunkSize, h.sliceSize - c * h.chunkSize));
}

/** CRC32C of one chunk, as stored after it. */
export function chunkCrc(chunk: Uint8Array): number {
  return crc32c(chunk);
}

function hex32(n: number): string {
  return '0x' + n.toString(16).padStart(8, '0');
}
