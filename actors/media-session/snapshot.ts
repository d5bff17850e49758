/**
 * An endpoint as plain data: what `endpoint.transfer` moves to another session (possibly on
 * another thread). Everything but the sockets, which stay where they were opened: `home`
 * names the session actor (and its thread) that holds them. A WebRTC endpoint's snapshot only
 * names it: its werift peer connection cannot be made plain data, so the object itself waits on
 * its thread's shelf (webrtc-endpoint.ts) for a session of that thread to take it.
 */
import type { Direction } from '../../protocols/media/types.js';
import type { Negotiated, PendingOffer, LocalMedia } from '../../protocols/media/sdp/index.js';
import type { SrtpReceiverState, SrtpSendState } from '../../protocols/media/srtp/index.js';
import type { OutboundState } from '../../protocols/media/outbound.js';

export type RtpState = 'new' | 'connected' | 'disconnected';

export interface RtpEndpointSnapshot {
  kind: 'rtp';
  id: string;
  state: RtpState;
  requestedDirection: Direction;
  override: Direction | null;
  local: LocalMedia;
  negotiated: Negotiated | null;
  pending: PendingOffer | null;
  /** The offer this endpoint created, kept until its answer (a rekey offer too). */
  srtpSend: SrtpSendState | null;
  srtpRecv: SrtpReceiverState | null;
  outbound: OutboundState;
  latched: { address: string; port: number } | null;
  lastPacketAt: number | null;
  negotiatedAt: number | null;
  timedOut: boolean;
  counters: Record<string, number>;
  home: { actor: string; threadId: number };
}

export interface WebRtcEndpointSnapshot {
  kind: 'webrtc';
  id: string;
  home: { actor: string; threadId: number };
}

export type EndpointSnapshot = RtpEndpointSnapshot | WebRtcEndpointSnapshot;
