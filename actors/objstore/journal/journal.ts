/**
 * The metadata journal: every change of the records (an object published or deleted, a bucket
 * policy, a volume record) is appended here before its LMDB transaction commits, on several
 * volumes at once (replicas), so the records can be rebuilt from the disks alone (`hostd
 * restore`). Owned by the store actor (actor.ts opens it; metadata.ts calls append and settle).
 *
 * Files: `<mount>/objstore/journal/<first seq, 16 digits>.jnl` on each replica volume, in the
 * format of protocols/objstore/journal-format.ts. Each start opens a new segment (so an append
 * never follows a torn tail); a segment rotates at `segmentBytes`.
 *
 * Group commit: appends queue while a batch is being written; the next batch takes everything
 * queued, written with one write and one fdatasync per replica, the replicas in parallel. Small
 * PUTs arriving together share one flush instead of paying one each.
 *
 * A replica that fails (EIO, gone) is dropped: the others carry on, the failure is logged at warn,
 * counted (objstore_journal_replica_failures_total) and shown (GET /$/snapshots, `journal`); at the
 * next batch another present volume takes its place. An append resolves once at least one replica
 * holds it; with none at all it resolves too (the store keeps serving: the database is still
 * there), counted as unreplicated and shown as `degraded`.
 */
import { mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import client from 'prom-client';
import type { Logger } from 'pino';
import { SERVICE_DIR } from '../../../protocols/objstore/identity.js';
import { chooseReplicas, decodeSegment, droppableSegments, encodeRecord, parseSegmentName, segmentName, type JournalOp, type JournalRecord } from '../../../protocols/objstore/journal-format.js';

export const JOURNAL_DIR = 'journal';
export const DEFAULT_JOURNAL_REPLICAS = 3;
export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

const appendedTotal = new client.Counter({ name: 'objstore_journal_records_total', help: 'Metadata journal records appended' });
const batchesTotal = new client.Counter({ name: 'objstore_journal_batches_total', help: 'Metadata journal group commits (one write and one fdatasync per replica each)' });
const replicaFailures = new client.Counter({ name: 'objstore_journal_replica_failures_total', help: 'Journal replicas dropped after a failed write or flush, by volume', labelNames: ['volume'] as const });
const unreplicated = new client.Counter({ name: 'objstore_journal_unreplicated_total', help: 'Journal records no replica took (no volume could carry the journal)' });
const replicasGauge = new client.Gauge({ name: 'objstore_journal_replicas', help: 'Volumes carrying the metadata journal now' });

/** Where the journal may go: the present volumes, in preference order. */
export interface JournalTarget {
  id: number;
  busGroup: string;
  mountPoint: string;
}

/** The journal's state on a fresh install, before its first volume (not a degradation: no warning). */
export const NO_VOLUME_YET = 'no volume yet; it starts on the first volume provisioned';

export interface JournalOptions {
  log: Logger;
  /** the volumes that may carry the journal now (present, not deleted, healthy first) */
  targets: () => JournalTarget[];
  /**
   * Volumes the store has records of (not deleted), present or not. None: a fresh install before
   * its first volume, where no journal is expected: said once at info, not warned.
   */
  registered?: () => number;
  replicas?: number;
  segmentBytes?: number;
}

interface Replica {
  id: number;
  dir: string;
  fh: FileHandle;
  first: number;
  bytes: number;
}

interface Pending {
  rec: JournalRecord;
  line: string;
  resolve: (seq: number) => void;
}

export interface JournalStatus {
  enabled: true;
  replicas: number[];
  wanted: number;
  degraded: string | null;
  nextSeq: number;
  appended: number;
  batches: number;
  failures: Array<{ volumeId: number; at: string; error: string }>;
}

export function journalDir(mountPoint: string): string {
  return join(mountPoint, SERVICE_DIR, JOURNAL_DIR);
}

/** The segments in a journal directory, by first sequence number (missing directory: none). */
export async function listSegments(dir: string): Promise<number[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .map(parseSegmentName)
    .filter((n): n is number => n !== null)
    .sort((a, b) => a - b);
}

/** The highest sequence number in a journal directory (0: none), from its last non-empty segment. */
async function lastSeqIn(dir: string): Promise<number> {
  const segs = await listSegments(dir);
  for (let i = segs.length - 1; i >= 0; i--) {
    const bytes = await readFile(join(dir, segmentName(segs[i]!))).catch(() => null);
    if (!bytes) continue;
    const { records } = decodeSegment(bytes);
    if (records.length) return Math.max(...records.map((r) => r.seq));
    if (segs[i]! > 1) return segs[i]! - 1;
  }
  return 0;
}

/**
 * Open a segment for appending. One that exists already (opened by an earlier start that wrote
 * nothing more, or cut by a crash) is cut back to its last whole record first, so an append never
 * follows a torn line.
 */
async function openSegment(path: string): Promise<FileHandle> {
  const fh = await open(path, 'a+');
  const size = (await fh.stat()).size;
  if (size > 0) {
    const { goodBytes } = decodeSegment(await readFile(path));
    if (goodBytes < size) {
      await fh.truncate(goodBytes);
      await fh.datasync();
    }
  }
  return fh;
}

export class Journal {
  private readonly opts: Required<Omit<JournalOptions, 'log' | 'targets' | 'registered'>> & JournalOptions;
  private readonly replicas = new Map<number, Replica>();
  private queue: Pending[] = [];
  private writing: Promise<void> | null = null;
  private nextSeq: number;
  /** appended, their transaction not yet settled: a snapshot replays from the lowest */
  private readonly unsettled = new Set<number>();
  private readonly failed: JournalStatus['failures'] = [];
  private appended = 0;
  private batches = 0;
  private degraded: string | null = null;
  private closed = false;

  private constructor(opts: JournalOptions, nextSeq: number) {
    this.opts = { replicas: DEFAULT_JOURNAL_REPLICAS, segmentBytes: DEFAULT_SEGMENT_BYTES, ...opts };
    this.nextSeq = nextSeq;
  }

  /** Open the journal: the next sequence number follows the highest on any present volume. */
  static async open(opts: JournalOptions): Promise<Journal> {
    let last = 0;
    for (const t of opts.targets()) last = Math.max(last, await lastSeqIn(journalDir(t.mountPoint)));
    const j = new Journal(opts, last + 1);
    await j.fillReplicas(last + 1);
    return j;
  }

  /**
   * Append one change; resolves with its sequence number once it is durable on the replicas of
   * its batch. Call settle(seq) when the change's transaction is over (committed or not).
   */
  append(op: JournalOp): Promise<number> {
    if (this.closed) return Promise.reject(new Error('the journal is closed'));
    const rec = { ...op, seq: this.nextSeq++, ts: Date.now() } as JournalRecord;
    const line = encodeRecord(rec);
    this.unsettled.add(rec.seq);
    return new Promise((resolve) => {
      this.queue.push({ rec, line, resolve });
      if (!this.writing) this.writing = this.drain();
    });
  }

  settle(seq: number): void {
    this.unsettled.delete(seq);
  }

  /** The first sequence number a snapshot taken now may not hold. */
  replayFrom(): number {
    let min = this.nextSeq;
    for (const s of this.unsettled) if (s < min) min = s;
    return min;
  }

  status(): JournalStatus {
    return {
      enabled: true,
      replicas: [...this.replicas.keys()].sort((a, b) => a - b),
      wanted: this.opts.replicas,
      degraded: this.degraded,
      nextSeq: this.nextSeq,
      appended: this.appended,
      batches: this.batches,
      failures: this.failed.slice(-20),
    };
  }

  /** Write batches until the queue is empty (one at a time: the group commit). */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        await this.writeBatch(batch);
        for (const p of batch) p.resolve(p.rec.seq);
      }
    } finally {
      this.writing = null;
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    const first = batch[0]!.rec.seq;
    await this.fillReplicas(first);
    const text = Buffer.from(batch.map((p) => p.line).join(''), 'utf8');
    const results = await Promise.allSettled([...this.replicas.values()].map((r) => this.writeTo(r, text, first)));
    let ok = 0;
    for (const res of results) if (res.status === 'fulfilled') ok++;
    this.batches++;
    this.appended += batch.length;
    batchesTotal.inc();
    appendedTotal.inc(batch.length);
    if (!ok) {
      unreplicated.inc(batch.length);
      this.setDegraded(`no volume takes the journal: records ${first}..${first + batch.length - 1} are in the record database only`);
    }
  }

  private async writeTo(r: Replica, text: Buffer, first: number): Promise<void> {
    try {
      if (r.bytes > 0 && r.bytes + text.length > this.opts.segmentBytes) await this.rotate(r, first);
      await r.fh.write(text, 0, text.length, null);
      await r.fh.datasync();
      r.bytes += text.length;
    } catch (err) {
      await this.drop(r, err as Error);
      throw err;
    }
  }

  private async rotate(r: Replica, first: number): Promise<void> {
    await r.fh.close();
    r.fh = await openSegment(join(r.dir, segmentName(first)));
    r.first = first;
    r.bytes = 0;
  }

  private async drop(r: Replica, err: Error): Promise<void> {
    if (this.replicas.get(r.id) !== r) return;
    this.replicas.delete(r.id);
    await r.fh.close().catch(() => undefined);
    replicaFailures.inc({ volume: String(r.id) });
    this.failed.push({ volumeId: r.id, at: new Date().toISOString(), error: err.message });
    this.opts.log.warn({ volumeId: r.id, err: err.message }, `volume ${r.id} cannot take the metadata journal any more; the other replicas carry on`);
    replicasGauge.set(this.replicas.size);
  }

  /**
   * Top the replicas up from the present volumes (not one that failed in the last minute); a new
   * replica starts a segment at `first`, the next record it will take.
   */
  private async fillReplicas(first: number): Promise<void> {
    const targets = this.opts.targets();
    const present = new Set(targets.map((t) => t.id));
    for (const r of [...this.replicas.values()]) if (!present.has(r.id)) await this.drop(r, new Error('the volume is not present any more'));
    if (this.replicas.size < this.opts.replicas) {
      const recent = new Set(this.failed.filter((f) => Date.now() - Date.parse(f.at) < 60_000).map((f) => f.volumeId));
      const pool = targets.filter((t) => !recent.has(t.id));
      const kept = [...this.replicas.keys()];
      const want = chooseReplicas([...pool.filter((t) => kept.includes(t.id)), ...pool.filter((t) => !kept.includes(t.id))], this.opts.replicas);
      for (const id of want) {
        if (this.replicas.has(id)) continue;
        const t = pool.find((x) => x.id === id)!;
        const dir = journalDir(t.mountPoint);
        try {
          await mkdir(dir, { recursive: true });
          const fh = await openSegment(join(dir, segmentName(first)));
          this.replicas.set(id, { id, dir, fh, first, bytes: (await fh.stat()).size });
        } catch (err) {
          this.failed.push({ volumeId: id, at: new Date().toISOString(), error: (err as Error).message });
          replicaFailures.inc({ volume: String(id) });
          this.opts.log.warn({ volumeId: id, err: (err as Error).message }, `volume ${id} cannot take the metadata journal`);
        }
      }
    }
    replicasGauge.set(this.replicas.size);
    const n = this.replicas.size;
    if (n >= Math.min(this.opts.replicas, targets.length) && n > 0) this.setDegraded(null);
    else if (n < this.opts.replicas) this.setDegraded(n ? `the journal is on ${n} volume(s) of the ${this.opts.replicas} wanted` : 'no volume carries the journal');
  }

  private setDegraded(why: string | null): void {
    // A fresh install before its first volume: no journal is expected there (said once, at info).
    if (why && !this.replicas.size && this.opts.registered?.() === 0) why = NO_VOLUME_YET;
    if (why === this.degraded) return;
    if (why === NO_VOLUME_YET) this.opts.log.info(`metadata journal: ${why}`);
    else if (why) this.opts.log.warn({ replicas: [...this.replicas.keys()] }, `metadata journal degraded: ${why}`);
    else if (this.degraded === NO_VOLUME_YET) this.opts.log.info({ replicas: [...this.replicas.keys()] }, 'metadata journal started on the volumes provisioned');
    else if (this.degraded) this.opts.log.info({ replicas: [...this.replicas.keys()] }, 'metadata journal replicated again');
    this.degraded = why;
  }

  /**
   * Drop the segments a snapshot made unnecessary (all their records before `replayFrom`), on
   * every present volume (a former replica's too). Returns how many files went.
   */
  async dropBefore(replayFrom: number): Promise<number> {
    let n = 0;
    for (const t of this.opts.targets()) {
      const dir = journalDir(t.mountPoint);
      const open = this.replicas.get(t.id)?.first;
      for (const s of droppableSegments(await listSegments(dir), replayFrom)) {
        if (s === open) continue;
        await rm(join(dir, segmentName(s)), { force: true }).then(
          () => n++,
          () => undefined,
        );
      }
    }
    return n;
  }

  /** A volume is going away (retired, or its disk gone): close its segment (another takes over at the next batch). */
  async release(id: number): Promise<void> {
    const r = this.replicas.get(id);
    if (!r) return;
    // Not waiting for a batch in flight: its write to this file fails (closed), which is not
    // counted as the volume's failure (it is no longer a replica).
    this.replicas.delete(id);
    await r.fh.close().catch(() => undefined);
    replicasGauge.set(this.replicas.size);
  }

  /** Wait for the appends in flight, then close the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.writing) await this.writing;
    for (const r of this.replicas.values()) await r.fh.close().catch(() => undefined);
    this.replicas.clear();
    replicasGauge.set(0);
  }
}
