/**
 * A session's media path: the routing plan between its endpoints, what happens to each RTP packet
 * that arrives (forwarded as it is, or decoded for the mixer), and the 20 ms media clock that mixes
 * for destinations that cannot take a forwarded stream (PCM endpoints, WebRTC, other codecs) and
 * plays tones and files. session.ts owns the endpoints and the commands; this class owns what
 * their packets do, so a change of routing rules has one home.
 *
 * Forwarded plain-RTP streams are handed to the native packet path (fast-rules.ts) after JS has
 * forwarded their first packet; `takeAll()` takes the rules back (every command but session.info
 * and every re-plan does), so JS always sees the endpoints' true state.
 */
import { routingPlan, type Route, type RouteNode } from '../../protocols/media/routing.js';
import { stampEvent, stampForwarded, stampGenerated } from '../../protocols/media/outbound.js';
import type { RtpHeader } from '../../protocols/media/rtp.js';
import type { SessionInfo } from '../../protocols/media/results.js';
import type { CodecName, PeerPolicy } from '../../protocols/media/types.js';
import { rtpTimestampIncrement } from './codecs.js';
import { Mixer, type MixSource } from './mixer.js';
import type { RtpEndpoint } from './rtp-endpoint.js';
import { FastRules } from './fast-rules.js';
import type { ToneEndpoint } from './tone-endpoint.js';
import type { FileEndpoint } from './file-endpoint.js';
import type { WsEndpoint } from './ws-endpoint.js';
import type { WebRtcEndpoint } from './webrtc-endpoint.js';
import { BRIDGE_RATE, type BridgeEndpoint } from './bridge-endpoint.js';
import type { SessionEnv } from './session.js';

export type Endpoint = RtpEndpoint | ToneEndpoint | FileEndpoint | WsEndpoint | BridgeEndpoint | WebRtcEndpoint;
/** Endpoints that are mixed for, never forwarded to: PCM ones (WebSocket, bridge) and WebRTC (werift owns its send side). */
type PcmEndpoint = WsEndpoint | BridgeEndpoint | WebRtcEndpoint;
const isPcm = (ep: Endpoint | undefined): ep is PcmEndpoint => ep?.type === 'websocket' || ep?.type === 'bridge' || ep?.type === 'webrtc';
/** Endpoints that make PCM on the session's clock (send-only sources, mixed). */
type Generator = ToneEndpoint | FileEndpoint;
export const isGenerator = (ep: Endpoint | undefined): ep is Generator => ep?.type === 'tone' || ep?.type === 'file';

/** One destination of a source's packets. */
interface Target {
  dest: RtpEndpoint;
  /** Forward packets of `codec` as they are; anything else is decoded for the mixer. */
  forward: boolean;
  codec: CodecName;
  pt: number;
  frameTicks: number;
}

/** What the media path needs from its session. */
export interface MediaPathHost {
  readonly endpoints: ReadonlyMap<string, Endpoint>;
  readonly env: Pick<SessionEnv, 'setTimeout' | 'wsSend' | 'bridgeAudio' | 'countPacket'>;
  peerPolicy(): PeerPolicy;
  /** One clock tick for tones and files; true when one finished (the plan is made again). */
  advanceGenerators(): boolean;
}

export class MediaPath {
  private plan = new Map<string, Route>();
  /** Per source: where its packets go, worked out once per change of routing. */
  private targetsOf = new Map<string, Target[]>();
  /** RTP sources that a PCM destination (WebSocket, bridge) hears: always decoded, never native. */
  private pcmHeard = new Set<string>();
  /** Every endpoint some destination hears (a WebRTC source nobody hears is not decoded). */
  private heard = new Set<string>();
  /** Packets sent, by kind, since the last `countPackets()`. */
  private forwarded = 0;
  private mixedSent = 0;
  private toneSent = 0;
  private mixer = new Mixer();
  /** Forwarded streams carried by the native packet path (fast-rules.ts). */
  readonly fast: FastRules;
  private clock: NodeJS.Timeout | null = null;
  private nextTickAt = 0;

  constructor(private readonly host: MediaPathHost) {
    this.fast = new FastRules(() => host.peerPolicy());
  }

  /** An RTP packet that passed the endpoint's checks. */
  media(ep: RtpEndpoint, h: RtpHeader, payload: Uint8Array): void {
    const targets = this.targetsOf.get(ep.id) ?? (this.pcmHeard.has(ep.id) ? [] : undefined);
    if (!targets) {
      ep.counters.notSourceDrops++;
      return;
    }
    const n = ep.negotiated!;
    const tePt = n.recvTelephoneEventPt ?? n.telephoneEvent?.pt;
    if (tePt !== undefined && tePt !== null && h.payloadType === tePt) {
      for (const t of targets) this.forwardEvent(ep, t.dest, h, payload);
      return;
    }
    const codec = ep.codecFor(h.payloadType);
    if (!codec) {
      ep.counters.malformed++;
      return;
    }
    let decoded = false;
    const decode = () => {
      decoded = true;
      this.push(ep, codec, payload);
    };
    const heardAsPcm = this.pcmHeard.has(ep.id);
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      if (t.forward && t.codec === codec) {
        t.dest.sendRtp(t.pt, stampForwarded(t.dest.outbound, ep.sourceKey, h.timestamp, h.marker, t.frameTicks), payload);
        this.forwarded++;
        // Forwarded by JS once: the native path can carry this stream from the next packet on
        // (not when a PCM destination hears it too: the native path would starve it).
        // Nor when a recording hears it: its packets must reach JS's tap.
        if (targets.length === 1 && !heardAsPcm && !ep.tap) this.fast.maybeSet(ep, targets);
      } else if (!decoded) decode();
    }
    if (heardAsPcm && !decoded) decode();
  }

  /** A WebRTC endpoint's decoded-to-be payload: mixed only when some destination hears it. */
  mixWebRtc(ep: WebRtcEndpoint, codec: CodecName, payload: Uint8Array): void {
    if (!this.heard.has(ep.id)) {
      ep.counters.notSourceDrops++;
      return;
    }
    this.push(ep, codec, payload);
  }

  /** PCM from a WebSocket client or a bridged session, waiting for the clock (at most `queueMs`). */
  pushPcm(id: string, rate: number, pcm: Int16Array, queueMs: number): void {
    this.mixer.pushPcm(id, rate, pcm, queueMs);
  }

  /** An endpoint left: its queued audio and mixing state go. */
  forget(id: string): void {
    this.mixer.forget(id);
  }

  private push(ep: RtpEndpoint | WebRtcEndpoint, codec: CodecName, payload: Uint8Array): void {
    if (!this.clock) this.startClock();
    try {
      this.mixer.push(ep.id, codec, payload);
    } catch {
      ep.counters.malformed++; // a payload its codec cannot decode (a corrupt Opus frame): dropped
    }
  }

  private forwardEvent(src: RtpEndpoint, d: RtpEndpoint, h: RtpHeader, payload: Uint8Array): void {
    const te = d.negotiated?.telephoneEvent;
    if (!te) return; // the destination did not negotiate telephone-event: the digit is dropped
    const stamp = stampEvent(d.outbound, src.sourceKey, h.timestamp, rtpTimestampIncrement(d.negotiated!.sendCodec.name));
    const from = src.negotiated?.telephoneEvent?.clockRate ?? te.clockRate;
    let body = payload;
    if (from !== te.clockRate && payload.length >= 4) {
      // RFC 4733's duration is in RTP clock units: rescale it to the destination's clock.
      body = Buffer.from(payload);
      const duration = Math.min(0xffff, Math.round((((body[2]! << 8) | body[3]!) * te.clockRate) / from));
      body[2] = duration >> 8;
      body[3] = duration & 0xff;
    }
    d.sendRtp(te.pt, { ...stamp, marker: h.marker }, body);
  }

  /** Rebuild the routing plan after any change of endpoints, directions or negotiation. */
  replan(): void {
    this.fast.takeAll();
    const nodes: RouteNode[] = [];
    for (const ep of this.host.endpoints.values()) {
      if (isGenerator(ep)) nodes.push({ id: ep.id, direction: ep.direction, codec: null, generator: true });
      else if (isPcm(ep)) nodes.push({ id: ep.id, direction: ep.direction, codec: null, pcm: true, bridge: ep.type === 'bridge' });
      // Before its answer an RTP endpoint neither sends nor receives: it is left out of routing.
      else nodes.push({ id: ep.id, direction: ep.negotiated ? ep.direction : 'inactive', codec: ep.negotiated?.sendCodec.name ?? null, canSend: ep.negotiated !== null });
    }
    this.plan = routingPlan(nodes);
    this.targetsOf.clear();
    this.pcmHeard.clear();
    this.heard.clear();
    let mixing = false;
    for (const route of this.plan.values()) {
      if (route.mode === 'mix') mixing = true;
      const dest = this.host.endpoints.get(route.destination);
      for (const s of route.sources) this.heard.add(s);
      if (isPcm(dest)) for (const s of route.sources) this.pcmHeard.add(s);
      if (dest?.type !== 'rtp' || !dest.negotiated) continue;
      const send = dest.negotiated.sendCodec;
      const target: Target = { dest, forward: route.mode === 'forward', codec: send.name, pt: send.pt, frameTicks: rtpTimestampIncrement(send.name) };
      for (const s of route.sources) {
        const list = this.targetsOf.get(s) ?? [];
        list.push(target);
        this.targetsOf.set(s, list);
      }
    }
    const tones = [...this.host.endpoints.values()].some((e) => isGenerator(e) && e.state === 'playing');
    if ((mixing || tones) && !this.clock) this.startClock();
    else if (!mixing && !tones && this.clock) this.stopClock();
  }

  /** The plan as session.info shows it. */
  routes(): SessionInfo['routes'] {
    return [...this.plan.values()].map((r) => ({ destination: r.destination, sources: r.sources, mode: r.mode }));
  }

  /** Add the packets sent since the last call to the metrics (the session's housekeeping, each second). */
  countPackets(): void {
    this.fast.readAll();
    this.forwarded += this.fast.forwarded;
    this.fast.forwarded = 0;
    const env = this.host.env;
    if (this.forwarded) env.countPacket('forwarded', this.forwarded);
    if (this.mixedSent) env.countPacket('mixed', this.mixedSent);
    if (this.toneSent) env.countPacket('tone', this.toneSent);
    this.forwarded = this.mixedSent = this.toneSent = 0;
  }

  /** The session closed: native rules back, the clock stopped, every plan and queue gone. */
  close(): void {
    this.fast.takeAll();
    this.stopClock();
    this.plan.clear();
    this.targetsOf.clear();
    this.mixer = new Mixer();
  }

  private startClock(): void {
    this.nextTickAt = performance.now() + 20;
    this.clock = this.host.env.setTimeout(() => this.tick(), 20);
  }

  private stopClock(): void {
    if (this.clock) clearTimeout(this.clock);
    this.clock = null;
  }

  /** The 20 ms media clock: mixing destinations get one frame each, then tones and files advance. */
  private tick(): void {
    const now = performance.now();
    // Behind by more than 100 ms (a stalled thread): skip ahead instead of bursting.
    if (now - this.nextTickAt > 100) this.nextTickAt = now;
    this.nextTickAt += 20;
    this.clock = this.host.env.setTimeout(() => this.tick(), Math.max(0, this.nextTickAt - performance.now()));
    this.mixer.beginTick();
    for (const route of this.plan.values()) {
      // A forward route whose source sent another of its agreed codecs this tick is mixed too.
      if (route.mode === 'silent') continue;
      this.mixOne(route);
    }
    if (this.host.advanceGenerators()) this.replan();
  }

  /** One frame for one route's destination, if it has anything to hear. */
  private mixOne(route: Route): void {
    const d = this.host.endpoints.get(route.destination);
    const env = this.host.env;
    if (d?.type === 'websocket') {
      const pcm = this.mixer.mixPcm(d.sampleRate, this.mixSources(route));
      if (pcm) env.wsSend(d.id, d.encode(pcm));
      return;
    }
    if (d?.type === 'bridge') {
      const pcm = this.mixer.mixPcm(BRIDGE_RATE, this.mixSources(route));
      if (pcm) env.bridgeAudio(d.peer.actor, d.peer.endpointId, d.frameOut(pcm));
      return;
    }
    if (d?.type === 'webrtc') {
      const codec = d.sendCodec?.name;
      const payload = codec ? this.mixer.mixFor(d.id, codec, this.mixSources(route)) : null;
      if (payload) d.send(payload);
      return;
    }
    if (d?.type !== 'rtp' || !d.negotiated) return;
    if (route.mode === 'forward') {
      const sent = this.mixer.frameCodec(route.sources[0]!);
      if (sent === null || sent === d.negotiated.sendCodec.name) return;
    }
    const sources = this.mixSources(route);
    const codec: CodecName = d.negotiated.sendCodec.name;
    const payload = this.mixer.mixFor(d.id, codec, sources);
    if (!payload) return;
    d.sendRtp(d.negotiated.sendCodec.pt, stampGenerated(d.outbound, rtpTimestampIncrement(codec)), payload);
    if (sources.every((s) => s.generate)) this.toneSent++;
    else this.mixedSent++;
  }

  private mixSources(route: Route): MixSource[] {
    return route.sources.map((id) => {
      const s = this.host.endpoints.get(id);
      return isGenerator(s) ? { id, generate: (rate: number) => s.frame(rate) } : { id };
    });
  }
}
