/**
 * The snapshot's format, pure: a copy of the whole record database as NDJSON, and the pointer
 * file that names the latest snapshots on every volume. The snapshot job (actors/objstore/
 * journal/snapshots.ts) writes it as an ordinary object; `hostd restore` reads it back.
 *
 *   {"op":"snapshot","version":1,"id":"…","takenAt":…,"replayFrom":…}     header
 *   {"op":"bucket","name":"photos","publicRead":false,…}                    one per bucket policy
 *   {"op":"volume","volume":{"id":1,…}}                                     one per volume record
 *   {"op":"meta","key":"nextVolumeId","value":7}                             store counters
 *   {"op":"object","id":"$…","path":"/photos/a.jpg",…}                       one per object record
 *   {"op":"end","buckets":1,"volumes":6,"objects":1000,"meta":1,"sha256":"…"}  trailer
 *
 * The trailer's sha256 is over every byte before the trailer line. A snapshot without a trailer,
 * with a wrong checksum or wrong counts, is never trusted: decodeSnapshot throws, naming which.
 * `replayFrom` is the journal's first sequence number the snapshot may not hold (records at or
 * after it are replayed on top of it at restore; replay is idempotent, so an overlap is harmless).
 */
import { createHash, type Hash } from 'node:crypto';
import type { ObjectRecord } from './headers.js';
import { recordProblem, type PolicyFlags, type VolumeEntry } from './journal-format.js';

export const SNAPSHOT_VERSION = 1;
/** Where the snapshots are stored, as objects: `/<bucket>/<id>.ndjson`. The bucket is reserved. */
export const SNAPSHOT_BUCKET = '.hostd-snapshots';
/** The pointer file on every volume: `<mount>/objstore/<POINTER_FILE>`. */
export const POINTER_FILE = 'snapshot-pointer.json';
/** How many snapshots the pointer names (the latest first). */
export const POINTER_KEEPS = 2;

export interface SnapshotHeader {
  id: string;
  takenAt: number;
  replayFrom: number;
}

export interface SnapshotContent {
  header: SnapshotHeader;
  buckets: Map<string, PolicyFlags>;
  volumes: Map<number, VolumeEntry>;
  meta: Map<string, unknown>;
  objects: ObjectRecord[];
}

export interface SnapshotCounts {
  buckets: number;
  volumes: number;
  objects: number;
  meta: number;
}

export class SnapshotFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotFormatError';
  }
}

const SNAPSHOT_ID = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/** A snapshot id: its time (UTC, to the second) and 6 hex digits of `random`. */
export function snapshotId(takenAt: number, random: Uint8Array): string {
  const iso = new Date(takenAt).toISOString();
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return `${stamp}-${Buffer.from(random.subarray(0, 3)).toString('hex').padEnd(6, '0')}`;
}

export function isSnapshotId(s: unknown): s is string {
  return typeof s === 'string' && SNAPSHOT_ID.test(s);
}

/** The object path a snapshot is stored under. */
export function snapshotPath(id: string): string {
  if (!isSnapshotId(id)) throw new SnapshotFormatError(`not a snapshot id: ${JSON.stringify(id)}`);
  return `/${SNAPSHOT_BUCKET}/${id}.ndjson`;
}

/**
 * Writes a snapshot line by line, hashing as it goes. Call header() once, then the entries
 * (any order), then end() for the trailer. Each call returns the text to append.
 */
export class SnapshotEncoder {
  private readonly hash: Hash = createHash('sha256');
  private readonly counts: SnapshotCounts = { buckets: 0, volumes: 0, objects: 0, meta: 0 };
  private started = false;
  private ended = false;

  private emit(obj: object): string {
    if (this.ended) throw new SnapshotFormatError('the snapshot is already ended');
    const line = JSON.stringify(obj) + '\n';
    this.hash.update(line, 'utf8');
    return line;
  }

  header(h: SnapshotHeader): string {
    if (this.started) throw new SnapshotFormatError('the header is written once, first');
    if (!isSnapshotId(h.id)) throw new SnapshotFormatError(`not a snapshot id: ${JSON.stringify(h.id)}`);
    this.started = true;
    return this.emit({ op: 'snapshot', version: SNAPSHOT_VERSION, id: h.id, takenAt: h.takenAt, replayFrom: h.replayFrom });
  }

  private body(obj: object): string {
    if (!this.started) throw new SnapshotFormatError('the header comes first');
    return this.emit(obj);
  }

  bucket(name: string, p: PolicyFlags): string {
    const line = this.body({ op: 'bucket', name, publicRead: p.publicRead, publicWrite: p.publicWrite, deleteProtected: p.deleteProtected });
    this.counts.buckets++;
    return line;
  }

  volume(v: VolumeEntry): string {
    const line = this.body({ op: 'volume', volume: v });
    this.counts.volumes++;
    return line;
  }

  meta(key: string, value: unknown): string {
    const line = this.body({ op: 'meta', key, value });
    this.counts.meta++;
    return line;
  }

  object(rec: ObjectRecord): string {
    const line = this.body({ op: 'object', ...rec });
    this.counts.objects++;
    return line;
  }

  /** The trailer line; the counts and checksum are also returned for the snapshot's listing. */
  end(): { line: string; counts: SnapshotCounts; sha256: string } {
    if (!this.started) throw new SnapshotFormatError('the header comes first');
    const sha256 = this.hash.digest('hex');
    const line = JSON.stringify({ op: 'end', ...this.counts, sha256 }) + '\n';
    this.ended = true;
    return { line, counts: { ...this.counts }, sha256 };
  }
}

/** The object-record check of a snapshot line: a journal put without seq and ts. */
function objectProblem(o: Record<string, unknown>): string | null {
  return recordProblem({ ...o, op: 'put', seq: 1, ts: 0 });
}

/**
 * Read a whole snapshot. Throws SnapshotFormatError naming what is wrong: no trailer (cut
 * short), a checksum or count mismatch, a bad line (by number).
 */
export function decodeSnapshot(bytes: Uint8Array): SnapshotContent & { sha256: string } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length === 0) throw new SnapshotFormatError('the snapshot is empty');
  if (buf[buf.length - 1] !== 0x0a) throw new SnapshotFormatError('the snapshot has no trailer: it ends mid-line (cut short)');
  const lastStart = buf.lastIndexOf(0x0a, buf.length - 2) + 1;
  let trailer: Record<string, unknown>;
  try {
    trailer = JSON.parse(buf.subarray(lastStart, buf.length - 1).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new SnapshotFormatError('the snapshot has no trailer: its last line is not JSON (cut short or damaged)');
  }
  if (trailer?.op !== 'end') throw new SnapshotFormatError('the snapshot has no trailer (its last line is not {"op":"end",…}): it was cut short');
  const sha256 = createHash('sha256').update(buf.subarray(0, lastStart)).digest('hex');
  if (trailer.sha256 !== sha256) throw new SnapshotFormatError(`the snapshot's checksum does not match its trailer (sha256 ${sha256}, trailer ${String(trailer.sha256)}): it is damaged`);
  const lines = buf.subarray(0, lastStart).toString('utf8').split('\n');
  lines.pop();
  const out: SnapshotContent = { header: { id: '', takenAt: 0, replayFrom: 1 }, buckets: new Map(), volumes: new Map(), meta: new Map(), objects: [] };
  lines.forEach((text, i) => {
    const bad = (why: string) => new SnapshotFormatError(`snapshot line ${i + 1}: ${why}`);
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw bad('not JSON');
    }
    if (i === 0) {
      if (o.op !== 'snapshot') throw bad('the first line must be the header {"op":"snapshot",…}');
      if (o.version !== SNAPSHOT_VERSION) throw bad(`unknown snapshot version ${JSON.stringify(o.version)} (this hostd reads ${SNAPSHOT_VERSION})`);
      if (!isSnapshotId(o.id) || !Number.isSafeInteger(o.takenAt) || !Number.isSafeInteger(o.replayFrom) || (o.replayFrom as number) < 1) throw bad('the header needs id, takenAt and replayFrom');
      out.header = { id: o.id, takenAt: o.takenAt as number, replayFrom: o.replayFrom as number };
      return;
    }
    switch (o.op) {
      case 'bucket':
        if (typeof o.name !== 'string' || typeof o.publicRead !== 'boolean' || typeof o.publicWrite !== 'boolean' || typeof o.deleteProtected !== 'boolean') throw bad('a bucket needs name and the three flags');
        out.buckets.set(o.name, { publicRead: o.publicRead, publicWrite: o.publicWrite, deleteProtected: o.deleteProtected });
        return;
      case 'volume': {
        const v = o.volume as VolumeEntry | undefined;
        if (!v || !Number.isSafeInteger(v.id)) throw bad('a volume needs a record with an id');
        out.volumes.set(v.id, v);
        return;
      }
      case 'meta':
        if (typeof o.key !== 'string') throw bad('a meta entry needs a key');
        out.meta.set(o.key, o.value);
        return;
      case 'object': {
        const problem = objectProblem(o);
        if (problem) throw bad(problem.replace(/^put: /, 'object: '));
        const { op: _op, ...rec } = o;
        out.objects.push(rec as unknown as ObjectRecord);
        return;
      }
      default:
        throw bad(`unknown op ${JSON.stringify(o.op)}`);
    }
  });
  if (!out.header.id) throw new SnapshotFormatError('the snapshot has no header');
  const counts = { buckets: out.buckets.size, volumes: out.volumes.size, objects: out.objects.length, meta: out.meta.size };
  for (const k of ['buckets', 'volumes', 'objects', 'meta'] as const) {
    if (trailer[k] !== counts[k]) throw new SnapshotFormatError(`the snapshot's trailer counts ${String(trailer[k])} ${k}, the snapshot holds ${counts[k]}`);
  }
  return { ...out, sha256 };
}

/** One snapshot as the pointer names it: enough to read it back with no record database. */
export interface PointerEntry {
  id: string;
  takenAt: number;
  replayFrom: number;
  sha256: string;
  counts: SnapshotCounts;
  /** the snapshot object's own record (its slices and where they are) */
  record: ObjectRecord;
}

export interface Pointer {
  version: 1;
  /** latest first, at most POINTER_KEEPS */
  snapshots: PointerEntry[];
}

export function encodePointer(p: Pointer): string {
  return JSON.stringify(p, null, 1) + '\n';
}

/** Read a pointer file's text; throws SnapshotFormatError naming what is wrong. */
export function decodePointer(text: string): Pointer {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new SnapshotFormatError('the pointer file is not JSON');
  }
  if (o?.version !== 1 || !Array.isArray(o.snapshots)) throw new SnapshotFormatError('the pointer file needs version 1 and a snapshots list');
  for (const [i, s] of (o.snapshots as Array<Record<string, unknown>>).entries()) {
    if (!isSnapshotId(s?.id) || typeof s.sha256 !== 'string' || !Number.isSafeInteger(s.takenAt) || !Number.isSafeInteger(s.replayFrom)) throw new SnapshotFormatError(`pointer entry ${i}: needs id, takenAt, replayFrom, sha256`);
    const problem = objectProblem((s.record ?? {}) as Record<string, unknown>);
    if (problem) throw new SnapshotFormatError(`pointer entry ${i}: its record: ${problem.replace(/^put: /, '')}`);
  }
  return o as unknown as Pointer;
}

/** The pointer after a new snapshot: it first, then the previous ones, POINTER_KEEPS in all. */
export function pointerWith(old: Pointer | null, entry: PointerEntry): Pointer {
  const rest = (old?.snapshots ?? []).filter((s) => s.id !== entry.id);
  return { version: 1, snapshots: [entry, ...rest].slice(0, POINTER_KEEPS) };
}

/**
 * Every snapshot the pointer copies on the volumes name, newest first, each once (a volume that
 * was away during the last snapshot holds an older pointer; the union is what restore may try).
 */
export function knownSnapshots(copies: readonly Pointer[]): PointerEntry[] {
  const byId = new Map<string, PointerEntry>();
  for (const p of copies) for (const s of p.snapshots) if (!byId.has(s.id)) byId.set(s.id, s);
  return [...byId.values()].sort((a, b) => b.takenAt - a.takenAt || (a.id < b.id ? 1 : -1));
}
