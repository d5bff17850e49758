/**
 * RTP (RFC 3550 §5.1) fixed header: parse, write, build, and the RFC 5761 RTP/RTCP demux test.
 *
 * Decisions:
 * - parseRtp accepts only version 2 and checks every length it reads (CSRCs, the header
 *   extension, the padding count); anything that does not fit is null, never an exception.
 * - A padding count of 0 or one that eats into the header is invalid (RFC 3550 A.1).
 * - writeRtpHeader always writes a 12-byte header (no CSRC, no extension, no padding): the
 *   bridge is the synchronisation source of everything it sends.
 * - rtpHeaderLength is exported for SRTP, which must find the payload without looking at the
 *   padding (the padding count is encrypted there).
 */
import { readU32, writeU32 } from './bytes.js';

export interface RtpHeader {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
  csrcCount: number;
  hasExtension: boolean;
  padding: boolean;
  /** Bytes including the CSRC list and the header extension. */
  headerLength: number;
  /** Payload bytes, excluding padding. */
  payloadLength: number;
}

export interface RtpHeaderFields {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
}

export const RTP_HEADER_BYTES = 12;

/** Length of the RTP header (fixed part, CSRCs, extension), or -1 if it is not a v2 header that fits. */
export function rtpHeaderLength(packet: Uint8Array): number {
  const n = packet.length;
  if (n < 12) return -1;
  const b0 = packet[0] as number;
  if (b0 >> 6 !== 2) return -1;
  let len = 12 + (b0 & 0x0f) * 4;
  if (b0 & 0x10) {
    if (len + 4 > n) return -1;
    len += 4 + (((packet[len + 2] as number) << 8) | (packet[len + 3] as number)) * 4;
  }
  return len <= n ? len : -1;
}

export function parseRtp(packet: Uint8Array): RtpHeader | null {
  const headerLength = rtpHeaderLength(packet);
  if (headerLength < 0) return null;
  const b0 = packet[0] as number;
  const b1 = packet[1] as number;
  const padding = (b0 & 0x20) !== 0;
  let payloadLength = packet.length - headerLength;
  if (padding) {
    const pad = packet[packet.length - 1] as number;
    if (pad === 0 || pad > payloadLength) return null;
    payloadLength -= pad;
  }
  return {
    marker: (b1 & 0x80) !== 0,
    payloadType: b1 & 0x7f,
    sequenceNumber: ((packet[2] as number) << 8) | (packet[3] as number),
    timestamp: readU32(packet, 4),
    ssrc: readU32(packet, 8),
    csrcCount: b0 & 0x0f,
    hasExtension: (b0 & 0x10) !== 0,
    padding,
    headerLength,
    payloadLength,
  };
}

/** Writes a 12-byte v2 header at out[0..12) and returns 12. Values are taken modulo their field width. */
export function writeRtpHeader(out: Uint8Array, h: RtpHeaderFields): number {
  if (out.length < 12) throw new RangeError('writeRtpHeader: output shorter than 12 bytes');
  out[0] = 0x80;
  out[1] = (h.marker ? 0x80 : 0) | (h.payloadType & 0x7f);
  out[2] = (h.sequenceNumber >>> 8) & 0xff;
  out[3] = h.sequenceNumber & 0xff;
  writeU32(out, 4, h.timestamp);
  writeU32(out, 8, h.ssrc);
  return 12;
}

export function buildRtp(h: RtpHeaderFields, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(12 + payload.length);
  writeRtpHeader(out, h);
  out.set(payload, 12);
  return out;
}

/** RFC 5761 §4: with rtcp-mux, a second byte in 192..223 (RTCP PT 64..95 with the marker bit) is RTCP. */
export function isRtcpPacket(packet: Uint8Array): boolean {
  if (packet.length < 2) return false;
  const b1 = packet[1] as number;
  return b1 >= 192 && b1 <= 223;
}

