/**
 * A plain RTP or SDES-SRTP endpoint: its sockets (local, or relayed from the thread that
 * opened them), its negotiation, SRTP contexts, inbound checks (peer policy, SRTP, state) and
 * outbound packets. Routing is the session's; this class knows one leg.
 *
 * For the native packet path it hands out and takes back the SRTP state a rule carries: the
 * session keys and tag length of each side, the receive state (ROC, highest SEQ, replay window)
 * of the peer's SSRC and the send ROC of our SSRC. It goes through the contexts' snapshots, so
 * the protocols/ code stays the one reference of that state.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import type { CodecName, Direction, PeerPolicy } from '../../protocols/media/types.js';
import { answerOffer, answerReinvite, acceptAnswer, createOffer, createRekeyOffer, type LocalMedia, type Negotiated, type PendingOffer } from '../../protocols/media/sdp/index.js';
import { SrtpReceiveContext, SrtpReceiver, SrtpSendContext, srtpTagLength, type SrtpFailure } from '../../protocols/media/srtp/index.js';
import { deriveKey } from '../../protocols/media/srtp/kdf.js';
import { isRtcpPacket, parseRtp, writeRtpHeader, type RtpHeader } from '../../protocols/media/rtp.js';
import { buildReceiverReport, buildSenderReport, newReceiveStats, parseRtcp, reportBlockFor, updateReceiveStats, type ReceiveStats } from '../../protocols/media/rtcp.js';
import { newOutbound, type OutboundState, type Stamp } from '../../protocols/media/outbound.js';
import { intersectDirections } from '../../protocols/media/routing.js';
import type { EndpointInfo } from '../../protocols/media/results.js';
import type { SocketPair } from './socket-pair.js';
import type { RtpEndpointSnapshot, RtpState } from './snapshot.js';
import type { Tap } from './recording.js';

export type Outcome<T> = { ok: true; value: T } | { ok: false; message: string };

/** Why an endpoint closed: `endpoint.remove` (or a failed create), its session closed, or it moved to another session. */
export type EndpointCloseReason = 'removed' | 'session closed' | 'transferred';

/** The session's face for its RTP endpoints. */
export interface RtpHost {
  readonly actorId: string;
  readonly peerPolicy: PeerPolicy;
  readonly mediaTimeoutMs: number;
  stateChanged(ep: RtpEndpoint, previous: RtpState): void;
  media(ep: RtpEndpoint, header: RtpHeader, payload: Uint8Array): void;
  relayOut(ep: RtpEndpoint, data: Uint8Array, address: string, port: number, rtcp: boolean): void;
  /** A relayed endpoint closed: its home session may close the sockets it kept for it. */
  releaseRelay(ep: RtpEndpoint): void;
  /** Take back from the native path the rule this endpoint is the source (destination) of. */
  takeFast(ep: RtpEndpoint, role: 'source' | 'destination'): void;
}

const COUNTERS = ['packetsIn', 'bytesIn', 'packetsOut', 'bytesOut', 'srtpAuthFailures', 'srtpReplays', 'policyDrops', 'malformed', 'rtcpIn', 'rtcpOut', 'notSourceDrops'] as const;
export type CounterName = (typeof COUNTERS)[number];

export class RtpEndpoint {
  readonly type = 'rtp' as const;
  state: RtpState;
  requestedDirection: Direction;
  override: Direction | null;
  local: LocalMedia;
  /** Set while a recording hears this endpoint (recording.ts): each decrypted datagram goes to it. */
  tap: Tap | null = null;
  negotiated: Negotiated | null;
  pending: PendingOffer | null;
  latched: { address: string; port: number } | null;
  lastPacketAt: number | null;
  negotiatedAt: number | null;
  timedOut: boolean;
  outbound: OutboundState;
  counters: Record<CounterName, number>;
  home: { actor: string; threadId: number };
  /** Local sockets, or null when they stayed on another thread (media is relayed). */
  sockets: SocketPair | null;
  private send: SrtpSendContext | null;
  private recv: SrtpReceiver | null;
  /** Receive statistics of the peer's stream (owned by the native path while a rule is set). */
  stats: ReceiveStats | null = null;
  remoteSsrc: number | null = null;
  /** A native forwarding rule carries this endpoint's packets (source) or its outgoing stream (destination). */
  fastSource = false;
  fastDestination = false;
  private lastSr: { ntpMid: number; at: number } | null = null;
  /** `<endpoint id>:<peer SSRC>`: names the source of forwarded packets (a new SSRC is a new source). */
  sourceKey = '';
  /** Set once, by close(): a closed endpoint refuses every command and sends nothing. */
  private closedBy: EndpointCloseReason | null = null;

  constructor(readonly id: string, private readonly host: RtpHost, s: RtpEndpointSnapshot, sockets: SocketPair | null) {
    this.state = s.state;
    this.requestedDirection = s.requestedDirection;
    this.override = s.override;
    this.local = s.local;
    this.negotiated = s.negotiated;
    this.pending = s.pending;
    this.latched = s.latched;
    this.lastPacketAt = s.lastPacketAt;
    this.negotiatedAt = s.negotiatedAt;
    this.timedOut = s.timedOut;
    this.outbound = s.outbound;
    this.counters = { ...Object.fromEntries(COUNTERS.map((c) => [c, 0])), ...s.counters } as Record<CounterName, number>;
    this.home = s.home;
    this.send = s.srtpSend ? SrtpSendContext.restore(s.srtpSend) : null;
    this.recv = s.srtpRecv ? SrtpReceiver.restore(s.srtpRecv) : null;
    this.sockets = sockets;
    if (sockets) this.attach(sockets);
  }

  /** A fresh endpoint on freshly opened local sockets. */
  static fresh(id: string, host: RtpHost, local: LocalMedia, sockets: SocketPair, direction: Direction): RtpEndpoint {
    const snapshot: RtpEndpointSnapshot = {
      kind: 'rtp',
      id,
      state: 'new',
      requestedDirection: direction,
      override: null,
      local,
      negotiated: null,
      pending: null,
      srtpSend: null,
      srtpRecv: null,
      outbound: newOutbound(randomInt(1, 0xffffffff), randomInt(0, 0x10000), randomInt(0, 0xffffffff)),
      latched: null,
      lastPacketAt: null,
      negotiatedAt: null,
      timedOut: false,
      counters: {},
      home: { actor: host.actorId, threadId },
    };
    return new RtpEndpoint(id, host, snapshot, sockets);
  }

  attach(sockets: SocketPair): void {
    this.sockets = sockets;
    this.home = { actor: this.host.actorId, threadId };
    sockets.onPacket = (data, address, port, rtcp) => this.receive(data, address, port, rtcp);
  }

  /** The codec of a received payload type (the last one asked is remembered). */
  codecFor(pt: number): CodecName | null {
    if (pt === this.lastPt) return this.lastCodec;
    const c = this.negotiated?.codecs.find((x) => x.pt === pt);
    this.lastPt = pt;
    this.lastCodec = c ? c.name : null;
    return this.lastCodec;
  }
  private lastPt = -1;
  private lastCodec: CodecName | null = null;

  /** Direction in force: the manual override, else what SDP negotiated (peer's point of view). */
  get direction(): Direction {
    return this.override ?? this.negotiated?.peerDirection ?? this.requestedDirection;
  }

  get secure(): boolean {
    return this.negotiated?.secure ?? false;
  }

  // ---- negotiation -------------------------------------------------------------------------

  private newKey = (): Uint8Array => randomBytes(30);

  fromOffer(sdp: string): Outcome<string> {
    if (this.closedBy) return this.refuseClosed();
    const r = answerOffer(sdp, { local: this.local, direction: this.requestedDirection, newKey: this.newKey });
    if (!r.ok) return { ok: false, message: r.error };
    this.commit(r.value.negotiated);
    return { ok: true, value: r.value.sdp };
  }

  createOffer(o: { srtp: boolean; srtpOptional: boolean; codecs?: readonly CodecName[] }): Outcome<string> {
    if (this.closedBy) return this.refuseClosed();
    const r = createOffer({ local: this.local, direction: this.requestedDirection, srtp: o.srtp, srtpOptional: o.srtpOptional, codecs: o.codecs, newKey: this.newKey });
    if (!r.ok) return { ok: false, message: r.error };
    this.pending = r.value;
    return { ok: true, value: r.value.sdp };
  }

  acceptAnswer(sdp: string, now: number): Outcome<null> {
    if (this.closedBy) return this.refuseClosed();
    if (!this.pending) return { ok: false, message: `endpoint ${this.id} has no outstanding offer to answer` };
    const r = acceptAnswer(this.pending, sdp);
    if (!r.ok) return { ok: false, message: r.error };
    if (this.negotiated?.secure && !r.value.secure) return { ok: false, message: 'the answer would downgrade a secure endpoint to plain RTP' };
    const previous = this.negotiated;
    this.pending = null;
    this.commit(r.value, previous, now);
    return { ok: true, value: null };
  }

  reinvite(sdp: string, now: number): Outcome<string> {
    if (this.closedBy) return this.refuseClosed();
    if (!this.negotiated) return { ok: false, message: `endpoint ${this.id} has no established negotiation to re-invite` };
    if (this.pending) return { ok: false, message: `endpoint ${this.id} has an unanswered offer; accept its answer first` };
    this.local = { ...this.local, sessionVersion: this.local.sessionVersion + 1 };
    const r = answerReinvite(this.negotiated, sdp, { local: this.local, direction: this.requestedDirection, newKey: this.newKey });
    if (!r.ok) {
      this.local = { ...this.local, sessionVersion: this.local.sessionVersion - 1 };
      return { ok: false, message: r.error };
    }
    const { negotiated, changes } = r.value;
    if (changes.recvKeyChanged && negotiated.recvKey && this.recv) {
      this.recv.rekey(new SrtpReceiveContext(negotiated.recvKey.suite, negotiated.recvKey.keySalt), now);
    } else if (changes.resetReceiveState && this.recv) {
      this.recv.resetReplay();
    }
    this.negotiated = negotiated;
    this.lastPt = -1;
    if (changes.remote) {
      this.latched = null;
      this.sockets?.disconnectRtp(); // the peer moved: listen to whoever sends again
    }
    this.remoteSsrc = null;
    this.stats = null;
    this.timedOut = false;
    this.negotiatedAt = now;
    return { ok: true, value: r.value.sdp };
  }

  rekey(): Outcome<string> {
    if (this.closedBy) return this.refuseClosed();
    if (!this.negotiated) return { ok: false, message: `endpoint ${this.id} is not negotiated yet` };
    if (!this.negotiated.secure) return { ok: false, message: `endpoint ${this.id} uses plain RTP; there is no SRTP key to renew` };
    if (this.pending) return { ok: false, message: `endpoint ${this.id} has an unanswered offer` };
    this.local = { ...this.local, sessionVersion: this.local.sessionVersion + 1 };
    const r = createRekeyOffer(this.negotiated, { local: this.local, direction: this.requestedDirection, newKey: this.newKey });
    if (!r.ok) return { ok: false, message: r.error };
    this.pending = r.value;
    return { ok: true, value: r.value.sdp };
  }

  /** Install a negotiation; SRTP contexts follow the keys (same key: contexts kept, rule 9). */
  private commit(n: Negotiated, previous: Negotiated | null = null, now = Date.now()): void {
    if (n.sendKey) {
      const same = previous?.sendKey && sameKey(previous.sendKey.keySalt, n.sendKey.keySalt);
      if (!same || !this.send) this.send = new SrtpSendContext(n.sendKey.suite, n.sendKey.keySalt);
    } else this.send = null;
    if (n.recvKey) {
      const same = previous?.recvKey && sameKey(previous.recvKey.keySalt, n.recvKey.keySalt);
      if (!this.recv) this.recv = new SrtpReceiver(new SrtpReceiveContext(n.recvKey.suite, n.recvKey.keySalt));
      else if (!same) this.recv.rekey(new SrtpReceiveContext(n.recvKey.suite, n.recvKey.keySalt), now);
    } else this.recv = null;
    if (previous && (previous.remote.address !== n.remote.address || previous.remote.port !== n.remote.port)) this.sockets?.disconnectRtp();
    this.negotiated = n;
    this.lastPt = -1;
    this.negotiatedAt = now;
    this.timedOut = false;
  }

  // ---- inbound -----------------------------------------------------------------------------

  receive(data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    const n = this.negotiated;
    if (!n || this.closedBy) {
      this.counters.policyDrops++;
      return;
    }
    if (!this.allowed(n, address, port, rtcp)) {
      this.counters.policyDrops++;
      return;
    }
    const now = Date.now();
    // RTCP on the RTP port is taken as RTCP whether or not rtcp-mux was negotiated (RFC 5761
    // demultiplexing by payload type): it is never counted or routed as media.
    if (rtcp || isRtcpPacket(data)) return this.receiveRtcp(data, address, port, rtcp, now);
    // A packet the native rule did not take: the rule's state comes back before JS uses it.
    if (this.fastSource) this.host.takeFast(this, 'source');
    let packet: Uint8Array = data;
    if (this.recv) {
      const r = this.recv.unprotectRtp(data, now);
      if (typeof r === 'string') return this.srtpRefused(r);
      packet = r;
    }
    const h = parseRtp(packet);
    if (!h) {
      this.counters.malformed++;
      return;
    }
    if (this.host.peerPolicy === 'latch') {
      if (this.latched?.address !== address || this.latched.port !== port) this.latched = { address, port };
    } else if (this.sockets && !this.sockets.connected && port === n.remote.port && address === n.remote.address) {
      // The peer sends from the address and port it announced (symmetric RTP): connect the
      // socket to it, so each send skips the address lookup and the kernel's route lookup.
      this.sockets.connectRtp(address, port);
    }
    this.counters.packetsIn++;
    this.counters.bytesIn += packet.length;
    this.lastPacketAt = now;
    this.timedOut = false;
    if (this.remoteSsrc !== h.ssrc || !this.stats) {
      this.remoteSsrc = h.ssrc;
      this.sourceKey = `${this.id}:${h.ssrc}`;
      this.stats = newReceiveStats(h.sequenceNumber);
    }
    const clock = n.sendCodec.clockRate;
    updateReceiveStats(this.stats, h.sequenceNumber, h.timestamp, Math.round((now * clock) / 1000));
    if (this.state !== 'connected') this.setState('connected');
    if (this.tap) this.tap(packet, address, port, false, now);
    this.host.media(this, h, packet.subarray(h.headerLength, h.headerLength + h.payloadLength));
  }

  /** Count a packet SRTP refused: a forgery or wrong key, a replay, or a packet too short to be SRTP. */
  private srtpRefused(r: SrtpFailure): void {
    if (r === 'auth') this.counters.srtpAuthFailures++;
    else if (r === 'replay' || r === 'too-old') this.counters.srtpReplays++;
    else this.counters.malformed++;
  }

  private allowed(n: Negotiated, address: string, port: number, rtcp: boolean): boolean {
    const policy = this.host.peerPolicy;
    if (policy === 'latch') return true;
    if (!rtcp && address === n.remote.address && port === n.remote.port) return true; // the usual case
    const wantAddress = rtcp ? n.remote.rtcpAddress : n.remote.address;
    if (!sameAddress(address, wantAddress)) return false;
    if (policy === 'address') return true;
    return port === (rtcp ? n.remote.rtcpPort : n.remote.port);
  }

  private receiveRtcp(data: Uint8Array, address: string, port: number, rtcp: boolean, now: number): void {
    let packet: Uint8Array = data;
    if (this.recv) {
      const r = this.recv.unprotectRtcp(data, now);
      if (typeof r === 'string') return this.srtpRefused(r);
      packet = r;
    }
    const parsed = parseRtcp(packet);
    if (!parsed) {
      this.counters.malformed++;
      return;
    }
    this.counters.rtcpIn++;
    if (this.tap) this.tap(packet, address, port, rtcp, now);
    for (const p of parsed) {
      if (p.type === 'sr') this.lastSr = { ntpMid: ((p.ntpMsw & 0xffff) << 16 | (p.ntpLsw >>> 16)) >>> 0, at: now };
    }
  }

  setState(next: RtpState): void {
    if (next === this.state) return;
    const previous = this.state;
    this.state = next;
    this.host.stateChanged(this, previous);
  }

  /** Called about once a second: true when media has just timed out. */
  checkTimeout(now: number): boolean {
    if (!this.negotiated || this.timedOut || this.direction === 'inactive' || this.direction === 'recvonly') return false;
    const since = Math.max(this.lastPacketAt ?? 0, this.negotiatedAt ?? 0);
    if (now - since < this.host.mediaTimeoutMs) return false;
    this.timedOut = true;
    if (this.state === 'connected') this.setState('disconnected');
    return true;
  }

  // ---- outbound ----------------------------------------------------------------------------

  /** Send one RTP packet with our SSRC and the given stamp and payload type. */
  sendRtp(pt: number, stamp: Stamp, payload: Uint8Array): void {
    const n = this.negotiated;
    if (!n || this.closedBy) return;
    if (this.fastDestination) this.host.takeFast(this, 'destination');
    // One buffer per packet: the socket keeps it until the datagram is sent.
    const plain = Buffer.allocUnsafe(12 + payload.length);
    writeRtpHeader(plain, { marker: stamp.marker, payloadType: pt, sequenceNumber: stamp.seq, timestamp: stamp.ts, ssrc: this.outbound.ssrc });
    plain.set(payload, 12);
    let packet: Uint8Array = plain;
    if (this.send) packet = this.send.protectRtp(packet);
    this.counters.packetsOut++;
    this.counters.bytesOut += payload.length;
    this.outbound.octets += payload.length;
    this.transmit(packet, false);
  }

  /** One RTCP report (SR once we have sent, else RR), with a block for the peer's stream. */
  sendReport(now: number): void {
    const n = this.negotiated;
    if (!n || this.closedBy || this.direction === 'inactive') return;
    const reports = [];
    if (this.stats && this.remoteSsrc !== null) {
      const lsr = this.lastSr?.ntpMid ?? 0;
      const dlsr = this.lastSr ? Math.round(((now - this.lastSr.at) / 1000) * 65536) : 0;
      reports.push(reportBlockFor(this.stats, this.remoteSsrc, lsr, dlsr));
    }
    const ntpSeconds = Math.floor(now / 1000) + 2_208_988_800;
    const ntpFrac = Math.floor(((now % 1000) / 1000) * 0x100000000);
    let packet: Uint8Array =
      this.outbound.packets > 0
        ? buildSenderReport({
            ssrc: this.outbound.ssrc,
            ntpMsw: ntpSeconds >>> 0,
            ntpLsw: ntpFrac >>> 0,
            rtpTimestamp: this.outbound.lastTs ?? 0,
            packetCount: this.outbound.packets >>> 0,
            octetCount: this.outbound.octets >>> 0,
            reports,
          })
        : buildReceiverReport({ ssrc: this.outbound.ssrc, reports });
    if (this.send) packet = this.send.protectRtcp(packet);
    this.counters.rtcpOut++;
    this.transmit(packet, true);
  }

  private transmit(packet: Uint8Array, rtcp: boolean): void {
    const n = this.negotiated!;
    let address = rtcp ? n.remote.rtcpAddress : n.remote.address;
    let port = rtcp && !n.remote.rtcpMux ? n.remote.rtcpPort : n.remote.port;
    if (this.latched && !rtcp) ({ address, port } = this.latched);
    if (port === 0 || address === '0.0.0.0' || address === '::') return;
    const viaRtcpSocket = rtcp && !n.remote.rtcpMux;
    if (this.sockets) this.sockets.send(packet, address, port, viaRtcpSocket);
    else this.host.relayOut(this, packet, address, port, viaRtcpSocket);
  }

  // ---- the native packet path's SRTP state -------------------------------------------------

  private readonly keyCache = new Map<string, Uint8Array>();

  /**
   * The receive side of a native rule for `ssrc`: 'plain' without SRTP; null when it cannot be
   * native (an old key still live after a rekey, no state for that SSRC yet, a window over
   * `maxWindow`); else the tag length, session keys and the SSRC's replay state.
   */
  nativeSrtpIn(ssrc: number, now: number, maxWindow: number): 'plain' | NativeSrtpIn | null {
    if (!this.recv) return 'plain';
    if (this.recv.expire(now)) return null;
    const snap = this.recv.current.snapshot();
    const st = snap.rtp.find((x) => x.ssrc === ssrc);
    if (!st || snap.replayWindow > maxWindow) return null;
    return { tag: srtpTagLength(snap.suite), keys: sessionKeys(snap.keySalt, this.keyCache), roc: st.roc, highestSeq: st.highestSeq, window: snap.replayWindow, words: st.window };
  }

  /** The receive state C hands back for `ssrc` (the rule's source) goes into the current context. */
  nativeSrtpInDone(ssrc: number, roc: number, highestSeq: number, words: number[]): void {
    if (!this.recv) return;
    const snap = this.recv.snapshot();
    const rtp = snap.current.rtp.filter((x) => x.ssrc !== ssrc);
    rtp.push({ ssrc, roc, highestSeq, window: words });
    this.recv = SrtpReceiver.restore({ ...snap, current: { ...snap.current, rtp } });
  }

  /** The send side of a native rule for our SSRC: 'plain', null when not representable, or keys and ROC. */
  nativeSrtpOut(): 'plain' | NativeSrtpOut | null {
    if (!this.send) return 'plain';
    const snap = this.send.snapshot();
    const st = snap.streams.find((x) => x.ssrc === this.outbound.ssrc);
    if (!st) return null; // JS has not sent on it yet: its first-packet rule stays JS's
    return { tag: srtpTagLength(snap.suite), keys: sessionKeys(snap.keySalt, this.keyCache), roc: st.roc, lastSeq: st.lastSeq };
  }

  nativeSrtpOutDone(roc: number, lastSeq: number): void {
    if (!this.send) return;
    const snap = this.send.snapshot();
    const streams = snap.streams.filter((x) => x.ssrc !== this.outbound.ssrc);
    streams.push({ ssrc: this.outbound.ssrc, roc, lastSeq });
    this.send = SrtpSendContext.restore({ ...snap, streams });
  }

  // ---- moving and closing ------------------------------------------------------------------

  get closed(): boolean {
    return this.closedBy !== null;
  }

  /**
   * Close the endpoint, once: a native rule that carries its packets or its stream comes back,
   * then its sockets close, or, when they stayed on another thread, its home session is told to
   * close the ones it kept for it. Afterwards every command is refused (naming `reason`) and
   * nothing is sent.
   */
  close(reason: EndpointCloseReason = 'removed'): void {
    if (this.closedBy) return;
    this.closedBy = reason;
    if (this.fastSource) this.host.takeFast(this, 'source');
    if (this.fastDestination) this.host.takeFast(this, 'destination');
    if (this.sockets) this.sockets.close();
    else this.host.releaseRelay(this);
  }

  /**
   * The endpoint leaves for another session (endpoint.transfer, after its snapshot): this object
   * closes without closing its sockets and hands them over, or null when they are relayed.
   */
  handOver(): SocketPair | null {
    if (this.closedBy) throw new Error(`endpoint ${this.id} is closed (${this.closedBy}): it cannot be moved`);
    this.closedBy = 'transferred';
    const sockets = this.sockets;
    this.sockets = null;
    return sockets;
  }

  private refuseClosed(): { ok: false; message: string } {
    return { ok: false, message: `endpoint ${this.id} is closed (${this.closedBy}); it takes no more commands` };
  }

  snapshot(): RtpEndpointSnapshot {
    if (this.closedBy) throw new Error(`endpoint ${this.id} is closed (${this.closedBy}): it cannot be moved`);
    return {
      kind: 'rtp',
      id: this.id,
      state: this.state,
      requestedDirection: this.requestedDirection,
      override: this.override,
      local: this.local,
      negotiated: this.negotiated,
      pending: this.pending,
      srtpSend: this.send?.snapshot() ?? null,
      srtpRecv: this.recv?.snapshot() ?? null,
      outbound: { ...this.outbound },
      latched: this.latched,
      lastPacketAt: this.lastPacketAt,
      negotiatedAt: this.negotiatedAt,
      timedOut: this.timedOut,
      counters: { ...this.counters },
      home: this.home,
    };
  }

  info(): EndpointInfo {
    const n = this.negotiated;
    return {
      endpoint_id: this.id,
      type: 'rtp',
      state: this.state,
      direction: this.direction,
      direction_mode: this.override ? 'manual' : 'auto',
      sdp_direction: n?.peerDirection ?? null,
      secure: this.secure,
      local: { address: this.local.address, rtp_port: this.local.port, rtcp_port: this.local.rtcpPort },
      remote: n ? { address: n.remote.address, rtp_port: n.remote.port, rtcp_port: n.remote.rtcpPort, rtcp_mux: n.remote.rtcpMux } : null,
      send_codec: n ? { name: n.sendCodec.name, payload_type: n.sendCodec.pt, clock_rate: n.sendCodec.clockRate } : null,
      telephone_event_pt: n?.telephoneEvent?.pt ?? null,
      offer_pending: this.pending !== null,
      ssrc: this.outbound.ssrc,
      relayed: this.sockets === null,
      connected: this.sockets?.connected ?? false,
      // The native packet path: null on dgram sockets or relayed; else whether a native rule
      // forwards this endpoint's packets (source) and carries its outgoing stream (destination).
      native_path: this.sockets?.native ? { source: this.fastSource, destination: this.fastDestination } : null,
      counters: { ...this.counters },
    };
  }
}

export interface NativeSrtpIn {
  tag: number;
  /** SRTP session keys: AES key 16, salt 14, HMAC key 20 (RFC 3711 labels 0, 2, 1). */
  keys: Uint8Array;
  roc: number;
  highestSeq: number;
  window: number;
  words: number[];
}

export interface NativeSrtpOut {
  tag: number;
  keys: Uint8Array;
  roc: number;
  lastSeq: number;
}

/**
 * The SRTP session keys of a master key ‖ salt, in the native layout. Cached per endpoint (a
 * rule is set again after every take), at most the two keys of a rekey, gone with the endpoint.
 */
function sessionKeys(keySalt: Uint8Array, cache: Map<string, Uint8Array>): Uint8Array {
  const id = Buffer.from(keySalt).toString('base64');
  let k = cache.get(id);
  if (!k) {
    const key = keySalt.subarray(0, 16);
    const salt = keySalt.subarray(16, 30);
    k = new Uint8Array(50);
    k.set(deriveKey(key, salt, 0, 16), 0);
    k.set(deriveKey(key, salt, 2, 14), 16);
    k.set(deriveKey(key, salt, 1, 20), 30);
    if (cache.size >= 2) cache.clear();
    cache.set(id, k);
  }
  return k;
}

function sameKey(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}

function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  const strip = (x: string) => (x.startsWith('::ffff:') ? x.slice(7) : x).toLowerCase();
  return strip(a) === strip(b);
}

export { intersectDirections };
