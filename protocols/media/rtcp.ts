/**
 * RTCP (RFC 3550 §6.4): sender and receiver reports, compound-packet parsing, and the per-source
 * receive statistics behind report blocks (RFC 3550 A.1 sequence tracking, A.3 loss, A.8 jitter).
 *
 * Decisions:
 * - parseRtcp returns null for anything malformed: not version 2, a packet type outside the RTCP
 *   range 192..223 (RFC 5761), a length word that runs past the buffer, report blocks that do
 *   not fit their packet, or padding on any but the last packet (RFC 3550 A.2). It does not
 *   insist that the first packet is an SR or RR (reduced-size RTCP, RFC 5506, is allowed).
 *   Types other than SR/RR come back as { type: 'other', pt }; profile extensions are skipped.
 * - cumulativeLost is a signed 24-bit field: builders clamp to [-2^23, 2^23-1], the parser
 *   sign-extends. At most 31 report blocks per packet (the RC field); more is a RangeError.
 * - ReceiveStats follows A.1 without the probation step: SRTP authenticates sources and the
 *   SDP answer names them, so the first packet counts. Call newReceiveStats(seq) for the first
 *   packet of an SSRC and then updateReceiveStats for every packet, that first one included.
 *   A jump of more than MAX_DROPOUT is ignored unless the next packet follows it (restart).
 * - Jitter is kept as a float (the RFC 6.4.1 formula J += (|D| - J)/16, the first packet only
 *   seeds the transit time); the report carries floor(J). Transit arithmetic is modulo 2^32.
 * - ReceiveStats is plain JSON-safe data so an endpoint can be moved between threads.
 */
import { readU32, writeU32 } from './bytes.js';

export interface ReportBlock {
  ssrc: number;
  fractionLost: number;
  cumulativeLost: number;
  highestSeq: number;
  jitter: number;
  lsr: number;
  dlsr: number;
}

export type RtcpPacket =
  | { type: 'sr'; ssrc: number; ntpMsw: number; ntpLsw: number; rtpTimestamp: number; packetCount: number; octetCount: number; reports: ReportBlock[] }
  | { type: 'rr'; ssrc: number; reports: ReportBlock[] }
  | { type: 'other'; pt: number };

export const RTCP_PT_SR = 200;
export const RTCP_PT_RR = 201;
const MAX_REPORTS = 31;

export function buildSenderReport(o: {
  ssrc: number;
  ntpMsw: number;
  ntpLsw: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
  reports: ReportBlock[];
}): Buffer {
  const out = header(RTCP_PT_SR, o.reports, 20);
  writeU32(out, 4, o.ssrc);
  writeU32(out, 8, o.ntpMsw);
  writeU32(out, 12, o.ntpLsw);
  writeU32(out, 16, o.rtpTimestamp);
  writeU32(out, 20, o.packetCount);
  writeU32(out, 24, o.octetCount);
  writeBlocks(out, 28, o.reports);
  return out;
}

export function buildReceiverReport(o: { ssrc: number; reports: ReportBlock[] }): Buffer {
  const out = header(RTCP_PT_RR, o.reports, 0);
  writeU32(out, 4, o.ssrc);
  writeBlocks(out, 8, o.reports);
  return out;
}

function header(pt: number, reports: ReportBlock[], senderInfo: number): Buffer {
  if (reports.length > MAX_REPORTS) throw new RangeError(`RTCP: at most ${MAX_REPORTS} report blocks per packet`);
  const size = 8 + senderInfo + 24 * reports.length;
  const out = Buffer.allocUnsafe(size);
  out[0] = 0x80 | reports.length;
  out[1] = pt;
  out.writeUInt16BE(size / 4 - 1, 2);
  return out;
}

function writeBlocks(out: Buffer, off: number, reports: ReportBlock[]): void {
  for (const r of reports) {
    writeU32(out, off, r.ssrc);
    const lost = Math.max(-0x800000, Math.min(0x7fffff, Math.trunc(r.cumulativeLost)));
    writeU32(out, off + 4, ((r.fractionLost & 0xff) << 24) | (lost & 0xffffff));
    writeU32(out, off + 8, r.highestSeq);
    writeU32(out, off + 12, r.jitter);
    writeU32(out, off + 16, r.lsr);
    writeU32(out, off + 20, r.dlsr);
    off += 24;
  }
}

export function parseRtcp(compound: Uint8Array): RtcpPacket[] | null {
  const n = compound.length;
  if (n < 4) return null;
  const out: RtcpPacket[] = [];
  let off = 0;
  while (off < n) {
    if (off + 4 > n) return null;
    const b0 = compound[off] as number;
    const pt = compound[off + 1] as number;
    if (b0 >> 6 !== 2 || pt < 192 || pt > 223) return null;
    const size = ((((compound[off + 2] as number) << 8) | (compound[off + 3] as number)) + 1) * 4;
    if (off + size > n) return null;
    let body = size;
    if (b0 & 0x20) {
      if (off + size !== n) return null; // padding only on the last packet
      const pad = compound[off + size - 1] as number;
      if (pad === 0 || pad > size - 4) return null;
      body -= pad;
    }
    const rc = b0 & 0x1f;
    if (pt === RTCP_PT_SR) {
      if (28 + 24 * rc > body) return null;
      out.push({
        type: 'sr',
        ssrc: readU32(compound, off + 4),
        ntpMsw: readU32(compound, off + 8),
        ntpLsw: readU32(compound, off + 12),
        rtpTimestamp: readU32(compound, off + 16),
        packetCount: readU32(compound, off + 20),
        octetCount: readU32(compound, off + 24),
        reports: readBlocks(compound, off + 28, rc),
      });
    } else if (pt === RTCP_PT_RR) {
      if (8 + 24 * rc > body) return null;
      out.push({ type: 'rr', ssrc: readU32(compound, off + 4), reports: readBlocks(compound, off + 8, rc) });
    } else {
      out.push({ type: 'other', pt });
    }
    off += size;
  }
  return out;
}

function readBlocks(b: Uint8Array, off: number, count: number): ReportBlock[] {
  const reports: ReportBlock[] = [];
  for (let i = 0; i < count; i++, off += 24) {
    const lost = ((b[off + 5] as number) << 16) | ((b[off + 6] as number) << 8) | (b[off + 7] as number);
    reports.push({
      ssrc: readU32(b, off),
      fractionLost: b[off + 4] as number,
      cumulativeLost: lost & 0x800000 ? lost - 0x1000000 : lost,
      highestSeq: readU32(b, off + 8),
      jitter: readU32(b, off + 12),
      lsr: readU32(b, off + 16),
      dlsr: readU32(b, off + 20),
    });
  }
  return reports;
}

// ---- receive statistics (RFC 3550 A.1, A.3, A.8) ----

const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;
const SEQ_MOD = 0x10000;

/** Per remote SSRC; plain data. */
export interface ReceiveStats {
  /** First sequence number counted (A.1 base_seq). */
  baseSeq: number;
  /** Highest sequence number seen (16 bits). */
  maxSeq: number;
  /** Wraps of the sequence number, times 65536 (A.1 cycles). */
  cycles: number;
  /** After a big jump, the sequence number that would confirm a restart (65537: none). */
  badSeq: number;
  received: number;
  expectedPrior: number;
  receivedPrior: number;
  /** Last relative transit time (arrival - RTP timestamp, modulo 2^32), null before the first packet. */
  transit: number | null;
  /** Interarrival jitter in RTP timestamp units (float). */
  jitter: number;
}

export function newReceiveStats(firstSeq: number): ReceiveStats {
  const seq = firstSeq & 0xffff;
  // As A.1: max_seq = seq - 1, so nothing is expected before the first packet is counted
  // (cycles -65536 when that wraps: the first update brings it back to 0).
  return { baseSeq: seq, maxSeq: (seq - 1) & 0xffff, cycles: seq === 0 ? -SEQ_MOD : 0, badSeq: SEQ_MOD + 1, received: 0, expectedPrior: 0, receivedPrior: 0, transit: null, jitter: 0 };
}

/** Counts one packet. `arrivalRtpUnits` is the arrival time expressed in the stream's RTP clock. */
export function updateReceiveStats(s: ReceiveStats, seq: number, rtpTs: number, arrivalRtpUnits: number): void {
  seq &= 0xffff;
  const udelta = (seq - s.maxSeq) & 0xffff;
  if (udelta < MAX_DROPOUT) {
    if (seq < s.maxSeq) s.cycles += SEQ_MOD;
    s.maxSeq = seq;
  } else if (udelta <= SEQ_MOD - MAX_MISORDER) {
    if (seq !== s.badSeq) {
      s.badSeq = (seq + 1) & 0xffff;
      return; // a jump: not counted until the next packet confirms it
    }
    // Two sequential packets after a jump: the source restarted.
    s.baseSeq = seq;
    s.maxSeq = seq;
    s.cycles = 0;
    s.badSeq = SEQ_MOD + 1;
    s.received = 0;
    s.expectedPrior = 0;
    s.receivedPrior = 0;
  }
  // else: duplicate or reordered packet, counted as received.
  s.received++;

  const transit = (arrivalRtpUnits - rtpTs) | 0;
  if (s.transit !== null) {
    const d = Math.abs((transit - s.transit) | 0);
    s.jitter += (d - s.jitter) / 16;
  }
  s.transit = transit;
}

/** Extended highest sequence number received (A.3 extended_max). */
export function extendedHighestSeq(s: ReceiveStats): number {
  return s.cycles + s.maxSeq;
}

/** Packets expected and lost since the start (A.3). */
export function cumulativeCounts(s: ReceiveStats): { expected: number; lost: number } {
  const expected = extendedHighestSeq(s) - s.baseSeq + 1;
  return { expected, lost: expected - s.received };
}

/** A report block for this source; resets the interval counters behind fractionLost. */
export function reportBlockFor(s: ReceiveStats, ssrc: number, lsr: number, dlsr: number): ReportBlock {
  const { expected, lost } = cumulativeCounts(s);
  const expectedInterval = expected - s.expectedPrior;
  const receivedInterval = s.received - s.receivedPrior;
  s.expectedPrior = expected;
  s.receivedPrior = s.received;
  const lostInterval = expectedInterval - receivedInterval;
  const fractionLost = expectedInterval === 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval * 256) / expectedInterval);
  return {
    ssrc: ssrc >>> 0,
    fractionLost: Math.min(255, fractionLost),
    cumulativeLost: Math.max(-0x800000, Math.min(0x7fffff, lost)),
    highestSeq: Math.max(0, extendedHighestSeq(s)) >>> 0,
    jitter: Math.floor(s.jitter) >>> 0,
    lsr: lsr >>> 0,
    dlsr: dlsr >>> 0,
  };
}

