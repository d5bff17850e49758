/**
 * The load generator's own SRTP (AES_CM_128_HMAC_SHA1_80, RFC 3711, kdr 0), copied from the
 * rtpengine peer recipe `shared/peers/rtpengine/rtp-load.mjs` so that both relays face the
 * same generator. Deliberately independent of protocols/media/srtp (the code under test).
 * Works in place on 12-byte-header packets without extensions or CSRCs (what the generator
 * sends and what both relays forward).
 */
import crypto from 'node:crypto';

export interface SrtpKeys {
  ek: Buffer;
  ak: Buffer;
  salt: Buffer;
  ecb: crypto.Cipher;
  ctr: Buffer;
}

function aesEcb(key: Buffer): crypto.Cipher {
  const c = crypto.createCipheriv('aes-128-ecb', key, null);
  c.setAutoPadding(false);
  return c;
}

/** Session keys from a 30-byte master key + salt (16 + 14). */
export function srtpKeys(master: Buffer): SrtpKeys {
  if (master.length !== 30) throw new Error(`SRTP master key+salt must be 30 bytes, got ${master.length}`);
  const mk = master.subarray(0, 16);
  const ms = master.subarray(16, 30);
  const ecb = aesEcb(mk);
  const derive = (label: number, len: number): Buffer => {
    const iv = Buffer.alloc(16);
    ms.copy(iv, 0);
    iv[7]! ^= label;
    const blocks = Buffer.alloc(Math.ceil(len / 16) * 16);
    for (let i = 0; i < blocks.length / 16; i++) {
      iv.copy(blocks, i * 16);
      blocks.writeUInt16BE(i, i * 16 + 14);
    }
    return ecb.update(blocks).subarray(0, len);
  };
  const ek = derive(0, 16);
  return { ek, ak: derive(1, 20), salt: derive(2, 14), ecb: aesEcb(ek), ctr: Buffer.alloc(176) }; // 11 blocks cover 160 bytes
}

function keystream(k: SrtpKeys, ssrc: number, index: number, len: number): Buffer {
  const nb = Math.ceil(len / 16);
  if (k.ctr.length < nb * 16) k.ctr = Buffer.alloc(nb * 16);
  const iv = k.ctr;
  const hi = Math.floor(index / 0x100000000);
  const lo = index >>> 0;
  for (let b = 0; b < nb; b++) {
    const o = b * 16;
    k.salt.copy(iv, o);
    iv[o + 14] = 0;
    iv[o + 15] = 0;
    iv[o + 4]! ^= ssrc >>> 24;
    iv[o + 5]! ^= (ssrc >>> 16) & 255;
    iv[o + 6]! ^= (ssrc >>> 8) & 255;
    iv[o + 7]! ^= ssrc & 255;
    iv[o + 8]! ^= (hi >>> 8) & 255;
    iv[o + 9]! ^= hi & 255;
    iv[o + 10]! ^= lo >>> 24;
    iv[o + 11]! ^= (lo >>> 16) & 255;
    iv[o + 12]! ^= (lo >>> 8) & 255;
    iv[o + 13]! ^= lo & 255;
    iv.writeUInt16BE(b, o + 14);
  }
  return k.ecb.update(iv.subarray(0, nb * 16));
}

const rocBuf = Buffer.alloc(4);
function tag(k: SrtpKeys, data: Buffer, roc: number): Buffer {
  rocBuf.writeUInt32BE(roc >>> 0, 0);
  return crypto.createHmac('sha1', k.ak).update(data).update(rocBuf).digest().subarray(0, 10);
}

/** Encrypt in place: `pkt` holds header + payload (`plen` bytes) and 10 spare bytes for the tag. Returns the SRTP length. */
export function srtpProtect(k: SrtpKeys, pkt: Buffer, plen: number, ssrc: number, seq: number, roc: number): number {
  const ks = keystream(k, ssrc, roc * 65536 + seq, plen - 12);
  for (let i = 12; i < plen; i++) pkt[i]! ^= ks[i - 12]!;
  tag(k, pkt.subarray(0, plen), roc).copy(pkt, plen);
  return plen + 10;
}

/** Verify and decrypt in place; returns the RTP length (without the tag), or -1 when authentication fails. */
export function srtpUnprotect(k: SrtpKeys, pkt: Buffer, ssrc: number, seq: number, roc: number): number {
  const plen = pkt.length - 10;
  if (plen < 12) return -1;
  const t = tag(k, pkt.subarray(0, plen), roc);
  if (!t.equals(pkt.subarray(plen))) return -1;
  const ks = keystream(k, ssrc, roc * 65536 + seq, plen - 12);
  for (let i = 12; i < plen; i++) pkt[i]! ^= ks[i - 12]!;
  return plen;
}
