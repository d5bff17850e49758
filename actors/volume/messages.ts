/**
 * What a volume actor accepts: it owns one mounted disk and all I/O to it. One actor per volume,
 * id `volume.<volumeId>`, placed on the shared thread group `volumes`.
 *
 * Writes stream chunk by chunk: create, append (in chunk order), then commit (the file becomes
 * visible under its final name, durably) or abort; the last append may carry `commit: true` to
 * commit in the same step. Reads return verified chunks only.
 * Refusals are ReplyErrors with the codes of VolumeRefusal (below; senders read them with
 * refusalOf<VolumeProtocol>).
 *
 * Details, as implemented (actors/volume/volume.ts):
 *   EIO        { errno, op, chunk? }: errno is the kernel's code ('EIO', or e.g. 'ENOSPC',
 *              'EUCLEAN': any failed file operation counts as the disk's failure); a failed read
 *              names the first chunk that fails (bad sectors) in `chunk` when it can tell.
 *   CHECKSUM   { chunk } for a chunk (with truncated: true when the file ends early);
 *              { chunk: -1, header: true } when the slice header does not verify.
 *   TIMEOUT    { op }: the operation ('read', 'write', 'fsync', 'open', ...) that did not end.
 * After a failed append or commit the slice being written is broken: later appends fail the same
 * way, a second commit is BAD_REQUEST; the sender aborts it (a failed create leaves nothing, and
 * abort is harmless). Reads go to the disk (O_DIRECT), never to the page cache.
 *
 * Priority: every message may carry `priority: 'low'` (absent or 'normal' = client traffic). The
 * file operations of a low message wait in the disk's queue behind every waiting normal one, and
 * at most maxLowInflight of them (a quarter of maxInflight, at least 1) run at once, so background
 * work (drain, rebalance, scrub, repair) never holds more than that many of the disk's slots. A low
 * operation's I/O timeout counts from when it starts, not while it waits behind client traffic
 * (waiting is not the disk failing, so a starved low message is slow, never TIMEOUT). Any other
 * value of `priority` is BAD_REQUEST. Handlers run 64 at once, so keep fewer than that many low
 * messages in flight per volume: the ones beyond wait in the mailbox, in front of client messages.
 */
import type { Protocol } from '../../runtime/index.js';
import type { SliceHeader } from '../../protocols/objstore/slice-format.js';
import type { SliceRecordFields } from './slice-record.js';

export interface SliceRef {
  objectId: string;
  index: number;
}

/** I/O priority of a message: 'normal' (the default) is client traffic, 'low' background work. */
export type Priority = 'normal' | 'low';

export type VolumeMsg = (
  | { type: 'info' }
  /**
   * replace: the new slice takes the place of a committed one at commit (an atomic rename; a
   * repair rewriting a bad slice in place); without it, creating an existing slice is refused.
   */
  | ({ type: 'create'; header: SliceHeader; replace?: boolean } & SliceRef)
  /**
   * One chunk (`chunk`: its index within the slice, sent in order): an ArrayBuffer (moved in, and handed back for the sender to reuse) or a view
   * (typically of shared memory, which the sender may reuse once the reply came: the bytes are
   * copied before it). `commit: true` (last chunk only): commit right after it, as a commit
   * message would.
   */
  | ({ type: 'append'; chunk: number; data: ArrayBuffer | Uint8Array; commit?: boolean } & SliceRef)
  | ({ type: 'commit' } & SliceRef)
  /** Idempotent: an unknown slice, or one aborted already, is not an error. */
  | ({ type: 'abort' } & SliceRef)
  /**
   * Chunks [firstChunk, firstChunk + count) of a committed slice, verified. `into` (moved in) is
   * a buffer to read them into when it is large enough: it comes back as the reply's `data`, so a
   * reader can reuse its buffers instead of the volume allocating fresh memory for every read.
   */
  | ({ type: 'read'; firstChunk: number; count: number; into?: ArrayBuffer } & SliceRef)
  | ({ type: 'readHeader' } & SliceRef)
  | ({ type: 'delete' } & SliceRef)
  | ({ type: 'path' } & SliceRef)
  /**
   * Remove uncommitted temp files (except those of slices being written by this instance) and
   * all slices of the given objects (boot clean-up). Allowed on a read-only volume, as is delete.
   */
  | { type: 'purge'; objectIds: string[] }
  | { type: 'setReadOnly'; readOnly: boolean }
  /**
   * Write (or replace) the record sidecar of slice (record.objectId, record.index): the object's
   * record, for recovery from the disks alone (slice-record.ts). A slice's sidecar is removed with
   * it (delete, purge).
   */
  | { type: 'writeRecord'; record: SliceRecordFields }
) & { priority?: Priority };

/**
 * File operations (runs through the disk's queue, not messages) of one priority since the actor
 * started. started/completed: operations begun/ended (an operation that timed out ends when its
 * syscall returns; a normal one that timed out while waiting never starts); active/queued: now;
 * waitMs: from the operation's submission to its start, in milliseconds (total and largest).
 */
export interface PriorityStats {
  started: number;
  completed: number;
  active: number;
  queued: number;
  waitMsTotal: number;
  waitMsMax: number;
}

export interface VolumeInfo {
  volumeId: number;
  mountPoint: string;
  device: string;
  bytesTotal: number;
  bytesFree: number;
  readOnly: boolean;
  /** null for a plain volume; the key generation its new slices are sealed with when encrypted */
  encrypted: { keyGen: number } | null;
  /** File operations on the disk now (ones that timed out but whose syscall has not returned included). */
  inflight: number;
  /**
   * Since the actor started: reads = read requests served, writes = chunks appended, deletes =
   * committed slices removed (delete and purge); bytes are slice payload (headers and CRCs
   * excluded); errors = EIO and CHECKSUM refusals; timeouts = TIMEOUT refusals.
   */
  counters: { reads: number; writes: number; deletes: number; bytesRead: number; bytesWritten: number; errors: number; timeouts: number };
  /** The disk queue's figures per priority (see PriorityStats). */
  priority: { normal: PriorityStats; low: PriorityStats };
}

export interface ReadReply {
  /** The chunks back to back from byte 0 (the sum of `lengths`; `into` may be longer), moved to the caller. */
  data: ArrayBuffer;
  /** Length of each returned chunk. */
  lengths: number[];
}

export interface VolumeReplies {
  info: VolumeInfo;
  create: null;
  /** the chunk's ArrayBuffer, handed back (moved) once written for the sender to reuse; null for a view */
  append: ArrayBuffer | null;
  /** bytes: size of the slice file on the disk (header, chunks and their CRCs). */
  commit: { bytes: number };
  abort: null;
  read: ReadReply;
  readHeader: SliceHeader;
  delete: { existed: boolean };
  path: string;
  purge: { removed: number };
  setReadOnly: null;
  /** bytes: the sidecar file's size */
  writeRecord: { bytes: number };
}

/** The codes a volume refuses a request with (ReplyError codes; details in the header above). */
export type VolumeRefusal =
  /** the disk returned an I/O error */
  | 'EIO'
  /** a chunk's CRC32C, or a sealed chunk's AES-GCM tag, does not match (details: { chunk }) */
  | 'CHECKSUM'
  /** no such slice file */
  | 'MISSING'
  /** the disk did not answer within the I/O timeout */
  | 'TIMEOUT'
  /** arguments that make no sense (chunk out of order, unknown slice, ...) */
  | 'BAD_REQUEST'
  /** the volume refuses writes */
  | 'READ_ONLY'
  /** the volume instance closed while the request ran (its actor is stopping) */
  | 'CLOSED';

export type VolumeProtocol = Protocol<VolumeMsg, VolumeReplies, VolumeRefusal>;

export interface VolumeArgs {
  volumeId: number;
  mountPoint: string;
  device: string;
  readOnly: boolean;
  /** An I/O that takes longer fails with TIMEOUT (the disk is treated as not answering). */
  ioTimeoutMs: number;
  /** At most this many file operations in flight on this disk. */
  maxInflight: number;
  /**
   * The key file (/var/lib/objstore/objstore.key) that opens the volume key when the disk is
   * encrypted (it carries a key-slot file). Unset: an encrypted disk does not open.
   */
  keyFile?: string;
}

export const volumeActorId = (volumeId: number) => `volume.${volumeId}`;
