/**
 * One slice being written, in the volume (volume.ts keeps the map of them and the file-system
 * steps around them: the temp file, the rename, the directory fsync). This owns the slice's order
 * and its bytes: every operation of the slice runs after the one before it (`step`, a chain that
 * never rejects; the first failure poisons the slice and every later step fails with it), and each
 * chunk goes to the O_DIRECT stage (direct-write.ts) in its stored form: on a plain volume its
 * bytes then their CRC32C, on an encrypted one its AES-256-GCM ciphertext then its tag.
 *
 * A chunk is sealed (or its CRC computed) when it arrives, before it waits for its turn in the
 * chain: while a stage of the slice is being written (the write runs on the thread pool), the
 * chunks that arrive after it are sealed. Sealing stays on the volume thread (chunk-cipher.ts:
 * the native AES-GCM, in place, into a buffer of this thread's SealBuffers given back once the
 * chunk is staged); moving it to the pool through WebCrypto was measured and lost — more CPU per
 * MiB and less throughput (docs/object-store.md, "What it costs, measured").
 */
import type { FileHandle } from 'node:fs/promises';
import { crc32c } from '@node-rs/crc32';
import type { ReplyError } from '../../runtime/index.js';
import { TAG_BYTES } from '../../protocols/objstore/crypto-format.js';
import { chunkCount, chunkOffset, trailerBytes, type SliceHeader } from '../../protocols/objstore/slice-format.js';
import { ChunkCipher, SliceKeys } from './chunk-cipher.js';
import type { DirectWriter } from './direct-write.js';
import type { VolumeKey } from './volume-key.js';

export class SliceWriter {
  readonly chunks: number;
  /** The chunk the next append must carry (checked on arrival, in arrival order). */
  next = 0;
  state: 'open' | 'committing' | 'aborting' = 'open';
  fh: FileHandle | null = null;
  /** Stages the bytes and writes them with O_DIRECT. */
  out: DirectWriter | null = null;
  /** This slice's operations, one after the other. Never rejects. */
  chain: Promise<void> = Promise.resolve();
  /** The first failure: every later operation on the slice fails with it. */
  failure: ReplyError | null = null;
  /** Its last bytes are written and the file cut to length (commit then only renames). */
  finished = false;
  /** The slice's keys when the volume is encrypted (null: CRC32C after each chunk). */
  private readonly keys: SliceKeys | null;

  /**
   * `header` is the one written (sealed when `key` is given); `refuse` turns a failure of operation
   * `op` into the slice's refusal (Volume.refusal: counted and logged once).
   */
  constructor(
    readonly objectId: string,
    readonly index: number,
    readonly header: SliceHeader,
    key: VolumeKey | null,
    private readonly refuse: (err: unknown, op: string) => ReplyError,
  ) {
    this.chunks = chunkCount(header);
    this.keys = key ? new SliceKeys(key.volumeKey, header) : null;
  }

  /** Queue `fn` behind the slice's earlier operations; the first failure poisons the slice. */
  step(op: string, fn: () => Promise<void>): Promise<void> {
    const p = this.chain.then(async () => {
      if (this.failure) throw this.failure;
      try {
        await fn();
      } catch (err) {
        this.failure = this.refuse(err, op);
        throw this.failure;
      }
    });
    this.chain = p.catch(() => undefined);
    return p;
  }

  /**
   * Chunk `chunk` (checked by the caller: in order, of its length) staged in its stored form; the
   * last chunk also finishes the file. `plain` is read until the returned promise settles.
   */
  writeChunk(chunk: number, plain: Uint8Array): Promise<void> {
    // Sealed: the ciphertext, then its tag. Plain: the bytes, then their CRC32C.
    const { stored, trailer } = this.keys ? sealed(this.keys, chunk, plain) : withCrc(plain);
    return this.step('append', async () => {
      try {
        const out = this.out!;
        const at = chunkOffset(this.header.chunkSize, chunk, trailerBytes(this.header));
        if (out.length !== at) throw new Error(`slice ${this.objectId}.${this.index}: chunk ${chunk} would land at ${out.length}, not at ${at}`);
        await out.push(stored);
        await out.push(trailer);
      } finally {
        // Staged (copied into the stage) or failed: the sealed bytes' buffer is free again.
        if (this.keys) sealBuffers.give(stored);
      }
      // The last chunk: the last bytes go to the disk now, while the writer waits for its other
      // slices and its intent.
      if (chunk === this.chunks - 1) await this.finish();
    });
  }

  /**
   * The last bytes to the disk and the file cut to its length. Not fsynced here: the data is on
   * the device already (O_DIRECT), and commit's fsync of the directory after the rename makes
   * the rest durable. That fsync forces XFS's journal up to the rename, and the journal is written
   * in order: every earlier transaction of the file (its size, its extents) goes with it, after a
   * cache flush of the device that covers the data written before. One journal force per slice
   * instead of two; this holds on XFS, which is what volumes are formatted with (disks.ts).
   */
  async finish(): Promise<void> {
    await this.out!.finish();
    this.finished = true;
  }
}

/** A chunk as stored on a plain volume: its bytes, then its CRC32C. */
function withCrc(plain: Uint8Array): { stored: Uint8Array; trailer: Uint8Array } {
  const trailer = new Uint8Array(4);
  new DataView(trailer.buffer).setUint32(0, crc32c(plain));
  return { stored: plain, trailer };
}

/**
 * Buffers for sealed chunks on their way to the stage, kept for reuse by size (a power of two,
 * 4 KiB and up): allocating one per chunk (what node:crypto's Cipher does) made the volume thread
 * collect garbage for every few dozen MiB written. At most KEEP per size are kept.
 */
class SealBuffers {
  private static readonly KEEP = 64;
  private readonly free = new Map<number, Uint8Array[]>();

  /** A buffer of exactly `len` bytes (a view of a pooled one). */
  take(len: number): Uint8Array {
    const size = SealBuffers.sizeOf(len);
    const buf = this.free.get(size)?.pop() ?? new Uint8Array(size);
    return buf.subarray(0, len);
  }

  /** Give back a view that take() returned. */
  give(view: Uint8Array): void {
    const size = view.buffer.byteLength;
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    if (list.length < SealBuffers.KEEP) list.push(new Uint8Array(view.buffer));
  }

  private static sizeOf(len: number): number {
    return Math.max(4096, 2 ** Math.ceil(Math.log2(Math.max(1, len))));
  }
}

/** This thread's: sealing is synchronous, one chunk at a time, so one cipher context serves every slice. */
const sealBuffers = new SealBuffers();
let sealCipher: ChunkCipher | null = null;

/** A chunk as stored on an encrypted volume: its ciphertext (in a buffer of sealBuffers), then its AES-GCM tag. */
function sealed(keys: SliceKeys, chunk: number, plain: Uint8Array): { stored: Uint8Array; trailer: Uint8Array } {
  const cipher = (sealCipher ??= new ChunkCipher());
  const stored = sealBuffers.take(plain.byteLength);
  const trailer = new Uint8Array(TAG_BYTES);
  try {
    cipher.begin(keys, chunk, true);
    cipher.update(plain, stored);
    cipher.sealEnd(trailer);
  } catch (err) {
    sealBuffers.give(stored);
    throw err;
  }
  return { stored, trailer };
}
