/**
 * Checks chunks as their bytes stream in from a slice file (chunk, trailer, chunk, trailer, ...),
 * copying each chunk's payload to `out` back to back. Pieces may split a chunk or its trailer
 * anywhere. Throws ChecksumMismatch at the first chunk that does not verify.
 *
 * What a trailer is and how a chunk is checked is a ChunkCheck: a plain slice's trailer is the
 * chunk's CRC32C (crcCheck); a sealed slice's is its AES-GCM tag, and its bytes are deciphered on
 * the way to `out` (sealedCheck). One streaming loop for both, so an encrypted volume reads through
 * the same O_DIRECT path as a plain one.
 */
import { crc32c } from '@node-rs/crc32';
import type { ChunkCipher, SliceKeys } from './chunk-cipher.js';
import { CHUNK_CRC_BYTES, CHUNK_TAG_BYTES } from '../../protocols/objstore/slice-format.js';

export class ChecksumMismatch extends Error {
  readonly chunk: number;
  constructor(chunk: number, detail: string) {
    super(`chunk ${chunk}: ${detail}`);
    this.name = 'ChecksumMismatch';
    this.chunk = chunk;
  }
}

/** How the chunks of one read are checked: per chunk, begin, then its bytes, then its trailer. */
export interface ChunkCheck {
  /** bytes of the trailer after each chunk */
  readonly trailer: number;
  begin(chunk: number): void;
  /** a piece of the chunk's stored bytes in; its payload (the same bytes, or deciphered) into `dst`, as long as the piece */
  take(piece: Uint8Array, dst: Uint8Array): void;
  /** the trailer read; throws ChecksumMismatch when the chunk does not verify */
  end(chunk: number, trailer: Uint8Array): void;
}

/** A plain slice: each chunk followed by its CRC32C. */
export function crcCheck(): ChunkCheck {
  let crc = 0;
  return {
    trailer: CHUNK_CRC_BYTES,
    begin: () => (crc = 0),
    take(piece, dst) {
      crc = crc32c(piece, crc);
      dst.set(piece);
    },
    end(chunk, trailer) {
      const stored = new DataView(trailer.buffer, trailer.byteOffset, CHUNK_CRC_BYTES).getUint32(0);
      if (stored !== crc) throw new ChecksumMismatch(chunk, `CRC32C mismatch (stored ${hex(stored)}, computed ${hex(crc)})`);
    },
  };
}

/**
 * A sealed slice: each chunk AES-256-GCM ciphertext followed by its tag, deciphered straight into
 * the read's output by `cipher` (held by this read until it ends: one chunk at a time).
 */
export function sealedCheck(keys: SliceKeys, cipher: ChunkCipher): ChunkCheck {
  return {
    trailer: CHUNK_TAG_BYTES,
    begin: (chunk) => cipher.begin(keys, chunk, false),
    take: (piece, dst) => cipher.update(piece, dst),
    end(chunk, tag) {
      if (!cipher.openEnd(tag)) throw new ChecksumMismatch(chunk, 'the AES-GCM tag does not verify (a changed byte, a moved chunk, or another key)');
    },
  };
}

const hex = (n: number) => n.toString(16).padStart(8, '0');

export class ChunkVerifier {
  private readonly firstChunk: number;
  private readonly lengths: readonly number[];
  private readonly out: Uint8Array;
  private readonly check: ChunkCheck;
  private ci = 0;
  private inChunk = 0;
  private outPos = 0;
  private readonly stored: Uint8Array;
  private storedFill = 0;

  constructor(firstChunk: number, lengths: readonly number[], out: Uint8Array, check: ChunkCheck = crcCheck()) {
    this.firstChunk = firstChunk;
    this.lengths = lengths;
    this.out = out;
    this.check = check;
    this.stored = new Uint8Array(check.trailer);
    if (lengths.length) check.begin(firstChunk);
  }

  /** The chunk whose bytes come next (index within the slice). */
  get chunk(): number {
    return this.firstChunk + this.ci;
  }

  get done(): boolean {
    return this.ci === this.lengths.length;
  }

  push(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) {
      const len = this.lengths[this.ci];
      if (len === undefined) throw new Error('ChunkVerifier: more bytes than the chunks asked for');
      if (this.inChunk < len) {
        const n = Math.min(len - this.inChunk, bytes.length - off);
        this.check.take(bytes.subarray(off, off + n), this.out.subarray(this.outPos, this.outPos + n));
        this.outPos += n;
        this.inChunk += n;
        off += n;
        continue;
      }
      const n = Math.min(this.check.trailer - this.storedFill, bytes.length - off);
      this.stored.set(bytes.subarray(off, off + n), this.storedFill);
      this.storedFill += n;
      off += n;
      if (this.storedFill === this.check.trailer) {
        this.check.end(this.chunk, this.stored);
        this.ci++;
        this.inChunk = 0;
        this.storedFill = 0;
        if (!this.done) this.check.begin(this.chunk);
      }
    }
  }
}
