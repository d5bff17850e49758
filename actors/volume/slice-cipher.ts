/**
 * Sealing and opening the chunks of one slice off the volume thread: AES-256-GCM through WebCrypto
 * (node:crypto's `subtle`), whose operations run as jobs on libuv's thread pool, not on the thread
 * that asks. The key, nonce and authenticated data are crypto-format.ts's (sliceKey, chunkNonce,
 * chunkAad): the bytes are the same as SliceSealer's, which stays the synchronous reference (the
 * format tests, the bench's seal bound).
 *
 * Why not SliceSealer here: node's Cipher/Decipher run on the calling thread, and every volume of a
 * host shares one thread (actor.ts). Sealing there made an encrypted PUT alternate "seal a chunk,
 * write a stage" on that thread (0.89 cores used against 1.51 for a plain PUT, AES at ~1 GB/s per
 * core), and opening there did the same to a GET. Here the volume thread only starts a job (WebCrypto
 * copies the input when the call is made, so the caller may reuse its buffer at once) and copies
 * the result into the O_DIRECT stage; the sealing of the next chunks runs while a stage is written.
 *
 * Small chunks (under INLINE_BYTES: the 4 KiB objects' one chunk) are sealed and opened inline
 * with SliceSealer instead: for them the trip to the pool and back costs more than the cipher.
 *
 * The slice key is derived on this thread and imported as a non-extractable CryptoKey; it never
 * leaves the volume actor's thread except into OpenSSL on the pool's threads of the same process.
 */
import { webcrypto } from 'node:crypto';
import { chunkAad, chunkNonce, SealError, SliceSealer, sliceKey, TAG_BYTES } from '../../protocols/objstore/crypto-format.js';
import type { SliceHeader } from '../../protocols/objstore/slice-format.js';
import { ChecksumMismatch, type ChunkSink } from './chunk-verifier.js';

const { subtle } = webcrypto;

/** Chunks shorter than this are sealed and opened on the calling thread (~10 µs of AES or less). */
export const INLINE_BYTES = 32 * 1024;

const mismatch = (c: number) => new ChecksumMismatch(c, 'the AES-GCM tag does not verify (a changed byte, a moved chunk, or another key)');

export class SliceCipher {
  private readonly key: Promise<webcrypto.CryptoKey>;
  private readonly header: SliceHeader;
  private readonly volumeKey: Uint8Array;
  /** The synchronous sealer, made at the first small chunk. */
  private inline: SliceSealer | null = null;

  /** The cipher of a sealed slice (header.sealed set) under `volumeKey`. */
  constructor(volumeKey: Uint8Array, header: SliceHeader) {
    if (!header.sealed) throw new Error(`slice ${header.objectId}.${header.index}: the header is not a sealed one`);
    this.header = header;
    this.volumeKey = volumeKey;
    const raw = sliceKey(volumeKey, header.objectId, header.index, header.sealed.keyGen);
    this.key = subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
    raw.fill(0);
    // Awaited by every seal/open; a rejection here is a bug, seen there.
    this.key.catch(() => undefined);
  }

  private params(c: number): webcrypto.AesGcmParams {
    return { name: 'AES-GCM', iv: chunkNonce(c), additionalData: chunkAad(this.header, c), tagLength: TAG_BYTES * 8 };
  }

  /**
   * Chunk `c` sealed: its ciphertext followed by its 16-byte tag, in one buffer. WebCrypto takes no
   * view of shared memory (the store's parity buffers are SharedArrayBuffers): those are copied.
   */
  async seal(c: number, plain: Uint8Array): Promise<Uint8Array> {
    if (plain.byteLength < INLINE_BYTES) {
      const { ciphertext, tag } = this.sealer().seal(c, plain);
      const stored = new Uint8Array(ciphertext.byteLength + TAG_BYTES);
      stored.set(ciphertext);
      stored.set(tag, ciphertext.byteLength);
      return stored;
    }
    const own = plain.buffer instanceof SharedArrayBuffer ? plain.slice() : plain;
    return new Uint8Array(await subtle.encrypt(this.params(c), await this.key, own));
  }

  /** The imported key, for openWith (so that a caller can start jobs synchronously). */
  ready(): Promise<webcrypto.CryptoKey> {
    return this.key;
  }

  /**
   * Chunk `c` opened with the imported key; the job takes its copy of `stored` during this call,
   * so the caller may reuse the bytes as soon as it returns. Rejects with ChecksumMismatch when the
   * tag does not verify.
   */
  openWith(key: webcrypto.CryptoKey, c: number, stored: Uint8Array): Promise<Uint8Array> {
    if (stored.byteLength < INLINE_BYTES + TAG_BYTES) {
      const len = stored.byteLength - TAG_BYTES;
      try {
        return Promise.resolve(this.sealer().open(c, stored.subarray(0, len), stored.subarray(len)));
      } catch (err) {
        if (err instanceof SealError) return Promise.reject(mismatch(c));
        throw err;
      }
    }
    return subtle.decrypt(this.params(c), key, stored).then(
      (plain) => new Uint8Array(plain),
      () => Promise.reject(mismatch(c)),
    );
  }

  private sealer(): SliceSealer {
    return (this.inline ??= new SliceSealer(this.volumeKey, this.header));
  }
}

/**
 * The chunks of one read of a sealed slice, as their stored bytes stream in from the disk (chunk,
 * tag, chunk, tag, ...; pieces may split a chunk or its tag anywhere): each chunk is opened as soon
 * as its tag is in, on the pool, and its plaintext lands in `out` at its place. A chunk that lies
 * whole in one piece is handed to the job straight from the read buffer (the job copies it); one
 * split across pieces is assembled first. `settled` waits for every job and throws the first chunk
 * that does not open, in chunk order, whatever order the jobs end in.
 */
export class SealedChunkReader implements ChunkSink {
  private ci = 0;
  /** bytes of the current chunk (and its tag) taken so far */
  private inChunk = 0;
  private outPos = 0;
  /** where a chunk split across pieces is assembled (reused: the job copies what it is given) */
  private assembly: Uint8Array | null = null;
  private readonly jobs: Promise<void>[] = [];
  private readonly failures = new Map<number, unknown>();

  constructor(
    private readonly firstChunk: number,
    private readonly lengths: readonly number[],
    private readonly out: Uint8Array,
    private readonly cipher: SliceCipher,
    private readonly key: webcrypto.CryptoKey,
  ) {}

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
      if (len === undefined) throw new Error('SealedChunkReader: more bytes than the chunks asked for');
      const stored = len + TAG_BYTES;
      const n = Math.min(stored - this.inChunk, bytes.length - off);
      if (this.inChunk === 0 && n === stored) {
        this.start(bytes.subarray(off, off + n));
      } else {
        if (!this.assembly || this.assembly.length < stored) this.assembly = new Uint8Array(stored);
        this.assembly.set(bytes.subarray(off, off + n), this.inChunk);
        this.inChunk += n;
        if (this.inChunk === stored) {
          this.start(this.assembly.subarray(0, stored));
          this.inChunk = 0;
        }
      }
      off += n;
    }
  }

  /** Open the current chunk from `stored` (copied by the job during this call) and move on. */
  private start(stored: Uint8Array): void {
    const chunk = this.chunk;
    const at = this.outPos;
    this.jobs.push(
      this.cipher.openWith(this.key, chunk, stored).then(
        (plain) => this.out.set(plain, at),
        (err: unknown) => void this.failures.set(chunk, err),
      ),
    );
    this.outPos += this.lengths[this.ci]!;
    this.ci++;
  }

  async settled(): Promise<void> {
    await Promise.all(this.jobs);
    if (this.failures.size) throw this.failures.get(Math.min(...this.failures.keys()));
  }
}
