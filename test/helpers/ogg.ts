/**
 * Ogg pages built byte by byte for tests (CRC stamped by the demuxer's own stampOggCrc, checked
 * against the CRC catalogue value in ogg.test.ts): the demuxer's and the Opus probe's inputs.
 */
import { stampOggCrc } from '../../protocols/media/codecs/ogg.js';

export interface PageSpec {
  /** Lacing values; the body is that many bytes, filled from `fill`. */
  lacing: number[];
  flags?: number;
  granule?: number | bigint;
  serial?: number;
  sequence?: number;
  fill?: number;
  body?: Uint8Array;
}

/** One Ogg page with a correct CRC (unless `crc` is given). */
export function page(p: PageSpec, crc?: number): Uint8Array {
  const bodyLen = p.lacing.reduce((a, b) => a + b, 0);
  const out = new Uint8Array(27 + p.lacing.length + bodyLen);
  const v = new DataView(out.buffer);
  out.set([0x4f, 0x67, 0x67, 0x53], 0);
  out[5] = p.flags ?? 0;
  v.setBigInt64(6, BigInt(p.granule ?? -1), true);
  v.setUint32(14, p.serial ?? 0x1234, true);
  v.setUint32(18, p.sequence ?? 0, true);
  out[26] = p.lacing.length;
  out.set(p.lacing, 27);
  if (p.body) out.set(p.body, 27 + p.lacing.length);
  else out.fill(p.fill ?? 0xaa, 27 + p.lacing.length);
  stampOggCrc(out, 0, out.length);
  if (crc !== undefined) v.setUint32(22, crc, true);
  return out;
}

export const cat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), (o += p.length));
  return out;
};

