/**
 * Checks chunks as their bytes stream in from a slice file (chunk, CRC32C, chunk, CRC32C, ...),
 * copying each chunk's payload to `out` back to back. Pieces may split a chunk or its CRC
 * anywhere. Throws ChecksumMismatch at the first chunk whose CRC does not match.
 */
import { crc32c } from '@node-rs/crc32';
import { CHUNK_CRC_BYTES } from '../../protocols/objstore/slice-format.js';

export class ChecksumMismatch extends Error {
  readonly chunk: number;
  constructor(chunk: number, stored: number, computed: number) {
    super(`chunk ${chunk}: CRC32C mismatch (stored ${stored.toString(16).padStart(8, '0')}, computed ${computed.toString(16).padStart(8, '0')})`);
    this.name = 'ChecksumMismatch';
    this.chunk = chunk;
  }
}

export class ChunkVerifier {
  private readonly firstChunk: number;
  private readonly lengths: readonly number[];
  private readonly out: Uint8Array;
  private ci = 0;
  private inChunk = 0;
  private outPos = 0;
  private crc = 0;
  private readonly stored = new Uint8Array(CHUNK_CRC_BYTES);
  private storedFill = 0;

  constructor(firstChunk: number, lengths: readonly number[], out: Uint8Array) {
    this.firstChunk = firstChunk;
    this.lengths = lengths;
    this.out = out;
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
        const part = bytes.subarray(off, off + n);
        this.out.set(part, this.outPos);
        this.crc = crc32c(part, this.crc);
        this.outPos += n;
        this.inChunk += n;
        off += n;
        continue;
      }
      const n = Math.min(CHUNK_CRC_BYTES - this.storedFill, bytes.length - off);
      this.stored.set(bytes.subarray(off, off + n), this.storedFill);
      this.storedFill += n;
      off += n;
      if (this.storedFill === CHUNK_CRC_BYTES) {
        const stored = new DataView(this.stored.buffer).getUint32(0);
        if (stored !== this.crc) throw new ChecksumMismatch(this.chunk, stored, this.crc);
        this.ci++;
        this.inChunk = 0;
        this.crc = 0;
        this.storedFill = 0;
      }
    }
  }
}
