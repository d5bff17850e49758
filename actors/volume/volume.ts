/**
 * One mounted volume and all I/O to it: the logic behind the volume actor (actor.ts adapts the
 * messages). Slice files are written to a temporary name chunk by chunk and become visible at
 * commit (fsync file, rename, fsync directory); reads go to the disk (O_DIRECT, direct-io.ts) and
 * return verified chunks only. Every file operation goes through the disk's IoQueue: at most
 * maxInflight at once, each failing with TIMEOUT after ioTimeoutMs. Their priority is not passed
 * along here: the queue reads it from the async context (ioPriority, set by the actor per message),
 * which follows every await of these methods, the per-slice chains included.
 *
 * Beside it: slice-writer.ts (one slice being written: its chain of operations and each chunk's
 * stored form through the O_DIRECT stage of direct-write.ts) and chunk-reader.ts (the chunks of a
 * read, checked). This file keeps the volume's map of writers, the checks of every message, and
 * the file-system steps (temp file, rename, directory fsync, headers, delete, purge).
 *
 * An encrypted volume (its disk carries a key-slot file, keys.ts) seals every slice it writes: the
 * header says so (format version 2), each chunk is AES-256-GCM ciphertext followed by its tag in
 * place of the CRC (crypto-format.ts), through the same O_DIRECT staging; reads check the tag
 * instead of the CRC in the same streaming loop (chunk-verifier.ts). What the volume is asked to
 * store and what it answers is plaintext either way: erasure coding, drain and repair see no
 * difference. Slices are read by what their own header says, so a plain slice on a volume that was
 * encrypted since (or the other way round) still reads.
 *
 * Refusals are ReplyErrors (codes in messages.ts). An I/O error of the kernel is EIO, with the
 * errno in details when it is another one (ENOSPC, EUCLEAN, ...): every failure of a file
 * operation on the disk is the disk's failure as far as the caller is concerned.
 */
import { constants as fsc } from 'node:fs';
import { mkdir, open, readdir, rename, statfs, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ReplyError } from '../../runtime/index.js';
import { decodeIdentity, IDENTITY_BYTES, IDENTITY_FILE, SERVICE_DIR } from '../../protocols/objstore/identity.js';
import {
  checkSliceHeader,
  chunkCount,
  chunkLength,
  decodeSliceHeader,
  encodeSliceHeader,
  SLICE_HEADER_BYTES,
  SliceFormatError,
  trailerBytes,
  type SliceHeader,
} from '../../protocols/objstore/slice-format.js';
import { ChecksumMismatch } from './chunk-verifier.js';
import { openVolumeKey, type VolumeKey } from './volume-key.js';
import { readSpan } from './direct-io.js';
import { DirectWriter } from './direct-write.js';
import { IoQueue, IoTimeout } from './io-queue.js';
import type { ReadReply, SliceRef, VolumeArgs, VolumeInfo } from './messages.js';
import { ChunkReader } from './chunk-reader.js';
import { SliceWriter } from './slice-writer.js';
import { SlicePaths, sliceRefProblem, TMP_SUFFIX } from './slice-paths.js';

type Counters = VolumeInfo['counters'];

const HEADER_CACHE = 4096;
/** One read returns at most this many bytes (a single chunk may be larger). */
export const MAX_READ_BYTES = 128 << 20;
const bad = (message: string) => new ReplyError('BAD_REQUEST', message);
const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;

export class Volume {
  readonly args: VolumeArgs;
  private readonly log: Logger;
  private readonly io: IoQueue;
  private readonly paths: SlicePaths;
  private readonly writers = new Map<string, SliceWriter>();
  private readonly readers = new Set<FileHandle>();
  /** Decoded headers of committed slices (immutable), most recently used last. */
  private readonly headers = new Map<string, SliceHeader>();
  private readonly dirs = new Set<string>();
  private readOnly: boolean;
  /** The volume key when the disk is encrypted (read from its key slots at open), else null. */
  private key: VolumeKey | null = null;
  /** Reads chunks of slice files, verified (CRC) or opened (sealed). */
  private readonly chunks: ChunkReader;
  private capacity = { bytesTotal: 0, bytesFree: 0 };
  private capacityProbe: Promise<void> | null = null;
  private closed = false;
  readonly counters: Counters = { reads: 0, writes: 0, deletes: 0, bytesRead: 0, bytesWritten: 0, errors: 0, timeouts: 0 };

  private constructor(args: VolumeArgs, log: Logger) {
    this.args = args;
    this.log = log;
    this.io = new IoQueue(args.maxInflight, args.ioTimeoutMs);
    this.paths = new SlicePaths(args.mountPoint);
    this.readOnly = args.readOnly;
    this.chunks = new ChunkReader({ volumeId: args.volumeId, run: this.run.bind(this), counters: this.counters, key: () => this.key });
  }

  /**
   * Open the volume at args.mountPoint. Refuses (throws) unless the disk mounted there carries the
   * identity of args.volumeId: a disk that is not mounted must never get slices written into the
   * empty directory under it.
   */
  static async open(args: VolumeArgs, log: Logger): Promise<Volume> {
    const v = new Volume(args, log);
    const idPath = join(args.mountPoint, SERVICE_DIR, IDENTITY_FILE);
    let bytes: Uint8Array;
    try {
      const fh = await v.run('open', () => open(idPath, 'r'), (late) => void late?.close().catch(() => undefined));
      try {
        const buf = new Uint8Array(IDENTITY_BYTES + 1);
        const { bytesRead } = await v.run('read', () => fh.read(buf, 0, buf.length, 0));
        bytes = buf.subarray(0, bytesRead);
      } finally {
        void fh.close().catch(() => undefined);
      }
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') throw new Error(`volume ${args.volumeId}: no identity at ${idPath}: the disk is not mounted at ${args.mountPoint}`);
      throw new Error(`volume ${args.volumeId}: cannot read ${idPath}: ${(err as Error).message}`);
    }
    const identity = decodeIdentity(bytes);
    if (identity.volumeId !== args.volumeId) throw new Error(`${args.mountPoint} holds volume ${identity.volumeId}, not volume ${args.volumeId}`);
    v.key = await openVolumeKey(args, identity, (what, op) => v.run(what, op));
    await v.run('mkdir', () => mkdir(v.paths.root, { recursive: true }));
    await v.refreshCapacity();
    return v;
  }

  private run<T>(what: string, op: () => Promise<T>, late?: (result: T | undefined) => void): Promise<T> {
    return this.io.run(what, op, late);
  }

  /** The refusal for a failed operation; counts and logs disk failures once. */
  private refusal(err: unknown, op: string, ref?: Partial<SliceRef>): ReplyError {
    if (err instanceof ReplyError) return err;
    const at = ref?.objectId !== undefined ? ` (slice ${ref.objectId}.${ref.index})` : '';
    if (err instanceof IoTimeout) {
      this.counters.timeouts++;
      this.log.warn({ op, ...ref, timeoutMs: err.ms }, 'disk did not answer in time');
      return new ReplyError('TIMEOUT', `volume ${this.args.volumeId}: ${err.message}${at}`, { op });
    }
    if (err instanceof ChecksumMismatch) {
      this.counters.errors++;
      this.log.warn({ op, ...ref, chunk: err.chunk }, 'chunk checksum mismatch');
      return new ReplyError('CHECKSUM', `volume ${this.args.volumeId}: ${err.message}${at}`, { chunk: err.chunk });
    }
    const errno = errnoOf(err);
    if (errno === 'ENOENT') return new ReplyError('MISSING', `volume ${this.args.volumeId}: no such slice${at}`);
    if (typeof errno === 'string') {
      this.counters.errors++;
      this.log.warn({ op, ...ref, errno, err: (err as Error).message }, 'disk I/O failed');
      return new ReplyError('EIO', `volume ${this.args.volumeId}: ${op} failed: ${(err as Error).message}${at}`, { errno, op });
    }
    throw err; // not an I/O failure: a bug, let the actor crash
  }

  private async guard<T>(op: string, ref: Partial<SliceRef> | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.refusal(err, op, ref);
    }
  }

  private static key(objectId: string, index: number): string {
    return `${objectId.toLowerCase()}.${index}`;
  }

  private checkRef(ref: SliceRef): string {
    const problem = sliceRefProblem(ref.objectId, ref.index);
    if (problem) throw bad(problem);
    return Volume.key(ref.objectId, ref.index);
  }

  // ─── writing ────────────────────────────────────────────────────────────────────────────────

  async create(ref: SliceRef, header: SliceHeader, replace = false): Promise<null> {
    if (this.readOnly) throw new ReplyError('READ_ONLY', `volume ${this.args.volumeId} is read-only`);
    const key = this.checkRef(ref);
    try {
      checkSliceHeader(header);
    } catch (err) {
      throw bad((err as Error).message);
    }
    if (header.objectId.toLowerCase() !== ref.objectId.toLowerCase() || header.index !== ref.index) {
      throw bad(`header names slice ${header.objectId}.${header.index}, the message ${ref.objectId}.${ref.index}`);
    }
    if (this.writers.has(key)) throw bad(`slice ${key} is being written already`);
    if (header.sealed) throw bad('a slice header from the store never says sealed: the volume seals what it writes when it is encrypted');
    if (this.key) header = { ...header, sealed: { keyGen: this.key.keyGen } };
    const w = new SliceWriter(ref.objectId, ref.index, header, this.key, (err, op) => this.refusal(err, op, { objectId: ref.objectId, index: ref.index }));
    this.writers.set(key, w);
    const bytes = encodeSliceHeader(header);
    const temp = this.paths.temp(ref.objectId, ref.index);
    try {
      await w.step('create', async () => {
        await this.ensureDir(this.paths.dir(ref.objectId));
        // O_TRUNC: a temp file left by a crash is started over. The temp file is opened while the
        // final name is looked up (one disk round trip less): refused, it is removed below.
        const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_DIRECT;
        const opening = this.run('open', () => open(temp, flags, 0o600), (late) => void late?.close().catch(() => undefined));
        const [exists, fh] = await Promise.allSettled([replace ? false : this.exists(this.paths.final(ref.objectId, ref.index)), opening]);
        if (fh.status === 'fulfilled') w.fh = this.kept(fh.value);
        if (exists.status === 'rejected') throw exists.reason;
        if (exists.value) throw bad(`slice ${key} exists already: slices are immutable (delete it first)`);
        if (fh.status === 'rejected') throw fh.reason;
        w.out = new DirectWriter(fh.value, this.run.bind(this));
        await w.out.push(bytes);
      });
    } catch (err) {
      if (this.writers.get(key) === w) this.writers.delete(key);
      this.closeQuietly(w.fh);
      w.out?.dispose();
      w.fh = null;
      // The temp file is this writer's (refusals of another writer's slice come before the step).
      void this.run('unlink', () => unlink(temp)).catch(() => undefined);
      throw err;
    }
    return null;
  }

  /**
   * Write one chunk; on success the chunk's buffer is handed back for the sender to reuse. With
   * `commit`, the chunk must be the last one and the slice is committed right after it.
   */
  async append(ref: SliceRef, chunk: number, data: ArrayBuffer | Uint8Array, commit = false): Promise<ArrayBuffer | null> {
    if (this.readOnly) throw new ReplyError('READ_ONLY', `volume ${this.args.volumeId} is read-only`);
    const key = this.checkRef(ref);
    const w = this.writers.get(key);
    if (!w) throw bad(`slice ${key} is not being written (create it first)`);
    if (w.state !== 'open') throw bad(`slice ${key} is being ${w.state === 'committing' ? 'committed' : 'aborted'}: no more appends`);
    if (!(data instanceof ArrayBuffer) && !(data instanceof Uint8Array)) throw bad('append: data must be an ArrayBuffer or a Uint8Array');
    if (chunk !== w.next) throw bad(`slice ${key}: chunk ${chunk} out of order, expected chunk ${w.next}`);
    if (chunk >= w.chunks) throw bad(`slice ${key} has ${w.chunks} chunk(s); chunk ${chunk} is beyond its end`);
    const len = chunkLength(w.header, chunk);
    if (data.byteLength !== len) throw bad(`slice ${key}: chunk ${chunk} must be ${len} bytes, got ${data.byteLength}`);
    if (commit && chunk !== w.chunks - 1) throw bad(`slice ${key}: commit with chunk ${chunk}, which is not its last (${w.chunks - 1})`);
    w.next++;
    await w.writeChunk(chunk, data instanceof ArrayBuffer ? new Uint8Array(data) : data);
    this.counters.writes++;
    this.counters.bytesWritten += len;
    if (commit) await this.commit(ref);
    return data instanceof ArrayBuffer ? data : null;
  }

  async commit(ref: SliceRef): Promise<{ bytes: number }> {
    const key = this.checkRef(ref);
    const w = this.writers.get(key);
    if (!w) throw bad(`slice ${key} is not being written`);
    if (w.state !== 'open') throw bad(`slice ${key} is being ${w.state === 'committing' ? 'committed' : 'aborted'} already`);
    if (w.next !== w.chunks) throw bad(`slice ${key}: commit after ${w.next} of its ${w.chunks} chunk(s)`);
    w.state = 'committing';
    const final = this.paths.final(ref.objectId, ref.index);
    await w.step('commit', async () => {
      const fh = w.fh!;
      if (!w.finished) await w.finish();
      w.fh = null;
      await this.run('close', () => fh.close());
      await this.run('rename', () => rename(this.paths.temp(ref.objectId, ref.index), final));
      await this.fsyncDir(this.paths.dir(ref.objectId));
    });
    this.writers.delete(key);
    this.headers.delete(key);
    return { bytes: SLICE_HEADER_BYTES + w.header.sliceSize + w.chunks * trailerBytes(w.header) };
  }

  /** Drop a slice being written: nothing of it stays on the disk. Idempotent. */
  async abort(ref: SliceRef): Promise<null> {
    const key = this.checkRef(ref);
    const temp = this.paths.temp(ref.objectId, ref.index);
    const w = this.writers.get(key);
    if (w) {
      if (w.state === 'aborting') {
        await w.chain;
        return null;
      }
      w.state = 'aborting';
      w.chain = w.chain.then(async () => {
        const fh = w.fh;
        w.fh = null;
        w.out?.dispose();
        if (fh) await this.run('close', () => fh.close()).catch(() => undefined);
      });
      await w.chain;
    }
    try {
      await this.guard('abort', ref, async () => {
        try {
          await this.run('unlink', () => unlink(temp));
        } catch (err) {
          if (errnoOf(err) !== 'ENOENT') throw err;
        }
      });
    } finally {
      if (w && this.writers.get(key) === w) this.writers.delete(key);
    }
    return null;
  }

  // ─── reading ────────────────────────────────────────────────────────────────────────────────

  private async openForRead(ref: SliceRef): Promise<FileHandle> {
    const path = this.paths.final(ref.objectId, ref.index);
    const fh = this.kept(await this.run('open', () => open(path, fsc.O_RDONLY | fsc.O_DIRECT), (late) => void late?.close().catch(() => undefined)));
    this.readers.add(fh);
    return fh;
  }

  /**
   * A file opened while the volume closed: close() has closed the files it knew of, so this one
   * is closed now (left, it stayed open until garbage collection) and its operation refused.
   */
  private kept(fh: FileHandle): FileHandle {
    if (!this.closed) return fh;
    this.closeQuietly(fh);
    throw new ReplyError('CLOSED', `volume ${this.args.volumeId} closed (its actor is stopping): ask again once it is back`);
  }

  private closeReader(fh: FileHandle): void {
    this.readers.delete(fh);
    this.closeQuietly(fh);
  }

  /** Close in the background: FileHandle.close waits for the handle's operations still running (a hung read). */
  private closeQuietly(fh: FileHandle | null): void {
    if (fh) void fh.close().catch(() => undefined);
  }

  private async loadHeader(fh: FileHandle, key: string): Promise<SliceHeader> {
    const buf = new Uint8Array(SLICE_HEADER_BYTES);
    const got = await readSpan(fh, 0, SLICE_HEADER_BYTES, this.run.bind(this), (b) => buf.set(b));
    let header: SliceHeader;
    try {
      if (got < SLICE_HEADER_BYTES) throw new SliceFormatError(`slice file is ${got} bytes long, shorter than its header`);
      header = decodeSliceHeader(buf);
    } catch (err) {
      if (!(err instanceof SliceFormatError)) throw err;
      this.counters.errors++;
      this.log.warn({ slice: key, err: err.message }, 'slice header does not verify');
      throw new ReplyError('CHECKSUM', `volume ${this.args.volumeId}: slice ${key}: ${err.message}`, { chunk: -1, header: true });
    }
    if (Volume.key(header.objectId, header.index) !== key) {
      this.counters.errors++;
      throw new ReplyError('CHECKSUM', `volume ${this.args.volumeId}: file of slice ${key} holds slice ${header.objectId}.${header.index}`, { chunk: -1, header: true });
    }
    this.headers.delete(key);
    this.headers.set(key, header);
    if (this.headers.size > HEADER_CACHE) this.headers.delete(this.headers.keys().next().value!);
    return header;
  }

  async readHeader(ref: SliceRef): Promise<SliceHeader> {
    const key = this.checkRef(ref);
    return this.guard('readHeader', ref, async () => {
      const fh = await this.openForRead(ref);
      try {
        return await this.loadHeader(fh, key);
      } finally {
        this.closeReader(fh);
      }
    });
  }

  async read(ref: SliceRef, firstChunk: number, count: number, into?: ArrayBuffer): Promise<ReadReply> {
    const key = this.checkRef(ref);
    if (into !== undefined && !(into instanceof ArrayBuffer)) throw bad('read: into must be an ArrayBuffer');
    if (!Number.isSafeInteger(firstChunk) || firstChunk < 0) throw bad(`firstChunk must be a non-negative integer, got ${JSON.stringify(firstChunk)}`);
    if (!Number.isSafeInteger(count) || count < 1) throw bad(`count must be a positive integer, got ${JSON.stringify(count)}`);
    return this.guard('read', ref, async () => {
      const fh = await this.openForRead(ref);
      try {
        const cached = this.headers.get(key);
        const header = cached ?? (await this.loadHeader(fh, key));
        const n = chunkCount(header);
        if (firstChunk + count > n) throw bad(`slice ${key} has ${n} chunk(s); chunks ${firstChunk}..${firstChunk + count - 1} asked`);
        if (count > 1 && count * header.chunkSize > MAX_READ_BYTES) throw bad(`read of ${count} chunks of ${header.chunkSize} bytes is over ${MAX_READ_BYTES} bytes: read in batches`);
        try {
          const reply = await this.chunks.read(fh, header, firstChunk, count, into);
          this.counters.reads++;
          this.counters.bytesRead += reply.lengths.reduce((a, b) => a + b, 0);
          return reply;
        } catch (err) {
          if (errnoOf(err) !== 'EIO') throw err;
          // Name the chunk that fails (bad sectors), for the caller's fault record.
          const chunk = count === 1 ? firstChunk : await this.chunks.firstFailing(fh, header, firstChunk, count);
          this.counters.errors++;
          this.log.warn({ op: 'read', ...ref, chunk }, 'disk I/O failed');
          throw new ReplyError('EIO', `volume ${this.args.volumeId}: read failed: ${(err as Error).message} (slice ${key}${chunk === null ? '' : `, chunk ${chunk}`})`, { errno: 'EIO', op: 'read', chunk });
        }
      } finally {
        this.closeReader(fh);
      }
    });
  }

  // ─── removing ───────────────────────────────────────────────────────────────────────────────

  async delete(ref: SliceRef): Promise<{ existed: boolean }> {
    const key = this.checkRef(ref);
    this.headers.delete(key);
    return this.guard('delete', ref, async () => {
      try {
        await this.run('unlink', () => unlink(this.paths.final(ref.objectId, ref.index)));
      } catch (err) {
        if (errnoOf(err) === 'ENOENT') return { existed: false };
        throw err;
      }
      await this.fsyncDir(this.paths.dir(ref.objectId));
      this.counters.deletes++;
      return { existed: true };
    });
  }

  /** Remove temp files (but those of slices being written now) and every slice of `objectIds`. */
  async purge(objectIds: string[]): Promise<{ removed: number }> {
    if (!Array.isArray(objectIds)) throw bad('purge: objectIds must be an array');
    for (const id of objectIds) {
      const problem = sliceRefProblem(id, 0);
      if (problem) throw bad(problem);
    }
    const stems = new Set(objectIds.map((id) => id.slice(1).toLowerCase()));
    const active = new Set([...this.writers.values()].map((w) => this.paths.name(w.objectId, w.index) + TMP_SUFFIX));
    return this.guard('purge', undefined, async () => {
      const list = async (dir: string) => this.run('readdir', () => readdir(dir)).catch((err: unknown) => (errnoOf(err) === 'ENOENT' ? [] : Promise.reject(err)));
      let removed = 0;
      for (const sub of (await list(this.paths.root)).filter((d) => /^[0-9a-f]{2}$/.test(d)).sort()) {
        const dir = join(this.paths.root, sub);
        let touched = false;
        for (const name of await list(dir)) {
          const stem = name.split('.')[0]!;
          const temp = name.endsWith(TMP_SUFFIX);
          if ((temp && !active.has(name)) || (stems.has(stem) && !active.has(name))) {
            await this.run('unlink', () => unlink(join(dir, name))).catch((err: unknown) => (errnoOf(err) === 'ENOENT' ? undefined : Promise.reject(err)));
            removed++;
            touched = true;
            if (!temp) {
              this.counters.deletes++;
              this.headers.delete(`$${name}`);
            }
          }
        }
        if (touched) await this.fsyncDir(dir);
      }
      return { removed };
    });
  }

  // ─── the rest ───────────────────────────────────────────────────────────────────────────────

  path(ref: SliceRef): string {
    this.checkRef(ref);
    return this.paths.final(ref.objectId, ref.index);
  }

  setReadOnly(readOnly: boolean): null {
    this.readOnly = !!readOnly;
    return null;
  }

  /**
   * Figures of the volume. Answers even when the disk does not: capacity is refreshed with a
   * bounded wait (statfs outside the queue, one at a time) and the last figures are kept otherwise.
   */
  async info(): Promise<VolumeInfo> {
    await this.refreshCapacity();
    return {
      volumeId: this.args.volumeId,
      mountPoint: this.args.mountPoint,
      device: this.args.device,
      ...this.capacity,
      readOnly: this.readOnly,
      encrypted: this.key ? { keyGen: this.key.keyGen } : null,
      inflight: this.io.inflight,
      counters: { ...this.counters },
      priority: this.io.stats(),
    };
  }

  private async refreshCapacity(): Promise<void> {
    this.capacityProbe ??= statfs(this.args.mountPoint).then(
      (s) => {
        this.capacity = { bytesTotal: s.blocks * s.bsize, bytesFree: s.bavail * s.bsize };
        this.capacityProbe = null;
      },
      (err: unknown) => {
        this.log.warn({ err: (err as Error).message }, 'statfs of the volume failed');
        this.capacityProbe = null;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.capacityProbe, new Promise<void>((r) => (timer = setTimeout(r, Math.min(this.args.ioTimeoutMs, 1000))))]);
    clearTimeout(timer);
  }

  private async exists(path: string): Promise<boolean> {
    try {
      const fh = await this.run('open', () => open(path, 'r'), (late) => void late?.close().catch(() => undefined));
      this.closeQuietly(fh);
      return true;
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return false;
      throw err;
    }
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.dirs.has(dir)) return;
    const created = await this.run('mkdir', () => mkdir(dir, { recursive: true }));
    if (created !== undefined) await this.fsyncDir(this.paths.root);
    this.dirs.add(dir);
  }

  private async fsyncDir(dir: string): Promise<void> {
    const fh = await this.run('open', () => open(dir, 'r'), (late) => void late?.close().catch(() => undefined));
    try {
      await this.run('fsync', () => fh.sync());
    } finally {
      this.closeQuietly(fh);
    }
  }

  /**
   * The instance ends: close every file, and remove the temp files of slices being written (they
   * were never committed). Bounded by ioTimeoutMs: a hung disk does not hold up the shutdown.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const work = (async () => {
      const writers = [...this.writers.values()];
      this.writers.clear();
      const handles = [...this.readers, ...writers.map((w) => w.fh).filter((fh): fh is FileHandle => fh !== null)];
      this.readers.clear();
      await Promise.allSettled(handles.map((fh) => fh.close()));
      for (const w of writers) w.out?.dispose();
      await Promise.allSettled(writers.map((w) => unlink(this.paths.temp(w.objectId, w.index))));
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([work, new Promise<void>((r) => (timer = setTimeout(r, this.args.ioTimeoutMs)))]);
    clearTimeout(timer);
  }
}
