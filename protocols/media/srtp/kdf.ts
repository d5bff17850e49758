/**
 * SRTP key derivation (RFC 3711 §4.3) and the AES counter-mode keystream it and the cipher use.
 *
 * Decisions:
 * - Key derivation rate 0 only (SDES default; RFC 4568 KDR≠0 is refused by the SDP layer), so
 *   session keys are derived once per master key: r = index DIV kdr is always 0.
 * - PRF input: x = master salt XOR (label << 48), i.e. the label lands on byte 7 of the 14-byte
 *   salt; the AES-CM IV is x·2^16 (two zero bytes appended) and the key is the keystream prefix.
 * - Session keys are kept as node:crypto KeyObjects (AES-128 and the 20-byte HMAC-SHA1 key) so
 *   the per-packet path never re-imports raw key bytes; the 14-byte session salt stays a Buffer.
 * - AES-CM is computed as AES-ECB over counter blocks with one long-lived ECB cipher per key
 *   (AesCm): creating an 'aes-128-ctr' cipher per packet costs more than the AES work itself
 *   (about 2 µs of the ~4 µs per 160-byte packet). SRTP counters never carry out of their low
 *   16 bits (the IV ends in two zero bytes and a packet is far below 2^16 blocks), so block b of
 *   a packet is the IV with b in its last two bytes. The RFC 3711 B.2 vectors test this path.
 */
import { createCipheriv, createSecretKey, type Cipher, type KeyObject } from 'node:crypto';

export const LABEL_RTP_ENCRYPTION = 0x00;
export const LABEL_RTP_AUTH = 0x01;
export const LABEL_RTP_SALT = 0x02;
export const LABEL_RTCP_ENCRYPTION = 0x03;
export const LABEL_RTCP_AUTH = 0x04;
export const LABEL_RTCP_SALT = 0x05;

export const MASTER_KEY_BYTES = 16;
export const MASTER_SALT_BYTES = 14;
export const SESSION_KEY_BYTES = 16;
export const SESSION_AUTH_KEY_BYTES = 20;
export const SESSION_SALT_BYTES = 14;

/** Most keystream one IV may produce: 2^16 blocks (RFC 3711 §4.1.1). */
export const MAX_KEYSTREAM_BYTES = 0x10000 * 16;

/** AES-128 counter mode for IVs whose last two bytes are zero (SRTP's), with a reusable cipher. */
export class AesCm {
  private readonly ecb: Cipher;
  private ctr = Buffer.alloc(16 * 96);

  constructor(key: Uint8Array | KeyObject) {
    this.ecb = createCipheriv('aes-128-ecb', key, null);
    this.ecb.setAutoPadding(false);
  }

  /** `length` bytes of keystream for the counter block `iv` (iv[14] and iv[15] must be 0). */
  keystream(iv: Uint8Array, length: number): Buffer {
    if (length > MAX_KEYSTREAM_BYTES) throw new RangeError('AES-CM: more than 2^16 blocks for one IV');
    if (iv.length !== 16 || iv[14] !== 0 || iv[15] !== 0) throw new RangeError('AES-CM: the IV must be 16 bytes ending in two zero bytes');
    const blocks = (length + 15) >>> 4;
    if (this.ctr.length < blocks * 16) this.ctr = Buffer.alloc(blocks * 16);
    const ctr = this.ctr;
    ctr.set(iv, 0);
    for (let b = 1; b < blocks; b++) {
      const o = b * 16;
      ctr.copyWithin(o, 0, 14);
      ctr[o + 14] = b >>> 8;
      ctr[o + 15] = b & 0xff;
    }
    const ks = this.ecb.update(ctr.subarray(0, blocks * 16));
    return length === ks.length ? ks : ks.subarray(0, length);
  }

  /** out[outOff + i] = src[i] XOR keystream[i]: encryption and decryption alike. */
  xor(iv: Uint8Array, src: Uint8Array, out: Uint8Array, outOff: number): void {
    const n = src.length;
    if (n === 0) return;
    const ks = this.keystream(iv, n);
    for (let i = 0; i < n; i++) out[outOff + i] = (src[i] as number) ^ (ks[i] as number);
  }
}

/** `length` bytes of AES-128 counter-mode keystream starting at the counter block `iv`. */
export function aesCmKeystream(key: Uint8Array | KeyObject, iv: Uint8Array, length: number): Buffer {
  return new AesCm(key).keystream(iv, length);
}

/** The AES-CM PRF of RFC 3711 §4.3.3 with KDR 0: `length` bytes of key material for `label`. */
export function deriveKey(masterKey: Uint8Array, masterSalt: Uint8Array, label: number, length: number): Buffer {
  if (masterKey.length !== MASTER_KEY_BYTES) throw new RangeError('SRTP master key must be 16 bytes');
  if (masterSalt.length !== MASTER_SALT_BYTES) throw new RangeError('SRTP master salt must be 14 bytes');
  const iv = Buffer.alloc(16);
  iv.set(masterSalt, 0);
  iv[7] = (iv[7] as number) ^ (label & 0xff);
  return aesCmKeystream(masterKey, iv, length);
}

export interface SessionKeys {
  /** AES-CM with the session encryption key. */
  cipher: AesCm;
  /** HMAC-SHA1 session authentication key (20 bytes). */
  authKey: KeyObject;
  /** 14-byte session salt. */
  salt: Buffer;
}

/** Session keys for SRTP (`rtcp` false: labels 0,1,2) or SRTCP (`rtcp` true: labels 3,4,5). */
export function deriveSessionKeys(keySalt: Uint8Array, rtcp: boolean): SessionKeys {
  const masterKey = keySalt.subarray(0, MASTER_KEY_BYTES);
  const masterSalt = keySalt.subarray(MASTER_KEY_BYTES, MASTER_KEY_BYTES + MASTER_SALT_BYTES);
  const base = rtcp ? LABEL_RTCP_ENCRYPTION : LABEL_RTP_ENCRYPTION;
  return {
    cipher: new AesCm(createSecretKey(deriveKey(masterKey, masterSalt, base, SESSION_KEY_BYTES))),
    authKey: createSecretKey(deriveKey(masterKey, masterSalt, base + 1, SESSION_AUTH_KEY_BYTES)),
    salt: deriveKey(masterKey, masterSalt, base + 2, SESSION_SALT_BYTES),
  };
}

/**
 * Writes the AES-CM IV of RFC 3711 §4.1.1 into `out` (16 bytes):
 * (salt·2^16) XOR (SSRC·2^64) XOR (index·2^16), with the 48-bit index given as its high 32 bits
 * (the ROC for SRTP) and low 16 bits (the SEQ). An SRTCP index i is (i >>> 16, i & 0xffff).
 */
export function writeIv(out: Uint8Array, salt: Uint8Array, ssrc: number, indexHigh: number, indexLow: number): void {
  out.set(salt, 0);
  out[14] = 0;
  out[15] = 0;
  out[4] = (out[4] as number) ^ ((ssrc >>> 24) & 0xff);
  out[5] = (out[5] as number) ^ ((ssrc >>> 16) & 0xff);
  out[6] = (out[6] as number) ^ ((ssrc >>> 8) & 0xff);
  out[7] = (out[7] as number) ^ (ssrc & 0xff);
  out[8] = (out[8] as number) ^ ((indexHigh >>> 24) & 0xff);
  out[9] = (out[9] as number) ^ ((indexHigh >>> 16) & 0xff);
  out[10] = (out[10] as number) ^ ((indexHigh >>> 8) & 0xff);
  out[11] = (out[11] as number) ^ (indexHigh & 0xff);
  out[12] = (out[12] as number) ^ ((indexLow >>> 8) & 0xff);
  out[13] = (out[13] as number) ^ (indexLow & 0xff);
}
