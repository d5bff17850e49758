/**
 * One outgoing RTP stream: our SSRC, a continuous sequence number and timestamp whatever the
 * source (forwarded packets of one peer, then another, then mixed frames). Plain data, so an
 * endpoint's stream moves between threads with it. Pure.
 *
 * When the source changes (another endpoint, or the same peer with a new SSRC), the timestamp
 * offset is recomputed so that the first packet of the new source follows the last one sent
 * by one frame, and the marker bit is set (RFC 3551: first packet after a discontinuity).
 *
 * Telephone events (RFC 4733) carry the timestamp of the event's start, the same in every
 * packet of one event, which can be behind the last audio sent. So events never move the
 * stream's clock (`lastTs`, which RTCP SR reports and source changes follow) back, and an
 * event of a source we are not forwarding (its audio is mixed) does not count as a change of
 * source: it gets one timestamp, the next frame's, for all its packets, and the mixed frames
 * around it go on undisturbed.
 */

export interface OutboundState {
  ssrc: number;
  /** Next sequence number to send (16 bits). */
  seq: number;
  /** RTP timestamp of the last packet sent, or null before the first. */
  lastTs: number | null;
  /** Source (endpoint id + its SSRC) of the last forwarded packet, or 'mix'. */
  lastSource: string | null;
  /** Added to a forwarded packet's timestamp (mod 2^32). */
  tsOffset: number;
  packets: number;
  octets: number;
  /** The event being sent from a source we do not forward (`source@srcTs`), and its timestamp. */
  eventKey: string | null;
  eventTs: number;
}

export function newOutbound(ssrc: number, seq: number, ts: number): OutboundState {
  return { ssrc: ssrc >>> 0, seq: seq & 0xffff, lastTs: null, lastSource: null, tsOffset: ts >>> 0, packets: 0, octets: 0, eventKey: null, eventTs: 0 };
}

export interface Stamp {
  seq: number;
  ts: number;
  marker: boolean;
}

/**
 * Stamp for a forwarded packet from `source` with timestamp `srcTs`; `frameTicks` is the
 * destination codec's timestamp step for one frame (used to continue across a source change).
 */
export function stampForwarded(s: OutboundState, source: string, srcTs: number, marker: boolean, frameTicks: number): Stamp {
  let mark = marker;
  if (s.lastSource !== source) {
    if (s.lastTs !== null) s.tsOffset = (s.lastTs + frameTicks - srcTs) >>> 0;
    else s.tsOffset = (s.tsOffset - srcTs) >>> 0;
    s.lastSource = source;
    mark = true;
  }
  const ts = (srcTs + s.tsOffset) >>> 0;
  return advance(s, ts, mark);
}

/** Stamp for a frame we made (mix, tone): `frameTicks` after the last packet. */
export function stampGenerated(s: OutboundState, frameTicks: number): Stamp {
  const first = s.lastTs === null;
  const ts = first ? s.tsOffset : (s.lastTs! + frameTicks) >>> 0;
  const mark = s.lastSource !== 'mix';
  s.lastSource = 'mix';
  return advance(s, ts, mark || first);
}

/**
 * A telephone-event packet keeps the timestamp relation of the stream it interrupts: the
 * forwarded source's mapping when it comes from that source; when the stream is mixed, the
 * next frame's timestamp, kept for every packet of the event. From a source that is neither
 * (the first packet of a stream or of a new SSRC), it starts that source like audio would.
 * The marker is the caller's (RFC 4733: set on an event's first packet).
 */
export function stampEvent(s: OutboundState, source: string, srcTs: number, frameTicks: number): Stamp {
  if (s.lastSource === source) {
    const ts = (srcTs + s.tsOffset) >>> 0;
    return advance(s, ts, false, s.lastTs === null || isAfter(ts, s.lastTs));
  }
  if (s.lastSource !== 'mix' || s.lastTs === null) return stampForwarded(s, source, srcTs, false, frameTicks);
  const key = `${source}@${srcTs >>> 0}`;
  if (s.eventKey !== key) {
    s.eventKey = key;
    s.eventTs = (s.lastTs + frameTicks) >>> 0;
  }
  return advance(s, s.eventTs, false, false);
}

/** Take the next sequence number; `clock`: this packet's timestamp becomes the stream's. */
function advance(s: OutboundState, ts: number, marker: boolean, clock = true): Stamp {
  const seq = s.seq;
  s.seq = (s.seq + 1) & 0xffff;
  if (clock) s.lastTs = ts;
  s.packets++;
  return { seq, ts, marker };
}

/** RFC 1982 serial-number order on 32 bits: is `a` after `b`? */
function isAfter(a: number, b: number): boolean {
  const d = (a - b) >>> 0;
  return d !== 0 && d < 0x80000000;
}

export function countOctets(s: OutboundState, payloadBytes: number): void {
  s.octets += payloadBytes;
}
