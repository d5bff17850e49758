/**
 * Reading chunks of a slice file for the volume (volume.ts opens the file, reads and caches its
 * header, and names the failing chunk of an I/O error with firstFailing): the stored span of the
 * chunks asked is read with O_DIRECT (direct-io.ts) and streams through a ChunkVerifier, which
 * checks each chunk and lays its payload out back to back. A plain slice's chunks are checked by
 * CRC32C as the bytes pass; a sealed slice's are deciphered as they pass and checked by their tags,
 * with the volume key if it is the generation the header names (chunk-verifier.ts, one loop).
 *
 * A sealed slice's pieces are read ahead of the sink (SEALED_READING): deciphering a piece costs
 * about as long as reading it, so the two overlap instead of alternating.
 *
 * A sealed slice's keys (its slice key derived by HKDF, its AAD) are kept with its decoded header
 * (volume.ts keeps the headers of the slices read last): a header read again from the disk is a
 * new object and gets keys of its own, so an edited header is still checked by the tags. Its chunks are deciphered straight
 * into the reply (chunk-cipher.ts), by a cipher context each read holds until it ends (pooled).
 */
import type { FileHandle } from 'node:fs/promises';
import { ReplyError } from '../../runtime/index.js';
import { chunkLength, chunkOffset, trailerBytes, type SliceHeader } from '../../protocols/objstore/slice-format.js';
import { ChunkCipher, SliceKeys } from './chunk-cipher.js';
import { ChunkVerifier, crcCheck, sealedCheck, type ChunkCheck } from './chunk-verifier.js';
import { readSpan, type RunIo, type SpanReading } from './direct-io.js';
import type { ReadReply } from './messages.js';
import type { VolumeKey } from './volume-key.js';

export interface ReaderContext {
  volumeId: number;
  /** file operations go through the disk's queue */
  run: RunIo;
  /** chunks cut short and sealed slices without their key count as errors */
  counters: { errors: number };
  /** the volume key, null on a plain volume (asked at each read: it is read when the volume opens) */
  key(): VolumeKey | null;
}

/**
 * A sealed slice is read in 1 MiB pieces, three read ahead: its sink deciphers (~0.3 ms per MiB
 * with the native cipher, ~1 with node:crypto), so the disk reads the next pieces meanwhile. (One
 * 4 MiB piece at a time, as for a plain slice, measured no different with the native cipher.) A plain slice's sink
 * only computes a CRC: it is read in one 4 MiB piece at a time (direct-io.ts, DIRECT_PIECE).
 */
const SEALED_READING: SpanReading = { piece: 1 << 20, ahead: 3 };

/** Cipher contexts kept for the next reads (one per read of a sealed slice while it runs). */
const CIPHER_POOL = 64;

export class ChunkReader {
  /** By decoded header: they live as long as volume.ts keeps the header. */
  private readonly keys = new WeakMap<SliceHeader, SliceKeys>();
  private readonly ciphers: ChunkCipher[] = [];

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
    const cipher = header.sealed ? (this.ciphers.pop() ?? new ChunkCipher()) : null;
    const verifier = new ChunkVerifier(firstChunk, lengths, out, this.checkOf(header, cipher));
    const trailer = trailerBytes(header);
    const span = total + count * trailer;
    let got: number;
    try {
      got = await readSpan(fh, chunkOffset(header.chunkSize, firstChunk, trailer), span, this.ctx.run, (b) => verifier.push(b), header.sealed ? SEALED_READING : undefined);
    } finally {
      // Its chunk in progress (if the read failed midway) is begun again by the next read.
      if (cipher && this.ciphers.length < CIPHER_POOL) this.ciphers.push(cipher);
    }
    if (got < span || !verifier.done) {
      this.ctx.counters.errors++;
      throw new ReplyError('CHECKSUM', `volume ${this.ctx.volumeId}: slice ${header.objectId}.${header.index} is truncated at chunk ${verifier.chunk}`, { chunk: verifier.chunk, truncated: true });
    }
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

  /** How the chunks of a slice are checked: by CRC, or opened with the volume key when sealed. */
  private checkOf(header: SliceHeader, cipher: ChunkCipher | null): ChunkCheck {
    if (!header.sealed || !cipher) return crcCheck();
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
    return sealedCheck(this.keysOf(key, header), cipher);
  }

  private keysOf(key: VolumeKey, header: SliceHeader): SliceKeys {
    let keys = this.keys.get(header);
    if (!keys || keys.volumeKey !== key.volumeKey) this.keys.set(header, (keys = new SliceKeys(key.volumeKey, header)));
    return keys;
  }
}
