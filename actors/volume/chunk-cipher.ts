/**
 * AES-256-GCM of slice chunks on the volume's thread, in place: a chunk is sealed into a buffer
 * the writer reuses, and opened straight into the read's reply, through the native addon
 * native/aes-gcm (one OpenSSL cipher context reused chunk after chunk, the same libcrypto that
 * node:crypto runs). node:crypto's Cipher returns a fresh Buffer for every update; on the volume
 * threads those allocations cost about as much as the cipher itself (V8 counts them as external
 * memory and runs full collections for them): docs/object-store.md, "What it costs, measured".
 *
 * Without the addon (not built, or HOSTD_AES_NATIVE=0) the same interface runs on node:crypto,
 * copying its output into the destination: the bytes on the disk are the same either way
 * (AES-GCM is AES-GCM; test/volume/chunk-cipher.test.ts checks both against SliceSealer).
 *
 * What a slice's key, a chunk's nonce and its AAD are is crypto-format.ts's (sliceKey,
 * chunkNonce, chunkAad, VolumeKdf): SliceKeys derives them once per slice, as SliceSealer does there.
 */
import { createCipheriv, createDecipheriv, type CipherGCM, type DecipherGCM } from 'node:crypto';
import { loadAddon } from '../../runtime/native-addon.js';
import { chunkAad, chunkNonce, SealError, sliceKey, TAG_BYTES } from '../../protocols/objstore/crypto-format.js';
import { SLICE_HEADER_BYTES, type SliceHeader } from '../../protocols/objstore/slice-format.js';

/** native/aes-gcm's functions (src/aes_gcm.c). */
interface NativeAesGcm {
  createContext(): object;
  begin(ctx: object, encrypt: boolean, key: Uint8Array, iv: Uint8Array, aad: Uint8Array): void;
  update(ctx: object, src: Uint8Array, dst: Uint8Array): void;
  sealEnd(ctx: object, tag: Uint8Array): void;
  openEnd(ctx: object, tag: Uint8Array): boolean;
}

let addon: NativeAesGcm | null | undefined;
/** Why the addon is not used ('' when it is). */
export let nativeUnavailable = '';

/** The addon for this thread, or null (forced off, or it cannot load: node:crypto then). */
export function nativeAesGcm(): NativeAesGcm | null {
  if (addon !== undefined) return addon;
  const load = loadAddon<NativeAesGcm>({
    file: new URL('../../../native/aes-gcm/build/Release/aes_gcm.node', import.meta.url),
    offEnv: 'HOSTD_AES_NATIVE',
    build: 'node-gyp rebuild --directory native/aes-gcm',
    warning: (why) => `volume: the native AES-GCM (native/aes-gcm) is not available, sealing with node:crypto: ${why}`,
    warningType: 'HostdVolumeWarning',
  });
  nativeUnavailable = load.unavailable;
  return (addon = load.addon);
}

/** A slice's key and AAD, derived once (HKDF, its extract step once per volume key) and used for each of its chunks. */
export class SliceKeys {
  readonly key: Uint8Array;
  private readonly aad: Buffer;

  constructor(
    readonly volumeKey: Uint8Array,
    header: SliceHeader,
  ) {
    if (!header.sealed) throw new SealError(`slice ${header.objectId}.${header.index}: the header is not a sealed one (no key generation)`);
    this.key = sliceKey(volumeKey, header.objectId, header.index, header.sealed.keyGen);
    this.aad = Buffer.from(chunkAad(header, 0));
  }

  /** The AAD of chunk `c` (the same buffer, rewritten: use it before asking for another chunk's). */
  aadOf(c: number): Uint8Array {
    this.aad.writeBigUInt64BE(BigInt(c), SLICE_HEADER_BYTES);
    return this.aad;
  }
}

/**
 * One chunk at a time, sealed or opened: begin, update (any number of pieces, in order), then
 * sealEnd or openEnd. Reused from chunk to chunk; one chunk in progress per instance.
 */
export class ChunkCipher {
  private readonly native: NativeAesGcm | null;
  private readonly ctx: object | null;
  private js: CipherGCM | DecipherGCM | null = null;

  /** `useNative` false: node:crypto even where the addon loads (the tests compare the two). */
  constructor(useNative = true) {
    this.native = useNative ? nativeAesGcm() : null;
    this.ctx = this.native ? this.native.createContext() : null;
  }

  /** Whether the native addon does the work (else node:crypto). */
  get isNative(): boolean {
    return this.ctx !== null;
  }

  begin(keys: SliceKeys, c: number, encrypt: boolean): void {
    const iv = chunkNonce(c);
    const aad = keys.aadOf(c);
    if (this.ctx) return this.native!.begin(this.ctx, encrypt, keys.key, iv, aad);
    this.js = encrypt ? createCipheriv('aes-256-gcm', keys.key, iv, { authTagLength: TAG_BYTES }) : createDecipheriv('aes-256-gcm', keys.key, iv, { authTagLength: TAG_BYTES });
    this.js.setAAD(aad);
  }

  /** `src` ciphered into `dst` (as long as src at least; dst may be src itself with the addon). */
  update(src: Uint8Array, dst: Uint8Array): void {
    if (this.ctx) return this.native!.update(this.ctx, src, dst);
    if (dst.byteLength < src.byteLength) throw new RangeError('aes-gcm: dst is shorter than src');
    dst.set(this.js!.update(src));
  }

  /** Sealing: the chunk's tag into `tag` (16 bytes). */
  sealEnd(tag: Uint8Array): void {
    if (this.ctx) return this.native!.sealEnd(this.ctx, tag);
    const c = this.js as CipherGCM;
    this.js = null;
    c.final();
    tag.set(c.getAuthTag());
  }

  /** Opening: whether the chunk's tag verifies (its output is not to be trusted before this says true). */
  openEnd(tag: Uint8Array): boolean {
    if (this.ctx) return this.native!.openEnd(this.ctx, tag);
    const d = this.js as DecipherGCM;
    this.js = null;
    try {
      d.setAuthTag(tag);
      d.final();
      return true;
    } catch {
      return false;
    }
  }
}
