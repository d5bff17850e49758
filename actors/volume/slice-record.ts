/**
 * The volume side of record sidecars (protocols/objstore/slice-record.ts): each slice of the
 * current format has one, holding the object's record, so that `hostd recover --from-disks` can
 * rebuild the record database from the disks alone. They live apart from the slices, so that a
 * slice directory holds slices only:
 *
 *   <mountPoint>/objstore/records/<xx>/<24 hex>.<index>     (xx as in slice-paths.ts)
 *
 * Written once the record is known (the PUT's commit, a relocation's), with the volume's identity
 * (its installation id) and, on an encrypted volume, sealed with a key derived from the volume key
 * (opened the way the volume opens it: volume-key.ts).
 *
 * Durability, and why no fsync: the bytes are written with O_DIRECT (direct-write.ts), so they are
 * on the device when the write returns; the file's creation and length are XFS journal
 * transactions, made durable by the volume's next journal force (the next slice commit's fsync on
 * this volume, or XFS's own periodic log sync, 30 s by default), which also flushes the device's
 * cache. An fsync here would double the journal forces of a small PUT (k + m more) for a copy of
 * the record whose primary is durable in LMDB before the 201; the cost is a window of seconds in
 * which a power cut AND the loss of the record database together would lose the newest objects'
 * sidecars. A torn sidecar is refused by its CRC; every sidecar of an object carries the whole
 * record, so recovery needs one good one per object.
 *
 * Removed with their slice (the actor's delete and purge): a sidecar left without its slice is
 * ignored by recovery, which starts from the slice files.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { mkdir, open, readdir, readFile, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Logger } from 'pino';
import { ReplyError } from '../../runtime/index.js';
import { decodeIdentity, IDENTITY_FILE, SERVICE_DIR } from '../../protocols/objstore/identity.js';
import { encodeSliceRecord, SliceRecordError, type SliceRecord } from '../../protocols/objstore/slice-record.js';
import type { SliceRef, VolumeArgs } from './messages.js';
import { SlicePaths, sliceRefProblem } from './slice-paths.js';
import { DirectWriter } from './direct-write.js';
import { openVolumeKey, type VolumeKey } from './volume-key.js';

export const RECORDS_DIR = 'records';

/** What the store sends: the record; the volume adds its installation id and the time. */
export type SliceRecordFields = Omit<SliceRecord, 'instanceId' | 'writtenAt'>;

/** Where the sidecars of a volume mounted at `mountPoint` live: the slices' names, under records/. */
export class RecordPaths {
  readonly root: string;
  private readonly slices: SlicePaths;
  constructor(mountPoint: string) {
    this.root = join(mountPoint, SERVICE_DIR, RECORDS_DIR);
    this.slices = new SlicePaths(mountPoint);
  }
  dir(objectId: string): string {
    return join(this.root, basename(this.slices.dir(objectId)));
  }
  file(objectId: string, index: number): string {
    return join(this.dir(objectId), this.slices.name(objectId, index));
  }
}

const errnoOf = (err: unknown) => (err as NodeJS.ErrnoException | null)?.code;

export class SliceRecords {
  private readonly paths: RecordPaths;
  private readonly dirs = new Set<string>();
  /** the installation id (identity file) and the volume key, read once */
  private opened: Promise<{ instanceId: string; key: VolumeKey | null }> | null = null;

  constructor(
    private readonly args: VolumeArgs,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    this.paths = new RecordPaths(args.mountPoint);
  }

  /** One file operation, failing with TIMEOUT after the volume's I/O timeout (as the disk queue does). */
  private async run<T>(what: string, op: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ReplyError('TIMEOUT', `volume ${this.args.volumeId}: ${what} of a record sidecar did not end within ${this.args.ioTimeoutMs} ms`, { op: what })), this.args.ioTimeoutMs);
    });
    try {
      return await Promise.race([op(), limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Any failure as a refusal (never a crash of the volume actor): EIO with the errno, or as it is. */
  private refusal(err: unknown, what: string): ReplyError {
    if (err instanceof ReplyError) return err;
    const errno = errnoOf(err);
    return new ReplyError('EIO', `volume ${this.args.volumeId}: ${what} of a record sidecar failed: ${(err as Error)?.message ?? String(err)}`, { errno: errno ?? null, op: what });
  }

  private open(): Promise<{ instanceId: string; key: VolumeKey | null }> {
    this.opened ??= (async () => {
      const bytes = await this.run('read', () => readFile(join(this.args.mountPoint, SERVICE_DIR, IDENTITY_FILE)));
      const identity = decodeIdentity(new Uint8Array(bytes));
      const key = await openVolumeKey(this.args, identity, (what, op) => this.run(what, op));
      return { instanceId: identity.instanceId, key };
    })();
    this.opened.catch(() => (this.opened = null));
    return this.opened;
  }

  /** Write (or replace) the sidecar of slice (record.objectId, record.index), durably. */
  async write(fields: SliceRecordFields): Promise<{ bytes: number }> {
    try {
      return await this.writeOnce(fields);
    } catch (err) {
      throw this.refusal(err, 'write');
    }
  }

  private async writeOnce(fields: SliceRecordFields): Promise<{ bytes: number }> {
    const problem = sliceRefProblem(fields?.objectId, fields?.index);
    if (problem) throw new ReplyError('BAD_REQUEST', problem);
    const { instanceId, key } = await this.open();
    let bytes: Uint8Array;
    try {
      const rec: SliceRecord = { ...fields, objectId: fields.objectId.toLowerCase(), instanceId, writtenAt: Date.now() };
      bytes = encodeSliceRecord(rec, key ? { volumeKey: key.volumeKey, keyGen: key.keyGen, nonce: new Uint8Array(randomBytes(12)) } : undefined);
    } catch (err) {
      if (err instanceof SliceRecordError) throw new ReplyError('BAD_REQUEST', err.message);
      throw err;
    }
    const dir = this.paths.dir(fields.objectId);
    if (!this.dirs.has(dir)) {
      await this.run('mkdir', () => mkdir(dir, { recursive: true }));
      this.dirs.add(dir);
    }
    // O_DIRECT, as slices are written (direct-write.ts): the bytes are on the device when the
    // write returns, and no fsync is paid here (see the header comment).
    const flags = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_DIRECT;
    const fh = await this.run('open', () => open(this.paths.file(fields.objectId, fields.index), flags, 0o600));
    const out = new DirectWriter(fh, (what, op) => this.run(what, op));
    try {
      await out.push(bytes);
      await out.finish();
    } finally {
      out.dispose();
      void fh.close().catch(() => undefined);
    }
    return { bytes: bytes.byteLength };
  }

  /** Remove a slice's sidecar (none is not an error). Failures are logged: an orphan is harmless. */
  async remove(ref: SliceRef): Promise<void> {
    try {
      await this.run('unlink', () => unlink(this.paths.file(ref.objectId, ref.index)).catch((err: unknown) => (errnoOf(err) === 'ENOENT' ? undefined : Promise.reject(err))));
    } catch (err) {
      this.log.warn({ objectId: ref.objectId, index: ref.index, err: (err as Error).message }, 'removing a record sidecar failed (left behind; recovery ignores a sidecar without its slice)');
    }
  }

  /** Remove every sidecar of these objects (the boot clean-up of interrupted PUTs). */
  async purge(objectIds: readonly string[]): Promise<void> {
    const byDir = new Map<string, Set<string>>();
    for (const id of objectIds) {
      const d = this.paths.dir(id);
      if (!byDir.has(d)) byDir.set(d, new Set());
      byDir.get(d)!.add(id.slice(1).toLowerCase());
    }
    for (const [dir, stems] of byDir) {
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) if (stems.has(name.split('.')[0]!)) await this.remove({ objectId: `$${name.split('.')[0]}`, index: Number(name.split('.')[1]) }).catch(() => undefined);
    }
  }
}

const byVolume = new WeakMap<object, SliceRecords>();

/** The sidecar writer of an open volume (one per Volume instance, made on first use). */
export function recordsOf(volume: { args: VolumeArgs }, log: Pick<Logger, 'warn'>): SliceRecords {
  let r = byVolume.get(volume);
  if (!r) byVolume.set(volume, (r = new SliceRecords(volume.args, log)));
  return r;
}
