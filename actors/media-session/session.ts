/**
 * One media session: its endpoints and the endpoint commands. Parts live beside it: the WebRTC
 * commands and WebRTC transfer in webrtc-commands.ts, RTP transfer in rtp-transfer.ts and
 * relays.ts, the bridge glue in bridges.ts, WebSocket PCM endpoints in websockets.ts, file
 * endpoints' commands in file-commands.ts, recording commands in recording-commands.ts; the
 * routing plan, the packet path and the 20 ms media clock for mixing, tones and files in
 * media-path.ts. The actor (actor.ts) wraps it; this class holds no actor machinery beyond the
 * `SessionEnv` it is given.
 *
 * Forwarded plain-RTP streams are handed to the native packet path (fast-rules.ts) after JS has
 * forwarded their first packet; every command but session.info and every re-plan takes the
 * rules back first, so the rest of this class always sees the endpoints' true state.
 */
import { randomUUID } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import type { SessionInfo } from '../../protocols/media/results.js';
import type { RtpHeader } from '../../protocols/media/rtp.js';
import type { Direction } from '../../protocols/media/types.js';
import { isGenerator, MediaPath, type Endpoint } from './media-path.js';
import { Relays } from './relays.js';
import { adoptRtp, transferRtpOut, type TransferHost } from './rtp-transfer.js';
import { RtpEndpoint, type RtpHost } from './rtp-endpoint.js';
import { openSocketPair } from './sockets.js';
import type { SocketPair } from './socket-pair.js';
import { ToneEndpoint } from './tone-endpoint.js';
import { FileCommands } from './file-commands.js';
import { WebSockets } from './websockets.js';
import { WebRtcCommands } from './webrtc-commands.js';
import { DEFAULT_RECORDING_QUEUE_PACKETS, Recordings } from './recording.js';
import { RecordingStore } from './recording-store.js';
import { RecordingCommands } from './recording-commands.js';
import { Bridges } from './bridges.js';
import { mediaTimeouts, reportCounters, toneFinished } from './metrics.js';
import { refusal, type AdoptOutcome, type BridgeAttach, type Refusal, type SessionArgs, type SessionCommand, type SessionMethod, type SessionOutcome, type SessionResults } from './messages.js';
import type { SessionEvent, SessionEventData } from '../media-bridge/messages.js';
import type { EndpointSnapshot, RtpState } from './snapshot.js';

export type { Endpoint } from './media-path.js';

/** What the session needs from its actor. */
export interface SessionEnv {
  actorId: string;
  /** Push an event to the connection that owns the session (the front adds `session_id`). */
  emit<E extends SessionEvent>(event: E, data: SessionEventData<E>): void;
  /** Move an endpoint to another session actor; resolves with its answer. */
  adoptElsewhere(target: string, snapshot: EndpointSnapshot): Promise<AdoptOutcome>;
  relayIn(target: string, endpointId: string, data: Uint8Array, address: string, port: number, rtcp: boolean): void;
  relayOut(home: string, endpointId: string, data: Uint8Array, address: string, port: number, rtcp: boolean): void;
  relayRetarget(home: string, endpointId: string, to: string): void;
  relayClose(home: string, endpointId: string, closeSockets: boolean): void;
  setTimeout(fn: () => void, ms: number): NodeJS.Timeout;
  setInterval(fn: () => void, ms: number): NodeJS.Timeout;
  countPacket(kind: 'forwarded' | 'mixed' | 'tone', n: number): void;
  /** Send one frame to a WebSocket endpoint's client (its socket is the front's). */
  wsSend(endpointId: string, data: ArrayBuffer): void;
  /** A WebSocket endpoint ended: the front closes its client's socket and forgets its token. */
  wsClose(endpointId: string, reason: string): void;
  /** Bridge: ask session actor `target` to make its side of a pair. */
  bridgeAttach(target: string, attach: BridgeAttach): Promise<{ ok: true } | Refusal>;
  /** Bridge: one 20 ms frame of 48 kHz PCM for the peer's side `endpointId`. */
  bridgeAudio(peer: string, endpointId: string, data: ArrayBuffer): void;
  /** Bridge: this side went; the peer removes its side. */
  bridgeDetach(peer: string, endpointId: string, reason: 'peer removed' | 'peer session closed'): void;
  /** The object store's HTTP port in this daemon (finished recordings are stored there); rejects when it does not run. */
  storePort(): Promise<number>;
}

/** What the endpoint kinds' helpers need of the session: each of bridges.ts, websockets.ts, file-commands.ts and recording-commands.ts takes a Pick; webrtc-commands.ts all of it and two more. */
export interface SessionHost {
  readonly args: SessionArgs;
  readonly env: SessionEnv;
  readonly endpoints: ReadonlyMap<string, Endpoint>;
  closed(): boolean;
  /** Put an endpoint into routing / take it out (both re-plan). */
  add(ep: Endpoint): void;
  detach(ep: Endpoint): void;
  replan(): void;
  full(): Refusal;
  noEndpoint(id: string): Refusal;
  /** Queue PCM for the mixer (media-path.ts) / drop what is queued. */
  pushPcm(id: string, rate: number, pcm: Int16Array, queueMs: number): void;
  forget(id: string): void;
}

/** The result of command `c`, typed by what the client expects of its method. */
const ok = <M extends SessionMethod>(_c: { method: M }, result: SessionResults[M]) => ({ ok: true as const, result });

export class Session implements RtpHost {
  readonly endpoints = new Map<string, Endpoint>();
  /** Sockets of endpoints that moved to a session on another thread: we relay their media. */
  private readonly relays: Relays;
  /** Set once, by close() (session.destroy, or the actor ending): no more commands or endpoints. */
  private isClosed = false;
  private housekeepingTimer: NodeJS.Timeout | null = null;
  /** Routing, the packet path and the media clock (media-path.ts). */
  private readonly path: MediaPath;
  private sessionVersion = 1;
  readonly createdAt = Date.now();
  private readonly recordings: Recordings;
  /** recording.start / recording.stop and the taps (recording-commands.ts). */
  private readonly recordingCommands: RecordingCommands;
  /** The WebRTC, bridge, WebSocket and file endpoints' commands and callbacks. */
  private readonly webrtc: WebRtcCommands;
  private readonly bridges: Bridges;
  private readonly websockets: WebSockets;
  private readonly files: FileCommands;

  constructor(
    readonly args: SessionArgs,
    private readonly env: SessionEnv,
  ) {
    this.relays = new Relays(env);
    this.path = new MediaPath({ endpoints: this.endpoints, env, peerPolicy: () => args.peerPolicy, advanceGenerators: () => this.advanceGenerators() });
    const host: SessionHost = {
      args, env, endpoints: this.endpoints,
      closed: () => this.isClosed,
      add: (ep) => this.add(ep),
      detach: (ep) => this.detach(ep),
      replan: () => this.replan(),
      full: () => this.full(),
      noEndpoint: (id) => this.noEndpoint(id),
      pushPcm: (id, rate, pcm, queueMs) => this.path.pushPcm(id, rate, pcm, queueMs),
      forget: (id) => this.path.forget(id),
    };
    this.bridges = new Bridges(host);
    this.websockets = new WebSockets(host);
    this.files = new FileCommands(host);
    this.webrtc = new WebRtcCommands({
      ...host,
      endpointGone: (id) => this.recordings.endpointGone(id, 'transferred'),
      mix: (ep, codec, payload) => this.path.mixWebRtc(ep, codec, payload),
    });
    this.recordings = new Recordings(args.recordingDir ?? null, args.recordingQueuePackets ?? DEFAULT_RECORDING_QUEUE_PACKETS, {
      stopped: (summary) => {
        this.recordingCommands.retap();
        this.env.emit('recording.stopped', summary);
      },
    }, args.recordingBucket ? new RecordingStore(args.recordingBucket, args.sessionId, () => env.storePort()) : null);
    this.recordingCommands = new RecordingCommands(host, this.recordings, (ep) => this.path.fast.take(ep, 'source'));
    // Sessions made together must not all do their housekeeping in the same millisecond.
    this.housekeepingTimer = env.setTimeout(() => {
      this.housekeepingTimer = env.setInterval(() => this.housekeeping(), 1000);
    }, Math.floor(Math.random() * 1000));
  }

  get actorId(): string {
    return this.env.actorId;
  }
  get peerPolicy() {
    return this.args.peerPolicy;
  }
  get mediaTimeoutMs() {
    return this.args.mediaTimeoutMs;
  }

  // ---- commands ----------------------------------------------------------------------------

  /** Run a command of the bound connection; its outcome is typed by the command's method. */
  async command<M extends SessionMethod>(c: Extract<SessionCommand, { method: M }>, targetActor?: string): Promise<SessionOutcome<M>>;
  async command(c: SessionCommand, targetActor?: string): Promise<SessionOutcome> {
    if (this.isClosed) return refusal('SESSION_NOT_FOUND', `session ${this.args.sessionId} is closed (destroyed, or its actor is ending); it takes no more commands`);
    // A command may change routes, streams or negotiation: the native rules' state comes back first.
    if (c.method === 'session.info') this.path.fast.readAll();
    else this.path.fast.takeAll();
    switch (c.method) {
      case 'session.info':
        return ok(c, this.info());
      case 'endpoint.rtp.create_from_offer': {
        const made = await this.newRtp(c.params.direction);
        if (!made.ok) return made.outcome;
        const r = made.ep.fromOffer(c.params.sdp);
        if (!r.ok) return this.discard(made.ep, r.message);
        this.add(made.ep);
        return ok(c, { endpoint_id: made.ep.id, sdp_answer: r.value });
      }
      case 'endpoint.rtp.create_offer': {
        const made = await this.newRtp(c.params.direction);
        if (!made.ok) return made.outcome;
        const r = made.ep.createOffer({ srtp: c.params.srtp, srtpOptional: c.params.srtp_optional, codecs: c.params.codecs });
        if (!r.ok) return this.discard(made.ep, r.message);
        this.add(made.ep);
        return ok(c, { endpoint_id: made.ep.id, sdp_offer: r.value });
      }
      case 'endpoint.webrtc.create_from_offer':
      case 'endpoint.webrtc.create_offer':
      case 'endpoint.webrtc.accept_answer':
      case 'endpoint.webrtc.accept_offer':
      case 'endpoint.webrtc.ice_restart':
        return this.webrtc.command(c);
      case 'endpoint.accept_answer':
      case 'endpoint.rtp.accept_answer': {
        if (c.method === 'endpoint.accept_answer' && this.endpoints.get(c.params.endpoint_id)?.type === 'webrtc') return this.webrtc.command({ method: 'endpoint.webrtc.accept_answer', params: c.params });
        const ep = this.rtp(c.params.endpoint_id);
        if (!ep.ok) return ep.outcome;
        if ('offer_generation' in c.params && c.params.offer_generation !== undefined) return refusal('INVALID_PARAMS', 'offer_generation applies to WebRTC endpoints; this is an RTP endpoint');
        const r = ep.ep.acceptAnswer(c.params.sdp, Date.now());
        if (!r.ok) return refusal('ENDPOINT_ERROR', r.message);
        this.replan();
        return ok(c, {});
      }
      case 'endpoint.rtp.reinvite': {
        const ep = this.rtp(c.params.endpoint_id);
        if (!ep.ok) return ep.outcome;
        const r = ep.ep.reinvite(c.params.sdp, Date.now());
        if (!r.ok) return refusal('ENDPOINT_ERROR', r.message);
        this.replan();
        return ok(c, { sdp_answer: r.value });
      }
      case 'endpoint.rtp.srtp_rekey': {
        const ep = this.rtp(c.params.endpoint_id);
        if (!ep.ok) return ep.outcome;
        const r = ep.ep.rekey();
        return r.ok ? ok(c, { sdp: r.value }) : refusal('ENDPOINT_ERROR', r.message);
      }
      case 'endpoint.create_tone': {
        if (this.endpoints.size >= this.args.maxEndpoints) return this.full();
        const { tone, frequency, duration_ms } = c.params;
        const ep = new ToneEndpoint(randomUUID(), tone, frequency, duration_ms, Date.now());
        this.add(ep);
        return ok(c, { endpoint_id: ep.id, tone });
      }
      case 'endpoint.create_file':
        return this.files.create(c);
      case 'endpoint.create_bridge':
        return this.bridges.create(c, targetActor);
      case 'endpoint.create_websocket':
        return this.websockets.create(c);
      case 'endpoint.file.pause':
      case 'endpoint.file.resume':
      case 'endpoint.file.seek':
        return this.files.control(c);
      case 'endpoint.update_direction': {
        const ep = this.endpoints.get(c.params.endpoint_id);
        if (!ep) return this.noEndpoint(c.params.endpoint_id);
        const d = c.params.direction;
        if (isGenerator(ep) && d !== 'auto' && d !== 'sendonly' && d !== 'inactive') {
          return refusal('INVALID_PARAMS', `a ${ep.type} endpoint only sends: direction must be sendonly, inactive or auto; got ${d}`);
        }
        ep.override = d === 'auto' ? null : d;
        this.replan();
        return ok(c, {});
      }
      case 'endpoint.remove': {
        const ep = this.endpoints.get(c.params.endpoint_id);
        if (!ep) return this.noEndpoint(c.params.endpoint_id);
        this.recordings.endpointGone(ep.id, 'endpoint_removed');
        this.detach(ep);
        const removedAt = Date.now();
        ep.close();
        return ok(c, { removed_at_epoch_ms: removedAt });
      }
      case 'recording.start':
        return this.recordingCommands.start(c);
      case 'recording.stop':
        return this.recordingCommands.stop(c);
      case 'endpoint.transfer':
        return this.transferOut(c.params.endpoint_id, c.params.target_session_id, targetActor);
      case 'session.destroy': {
        const lingering = this.destroy();
        // Recordings end with the session: their files are complete when the destroy is answered.
        await this.recordings.closeAll();
        return ok(c, { session_id: this.args.sessionId, destroyed: true, lingering });
      }
      default:
        return refusal('NOT_IMPLEMENTED', `${(c as SessionCommand).method} is not available in this version of the bridge`);
    }
  }

  // ---- bridge and WebSocket endpoints: bridges.ts and websockets.ts (the actor calls these) --

  /** The other session of a bridge asks for our side of the pair. */
  bridgeAttach(a: BridgeAttach): { ok: true } | Refusal {
    return this.bridges.attach(a);
  }

  bridgeAudio(endpointId: string, data: ArrayBuffer): void {
    this.bridges.audio(endpointId, data);
  }

  /** The other side went: ours goes too, with an event for our owner. */
  bridgeDetach(endpointId: string, reason: 'peer removed' | 'peer session closed'): void {
    this.bridges.detach(endpointId, reason);
  }

  /** The client dialled in with the endpoint's token; false when the endpoint is gone (the front closes the socket). */
  wsOpened(endpointId: string): boolean {
    return this.websockets.opened(endpointId);
  }

  wsAudio(endpointId: string, data: Uint8Array): void {
    this.websockets.audio(endpointId, data);
  }

  /** The client's socket closed (the client, the front's overload guard, or our own close). */
  wsClosed(endpointId: string): void {
    this.websockets.closed(endpointId);
  }

  private async newRtp(direction: Direction): Promise<{ ok: true; ep: RtpEndpoint } | { ok: false; outcome: Refusal }> {
    if (this.endpoints.size >= this.args.maxEndpoints) return { ok: false, outcome: this.full() };
    let sockets: SocketPair;
    try {
      sockets = await openSocketPair(this.args.bindAddress, this.args.family, this.args.rtpPortMin, this.args.rtpPortMax);
    } catch (err) {
      return { ok: false, outcome: refusal('ENDPOINT_ERROR', (err as Error).message) };
    }
    const local = { address: this.args.advertisedAddress, family: this.args.family, port: sockets.port, rtcpPort: sockets.rtcpPort, sessionId: String(Date.now()), sessionVersion: this.sessionVersion++, allowedNetworks: this.args.allowedNetworks ?? [] };
    return { ok: true, ep: RtpEndpoint.fresh(randomUUID(), this, local, sockets, direction) };
  }

  private discard(ep: RtpEndpoint, message: string): Refusal {
    ep.close();
    return refusal('ENDPOINT_ERROR', message);
  }

  private full(): Refusal {
    return refusal('LIMIT_EXCEEDED', `the session has ${this.endpoints.size} endpoints; max_endpoints_per_session is ${this.args.maxEndpoints}`);
  }

  private noEndpoint(id: string): Refusal {
    return refusal('ENDPOINT_ERROR', `no endpoint ${id} in this session (never created, removed, or transferred away)`);
  }

  private rtp(id: string): { ok: true; ep: RtpEndpoint } | { ok: false; outcome: Refusal } {
    const ep = this.endpoints.get(id);
    if (!ep) return { ok: false, outcome: this.noEndpoint(id) };
    if (ep.type !== 'rtp') return { ok: false, outcome: refusal('ENDPOINT_ERROR', `endpoint ${id} is a ${ep.type} endpoint, not an RTP endpoint`) };
    return { ok: true, ep };
  }

  private add(ep: Endpoint): void {
    this.endpoints.set(ep.id, ep);
    if (ep.type === 'rtp') ep.tap = this.recordings.tapFor(ep);
    this.replan();
  }

  /** Take an endpoint out of routing (remove, transfer). */
  private detach(ep: Endpoint): void {
    if (ep.type === 'rtp' || ep.type === 'webrtc') reportCounters(ep, ep.counters);
    this.endpoints.delete(ep.id);
    this.path.forget(ep.id);
    this.replan();
  }

  // ---- transfer ----------------------------------------------------------------------------

  /** What an RTP transfer (rtp-transfer.ts) needs of this session. */
  private get transferHost(): TransferHost {
    return {
      rtpHost: this,
      env: this.env,
      relays: this.relays,
      actorId: this.env.actorId,
      release: (ep) => {
        // Spec, transfer rule 2: active recordings on the endpoint are stopped (a rollback does not restart them).
        this.recordings.endpointGone(ep.id, 'transferred');
        ep.tap = null;
        this.detach(ep);
      },
      add: (ep) => this.add(ep),
    };
  }

  private async transferOut(id: string, targetSessionId: string, targetActor: string | undefined): Promise<SessionOutcome<'endpoint.transfer'>> {
    if (targetSessionId === this.args.sessionId) return refusal('INVALID_PARAMS', 'target_session_id is this session; a transfer moves an endpoint to another session');
    const ep = this.endpoints.get(id);
    if (!ep) return this.noEndpoint(id);
    if (ep.type !== 'rtp' && ep.type !== 'webrtc') return refusal('INVALID_PARAMS', `a ${ep.type} endpoint cannot be transferred (only RTP and WebRTC endpoints can)`);
    if (!targetActor) return refusal('SESSION_NOT_FOUND', `session ${targetSessionId} does not exist`);
    if (ep.type === 'webrtc') return this.webrtc.transfer(ep, targetSessionId, targetActor);
    return transferRtpOut(this.transferHost, ep, targetSessionId, targetActor);
  }

  /** Transfer in: take an endpoint from another session. */
  adopt(snapshot: EndpointSnapshot, from: string): AdoptOutcome {
    if (this.isClosed) return refusal('TRANSFER_FAILED', 'the target session is being destroyed');
    if (this.endpoints.size >= this.args.maxEndpoints) {
      return refusal('TRANSFER_FAILED', `the target session is at max_endpoints_per_session (${this.args.maxEndpoints})`);
    }
    if (snapshot.kind === 'webrtc') return this.webrtc.adopt(snapshot, from);
    return adoptRtp(this.transferHost, snapshot, from);
  }

  relayedIn(endpointId: string, data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    const ep = this.endpoints.get(endpointId);
    if (ep?.type === 'rtp' && !ep.sockets) ep.receive(data, address, port, rtcp);
  }

  relayOut(ep: RtpEndpoint, data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    this.env.relayOut(ep.home.actor, ep.id, data, address, port, rtcp);
  }

  releaseRelay(ep: RtpEndpoint): void {
    this.env.relayClose(ep.home.actor, ep.id, true);
  }

  // ---- relays: the sockets of endpoints that moved to a session on another thread ----------

  /** Send a datagram for a departed endpoint from the sockets kept for it. */
  sendRelayed(endpointId: string, data: Uint8Array, address: string, port: number, rtcp: boolean): void {
    this.relays.send(endpointId, data, address, port, rtcp);
  }

  /** A departed endpoint moved on to `to`: its packets now go there. */
  retargetRelay(endpointId: string, to: string): void {
    this.relays.retarget(endpointId, to);
  }

  /**
   * A departed endpoint ended (close its sockets) or came home through a third session (they
   * stay open: that session took them). True when this session is closed and holds no more
   * relays: a destroyed session that lingered for them may then go.
   */
  closeRelay(endpointId: string, closeSockets: boolean): boolean {
    this.relays.close(endpointId, closeSockets);
    return this.isClosed && this.relays.size === 0;
  }

  // ---- media -------------------------------------------------------------------------------

  stateChanged(ep: RtpEndpoint, previous: RtpState): void {
    // Only a connected source is forwarded natively: its next packet must reach JS to reconnect it.
    if (ep.state !== 'connected') this.path.fast.take(ep, 'source');
    this.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: ep.type, state: ep.state, previous_state: previous });
  }

  takeFast(ep: RtpEndpoint, role: 'source' | 'destination'): void {
    this.path.fast.take(ep, role);
  }

  /** An RTP packet that passed the endpoint's checks: the media path decides where it goes. */
  media(ep: RtpEndpoint, h: RtpHeader, payload: Uint8Array): void {
    this.path.media(ep, h, payload);
  }

  /** Rebuild the routing plan after any change of endpoints, directions or negotiation. */
  replan(): void {
    this.path.replan();
  }

  /** One media-clock tick for tones and files (after the mixing); true when one finished. */
  private advanceGenerators(): boolean {
    let finished = false;
    for (const ep of this.endpoints.values()) {
      if (ep.type === 'tone' && ep.advance()) {
        finished = true;
        this.env.emit('endpoint.state_changed', { endpoint_id: ep.id, type: 'tone', state: 'finished', previous_state: 'playing' });
        toneFinished.inc();
        this.env.emit('endpoint.tone.finished', { endpoint_id: ep.id, tone: ep.tone, played_ms: ep.frames * 20 });
      } else if (ep.type === 'file' && ep.advance()) {
        this.files.stateChanged(ep, 'playing', true);
      }
    }
    return finished;
  }

  private reportsDue = 0;
  private housekeeping(): void {
    const now = Date.now();
    this.path.countPackets();
    const reports = ++this.reportsDue % 5 === 0;
    for (const ep of this.endpoints.values()) {
      if (ep.type === 'webrtc') {
        ep.checkConsent(now);
        if (ep.checkTimeout(now, this.args.mediaTimeoutMs)) {
          mediaTimeouts.inc();
          this.env.emit('endpoint.media_timeout', { endpoint_id: ep.id, last_packet_at: ep.lastPacketAt, timeout_ms: this.args.mediaTimeoutMs });
        }
        reportCounters(ep, ep.counters);
      }
      if (ep.type !== 'rtp') continue;
      if (ep.checkTimeout(now)) {
        mediaTimeouts.inc();
        this.env.emit('endpoint.media_timeout', { endpoint_id: ep.id, last_packet_at: ep.lastPacketAt, timeout_ms: this.args.mediaTimeoutMs });
      }
      if (reports) ep.sendReport(now);
      reportCounters(ep, ep.counters);
    }
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  info(): SessionInfo {
    return {
      session_id: this.args.sessionId,
      created_at_epoch_ms: this.createdAt,
      thread_id: threadId,
      endpoints: [...this.endpoints.values()].map((e) => e.info()),
      routes: this.path.routes(),
      relays_held: this.relays.size,
      recordings: this.recordings.info(),
    };
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** session.destroy: close the session; true when the actor must linger to relay moved endpoints' sockets. */
  destroy(): boolean {
    this.close({ keepRelays: true });
    return this.relays.size > 0;
  }

  /**
   * Close the session: its one teardown path. Once: the native rules come back, the media clock
   * and the housekeeping stop, and every endpoint closes, told that its session closed (it
   * releases its sockets, or its home's relay) and refuses any later use. Then the sockets this
   * session relays for endpoints that moved to another thread close too, unless `keepRelays`
   * (session.destroy: the actor lingers for them; its end closes them).
   */
  close({ keepRelays = false } = {}): void {
    if (!this.isClosed) {
      this.isClosed = true;
      this.path.close();
      if (this.housekeepingTimer) clearTimeout(this.housekeepingTimer);
      this.housekeepingTimer = null;
      for (const ep of this.endpoints.values()) {
        if (ep.type === 'rtp' || ep.type === 'webrtc') reportCounters(ep, ep.counters);
        ep.close('session closed');
      }
      void this.recordings.closeAll();
      this.endpoints.clear();
    }
    if (keepRelays) return;
    this.relays.closeAll();
  }
}
