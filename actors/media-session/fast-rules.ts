/**
 * A session's forwarding rules on the native packet path: which forwarded streams the addon
 * carries without JS, and the hand-over of their state in both directions.
 *
 * A rule is set on the source endpoint's RTP socket after JS has forwarded a packet of that
 * source to its only destination (so the destination's stream already follows this source:
 * `outbound.lastSource` is the source's key, the timestamp offset is worked out, the marker
 * of the switch was sent). Setting it gives C the destination's outgoing state (SSRC, next
 * sequence number, last timestamp, offset, packet and octet counts) and the source's receive
 * statistics; while it is set, C owns them. Taking it back (`take`) writes C's state into the
 * endpoints, so a stream that goes native -> JS -> native stays one continuous stream.
 *
 * A rule is only set for: plain RTP on both sides (no SRTP), local native sockets on both
 * sides, a `connected` source, a single `forward` target, a peer policy other than `latch`
 * (the destination address is the negotiated one), the source's current SSRC. Anything the
 * rule does not cover (another SSRC or payload type, RTCP, a refused source, events whose
 * clock rate differs) reaches JS, which takes the rule back before it touches the state.
 * Every command (except session.info) and every re-plan takes all rules back first; the
 * once-a-second housekeeping and session.info read them (counters, statistics, stream state).
 */
import type { CodecName } from '../../protocols/media/types.js';
import { F, STATE_FIELDS } from './fastpath.js';
import type { RtpEndpoint } from './rtp-endpoint.js';

export interface FastTarget {
  dest: RtpEndpoint;
  forward: boolean;
  codec: CodecName;
  pt: number;
}

interface Rule {
  src: RtpEndpoint;
  dest: RtpEndpoint;
}

export class FastRules {
  /** By source endpoint id, and by destination endpoint id. */
  private readonly rules = new Map<string, Rule>();
  private readonly byDest = new Map<string, Rule>();
  private readonly state = new Float64Array(STATE_FIELDS);
  private readonly ptMap = new Int32Array(128);
  /** Forwarded audio packets counted by C, not yet added to the session's metric. */
  forwarded = 0;

  constructor(private readonly peerPolicy: () => 'strict' | 'address' | 'latch') {}

  get size(): number {
    return this.rules.size;
  }

  /** After JS handled a packet of `src`: hand its stream to C when a rule can carry it. */
  maybeSet(src: RtpEndpoint, targets: readonly FastTarget[]): boolean {
    if (targets.length !== 1 || src.fastSource) return false;
    const t = targets[0]!;
    const dest = t.dest;
    const s = src.sockets?.native;
    const d = dest.sockets?.native;
    if (!t.forward || !s || !d || dest.fastDestination || src.state !== 'connected' || this.peerPolicy() === 'latch') return false;
    const sn = src.negotiated;
    const dn = dest.negotiated;
    const stats = src.stats;
    const out = dest.outbound;
    if (!sn || !dn || sn.secure || dn.secure || !stats || src.remoteSsrc === null || dest.latched) return false;
    if (out.lastSource !== src.sourceKey || out.lastTs === null) return false;
    const to = dn.remote;
    if (to.port === 0 || to.address === '0.0.0.0' || to.address === '::') return false;
    const map = this.ptMap;
    map.fill(-1);
    for (const c of sn.codecs) if (c.name === t.codec) map[c.pt] = t.pt;
    const teIn = sn.recvTelephoneEventPt ?? sn.telephoneEvent?.pt ?? null;
    const te = dn.telephoneEvent;
    const teFrom = sn.telephoneEvent?.clockRate ?? te?.clockRate;
    const f = this.state;
    f.fill(0);
    f[F.ssrc] = out.ssrc;
    f[F.seq] = out.seq;
    f[F.lastTs] = out.lastTs;
    f[F.tsOffset] = out.tsOffset;
    f[F.outPackets] = out.packets;
    f[F.outOctets] = out.octets;
    f[F.expectSsrc] = src.remoteSsrc;
    f[F.baseSeq] = stats.baseSeq;
    f[F.maxSeq] = stats.maxSeq;
    f[F.cycles] = stats.cycles;
    f[F.badSeq] = stats.badSeq;
    f[F.received] = stats.received;
    f[F.transit] = stats.transit ?? NaN;
    f[F.jitter] = stats.jitter;
    f[F.clock] = sn.sendCodec.clockRate;
    // An event whose duration must be rescaled, or for a destination without telephone-event, goes to JS.
    f[F.teIn] = teIn !== null && te && teFrom === te.clockRate ? teIn : -1;
    f[F.teOut] = te ? te.pt : -1;
    if (teIn !== null) map[teIn] = -1;
    const acceptPort = this.peerPolicy() === 'strict' ? sn.remote.port : -1;
    if (!s.addon.setRule(s.rtp, d.rtp, f, to.address, to.port, sn.remote.address, acceptPort, map)) return false;
    const rule = { src, dest };
    this.rules.set(src.id, rule);
    this.byDest.set(dest.id, rule);
    src.fastSource = true;
    dest.fastDestination = true;
    return true;
  }

  /** Take back the rule whose source (or destination) `ep` is, if any. */
  take(ep: RtpEndpoint, role: 'source' | 'destination'): void {
    const r = role === 'source' ? this.rules.get(ep.id) : this.byDest.get(ep.id);
    if (r) this.takeRule(r);
    else if (role === 'source') ep.fastSource = false;
    else ep.fastDestination = false;
  }

  takeAll(): void {
    for (const r of [...this.rules.values()]) this.takeRule(r);
  }

  /** Bring counters, statistics and stream state up to date; the rules stay. */
  readAll(): void {
    for (const r of this.rules.values()) {
      const n = r.src.sockets?.native;
      if (n && n.addon.readRule(n.rtp, this.state)) this.apply(r, this.state);
    }
  }

  private takeRule(r: Rule): void {
    this.rules.delete(r.src.id);
    this.byDest.delete(r.dest.id);
    r.src.fastSource = false;
    r.dest.fastDestination = false;
    const n = r.src.sockets?.native;
    if (n && n.addon.takeRule(n.rtp, this.state)) this.apply(r, this.state);
  }

  private apply({ src, dest }: Rule, f: Float64Array): void {
    const inPackets = f[F.dPacketsIn]!;
    src.counters.packetsIn += inPackets;
    src.counters.bytesIn += f[F.dBytesIn]!;
    src.counters.malformed += f[F.dMalformed]!;
    if (inPackets > 0) {
      src.lastPacketAt = f[F.lastAt]!;
      src.timedOut = false;
    }
    const stats = src.stats;
    if (stats) {
      stats.baseSeq = f[F.baseSeq]!;
      stats.maxSeq = f[F.maxSeq]!;
      stats.cycles = f[F.cycles]!;
      stats.badSeq = f[F.badSeq]!;
      stats.received = f[F.received]!;
      stats.transit = Number.isNaN(f[F.transit]!) ? null : f[F.transit]!;
      stats.jitter = f[F.jitter]!;
      if (f[F.dRestarts]! > 0) stats.expectedPrior = stats.receivedPrior = 0;
    }
    const out = dest.outbound;
    out.seq = f[F.seq]!;
    out.lastTs = f[F.lastTs]!;
    out.packets = f[F.outPackets]!;
    out.octets = f[F.outOctets]!;
    dest.counters.packetsOut += f[F.dPacketsOut]!;
    dest.counters.bytesOut += f[F.dBytesOut]!;
    this.forwarded += f[F.dForwarded]!;
  }
}
