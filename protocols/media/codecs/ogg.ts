/**
 * Ogg (RFC 3533) as the file endpoint reads it: a strict demuxer of a whole file held in memory
 * into the packets of its one logical stream, each page checked. Pure: the caller reads the bytes
 * and decides what the packets are (ogg-opus.ts for Opus).
 *
 * Decisions:
 * - Strict, no resynchronisation: every page starts where the last one ended with the capture
 *   pattern `OggS` and version 0, its CRC-32 (polynomial 0x04c11db7, the CRC field zeroed) is
 *   checked, and its header, segment table and body must lie inside the file. A damaged or cut
 *   file is refused with the byte offset of the page, never played in part.
 * - One logical stream only: the first page must be the beginning-of-stream page, the stream
 *   must end with its end-of-stream page, and the page sequence numbers must run on without a
 *   gap. A second serial number (a multiplexed or chained file) is refused by name, and so is
 *   anything after the end-of-stream page.
 * - Packets may span pages: a page that continues a packet must say so (header flag 0x01) and a
 *   page that says so must have one to continue. A packet left unfinished at the end of the
 *   stream is refused.
 * - Granule positions are kept per page (-1: no packet ends on the page); values above 2^53
 *   are refused (not a real audio length).
 */

export interface OggPacket {
  data: Uint8Array;
  /** Index of the page on which the packet ends. */
  page: number;
}

export interface OggPage {
  /** Byte offset of the page in the file. */
  offset: number;
  /** The page's granule position; -1 when no packet ends on it. */
  granule: number;
  flags: number;
  sequence: number;
  /** How many packets end on this page. */
  packetsEnding: number;
}

export interface OggStream {
  serial: number;
  pages: OggPage[];
  packets: OggPacket[];
}

export const OGG_CONTINUED = 0x01;
export const OGG_BOS = 0x02;
export const OGG_EOS = 0x04;
const HEADER_BYTES = 27;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32 (not zlib's: MSB first, no reflection, initial value and final xor 0). */
export function oggCrc(bytes: Uint8Array, crc = 0): number {
  for (let i = 0; i < bytes.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!) >>> 0;
  return crc;
}

/** The CRC of the page at `at` (of `length` bytes) as it would be with its CRC field zeroed. */
function pageCrc(file: Uint8Array, at: number, length: number): number {
  let crc = oggCrc(file.subarray(at, at + 22));
  crc = oggCrc(new Uint8Array(4), crc);
  return oggCrc(file.subarray(at + 26, at + length), crc);
}

/** Stamp a page's CRC in place (for writers and tests): the page at `at`, `length` bytes. */
export function stampOggCrc(file: Uint8Array, at: number, length: number): void {
  new DataView(file.buffer, file.byteOffset).setUint32(at + 22, pageCrc(file, at, length), true);
}

/** Demux a whole Ogg file; an error message naming what is wrong when it is not one clean stream. */
export function demuxOgg(file: Uint8Array): { ok: true; stream: OggStream } | { ok: false; message: string } {
  const bad = (message: string) => ({ ok: false as const, message });
  const v = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const pages: OggPage[] = [];
  const packets: OggPacket[] = [];
  let serial = 0;
  let partial: Uint8Array[] = []; // pieces of a packet not yet finished
  let at = 0;
  let ended = false;
  while (at < file.length) {
    const where = `the page at byte ${at}`;
    if (ended) return bad(`bad Ogg file: ${file.length - at} bytes after the end-of-stream page${isCapture(file, at) && (file[at + 5]! & OGG_BOS) ? ' (a chained stream, which is not played)' : ''}`);
    if (!isCapture(file, at)) return bad(pages.length === 0 ? 'not an Ogg file: it does not start with OggS' : `bad Ogg file: no OggS capture pattern at byte ${at} (damaged or not a page boundary)`);
    if (file.length - at < HEADER_BYTES) return bad(`truncated Ogg file: ${where} has ${file.length - at} bytes, shorter than a page header`);
    const version = file[at + 4]!;
    if (version !== 0) return bad(`unsupported Ogg version ${version} in ${where}; only version 0 exists`);
    const flags = file[at + 5]!;
    if (flags & ~(OGG_CONTINUED | OGG_BOS | OGG_EOS)) return bad(`bad Ogg file: ${where} has unknown header flags 0x${flags.toString(16)}`);
    const granuleLo = v.getUint32(at + 6, true);
    const granuleHi = v.getUint32(at + 10, true);
    const pageSerial = v.getUint32(at + 14, true);
    const sequence = v.getUint32(at + 18, true);
    const storedCrc = v.getUint32(at + 22, true);
    const nsegs = file[at + 26]!;
    if (file.length - at < HEADER_BYTES + nsegs) return bad(`truncated Ogg file: the segment table of ${where} runs past the end of the file`);
    const lacing = file.subarray(at + HEADER_BYTES, at + HEADER_BYTES + nsegs);
    let bodyBytes = 0;
    for (const l of lacing) bodyBytes += l;
    const length = HEADER_BYTES + nsegs + bodyBytes;
    if (at + length > file.length) return bad(`truncated Ogg file: ${where} says ${length} bytes, only ${file.length - at} remain`);
    const crc = pageCrc(file, at, length);
    if (crc !== storedCrc) return bad(`corrupt Ogg file: the CRC of ${where} is 0x${storedCrc.toString(16).padStart(8, '0')}, its bytes give 0x${crc.toString(16).padStart(8, '0')}`);
    if (pages.length === 0) {
      if (!(flags & OGG_BOS)) return bad('bad Ogg file: the first page is not a beginning-of-stream page');
      if (flags & OGG_CONTINUED) return bad('bad Ogg file: the first page says it continues a packet');
      serial = pageSerial;
    } else {
      if (pageSerial !== serial) return bad(`unsupported Ogg file: ${where} belongs to a second logical stream (serial ${pageSerial}, the first is ${serial}); only files with one stream are played`);
      if (flags & OGG_BOS) return bad(`bad Ogg file: ${where} is a second beginning-of-stream page`);
      const expected = (pages[pages.length - 1]!.sequence + 1) >>> 0;
      if (sequence !== expected) return bad(`bad Ogg file: ${where} has sequence number ${sequence}, ${expected} was expected (a page is missing)`);
    }
    if (flags & OGG_CONTINUED && partial.length === 0) return bad(`bad Ogg file: ${where} says it continues a packet, but no packet is unfinished`);
    if (!(flags & OGG_CONTINUED) && partial.length > 0) return bad(`bad Ogg file: ${where} starts a new packet while the previous one is unfinished`);
    let granule: number;
    if (granuleLo === 0xffffffff && granuleHi === 0xffffffff) granule = -1;
    else if (granuleHi >= 0x200000) return bad(`bad Ogg file: ${where} has granule position ${(BigInt(granuleHi) << 32n) | BigInt(granuleLo)}, beyond any real length`);
    else granule = granuleHi * 2 ** 32 + granuleLo;
    const index = pages.length;
    let body = at + HEADER_BYTES + nsegs;
    let ending = 0;
    for (const l of lacing) {
      partial.push(file.subarray(body, body + l));
      body += l;
      if (l < 255) {
        packets.push({ data: concat(partial), page: index });
        partial = [];
        ending++;
      }
    }
    if (ending === 0 && granule !== -1) return bad(`bad Ogg file: ${where} has granule position ${granule}, but no packet ends on it (it must be -1)`);
    pages.push({ offset: at, granule, flags, sequence, packetsEnding: ending });
    if (flags & OGG_EOS) ended = true;
    at += length;
  }
  if (pages.length === 0) return bad('not an Ogg file: it is empty');
  if (!ended) return bad(`truncated Ogg file: no end-of-stream page after ${pages.length} page(s)`);
  if (partial.length > 0) return bad('truncated Ogg file: the last packet is unfinished at the end-of-stream page');
  return { ok: true, stream: { serial, pages, packets } };
}

function isCapture(file: Uint8Array, at: number): boolean {
  return file.length - at >= 4 && file[at] === 0x4f && file[at + 1] === 0x67 && file[at + 2] === 0x67 && file[at + 3] === 0x53;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** True when `file` starts like an Ogg file (the capture pattern); for choosing a probe. */
export const looksLikeOgg = (file: Uint8Array) => isCapture(file, 0);
