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
 * SRTP: either side (or both) may be SDES-SRTP. The rule then also carries the session keys
 * (derived in JS), the source's receive state for its SSRC (ROC, highest SEQ, the 128-packet
 * replay window) and the destination's send ROC; C authenticates, replay-checks and decrypts,
 * or encrypts and tags, and `take` writes the state back into the JS contexts, so JS carries on
 * with the exact replay window and ROC. SRTCP stays in JS (it does not take the rule: C does not
 * touch SRTCP state). Rekey: while the receiver keeps an old key (the 5 s after a rekey) no rule
 * is set for that source (the rekey is a command, so its rule was taken back already); its
 * packets go through JS's dual context, and the first packet JS forwards after the old key's
 * retirement sets the rule again with the new key.
 *
 * A rule is only set for: SRTP state that C can hold (replay window ≤ 128, no old key live, an
 * SSRC JS already has state for), local native sockets on both sides, a `connected` source, a
 * single `forward` target, a peer policy other than `latch` (the destination address is the
 * negotiated one), the source's current SSRC. Anything the
 * rule does not cover (another SSRC or payload type, RTCP, a refused source, events whose
 * clock rate differs) reaches JS, which takes the rule back before it touches the state.
 * Every command (except session.info) and every re-plan takes all rules back first; the
 * once-a-second housekeeping and session.info read them (counters, statistics, stream state).
 */
import type { CodecName, PeerPolicy } from '../../protocols/media/types.js';
import { F, NATIVE_WINDOW_WORDS, SRTP_KEYS, STATE_FIELDS } from './fastpath.js';
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
  /** The source's SSRC whose SRTP receive state C holds, or null (plain source). */
  srtpIn: number | null;
  srtpOut: boolean;
}

export class FastRules {
  /** By source endpoint id, and by destination endpoint id. */
  private readonly rules = new Map<string, Rule>();
  private readonly byDest = new Map<string, Rule>();
  private readonly state = new Float64Array(STATE_FIELDS);
  private readonly ptMap = new Int32Array(128);
  private readonly keys = new Uint8Array(SRTP_KEYS.bytes);
  /** Forwarded audio packets counted by C, not yet added to the session's metric. */
  forwarded = 0;

  constructor(private readonly peerPolicy: () => PeerPolicy) {}

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
    if (!sn || !dn || !stats || src.remoteSsrc === null || dest.latched) return false;
    if (out.lastSource !== src.sourceKey || out.lastTs === null) return false;
    const to = dn.remote;
    if (to.port === 0 || to.address === '0.0.0.0' || to.address === '::') return false;
    const srtpIn = src.nativeSrtpIn(src.remoteSsrc, Date.now(), NATIVE_WINDOW_WORDS * 32);
    const srtpOut = srtpIn === null ? null : dest.nativeSrtpOut();
    if (srtpIn === null || srtpOut === null) return false;
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
    let keys: Uint8Array | null = null;
    if (srtpIn !== 'plain' || srtpOut !== 'plain') {
      keys = this.keys;
      keys.fill(0);
      if (srtpIn !== 'plain') {
        keys[SRTP_KEYS.inTag] = srtpIn.tag;
        keys.set(srtpIn.keys, SRTP_KEYS.in);
        f[F.inRoc] = srtpIn.roc;
        f[F.inHighestSeq] = srtpIn.highestSeq;
        f[F.inWindow] = srtpIn.window;
        for (let w = 0; w < NATIVE_WINDOW_WORDS; w++) f[F.inW0 + w] = srtpIn.words[w] ?? 0;
      }
      if (srtpOut !== 'plain') {
        keys[SRTP_KEYS.outTag] = srtpOut.tag;
        keys.set(srtpOut.keys, SRTP_KEYS.out);
        f[F.outRoc] = srtpOut.roc;
        f[F.outLastSeq] = srtpOut.lastSeq;
      }
    }
    const acceptPort = this.peerPolicy() === 'strict' ? sn.remote.port : -1;
    const set = s.addon.setRule(s.rtp, d.rtp, f, to.address, to.port, sn.remote.address, acceptPort, map, keys);
    keys?.fill(0);
    if (!set) return false;
    const rule: Rule = { src, dest, srtpIn: srtpIn === 'plain' ? null : src.remoteSsrc, srtpOut: srtpOut !== 'plain' };
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
    if (!n || !n.addon.takeRule(n.rtp, this.state)) return;
    const f = this.state;
    this.apply(r, f);
    if (r.srtpIn !== null) {
      const words: number[] = [];
      for (let w = 0; w < Math.ceil(f[F.inWindow]! / 32); w++) words.push(f[F.inW0 + w]!);
      r.src.nativeSrtpInDone(r.srtpIn, f[F.inRoc]!, f[F.inHighestSeq]!, words);
    }
    if (r.srtpOut) r.dest.nativeSrtpOutDone(f[F.outRoc]!, f[F.outLastSeq]!);
  }

  private apply({ src, dest }: Rule, f: Float64Array): void {
    const inPackets = f[F.dPacketsIn]!;
    src.counters.packetsIn += inPackets;
    src.counters.bytesIn += f[F.dBytesIn]!;
    src.counters.malformed += f[F.dMalformed]!;
    src.counters.srtpAuthFailures += f[F.dAuthFailures]!;
    src.counters.srtpReplays += f[F.dReplays]!;
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
