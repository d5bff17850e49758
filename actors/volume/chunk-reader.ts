/**
 * Reading chunks of a slice file for the volume (volume.ts opens the file, reads and caches its
 * header, and names the failing chunk of an I/O error with firstFailing): the stored span of the
 * chunks asked is read with O_DIRECT (direct-io.ts) and goes through a ChunkSink, which checks
 * each chunk and lays its payload out back to back. A plain slice's chunks are checked by CRC32C as
 * the bytes pass (chunk-verifier.ts); a sealed slice's are opened on the thread pool as their tags
 * come in (slice-cipher.ts), with the volume key if it is the generation the header names.
 *
 * The cipher of a sealed slice (its key derived and imported) is kept for the next reads of the
 * same slice, keyed by the header's full encoding: a header that differs in any byte (an edited
 * one) gets a cipher of its own and so is still checked by the tags.
 *
 * A read answers only when every job that writes into its buffer has ended, failed or not: the
 * buffer is moved to the caller with the answer (or reused by the next read).
 */
import type { FileHandle } from 'node:fs/promises';
import { ReplyError } from '../../runtime/index.js';
import { chunkLength, chunkOffset, encodeSliceHeader, trailerBytes, type SliceHeader } from '../../protocols/objstore/slice-format.js';
import { ChunkVerifier, type ChunkSink } from './chunk-verifier.js';
import { readSpan, type RunIo } from './direct-io.js';
import type { ReadReply } from './messages.js';
import { SealedChunkReader, SliceCipher } from './slice-cipher.js';
import type { VolumeKey } from './volume-key.js';

export interface ReaderContext {
  volumeId: number;
  /** file operations go through the disk's queue */
  run: RunIo;
  /** chunks that do not verify, slices cut short, keys missing count as errors */
  counters: { errors: number };
  /** the volume key, null on a plain volume (asked at each read: it is read when the volume opens) */
  key(): VolumeKey | null;
}

/** Slice ciphers kept for the next reads of their slices. */
const CIPHER_CACHE = 256;

export class ChunkReader {
  /** By encoded header, most recently used last. */
  private readonly ciphers = new Map<string, SliceCipher>();

  constructor(private readonly ctx: ReaderContext) {}

  /**
   * Chunks firstChunk..firstChunk+count-1 of the slice in `fh`, verified, into `into` when it is
   * large enough. Throws ChecksumMismatch (the first chunk that does not verify), a CHECKSUM
   * ReplyError (truncated, sealed and no key to open it), or the read's I/O error.
   */
  async read(fh: FileHandle, header: SliceHeader, firstChunk: number, count: number, into?: ArrayBuffer): Promise<ReadReply> {
    const lengths: number[] = [];
    let total = 0;
    for (let c = firstChunk; c < firstChunk + count; c++) {
      const len = chunkLength(header, c);
      lengths.push(len);
      total += len;
    }
    const out = into && into.byteLength >= total ? new Uint8Array(into, 0, total) : new Uint8Array(total);
    const sink = await this.sinkOf(header, firstChunk, lengths, out);
    const trailer = trailerBytes(header);
    const span = total + count * trailer;
    let got: number;
    try {
      got = await readSpan(fh, chunkOffset(header.chunkSize, firstChunk, trailer), span, this.ctx.run, (b) => sink.push(b));
    } finally {
      // Sealed chunks open on the pool: none may still write into `out` once this read answers.
      await sink.settled().catch(() => undefined);
    }
    if (got < span || !sink.done) {
      this.ctx.counters.errors++;
      throw new ReplyError('CHECKSUM', `volume ${this.ctx.volumeId}: slice ${header.objectId}.${header.index} is truncated at chunk ${sink.chunk}`, { chunk: sink.chunk, truncated: true });
    }
    await sink.settled();
    return { data: out.buffer as ArrayBuffer, lengths };
  }

  /** The first of the chunks whose read fails with EIO (bad sectors), read one by one; null if none does. */
  async firstFailing(fh: FileHandle, header: SliceHeader, firstChunk: number, count: number): Promise<number | null> {
    for (let c = firstChunk; c < firstChunk + count; c++) {
      try {
        await this.read(fh, header, c, 1);
      } catch (err) {
        return (err as NodeJS.ErrnoException | null)?.code === 'EIO' ? c : null;
      }
    }
    return null;
  }

  /** Where a read's bytes go: checked by CRC, or opened with the volume key when sealed. */
  private async sinkOf(header: SliceHeader, firstChunk: number, lengths: number[], out: Uint8Array): Promise<ChunkSink> {
    if (!header.sealed) return new ChunkVerifier(firstChunk, lengths, out);
    const key = this.ctx.key();
    const slice = `slice ${header.objectId}.${header.index}`;
    if (!key) {
      this.ctx.counters.errors++;
      throw new ReplyError('CHECKSUM', `volume ${this.ctx.volumeId}: ${slice} is sealed, and this volume holds no key to open it (its key slots are gone)`, { chunk: -1, header: true });
    }
    if (key.keyGen !== header.sealed.keyGen) {
      this.ctx.counters.errors++;
      throw new ReplyError('CHECKSUM', `volume ${this.ctx.volumeId}: ${slice} is sealed with key generation ${header.sealed.keyGen}, this volume's key is generation ${key.keyGen}`, { chunk: -1, header: true });
    }
    const cipher = this.cipherOf(key, header);
    return new SealedChunkReader(firstChunk, lengths, out, cipher, await cipher.ready());
  }

  private cipherOf(key: VolumeKey, header: SliceHeader): SliceCipher {
    const id = Buffer.from(encodeSliceHeader(header)).toString('base64');
    let cipher = this.ciphers.get(id);
    if (cipher) this.ciphers.delete(id);
    else cipher = new SliceCipher(key.volumeKey, header);
    this.ciphers.set(id, cipher);
    if (this.ciphers.size > CIPHER_CACHE) this.ciphers.delete(this.ciphers.keys().next().value!);
    return cipher;
  }
}
