/**
 * Merging classic libpcap files into one (the gateway's `POST /recordings/{sessionId}/merge`):
 * the rules of what may be merged and of the merged file, beside pcap.ts (the writer's format).
 * Any of the four classic magics is read (little- or big-endian, microsecond or nanosecond
 * timestamps); the inputs must share the link type and the timestamp precision, else the merge
 * is refused naming the file that differs. The merged file is little-endian, version 2.4, of
 * that precision and link type, with the largest snaplen of the inputs (every input record then
 * fits). Records are copied unchanged but for their header's byte order, and come out ordered
 * by time; records of equal time keep the order of the inputs (then of the file).
 *
 * Incremental, for streaming: `PcapSplitter` takes a file's bytes in any pieces and gives its
 * records; `pickEarliest` chooses which input's head goes next. `mergePcaps` is the same over
 * whole buffers. A file cut short mid-record gives its whole records and reports the cut
 * (`partialBytes`); a record longer than any snaplen allows, or whose captured length exceeds
 * its original length, is a corrupt file (PcapFormatError). Pure: no I/O.
 */

/** Longest record any classic pcap reader accepts (libpcap's MAXIMUM_SNAPLEN). */
export const PCAP_MAX_RECORD = 262_144;

const MAGIC_US = 0xa1b2c3d4;
const MAGIC_NS = 0xa1b23c4d;

export interface PcapFileHeader {
  littleEndian: boolean;
  nanoseconds: boolean;
  versionMajor: number;
  versionMinor: number;
  snaplen: number;
  linktype: number;
}

export class PcapFormatError extends Error {
  override name = 'PcapFormatError';
}

/** The 24-byte global header of `b` (its first 24 bytes), or why it is not one. */
export function parsePcapHeader(b: Uint8Array): PcapFileHeader | { error: string } {
  if (b.length < 24) return { error: `${b.length} bytes is shorter than a pcap global header (24)` };
  const v = new DataView(b.buffer, b.byteOffset, 24);
  const le = v.getUint32(0, true);
  const be = v.getUint32(0, false);
  let littleEndian: boolean;
  let nanoseconds: boolean;
  if (le === MAGIC_US || le === MAGIC_NS) {
    littleEndian = true;
    nanoseconds = le === MAGIC_NS;
  } else if (be === MAGIC_US || be === MAGIC_NS) {
    littleEndian = false;
    nanoseconds = be === MAGIC_NS;
  } else if (le === 0x0a0d0d0a) {
    return { error: 'pcapng files are not merged (only classic pcap)' };
  } else {
    return { error: `magic 0x${be.toString(16).padStart(8, '0')} is not a classic pcap magic` };
  }
  const versionMajor = v.getUint16(4, littleEndian);
  const versionMinor = v.getUint16(6, littleEndian);
  if (versionMajor !== 2) return { error: `pcap version ${versionMajor}.${versionMinor} is not 2.x` };
  const snaplen = v.getUint32(16, littleEndian);
  // The link type's high bits may carry FCS flags (pcap-linktype): the low 16 bits are the type.
  const linktype = v.getUint32(20, littleEndian) & 0xffff;
  if (snaplen === 0) return { error: 'snaplen 0 is not a valid pcap header' };
  return { littleEndian, nanoseconds, versionMajor, versionMinor, snaplen, linktype };
}

/**
 * The merged file's global header for `headers` (named by `names` in errors), or why they do
 * not merge: a different link type or timestamp precision than the first file's.
 */
export function mergedHeader(headers: PcapFileHeader[], names: string[]): { ok: true; bytes: Uint8Array; header: PcapFileHeader } | { ok: false; error: string } {
  if (headers.length === 0) return { ok: false, error: 'nothing to merge' };
  const first = headers[0]!;
  let snaplen = first.snaplen;
  for (let i = 1; i < headers.length; i++) {
    const h = headers[i]!;
    if (h.linktype !== first.linktype) return { ok: false, error: `${names[i]} has link type ${h.linktype}, ${names[0]} has ${first.linktype}: files of different link types do not merge` };
    if (h.nanoseconds !== first.nanoseconds) return { ok: false, error: `${names[i]} has ${precision(h)} timestamps, ${names[0]} has ${precision(first)}: they do not merge` };
    snaplen = Math.max(snaplen, h.snaplen);
  }
  const header: PcapFileHeader = { littleEndian: true, nanoseconds: first.nanoseconds, versionMajor: 2, versionMinor: 4, snaplen, linktype: first.linktype };
  const bytes = new Uint8Array(24);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, first.nanoseconds ? MAGIC_NS : MAGIC_US, true);
  v.setUint16(4, 2, true);
  v.setUint16(6, 4, true);
  v.setUint32(16, snaplen, true);
  v.setUint32(20, first.linktype, true);
  return { ok: true, bytes, header };
}

const precision = (h: PcapFileHeader) => (h.nanoseconds ? 'nanosecond' : 'microsecond');

/** One record: its time (seconds, and the fraction in the file's unit) and its bytes, header little-endian. */
export interface PcapRecordBytes {
  sec: number;
  frac: number;
  bytes: Uint8Array;
}

/**
 * A file's records from its bytes in pieces: `push` what came, `shift` the records whole so
 * far, `finish` at the end. The global header is read first (`header`, or a PcapFormatError
 * from the first `shift` after 24 bytes that are not one).
 */
export class PcapSplitter {
  header: PcapFileHeader | null = null;
  private pieces: Uint8Array[] = [];
  private buffered = 0;
  /** Bytes taken so far, for error messages. */
  private offset = 0;

  constructor(private readonly name: string) {}

  push(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.pieces.push(piece);
    this.buffered += piece.length;
  }

  /** Read the global header once 24 bytes are in; null before. Throws PcapFormatError for one that is not. */
  readHeader(): PcapFileHeader | null {
    if (this.header) return this.header;
    if (this.buffered < 24) return null;
    const h = parsePcapHeader(this.take(24));
    if ('error' in h) throw new PcapFormatError(`${this.name}: ${h.error}`);
    this.header = h;
    return h;
  }

  /** The next whole record, or null until more bytes come. */
  shift(): PcapRecordBytes | null {
    const h = this.readHeader();
    if (!h || this.buffered < 16) return null;
    const head = this.peek(16);
    const v = new DataView(head.buffer, head.byteOffset, 16);
    const sec = v.getUint32(0, h.littleEndian);
    const frac = v.getUint32(4, h.littleEndian);
    const incl = v.getUint32(8, h.littleEndian);
    const orig = v.getUint32(12, h.littleEndian);
    const at = this.offset;
    if (incl > Math.max(h.snaplen, PCAP_MAX_RECORD)) throw new PcapFormatError(`${this.name}: the record at byte ${at} claims ${incl} bytes, more than the snaplen ${h.snaplen} allows`);
    if (incl > orig) throw new PcapFormatError(`${this.name}: the record at byte ${at} has ${incl} captured bytes of an original ${orig}`);
    if (frac >= (h.nanoseconds ? 1e9 : 1e6)) throw new PcapFormatError(`${this.name}: the record at byte ${at} has a sub-second part ${frac} out of range`);
    if (this.buffered < 16 + incl) return null;
    const bytes = this.take(16 + incl);
    const out = new DataView(bytes.buffer, bytes.byteOffset, 16);
    out.setUint32(0, sec, true);
    out.setUint32(4, frac, true);
    out.setUint32(8, incl, true);
    out.setUint32(12, orig, true);
    return { sec, frac, bytes };
  }

  /** At the end of the file: bytes left over that are not a whole record (0 for a whole file). Throws for a file without a whole header. */
  finish(): { partialBytes: number } {
    if (!this.readHeader()) throw new PcapFormatError(`${this.name}: ${this.buffered} bytes is shorter than a pcap global header (24)`);
    return { partialBytes: this.buffered };
  }

  /** The first n buffered bytes, as a copy of their own (the pieces are not kept). */
  private take(n: number): Uint8Array {
    const p0 = this.pieces[0]!;
    // A copy: the record's header is rewritten in place, and the caller's pieces are not ours to change.
    // (Uint8Array's slice: a Buffer's slice is a view.)
    const own = p0.length >= n ? Uint8Array.prototype.slice.call(p0, 0, n) : this.peek(n);
    let left = n;
    while (left > 0) {
      const p = this.pieces[0]!;
      if (p.length <= left) {
        this.pieces.shift();
        left -= p.length;
      } else {
        this.pieces[0] = p.subarray(left);
        left = 0;
      }
    }
    this.buffered -= n;
    this.offset += n;
    return own;
  }

  /** The first n buffered bytes (a view when they are in one piece). */
  private peek(n: number): Uint8Array {
    const p0 = this.pieces[0]!;
    if (p0.length >= n) return p0.subarray(0, n);
    const out = new Uint8Array(n);
    let at = 0;
    for (const p of this.pieces) {
      const k = Math.min(p.length, n - at);
      out.set(p.subarray(0, k), at);
      at += k;
      if (at === n) break;
    }
    return out;
  }
}

/**
 * Which head goes next: the index of the earliest record of `heads` (the first such index on a
 * tie, so inputs keep their order), skipping empty (null) heads; -1 when all are empty.
 */
export function pickEarliest(heads: ReadonlyArray<PcapRecordBytes | null>): number {
  let best = -1;
  for (let i = 0; i < heads.length; i++) {
    const h = heads[i];
    if (!h) continue;
    const b = best >= 0 ? heads[best]! : null;
    if (!b || h.sec < b.sec || (h.sec === b.sec && h.frac < b.frac)) best = i;
  }
  return best;
}

export type MergeResult = { ok: true; bytes: Uint8Array; records: number; partial: string[] } | { ok: false; error: string };

/** Merge whole files (named by `names`): the streaming rules above over buffers. */
export function mergePcaps(files: Uint8Array[], names: string[] = files.map((_, i) => `file ${i + 1}`)): MergeResult {
  try {
    const splitters = files.map((f, i) => {
      const s = new PcapSplitter(names[i]!);
      s.push(f);
      return s;
    });
    const headers = splitters.map((s) => {
      const h = s.readHeader();
      if (!h) s.finish(); // throws: shorter than a header
      return h!;
    });
    const merged = mergedHeader(headers, names);
    if (!merged.ok) return merged;
    const out: Uint8Array[] = [merged.bytes];
    const heads = splitters.map((s) => s.shift());
    let records = 0;
    for (let i = pickEarliest(heads); i >= 0; i = pickEarliest(heads)) {
      out.push(heads[i]!.bytes);
      records++;
      heads[i] = splitters[i]!.shift();
    }
    const partial = splitters.flatMap((s, i) => (s.finish().partialBytes > 0 ? [names[i]!] : []));
    const total = out.reduce((n, b) => n + b.length, 0);
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const b of out) {
      bytes.set(b, at);
      at += b.length;
    }
    return { ok: true, bytes, records, partial };
  } catch (err) {
    if (err instanceof PcapFormatError) return { ok: false, error: err.message };
    throw err;
  }
}
