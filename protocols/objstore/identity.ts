/**
 * The identity of a volume, stored on the disk itself so that a drive keeps its volume id when it
 * moves between ports or comes back under another kernel name (spec: "a file named `.identity` in
 * its service directory; byte offset 0x25 holds the volume id"). Pure: encode and decode only.
 *
 * Layout, 64 bytes, integers big-endian:
 *
 *   0x00  8  magic 'OBJSTORE'
 *   0x08  2  version (u16) = 1
 *   0x0A  6  reserved, zero
 *   0x10 16  instance id: the UUID of the hostd installation that provisioned the disk
 *   0x20  5  reserved, zero
 *   0x25  4  volume id (u32)
 *   0x29  8  created at, ms since the epoch (u64)
 *   0x31 11  reserved, zero
 *   0x3C  4  CRC32C of bytes 0x00..0x3B
 */
import { crc32c } from '@node-rs/crc32';

/** Name of the service directory at the root of a volume's file system. */
export const SERVICE_DIR = 'objstore';
/** Name of the identity file inside the service directory. */
export const IDENTITY_FILE = '.identity';
export const IDENTITY_BYTES = 64;
export const IDENTITY_MAGIC = 'OBJSTORE';
export const IDENTITY_VERSION = 1;

export interface VolumeIdentity {
  /** UUID, lowercase with dashes. */
  instanceId: string;
  volumeId: number;
  /** ms since the epoch */
  createdAt: number;
}

export class IdentityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IdentityError';
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CRC_AT = 0x3c;

export function encodeIdentity(id: VolumeIdentity): Uint8Array {
  if (typeof id.instanceId !== 'string' || !UUID_RE.test(id.instanceId)) throw new IdentityError(`identity: instance id must be a UUID, got ${JSON.stringify(id.instanceId)}`);
  if (!Number.isSafeInteger(id.volumeId) || id.volumeId < 0 || id.volumeId > 0xffff_ffff) throw new IdentityError(`identity: volume id must be an integer from 0 to 2^32-1, got ${String(id.volumeId)}`);
  if (!Number.isSafeInteger(id.createdAt) || id.createdAt < 0) throw new IdentityError(`identity: createdAt must be a non-negative integer (ms), got ${String(id.createdAt)}`);
  const buf = new Uint8Array(IDENTITY_BYTES);
  const dv = new DataView(buf.buffer);
  for (let i = 0; i < 8; i++) buf[i] = IDENTITY_MAGIC.charCodeAt(i);
  dv.setUint16(0x08, IDENTITY_VERSION);
  const hex = id.instanceId.replace(/-/g, '');
  for (let i = 0; i < 16; i++) buf[0x10 + i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  dv.setUint32(0x25, id.volumeId);
  dv.setBigUint64(0x29, BigInt(id.createdAt));
  dv.setUint32(CRC_AT, crc32c(buf.subarray(0, CRC_AT)));
  return buf;
}

/** Decodes an identity file's bytes. Throws IdentityError, saying what is wrong, on anything else. */
export function decodeIdentity(buf: Uint8Array): VolumeIdentity {
  if (buf.byteLength !== IDENTITY_BYTES) throw new IdentityError(`identity: expected ${IDENTITY_BYTES} bytes, got ${buf.byteLength}`);
  const dv = new DataView(buf.buffer, buf.byteOffset, IDENTITY_BYTES);
  const magic = String.fromCharCode(...buf.subarray(0, 8));
  if (magic !== IDENTITY_MAGIC) throw new IdentityError(`identity: bad magic ${JSON.stringify(magic)} (expected ${JSON.stringify(IDENTITY_MAGIC)}): not an identity file`);
  const stored = dv.getUint32(CRC_AT);
  const actual = crc32c(buf.subarray(0, CRC_AT));
  if (stored !== actual) throw new IdentityError(`identity: CRC32C mismatch (stored ${stored.toString(16)}, computed ${actual.toString(16)}): the file is corrupt`);
  const version = dv.getUint16(0x08);
  if (version !== IDENTITY_VERSION) throw new IdentityError(`identity: version ${version} is not supported (this build reads version ${IDENTITY_VERSION})`);
  let hex = '';
  for (let i = 0; i < 16; i++) hex += buf[0x10 + i]!.toString(16).padStart(2, '0');
  const instanceId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const createdAt = dv.getBigUint64(0x29);
  if (createdAt > BigInt(Number.MAX_SAFE_INTEGER)) throw new IdentityError('identity: createdAt is beyond 2^53 - 1');
  return { instanceId, volumeId: dv.getUint32(0x25), createdAt: Number(createdAt) };
}
