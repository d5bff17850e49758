/**
 * Reading what `hostd restore` needs straight from the mounted volumes, with no record database
 * and no actor running: whether an object's slices are on disk (their files), a whole object
 * from its slices (the snapshot: data slices, rebuilt from parity where one is missing or bad, every
 * chunk's CRC checked), and every journal segment.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import { decodeSegment, mergeReplicas, segmentName, type JournalRecord } from '../../../protocols/objstore/journal-format.js';
import { chunkCrc, chunkOffset, decodeSliceHeader, headerMismatch } from '../../../protocols/objstore/slice-format.js';
import { dataChunkLength, geometry, parityChunkLength, sliceChunkLengths, sliceHeaderFor } from '../../../protocols/objstore/stripes.js';
import type { SliceCount } from '../../../protocols/objstore/journal-replay.js';
import { SlicePaths, TMP_SUFFIX } from '../../volume/slice-paths.js';
import { reconstruct } from '../store/erasure.js';
import { volumeOf } from '../../../protocols/objstore/layout.js';
import { journalDir, listSegments } from './journal.js';

/** Volume id -> its mount point: the volumes found on the disks. */
export type Mounts = ReadonlyMap<number, string>;

/**
 * The committed slice files on every volume found, by volume: one directory listing per slice
 * directory (256 per volume) instead of one open per slice, so checking 100 000 objects costs
 * the listings, not 300 000 opens. A slice counts as on disk when its committed file is there
 * (a slice becomes visible by its rename at commit: a temp file does not count).
 */
export async function indexSlices(mounts: Mounts): Promise<Map<number, Set<string>>> {
  const out = new Map<number, Set<string>>();
  await Promise.all(
    [...mounts].map(async ([volume, mount]) => {
      const names = new Set<string>();
      const root = new SlicePaths(mount).root;
      const dirs = await readdir(root).catch(() => [] as string[]);
      for (const d of dirs) for (const f of await readdir(join(root, d)).catch(() => [] as string[])) if (!f.endsWith(TMP_SUFFIX)) names.add(f);
      out.set(volume, names);
    }),
  );
  return out;
}

/** Count an object's slices on the disks: present (its file is there), or unknown (volume not found). */
export function countSlices(index: ReadonlyMap<number, ReadonlySet<string>>, rec: { id: string; volumes: readonly number[] }): SliceCount {
  let present = 0;
  let unknown = 0;
  const stem = rec.id.slice(1).toLowerCase();
  rec.volumes.forEach((v, i) => {
    const names = index.get(v);
    if (!names) unknown++;
    else if (names.has(`${stem}.${i}`)) present++;
  });
  return { present, unknown };
}

/**
 * A slice's payload chunks, each checked against its CRC, or why not (sealed or bad). Where the
 * record names it, else, when it is not there (a drain or rebalance moved it after the record was
 * written: the snapshot pointer names the locations at the snapshot), on any other volume found:
 * its header (object id, index, geometry) says it is the one.
 */
async function readSlice(mounts: Mounts, rec: ObjectRecord, index: number): Promise<Buffer[] | string> {
  const named = volumeOf(rec, index);
  const there = await readSliceOn(mounts, rec, index, named);
  if (typeof there !== 'string' || !there.startsWith(ABSENT)) return there;
  let bad: string | null = null;
  for (const volume of mounts.keys()) {
    if (volume === named) continue;
    const moved = await readSliceOn(mounts, rec, index, volume);
    if (typeof moved !== 'string') return moved;
    if (!moved.startsWith(ABSENT)) bad ??= moved;
  }
  return `${there.slice(ABSENT.length)}${bad ? `; elsewhere: ${bad}` : ', nor on any other volume found'}`;
}

/** The start of readSliceOn's answer when the slice is not on that volume at all (then searched elsewhere). */
const ABSENT = 'absent: ';

async function readSliceOn(mounts: Mounts, rec: ObjectRecord, index: number, volume: number): Promise<Buffer[] | string> {
  const mount = mounts.get(volume);
  if (mount === undefined) return `${ABSENT}slice ${index}: volume ${volume} was not found on the disks`;
  let file: Buffer;
  try {
    file = await readFile(new SlicePaths(mount).final(rec.id, index));
  } catch (err) {
    return `${(err as NodeJS.ErrnoException).code === 'ENOENT' ? ABSENT : ''}slice ${index} on volume ${volume}: ${(err as Error).message}`;
  }
  const g = geometry(rec.size, rec.k, rec.m, rec.chunkSize);
  let h;
  try {
    h = decodeSliceHeader(file);
  } catch (err) {
    return `slice ${index} on volume ${volume}: ${(err as Error).message}`;
  }
  if (h.sealed) return `slice ${index} on volume ${volume} is sealed (an encrypted volume): restore reads plaintext slices only`;
  const wrong = headerMismatch(h, sliceHeaderFor(g, rec.id, index));
  if (wrong) return `slice ${index} on volume ${volume}: ${wrong}`;
  const chunks: Buffer[] = [];
  for (const [c, len] of sliceChunkLengths(g, index).entries()) {
    const at = chunkOffset(rec.chunkSize, c);
    const chunk = file.subarray(at, at + len);
    if (chunk.length !== len || file.length < at + len + 4 || file.readUInt32BE(at + len) !== chunkCrc(chunk)) return `slice ${index} on volume ${volume}: chunk ${c} fails its CRC (or is cut short)`;
    chunks.push(chunk);
  }
  return chunks;
}

/**
 * An object's bytes from its slices: the data slices in stripe order; where one is missing or
 * bad, each stripe is rebuilt from any k good slices (Reed-Solomon). Throws naming the slices
 * that failed when fewer than k are good.
 */
export async function readObject(mounts: Mounts, rec: ObjectRecord): Promise<Buffer> {
  const g = geometry(rec.size, rec.k, rec.m, rec.chunkSize);
  const n = rec.k + rec.m;
  const slices: Array<Buffer[] | null> = new Array(n).fill(null);
  const why: string[] = [];
  const load = async (i: number) => {
    const s = await readSlice(mounts, rec, i);
    if (typeof s === 'string') why.push(s);
    else slices[i] = s;
  };
  await Promise.all(Array.from({ length: rec.k }, (_, i) => load(i)));
  const missing = slices.slice(0, rec.k).flatMap((s, i) => (s ? [] : [i]));
  if (missing.length) for (let j = rec.k; j < n && slices.filter(Boolean).length < rec.k; j++) await load(j);
  const good = slices.flatMap((s, i) => (s ? [i] : []));
  if (good.length < rec.k) throw new Error(`object ${rec.id} (${rec.path}) cannot be read: ${good.length} good slice(s) of ${rec.k} needed (${why.join('; ')})`);
  const out: Buffer[] = [];
  for (let s = 0; s < g.stripes; s++) {
    if (!missing.length) {
      for (let i = 0; i < rec.k; i++) if (dataChunkLength(g, s, i) > 0) out.push(slices[i]![s]!);
      continue;
    }
    const shard = parityChunkLength(g, s);
    const shards = new Uint8Array(n * shard);
    const present = good.slice(0, rec.k);
    for (const i of present) shards.set(slices[i]![s] ?? new Uint8Array(0), i * shard);
    const rebuilt = new Uint8Array((await reconstruct({ k: rec.k, m: rec.m, shardSize: shard, shards: shards.buffer, present, wanted: missing })).shards);
    for (let i = 0; i < rec.k; i++) {
      const len = dataChunkLength(g, s, i);
      if (len > 0) out.push(Buffer.from(rebuilt.subarray(i * shard, i * shard + len)));
    }
  }
  return Buffer.concat(out);
}

/** What reading the journals of every volume found. */
export interface JournalRead {
  records: JournalRecord[];
  segments: number;
  tornTails: number;
  corruptLines: number;
  conflicts: number[];
}

/** Every journal segment on every volume found, merged by sequence number. */
export async function readJournals(mounts: Mounts): Promise<JournalRead> {
  const lists: JournalRecord[][] = [];
  const out: JournalRead = { records: [], segments: 0, tornTails: 0, corruptLines: 0, conflicts: [] };
  for (const mount of mounts.values()) {
    const dir = journalDir(mount);
    for (const first of await listSegments(dir)) {
      const bytes = await readFile(join(dir, segmentName(first))).catch(() => null);
      if (!bytes) continue;
      const seg = decodeSegment(bytes);
      out.segments++;
      if (seg.tornTail) out.tornTails++;
      out.corruptLines += seg.corrupt.length;
      lists.push(seg.records);
    }
  }
  const merged = mergeReplicas(lists);
  out.records = merged.records;
  out.conflicts = merged.conflicts;
  return out;
}
