/**
 * A WebRTC endpoint: one werift RTCPeerConnection (ICE, DTLS, SRTP) with one audio transceiver,
 * and hostd's own rules around it: the offer/answer state with its generation (one outstanding
 * offer), the pinned peer fingerprint, the state machine the spec names, the replay check werift
 * lacks, and the media hand-off to the session's mixer.
 *
 * Decisions:
 * - werift is configured closed: no STUN/TURN servers (its default is Google's STUN), host
 *   candidates on the bridge's advertised address only (keepCandidates strips the others werift
 *   gathers), its sockets inside MEDIA_RTP_PORT_MIN..MAX, ICE lite (the bridge is always
 *   reachable on its host candidate; the browser is the controlling agent).
 * - Audio only: Opus (PT 111), PCMU (0), PCMA (8), telephone-event/48000 (101) and /8000 (126).
 *   The SDP direction is always sendrecv; the endpoint's direction is enforced by routing, as
 *   for every endpoint (the spec's peer point of view).
 * - In routing a WebRTC endpoint is always mixed (decoded, mixed, encoded on the 20 ms clock),
 *   never forwarded to: werift owns the SRTP send side and its sequence/timestamp rewriting, so
 *   a forwarded stream gains nothing over a generated one here. Telephone-events from the
 *   browser are counted and dropped in this version.
 * - States: new → connecting → connected → disconnected, from werift's connectionState
 *   (`failed` and `closed` are `disconnected`). Consent freshness (RFC 7675): an ICE lite agent
 *   sends no checks, so the endpoint watches the peer's (werift's STUN hook): none for 30 s and
 *   a connected endpoint is `disconnected`; it stays so until an ICE restart brings it back.
 * - SRTP/SRTCP: werift runs DTLS and derives the keys; the packets are protected and
 *   unprotected by the bridge's own SRTP code (webrtc-srtp.ts: AES_CM_128_HMAC_SHA1_80, a
 *   1024-packet replay window werift lacks). Refused packets are counted: authentication
 *   failures in `srtpAuthFailures`, replays in `srtpReplays`, the rest in `malformed`.
 * - Transfer: the peer connection (its UDP sockets, timers, DTLS and SRTP state) is bound to the
 *   thread that made it, so endpoint.transfer moves this very object to a session of the same
 *   thread through the thread's `webrtcShelf`; `leave` and `arrive` bracket the move (media
 *   and a state change that arrive meanwhile are held for the new owner).
 */
import {
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RtpHeader,
  RtpPacket,
  type MediaStreamTrack,
  type RTCRtpTransceiver,
} from 'werift';
import type { EndpointInfo } from '../../protocols/media/results.js';
import type { CodecName, Direction } from '../../protocols/media/types.js';
import { checkSender, iceUfrags, keepCandidates, withoutCandidateGeneration, remoteFingerprint, sameFingerprint, showFingerprint, type Fingerprint } from '../../protocols/media/sdp/webrtc.js';
import { rtpTimestampIncrement } from './codecs.js';
import type { EndpointCloseReason } from './rtp-endpoint.js';
import { useBridgeSrtp, type SrtpDrop, type SrtpImpl } from './webrtc-srtp.js';

export type WebRtcState = 'new' | 'connecting' | 'connected' | 'disconnected';

/** What the endpoint needs from its session. */
export interface WebRtcHost {
  stateChanged(ep: WebRtcEndpoint, previous: WebRtcState): void;
  /** An RTP payload the peer sent, decrypted and checked (the session decodes it for the mixer). */
  media(ep: WebRtcEndpoint, codec: CodecName, payload: Uint8Array): void;
}

export interface WebRtcConfig {
  advertisedAddress: string;
  bindAddress: string;
  portMin: number;
  portMax: number;
}

/**
 * This thread's WebRTC endpoints in transfer, by id (module state: one table per worker thread).
 * The source session puts the endpoint here; a target session of the same thread takes it.
 */
export const webrtcShelf = new Map<string, WebRtcEndpoint>();

/** Payloads kept for a transferred endpoint while its target takes it (1 s of a 20 ms stream). */
const MAX_HELD_IN_TRANSFER = 50;
/** RFC 7675: consent expires 30 s after the last check that succeeded. */
export const CONSENT_TIMEOUT_MS = 30_000;

const CODECS_BY_MIME: Record<string, CodecName> = { 'audio/opus': 'opus', 'audio/pcmu': 'pcmu', 'audio/pcma': 'pcma' };

function audioCodecs(): RTCRtpCodecParameters[] {
  return [
    new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 }),
    new RTCRtpCodecParameters({ mimeType: 'audio/PCMU', clockRate: 8000, channels: 1, payloadType: 0 }),
    new RTCRtpCodecParameters({ mimeType: 'audio/PCMA', clockRate: 8000, channels: 1, payloadType: 8 }),
    new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 48000, channels: 1, payloadType: 101 }),
    new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, channels: 1, payloadType: 126 }),
  ];
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; code: 'ENDPOINT_ERROR' | 'OFFER_GENERATION_MISMATCH' | 'OFFER_PENDING'; message: string };

export class WebRtcEndpoint {
  readonly type = 'webrtc' as const;
  state: WebRtcState = 'new';
  override: Direction | null = null;
  /** Incremented by each ICE restart (spec: the offer generation). */
  generation = 0;
  /** The generation of our unanswered offer, or null. */
  pendingGeneration: number | null = null;
  fingerprint: Fingerprint | null = null;
  /** The ICE ufrags of the peer's SDPs we accepted: the only senders whose checks are answered. */
  private readonly peerUfrags = new Set<string>();
  lastPacketAt: number | null = null;
  private readonly createdAt = Date.now();
  /** When the peer's last ICE check (STUN binding request) arrived. */
  private lastCheckAt = Date.now();
  private timedOut = false;
  readonly counters = { packetsIn: 0, bytesIn: 0, packetsOut: 0, bytesOut: 0, srtpReplays: 0, malformed: 0, telephoneEventsDropped: 0, notSourceDrops: 0, iceChecksRefused: 0, srtpAuthFailures: 0 };
  readonly pc: RTCPeerConnection;
  private readonly transceiver: RTCRtpTransceiver;
  /** Which code protects each DTLS transport's media (webrtc-srtp.ts). */
  private readonly srtpImpl = new WeakMap<object, () => SrtpImpl>();
  private readonly out = { seq: Math.floor(Math.random() * 0x10000), ts: Math.floor(Math.random() * 0x100000000) };
  private closedBy: EndpointCloseReason | null = null;
  /** While in transfer: the state when it left, and the media that arrived since. */
  private transit: { state: WebRtcState; held: Array<[CodecName, Uint8Array]> } | null = null;

  constructor(
    readonly id: string,
    private host: WebRtcHost,
    private readonly config: WebRtcConfig,
    readonly baseDirection: Direction,
  ) {
    const loopback = /^127\./.test(config.advertisedAddress) || config.advertisedAddress === '::1';
    this.pc = new RTCPeerConnection({
      iceServers: [],
      iceLite: true,
      codecs: { audio: audioCodecs(), video: [] },
      icePortRange: [config.portMin, config.portMax],
      iceUseIpv6: config.advertisedAddress.includes(':'),
      iceUseIpv4: !config.advertisedAddress.includes(':'),
      iceInterfaceAddresses: config.advertisedAddress.includes(':') ? { udp6: config.advertisedAddress } : { udp4: config.advertisedAddress },
      iceAdditionalHostAddresses: loopback ? [config.advertisedAddress] : undefined,
      // Despite its name, werift calls this for each ICE check (STUN Binding request) it receives,
      // before answering it. Only the peer whose SDP we accepted may check: werift's lite agent
      // takes any check that knows our credentials (any page given our offer does), and one with
      // USE-CANDIDATE would move our media to it. Consent freshness: the accepted checks keep it.
      iceFilterStunResponse: (msg) => {
        const sender = checkSender(msg.getAttributeValue('USERNAME'));
        if (sender === null || !this.peerUfrags.has(sender)) {
          this.counters.iceChecksRefused++;
          return false;
        }
        this.lastCheckAt = Date.now();
        return true;
      },
    });
    this.transceiver = this.pc.addTransceiver('audio', { direction: 'sendrecv' });
    this.pc.connectionStateChange.subscribe((s) => this.connection(s));
    // werift fires onTrack again for the same track on a renegotiation: subscribe once per track.
    const tracks = new WeakSet<MediaStreamTrack>();
    this.pc.onTrack.subscribe((track: MediaStreamTrack) => {
      if (tracks.has(track)) return;
      tracks.add(track);
      track.onReceiveRtp.subscribe((rtp: RtpPacket) => this.receive(rtp));
    });
  }

  /** The direction routing uses: the requested one (or the override) while connected. */
  get direction(): Direction {
    return this.state === 'connected' ? (this.override ?? this.baseDirection) : 'inactive';
  }

  /** The codec we send in: the first one the negotiation kept. */
  get sendCodec(): { name: CodecName; pt: number } | null {
    const c = this.transceiver.sender.codec;
    const name = c ? CODECS_BY_MIME[c.mimeType.toLowerCase()] : undefined;
    return c && name ? { name, pt: c.payloadType } : null;
  }

  private connection(s: string): void {
    const next: WebRtcState = s === 'new' ? 'new' : s === 'connecting' ? 'connecting' : s === 'connected' ? 'connected' : 'disconnected';
    if (next === this.state || this.closedBy) return;
    if (next === 'connected') this.lastCheckAt = Date.now();
    const previous = this.state;
    this.state = next;
    this.host.stateChanged(this, previous);
  }

  /**
   * endpoint.transfer: the endpoint leaves its session (already out of its routing). Until
   * `arrive`, media is kept (up to a second) and state changes are not reported.
   */
  leave(): void {
    if (this.closedBy) throw new Error(`endpoint ${this.id} is closed (${this.closedBy}): it cannot be moved`);
    const held: Array<[CodecName, Uint8Array]> = [];
    this.transit = { state: this.state, held };
    this.host = {
      stateChanged: () => undefined,
      media: (_ep, codec, payload) => {
        if (held.length < MAX_HELD_IN_TRANSFER) held.push([codec, Uint8Array.from(payload)]);
      },
    };
  }

  /** The endpoint's new owner (or its old one, on a rollback) takes it: what waited is handed over. */
  arrive(host: WebRtcHost): void {
    const transit = this.transit;
    this.host = host;
    this.transit = null;
    if (!transit) return;
    if (this.state !== transit.state) host.stateChanged(this, transit.state);
    for (const [codec, payload] of transit.held) host.media(this, codec, payload);
  }

  /** A peer's SDP was applied: its fingerprint is pinned (the first time) and its ICE ufrag may check. */
  private accepted(sdp: string, identity: Fingerprint): void {
    this.fingerprint ??= identity;
    for (const u of iceUfrags(sdp)) this.peerUfrags.add(u);
  }

  /** Check a remote SDP's fingerprint against the pinned one (before werift sees the SDP). */
  private checkIdentity(sdp: string): Outcome<Fingerprint> {
    const f = remoteFingerprint(sdp);
    if (!f.ok) return { ok: false, code: 'ENDPOINT_ERROR', message: f.error };
    if (this.fingerprint && !sameFingerprint(this.fingerprint, f.value)) {
      return { ok: false, code: 'ENDPOINT_ERROR', message: `the DTLS fingerprint changed (pinned ${showFingerprint(this.fingerprint)}, got ${showFingerprint(f.value)}): a different peer needs a new endpoint, not a renegotiation` };
    }
    return { ok: true, value: f.value };
  }

  /**
   * werift 0.24.4 restarts ICE (new credentials, nominated pair cleared) but its connect() skips
   * the ICE start while DTLS is still connected, so after an ICE restart no pair is nominated
   * again and our packets go nowhere. Start the restarted ICE transports ourselves, without
   * waiting (the peer's checks arrive once it has our SDP).
   */
  private resumeIce(): void {
    for (const t of this.pc.iceTransports) {
      if (t.state !== 'connected' && t.state !== 'closed' && this.pc.dtlsTransports.some((d) => d.state === 'connected')) void t.start().catch(() => undefined);
    }
  }

  private localSdp(): string {
    return keepCandidates(this.pc.localDescription!.sdp, this.config.advertisedAddress);
  }

  private async attempt<T>(what: string, fn: () => Promise<T>): Promise<Outcome<T>> {
    try {
      return { ok: true, value: await fn() };
    } catch (err) {
      return { ok: false, code: 'ENDPOINT_ERROR', message: `${what}: ${(err as Error).message}` };
    } finally {
      // A description may have made a DTLS transport: its SRTP goes onto the bridge's code.
      for (const d of this.pc.dtlsTransports) {
        if (this.srtpImpl.has(d)) continue;
        const impl = useBridgeSrtp(d, (drop) => this.srtpDropped(drop));
        if (impl) this.srtpImpl.set(d, impl);
      }
    }
  }

  /** create_from_offer, and accept_offer (a remote renegotiation or ICE restart): our answer. */
  async answer(offerSdp: string): Promise<Outcome<string>> {
    const identity = this.checkIdentity(offerSdp);
    if (!identity.ok) return identity;
    if (!/^m=audio /m.test(offerSdp)) return { ok: false, code: 'ENDPOINT_ERROR', message: 'the offer has no m=audio section' };
    const r = await this.attempt('the offer was not applied', async () => {
      // Glare: a remote offer while ours waits drops ours (the peer's renegotiation wins).
      if (this.pc.signalingState === 'have-local-offer') await this.pc.setLocalDescription({ type: 'rollback' });
      this.pendingGeneration = null;
      await this.pc.setRemoteDescription({ type: 'offer', sdp: withoutCandidateGeneration(offerSdp) });
      if (!this.sendCodec) throw new Error('no codec in common (we take opus, PCMU, PCMA)');
      await this.pc.setLocalDescription(await this.pc.createAnswer());
      this.resumeIce();
      return this.localSdp();
    });
    if (r.ok) this.accepted(offerSdp, identity.value);
    return r;
  }

  /** create_offer and ice_restart: our offer, pending until its answer. */
  async offer(iceRestart: boolean): Promise<Outcome<{ sdp: string; generation: number }>> {
    if (this.pendingGeneration !== null) {
      return { ok: false, code: 'OFFER_PENDING', message: `the endpoint's offer of generation ${this.pendingGeneration} is still unanswered; answer it (accept_answer) before another restart` };
    }
    return this.attempt('the offer was not made', async () => {
      if (iceRestart) this.generation++;
      await this.pc.setLocalDescription(await this.pc.createOffer({ iceRestart }));
      this.pendingGeneration = this.generation;
      return { sdp: this.localSdp(), generation: this.generation };
    });
  }

  /** accept_answer: the generation was checked by the caller (before any parsing). */
  async acceptAnswer(answerSdp: string): Promise<Outcome<null>> {
    const identity = this.checkIdentity(answerSdp);
    if (!identity.ok) return identity;
    const r = await this.attempt('the answer was not applied', async () => {
      await this.pc.setRemoteDescription({ type: 'answer', sdp: withoutCandidateGeneration(answerSdp) });
      this.resumeIce();
      return null;
    });
    if (r.ok) {
      this.pendingGeneration = null;
      this.accepted(answerSdp, identity.value);
    }
    return r;
  }

  private srtpDropped(drop: SrtpDrop): void {
    if (drop === 'auth') this.counters.srtpAuthFailures++;
    else if (drop === 'replay' || drop === 'too-old') this.counters.srtpReplays++;
    else this.counters.malformed++;
  }

  private receive(rtp: RtpPacket): void {
    if (this.closedBy) return;
    const h = rtp.header;
    this.counters.packetsIn++;
    this.counters.bytesIn += rtp.payload.length;
    this.lastPacketAt = Date.now();
    this.timedOut = false;
    const codec = this.transceiver.codecs.find((c) => c.payloadType === h.payloadType);
    const name = codec ? CODECS_BY_MIME[codec.mimeType.toLowerCase()] : undefined;
    if (!name) {
      if (codec?.mimeType.toLowerCase() === 'audio/telephone-event') this.counters.telephoneEventsDropped++;
      else this.counters.malformed++;
      return;
    }
    this.host.media(this, name, rtp.payload);
  }

  /** One encoded 20 ms frame to the peer (werift protects it and sets SSRC and PT). */
  send(payload: Uint8Array): void {
    const codec = this.sendCodec;
    if (!codec || this.state !== 'connected' || this.closedBy) return;
    const header = new RtpHeader({ payloadType: codec.pt, sequenceNumber: this.out.seq, timestamp: this.out.ts >>> 0 });
    this.out.seq = (this.out.seq + 1) & 0xffff;
    this.out.ts = (this.out.ts + rtpTimestampIncrement(codec.name)) >>> 0;
    this.counters.packetsOut++;
    this.counters.bytesOut += payload.length;
    const body = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    void this.transceiver.sender.sendRtp(new RtpPacket(header, body)).catch(() => undefined);
  }

  /**
   * RFC 7675 consent freshness from the lite side: a connected peer whose ICE checks stopped
   * CONSENT_TIMEOUT_MS ago is gone (it closed, or its path died): the endpoint is disconnected
   * and stays so until an ICE restart or a renegotiation brings the checks back.
   */
  checkConsent(now: number): void {
    if (this.state === 'connected' && now - this.lastCheckAt > CONSENT_TIMEOUT_MS) this.connection('disconnected');
  }

  /** endpoint.media_timeout, once per silence (as RTP endpoints): true when it is due now. */
  checkTimeout(now: number, timeoutMs: number): boolean {
    if (this.timedOut || this.closedBy || this.state === 'new') return false;
    const since = this.lastPacketAt ?? this.createdAt;
    if (now - since < timeoutMs) return false;
    this.timedOut = true;
    return true;
  }

  get closed(): boolean {
    return this.closedBy !== null;
  }

  /** Close the peer connection and its sockets, once. */
  close(reason: EndpointCloseReason = 'removed'): void {
    if (this.closedBy) return;
    this.closedBy = reason;
    this.state = 'disconnected';
    void this.pc.close().catch(() => undefined);
  }

  info(): EndpointInfo {
    const dtls = this.pc.dtlsTransports[0];
    return {
      endpoint_id: this.id,
      type: 'webrtc',
      state: this.state,
      direction: this.direction,
      direction_mode: this.override ? 'manual' : 'auto',
      ice_state: this.pc.iceConnectionState,
      dtls_state: dtls?.state ?? 'new',
      srtp_impl: (dtls && this.srtpImpl.get(dtls)?.()) ?? 'none',
      remote_fingerprint: this.fingerprint ? showFingerprint(this.fingerprint) : null,
      offer_generation: this.generation,
      offer_pending: this.pendingGeneration !== null,
      send_codec: this.sendCodec?.name ?? null,
      counters: { ...this.counters },
    };
  }
}
