/**
 * The metadata journal's format, pure: what a record holds, how it is written as one line, and
 * how a segment file is read back, torn tail and all. The journal itself (files on several
 * volumes, group commit) is actors/objstore/journal/; the restore rules are journal-replay.ts.
 *
 * A record is one line of text: its JSON, a tab, the CRC32C of the JSON's UTF-8 bytes as 8
 * lowercase hex digits, a newline:
 *
 *   {"seq":42,"ts":1764196000000,"op":"policy","bucket":"photos",...}\t1a2b3c4d\n
 *
 * NDJSON (not binary) so an operator can read a journal with `cut -f1 | jq`; the CRC per line so a
 * torn or rotted line is told from a good one without trusting JSON.parse to fail. Records carry
 * a sequence number, one counter for the whole store: every replica of the journal writes the
 * same record under the same number, so the replicas are merged by number (mergeReplicas), and a
 * record any replica kept is enough.
 *
 * A segment file is named by the sequence number of its first record, 16 digits, `.jnl`.
 */
import { crc32c } from '@node-rs/crc32';
import type { ObjectRecord } from './headers.js';

/** A bucket's policy flags, as journalled and snapshotted. */
export interface PolicyFlags {
  publicRead: boolean;
  publicWrite: boolean;
  deleteProtected: boolean;
}

/** A volume record, as the journal and the snapshot carry it (the fields are the store's). */
export interface VolumeEntry {
  id: number;
  [field: string]: unknown;
}

export type JournalOp =
  | ({ op: 'put' } & ObjectRecord)
  | { op: 'delete'; id: string; path: string; volumes: number[]; k: number }
  | ({ op: 'policy'; bucket: string } & PolicyFlags)
  | { op: 'volume'; volume: VolumeEntry }
  /** slices of an object relocated by the scheduler (drain, rebalance, repair): logged before the record flips */
  | { op: 'move'; id: string; slices: SliceMove[] };

/** One slice of a move: slice `index` goes from volume `from` to volume `to`. */
export interface SliceMove {
  index: number;
  from: number;
  to: number;
}

export type JournalRecord = JournalOp & { seq: number; ts: number };

export const SEGMENT_SUFFIX = '.jnl';
const SEGMENT_RE = /^(\d{16})\.jnl$/;

export class JournalFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalFormatError';
  }
}

/** The file name of the segment whose first record is `firstSeq`. */
export function segmentName(firstSeq: number): string {
  if (!Number.isSafeInteger(firstSeq) || firstSeq < 1) throw new JournalFormatError(`a segment starts at a sequence number >= 1, got ${firstSeq}`);
  return `${String(firstSeq).padStart(16, '0')}${SEGMENT_SUFFIX}`;
}

/** The first sequence number of a segment file name, or null if the name is not a segment's. */
export function parseSegmentName(name: string): number | null {
  const m = SEGMENT_RE.exec(name);
  return m ? Number(m[1]) : null;
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/** One record as its line (with the newline). */
export function encodeRecord(rec: JournalRecord): string {
  const problem = recordProblem(rec);
  if (problem) throw new JournalFormatError(`not a journal record: ${problem}`);
  const json = JSON.stringify(rec);
  return `${json}\t${hex8(crc32c(Buffer.from(json, 'utf8')))}\n`;
}

const isBool = (v: unknown) => typeof v === 'boolean';
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const isIdList = (v: unknown) => Array.isArray(v) && v.every((x) => Number.isSafeInteger(x) && x > 0);
const OBJECT_ID = /^\$[0-9a-f]{24}$/i;

/** Why `r` is not a well-formed record (its fields by op), or null. */
export function recordProblem(r: unknown): string | null {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'not an object';
  const o = r as Record<string, unknown>;
  if (!Number.isSafeInteger(o.seq) || (o.seq as number) < 1) return `seq must be an integer >= 1, got ${JSON.stringify(o.seq)}`;
  if (!isCount(o.ts)) return `ts must be a time in ms, got ${JSON.stringify(o.ts)}`;
  switch (o.op) {
    case 'put':
      if (typeof o.id !== 'string' || !OBJECT_ID.test(o.id)) return `put: id must be an object id, got ${JSON.stringify(o.id)}`;
      if (typeof o.path !== 'string' || !o.path.startsWith('/')) return `put: path must start with /, got ${JSON.stringify(o.path)}`;
      if (typeof o.mime !== 'string' || typeof o.md5 !== 'string') return 'put: mime and md5 must be strings';
      for (const f of ['size', 'k', 'm', 'chunkSize', 'createdAt'] as const) if (!isCount(o[f])) return `put: ${f} must be a count, got ${JSON.stringify(o[f])}`;
      if (!isIdList(o.dataVolumes) || !isIdList(o.parityVolumes)) return 'put: dataVolumes and parityVolumes must be lists of volume ids';
      if ((o.dataVolumes as number[]).length !== o.k || (o.parityVolumes as number[]).length !== o.m) return 'put: the volume lists do not match k and m';
      return null;
    case 'delete':
      if (typeof o.id !== 'string' || !OBJECT_ID.test(o.id)) return `delete: id must be an object id, got ${JSON.stringify(o.id)}`;
      if (typeof o.path !== 'string') return 'delete: path must be a string';
      if (!isIdList(o.volumes) || !isCount(o.k)) return 'delete: volumes must be a list of volume ids and k a count';
      return null;
    case 'policy':
      if (typeof o.bucket !== 'string' || o.bucket === '') return 'policy: bucket must be a name';
      if (!isBool(o.publicRead) || !isBool(o.publicWrite) || !isBool(o.deleteProtected)) return 'policy: publicRead, publicWrite and deleteProtected must be booleans';
      return null;
    case 'volume': {
      const v = o.volume as Record<string, unknown> | null;
      if (typeof v !== 'object' || v === null || !Number.isSafeInteger(v.id) || (v.id as number) < 1) return 'volume: volume must be a record with an id';
      return null;
    }
    case 'move': {
      if (typeof o.id !== 'string' || !OBJECT_ID.test(o.id)) return `move: id must be an object id, got ${JSON.stringify(o.id)}`;
      if (!Array.isArray(o.slices) || !o.slices.length) return 'move: slices must be a non-empty list';
      for (const m of o.slices as Array<Record<string, unknown>>) {
        if (typeof m !== 'object' || m === null || !isCount(m.index) || !isIdList([m.from, m.to])) return `move: each slice is {index, from, to} (a count and two volume ids), got ${JSON.stringify(m)}`;
      }
      return null;
    }
    default:
      return `unknown op ${JSON.stringify(o.op)}`;
  }
}

/** What reading one segment found. */
export interface SegmentRead {
  records: JournalRecord[];
  /** the file ends in a partial or bad last line (a crash mid-append): ignored */
  tornTail: boolean;
  /** bytes of the good prefix: where an append may continue (the torn tail cut off) */
  goodBytes: number;
  /** bad lines before the last (rot, or a stray write): skipped, with why */
  corrupt: Array<{ line: number; why: string }>;
}

/** Decode one line (without its newline): the record, or why it is not one. */
export function decodeLine(line: string): JournalRecord | string {
  const tab = line.lastIndexOf('\t');
  if (tab < 0 || line.length - tab - 1 !== 8) return 'no checksum';
  const json = line.slice(0, tab);
  const crc = line.slice(tab + 1);
  if (hex8(crc32c(Buffer.from(json, 'utf8'))) !== crc) return 'checksum mismatch';
  let rec: unknown;
  try {
    rec = JSON.parse(json);
  } catch {
    return 'not JSON';
  }
  return recordProblem(rec) ?? (rec as JournalRecord);
}

/**
 * Read a segment's bytes. A last line without its newline, or a bad last line, is a torn tail
 * (the append a crash cut): dropped and reported. A bad line before the last is corruption: it is
 * skipped and reported (another replica may hold that record), and reading goes on.
 */
export function decodeSegment(bytes: Uint8Array): SegmentRead {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: SegmentRead = { records: [], tornTail: false, goodBytes: 0, corrupt: [] };
  let start = 0;
  let lineNo = 0;
  // Lines are found in the bytes (not the decoded text), so goodBytes is a byte offset at no cost:
  // measuring the text before each line made a segment of n lines cost O(n^2).
  while (start < buf.length) {
    const nl = buf.indexOf(0x0a, start);
    lineNo++;
    if (nl < 0) {
      out.tornTail = true;
      break;
    }
    const r = decodeLine(buf.toString('utf8', start, nl));
    const last = nl === buf.length - 1;
    if (typeof r === 'string') {
      if (last) {
        out.tornTail = true;
        break;
      }
      out.corrupt.push({ line: lineNo, why: r });
    } else out.records.push(r);
    start = nl + 1;
    out.goodBytes = start;
  }
  return out;
}

/**
 * The records of several replicas (and segments) as one journal: sorted by sequence number, each
 * number once. Two replicas holding different records under one number is a bug or a mix of two
 * stores' disks: the first seen is kept and the number reported.
 */
export function mergeReplicas(lists: ReadonlyArray<readonly JournalRecord[]>): { records: JournalRecord[]; conflicts: number[] } {
  const bySeq = new Map<number, { rec: JournalRecord; json: string }>();
  const conflicts = new Set<number>();
  for (const list of lists) {
    for (const rec of list) {
      const json = JSON.stringify(rec);
      const had = bySeq.get(rec.seq);
      if (!had) bySeq.set(rec.seq, { rec, json });
      else if (had.json !== json) conflicts.add(rec.seq);
    }
  }
  const records = [...bySeq.values()].map((x) => x.rec).sort((a, b) => a.seq - b.seq);
  return { records, conflicts: [...conflicts].sort((a, b) => a - b) };
}

/**
 * Which segments can be dropped once a snapshot covers everything before `replayFrom`: every
 * segment whose records all come before it (its successor starts at or below replayFrom). The
 * last segment (being appended to) is always kept.
 */
export function droppableSegments(firstSeqs: readonly number[], replayFrom: number): number[] {
  const sorted = [...firstSeqs].sort((a, b) => a - b);
  return sorted.filter((s, i) => i < sorted.length - 1 && sorted[i + 1]! <= replayFrom);
}

/**
 * Choose the volumes that carry the journal: `want` of the candidates, one per bus group first
 * (so a controller failing takes one replica), then more from groups already used; by volume id
 * inside a group (stable across restarts). The candidates are in preference order.
 */
export function chooseReplicas(candidates: ReadonlyArray<{ id: number; busGroup: string }>, want: number): number[] {
  const chosen: number[] = [];
  const groups = new Set<string>();
  for (const c of candidates) {
    if (chosen.length >= want) break;
    if (groups.has(c.busGroup) && c.busGroup !== 'virtual') continue;
    groups.add(c.busGroup);
    chosen.push(c.id);
  }
  for (const c of candidates) {
    if (chosen.length >= want) break;
    if (!chosen.includes(c.id)) chosen.push(c.id);
  }
  return chosen;
}
