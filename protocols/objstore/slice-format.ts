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
 */

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
}
