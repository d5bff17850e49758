/**
 * CONTRACT (implementation by the erasure-coding work): Reed–Solomon over GF(2^8) with
 * @ronomon/reed-solomon, as piscina tasks. Shards are `shardSize` bytes (a multiple of 8);
 * buffers are moved in and out, never copied.
 */
export interface EncodeTask {
  k: number;
  m: number;
  shardSize: number;
  /** k shards back to back (k * shardSize bytes) */
  data: ArrayBuffer;
}
/** Returns { data, parity }: the data buffer handed back, and m parity shards back to back. */
export interface EncodeResult {
  data: ArrayBuffer;
  parity: ArrayBuffer;
}

export interface ReconstructTask {
  k: number;
  m: number;
  shardSize: number;
  /** k + m shards back to back; the missing ones hold anything */
  shards: ArrayBuffer;
  /** indexes (0..k+m-1) of the shards present (at least k of them) */
  present: number[];
  /** indexes to rebuild */
  wanted: number[];
}
/** Returns { shards } with the wanted shards filled in. */
export interface ReconstructResult {
  shards: ArrayBuffer;
}
