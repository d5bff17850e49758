/**
 * Erasure layout policy, as pure functions: the default k+m scheme for a number of writable
 * volumes, the layout a PUT writes with (and when it refuses), the chunk size of an object, which
 * volumes take its slices (small objects spread at random, weighted by free space), which volume
 * holds a given slice of a record, and which volumes take new slices at all. (The header a slice is
 * written with is sliceHeaderFor, in stripes.ts, beside the geometry it is computed from.)
 */
import type { ObjectRecord } from './headers.js';

export const DEFAULT_CHUNK_SIZE = 256 * 1024;

/** Data and parity slice counts for `writable` volumes; null when nothing can be written. */
export function defaultScheme(writable: number): { k: number; m: number } | null {
  if (!Number.isSafeInteger(writable) || writable < 0) throw new RangeError(`writable volume count must be a non-negative integer, got ${String(writable)}`);
  if (writable === 0) return null;
  if (writable === 1) return { k: 1, m: 0 };
  const m = Math.min(4, Math.max(1, Math.round(writable / 3)));
  return { k: Math.min(writable - m, 8), m };
}

/** Objects of at most this many bytes are stored as 1 + m (schemeFor). Two 4 KiB blocks. */
export const SMALL_OBJECT_BYTES = 8192;

/** A filesystem block: the least disk a slice file takes. */
const BLOCK = 4096;

/** 4 KiB blocks the slices of an object take (each slice at least one). */
function blocks(size: number, k: number, m: number): number {
  return (k + m) * Math.max(1, Math.ceil(size / k / BLOCK));
}

/**
 * The scheme of an object of `size` bytes over `writable` volumes: the default scheme, except that
 * a small object (at most SMALL_OBJECT_BYTES) gets one data slice and the same m parity slices
 * (with one data shard, Reed–Solomon parity is a copy of it) when that takes no more 4 KiB blocks
 * than the default would (a 4 KiB object over 6 volumes: 3 blocks as 1+2 against 6 as 4+2). It
 * survives the same m lost slices, and costs m + 1 slice commits (a journal force and a device
 * flush each) instead of k + m, which is most of a small PUT's time.
 */
export function schemeFor(size: number, writable: number): { k: number; m: number } | null {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`object size must be a non-negative safe integer, got ${String(size)}`);
  const s = defaultScheme(writable);
  if (!s || s.k === 1 || size > SMALL_OBJECT_BYTES || blocks(size, 1, s.m) > blocks(size, s.k, s.m)) return s;
  return { k: 1, m: s.m };
}

/** The layout a PUT writes with, or why it refuses to write at all. */
export type WriteLayout = { k: number; m: number } | { refuse: string };

/**
 * The layout of a PUT of `size` bytes when `writable` of the `registered` (not deleted) volumes
 * take new slices: schemeFor over the writable ones. A fleet of one volume writes 1 + 0 (its
 * operator chose no redundancy); a fleet of several never writes without parity: with fewer than
 * two writable volumes left it refuses (the caller names which volumes and why).
 */
export function writeLayout(size: number, writable: number, registered: number): WriteLayout {
  if (!Number.isSafeInteger(registered) || registered < 0) throw new RangeError(`registered volume count must be a non-negative integer, got ${String(registered)}`);
  const s = schemeFor(size, writable);
  if (!s) return { refuse: 'no volume takes new slices' };
  if (s.m === 0 && registered > 1) {
    return { refuse: `only 1 of the ${registered} volumes takes new slices, and an object is never stored without a parity slice on a fleet of several volumes` };
  }
  return s;
}

/**
 * `count` distinct volumes drawn at random without replacement, each draw weighted by free space
 * (a volume with twice the room is twice as likely; all empty-handed: equally likely), so that
 * small objects spread over the fleet instead of always landing on the same most-free volumes.
 * `rand` returns numbers in [0, 1) (the caller passes a random source; tests pass a seeded one). Null when there are
 * fewer distinct candidates than `count`; duplicates count once, as in pickVolumes.
 */
export function spreadVolumes(candidates: ReadonlyArray<{ id: number; bytesFree: number }>, count: number, rand: () => number): number[] | null {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`volume count must be a non-negative integer, got ${String(count)}`);
  const free = new Map<number, number>();
  for (const c of candidates) {
    if (!Number.isSafeInteger(c.id)) throw new TypeError(`volume id must be an integer, got ${String(c.id)}`);
    if (!Number.isFinite(c.bytesFree)) throw new TypeError(`volume ${c.id}: bytesFree must be a finite number, got ${String(c.bytesFree)}`);
    free.set(c.id, Math.max(free.get(c.id) ?? 0, c.bytesFree, 0));
  }
  if (free.size < count) return null;
  const pool = [...free].sort((a, b) => a[0] - b[0]);
  const picked: number[] = [];
  while (picked.length < count) {
    const total = pool.reduce((n, [, f]) => n + f, 0);
    const r = rand();
    if (!(r >= 0 && r < 1)) throw new RangeError(`rand must return a number in [0, 1), got ${String(r)}`);
    let at = pool.length - 1;
    if (total > 0) {
      let x = r * total;
      for (let i = 0; i < pool.length; i++) {
        x -= pool[i]![1];
        if (x < 0) {
          at = i;
          break;
        }
      }
    } else at = Math.floor(r * pool.length);
    picked.push(pool[at]![0]);
    pool.splice(at, 1);
  }
  return picked;
}

/**
 * The volumes a new object's `k + m` slices go to: a small object (one data slice, schemeFor)
 * spreads at random weighted by free space (spreadVolumes); a larger one takes the most-free
 * volumes (pickVolumes: a newly provisioned, empty volume takes new writes first).
 */
export function placeSlices(candidates: ReadonlyArray<{ id: number; bytesFree: number }>, scheme: { k: number; m: number }, rand: () => number): number[] | null {
  const n = scheme.k + scheme.m;
  return scheme.k === 1 && scheme.m > 0 ? spreadVolumes(candidates, n, rand) : pickVolumes(candidates, n);
}

function roundUp8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

/**
 * Chunk size of an object of `objectSize` bytes cut into `k` data slices: one stripe when the
 * object is small, else `maxChunk`. Always a multiple of 8 (Reed–Solomon shards are), at least 8.
 */
export function chunkSizeFor(objectSize: number, k: number, maxChunk = DEFAULT_CHUNK_SIZE): number {
  if (!Number.isSafeInteger(objectSize) || objectSize < 0) throw new RangeError(`object size must be a non-negative safe integer, got ${String(objectSize)}`);
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${String(k)}`);
  if (!Number.isSafeInteger(maxChunk) || maxChunk < 8 || maxChunk % 8 !== 0) {
    throw new RangeError(`maximum chunk size must be a positive multiple of 8, got ${String(maxChunk)}`);
  }
  return Math.max(8, Math.min(maxChunk, roundUp8(Math.ceil(objectSize / k))));
}

/**
 * `count` distinct volume ids, most free space first, ties by lowest id; null when there are
 * fewer distinct candidates than `count`. A volume listed twice counts once (ranked by its
 * largest bytesFree). The input is not modified.
 */
export function pickVolumes(candidates: ReadonlyArray<{ id: number; bytesFree: number }>, count: number): number[] | null {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`volume count must be a non-negative integer, got ${String(count)}`);
  for (const c of candidates) {
    if (!Number.isSafeInteger(c.id)) throw new TypeError(`volume id must be an integer, got ${String(c.id)}`);
    if (!Number.isFinite(c.bytesFree)) throw new TypeError(`volume ${c.id}: bytesFree must be a finite number, got ${String(c.bytesFree)}`);
  }
  const sorted = [...candidates].sort((a, b) => b.bytesFree - a.bytesFree || a.id - b.id);
  const picked: number[] = [];
  const seen = new Set<number>();
  for (const c of sorted) {
    if (picked.length === count) break;
    if (seen.has(c.id)) continue;
    seen.add(c.id);
    picked.push(c.id);
  }
  return picked.length === count ? picked : null;
}

/**
 * The volume that holds slice `index` of an object: data slices 0..k-1 are in `dataVolumes`,
 * parity slices k..k+m-1 in `parityVolumes`.
 */
export function volumeOf(rec: Pick<ObjectRecord, 'k' | 'dataVolumes' | 'parityVolumes'>, index: number): number {
  return index < rec.k ? rec.dataVolumes[index]! : rec.parityVolumes[index - rec.k]!;
}

/** A copy of `rec` with slice `index` on volume `to` (a slice moved: relocations, and their replay). */
export function withSliceOn<R extends Pick<ObjectRecord, 'k' | 'dataVolumes' | 'parityVolumes'>>(rec: R, index: number, to: number): R {
  const r = { ...rec, dataVolumes: [...rec.dataVolumes], parityVolumes: [...rec.parityVolumes] };
  if (index < rec.k) r.dataVolumes[index] = to;
  else r.parityVolumes[index - rec.k] = to;
  return r;
}

/** The flags of a volume record (object-store.md, States and transitions). */
export interface VolumeFlags {
  isEnabled: boolean;
  isReadOnly: boolean;
  isHealthy: boolean;
  isDraining: boolean;
  isDeleted: boolean;
}

/**
 * Does a volume take new slices (a PUT's, or a relocation's)? Only when it is enabled, writable,
 * healthy, not draining, and not deleted: a deleted volume is a tombstone (object-store.md,
 * "A deleted volume is a tombstone"), whatever its other flags say. Whether its actor is running
 * is the caller's to check.
 */
export function takesNewSlices(rec: VolumeFlags): boolean {
  return rec.isEnabled && !rec.isReadOnly && rec.isHealthy && !rec.isDraining && !rec.isDeleted;
}

/** Why a volume takes no new slices (empty when it does): the flags `takesNewSlices` refuses. */
export function whyNoNewSlices(rec: VolumeFlags & { faults?: number }): string[] {
  const why: string[] = [];
  if (rec.isDeleted) why.push('deleted');
  if (!rec.isEnabled) why.push('disabled');
  if (!rec.isHealthy) why.push(`unhealthy${rec.faults !== undefined ? ` (${rec.faults} faulty slices)` : ''}`);
  if (rec.isReadOnly) why.push('read-only');
  if (rec.isDraining) why.push('draining');
  return why;
}
