/**
 * Geometry of an object cut into stripes. A stripe is k data chunks of `chunkSize` bytes:
 * chunk c of data slice i holds object bytes [c*k*cs + i*cs, +cs), clipped to the object's size
 * (so the last stripe may be short, and some of its data chunks empty). Parity slice j's chunk c
 * is computed over stripe c, whose shards are its data chunks zero-padded to the length of its
 * first chunk rounded up to a multiple of 8. A slice file stores its non-empty chunks in stripe
 * order (see slice-format.ts): data slice i has a chunk for each stripe that reaches it; a parity
 * slice has one for every stripe.
 */
import type { SliceHeader } from './slice-format.js';

export interface Geometry {
  size: number;
  k: number;
  m: number;
  chunkSize: number;
  stripeBytes: number;
  stripes: number;
}

export function geometry(size: number, k: number, m: number, chunkSize: number): Geometry {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`object size must be a non-negative safe integer, got ${String(size)}`);
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${String(k)}`);
  if (!Number.isSafeInteger(m) || m < 0) throw new RangeError(`m must be a non-negative integer, got ${String(m)}`);
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 8 || chunkSize % 8 !== 0) {
    throw new RangeError(`chunk size must be a positive multiple of 8, got ${String(chunkSize)}`);
  }
  const stripeBytes = k * chunkSize;
  if (!Number.isSafeInteger(stripeBytes)) throw new RangeError(`stripe of ${k} x ${chunkSize} bytes is too large`);
  return { size, k, m, chunkSize, stripeBytes, stripes: Math.ceil(size / stripeBytes) };
}

function checkStripe(g: Geometry, stripe: number): void {
  if (!Number.isSafeInteger(stripe) || stripe < 0 || stripe >= g.stripes) {
    throw new RangeError(`stripe ${String(stripe)} out of range: the object has ${g.stripes} stripe(s)`);
  }
}

/** Object bytes held by data chunk `dataIndex` of `stripe` (0..chunkSize; 0 past the object's end). */
export function dataChunkLength(g: Geometry, stripe: number, dataIndex: number): number {
  checkStripe(g, stripe);
  if (!Number.isSafeInteger(dataIndex) || dataIndex < 0 || dataIndex >= g.k) throw new RangeError(`data index ${String(dataIndex)} out of range 0..${g.k - 1}`);
  const start = stripe * g.stripeBytes + dataIndex * g.chunkSize;
  return Math.max(0, Math.min(g.chunkSize, g.size - start));
}

/** Shard size of `stripe`: its first data chunk's length rounded up to a multiple of 8. */
export function parityChunkLength(g: Geometry, stripe: number): number {
  return Math.ceil(dataChunkLength(g, stripe, 0) / 8) * 8;
}

/** Lengths of the chunks stored in slice `index` (0..k-1 data, k..k+m-1 parity), in stripe order. */
export function sliceChunkLengths(g: Geometry, index: number): number[] {
  if (!Number.isSafeInteger(index) || index < 0 || index >= g.k + g.m) throw new RangeError(`slice index ${String(index)} out of range 0..${g.k + g.m - 1}`);
  const out: number[] = [];
  for (let s = 0; s < g.stripes; s++) {
    if (index < g.k) {
      const n = dataChunkLength(g, s, index);
      if (n === 0) break; // only the last stripe can leave a data slice empty
      out.push(n);
    } else {
      out.push(parityChunkLength(g, s));
    }
  }
  return out;
}

/** Payload bytes of slice `index` (checksums and header excluded). */
export function sliceSize(g: Geometry, index: number): number {
  if (!Number.isSafeInteger(index) || index < 0 || index >= g.k + g.m) throw new RangeError(`slice index ${String(index)} out of range 0..${g.k + g.m - 1}`);
  if (g.stripes === 0) return 0;
  const last = g.stripes - 1;
  const full = last; // every stripe but the last is full
  if (index < g.k) return full * g.chunkSize + dataChunkLength(g, last, index);
  return full * g.chunkSize + parityChunkLength(g, last);
}

/**
 * The header slice `index` of object `objectId` is written with (and must read back as): its
 * place in the object and the object's geometry.
 */
export function sliceHeaderFor(g: Geometry, objectId: string, index: number): SliceHeader {
  return { objectId, index, k: g.k, m: g.m, chunkSize: g.chunkSize, objectSize: g.size, sliceSize: sliceSize(g, index) };
}

/** The stripes touched by the inclusive byte range [start, end] of the object. */
export function stripeRange(g: Geometry, start: number, end: number): { first: number; last: number } {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || start > end || end >= g.size) {
    throw new RangeError(`not a byte range of a ${g.size}-byte object: ${String(start)}-${String(end)}`);
  }
  return { first: Math.floor(start / g.stripeBytes), last: Math.floor(end / g.stripeBytes) };
}

/** The first object byte of `stripe`. */
export function stripeOffset(g: Geometry, stripe: number): number {
  checkStripe(g, stripe);
  return stripe * g.stripeBytes;
}
