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


export interface OpusFileSpec {
  packets: Uint8Array[];
  channels?: number;
  preSkip?: number;
  /** OpusHead output gain, Q7.8 dB. */
  gainQ78?: number;
  family?: number;
  version?: number;
  /** Audio packets per page. */
  perPage?: number;
  /** Samples per packet (for the granule positions). */
  samplesPerPacket?: number;
  /** Added to every audio granule position (a stream that does not start at 0). */
  granuleOffset?: number;
  /** The last page's granule position instead of the samples counted. */
  lastGranule?: number;
  /** Replace the OpusHead packet / the OpusTags packet. */
  head?: Uint8Array;
  tags?: Uint8Array | null;
}

export function opusHead(channels = 1, preSkip = 312, gainQ78 = 0, family = 0, version = 1): Uint8Array {
  const h = new Uint8Array(19);
  const v = new DataView(h.buffer);
  h.set(new TextEncoder().encode('OpusHead'), 0);
  h[8] = version;
  h[9] = channels;
  v.setUint16(10, preSkip, true);
  v.setUint32(12, 48000, true);
  v.setInt16(16, gainQ78, true);
  h[18] = family;
  return h;
}

export function opusTags(): Uint8Array {
  const vendor = new TextEncoder().encode('hostd test');
  const t = new Uint8Array(8 + 4 + vendor.length + 4);
  t.set(new TextEncoder().encode('OpusTags'), 0);
  new DataView(t.buffer).setUint32(8, vendor.length, true);
  t.set(vendor, 12);
  return t;
}

/** Lacing values for one packet. */
const lace = (n: number) => [...Array<number>(Math.floor(n / 255)).fill(255), n % 255];

/** A whole Ogg Opus file (each header on its own page, audio `perPage` packets a page). */
export function opusFile(s: OpusFileSpec): Uint8Array {
  const pages: Uint8Array[] = [];
  let sequence = 0;
  const head = s.head ?? opusHead(s.channels, s.preSkip, s.gainQ78, s.family, s.version);
  pages.push(page({ lacing: lace(head.length), body: head, flags: 0x02, granule: 0, sequence: sequence++ }));
  if (s.tags !== null) {
    const tags = s.tags ?? opusTags();
    pages.push(page({ lacing: lace(tags.length), body: tags, granule: 0, sequence: sequence++ }));
  }
  const per = s.perPage ?? 5;
  const spp = s.samplesPerPacket ?? 960;
  for (let i = 0; i < s.packets.length; i += per) {
    const group = s.packets.slice(i, i + per);
    const last = i + per >= s.packets.length;
    const counted = (i + group.length) * spp + (s.granuleOffset ?? 0);
    pages.push(
      page({
        lacing: group.flatMap((p) => lace(p.length)),
        body: cat(...group),
        flags: last ? 0x04 : 0,
        granule: last && s.lastGranule !== undefined ? s.lastGranule : counted,
        sequence: sequence++,
      }),
    );
  }
  return cat(...pages);
}
