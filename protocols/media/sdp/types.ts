/**
 * Public data shapes of the SDP negotiation for plain RTP/SRTP endpoints. Everything here is
 * plain data (no classes, no functions) so a negotiation can be stored in an endpoint snapshot
 * and moved between worker threads.
 *
 * PT conventions: each side sends with the payload types the *receiver* declared. So
 * `sendCodec.pt` / `telephoneEvent.pt` are what the peer expects from us, and `codecs[].pt` /
 * `recvTelephoneEventPt` are what the peer sends to us (the offerer's PTs when we answered, our
 * own offered PTs when we offered; equal in practice).
 */
import type { CodecName, Direction, SrtpSuite } from '../types.js';

export interface SdesKey {
  tag: number;
  suite: SrtpSuite;
  /** 16-byte master key followed by the 14-byte master salt. */
  keySalt: Uint8Array;
}

export interface CodecChoice {
  name: CodecName;
  pt: number;
  clockRate: number;
  channels: number;
}

export interface TelephoneEvent {
  pt: number;
  clockRate: number;
}

export interface RemoteTransport {
  address: string;
  port: number;
  rtcpAddress: string;
  rtcpPort: number;
  rtcpMux: boolean;
}

/** Skeleton of an m-line, kept so later offers (rekey) repeat every m-line in order (RFC 3264 §8). */
export interface MLine {
  type: string;
  protocol: string;
  formats: string[];
}

export type RtpProfile = 'RTP/AVP' | 'RTP/AVPF' | 'RTP/SAVP' | 'RTP/SAVPF';

export interface Negotiated {
  /** Index of the selected m-section. */
  mid: number;
  profile: RtpProfile;
  /** SRTP in use (a secure profile, or RTP/AVP with an accepted a=crypto: RFC 8643). */
  secure: boolean;
  remote: RemoteTransport;
  /** Codec + PT we send with. */
  sendCodec: CodecChoice;
  /** Every agreed codec (receive PT map), offerer's order. */
  codecs: CodecChoice[];
  /** Telephone-event PT the peer expects from us, at the send codec's clock rate. */
  telephoneEvent: TelephoneEvent | null;
  /** Telephone-event PT the peer sends to us (added field; equals telephoneEvent.pt when we answered). */
  recvTelephoneEventPt: number | null;
  /** Negotiated direction, peer's point of view. */
  peerDirection: Direction;
  /** Peer's send key (we decrypt with it). */
  recvKey: SdesKey | null;
  /** Our send key (we encrypt with it). */
  sendKey: SdesKey | null;
  /** Packetisation time we send with (ms). */
  ptime: number;
  /** Added field: every m-line of the session in order (index `mid` is ours, the rest are at port 0). */
  mLines: MLine[];
}

export interface LocalMedia {
  address: string;
  family: 'IP4' | 'IP6';
  port: number;
  rtcpPort: number;
  sessionId: string;
  sessionVersion: number;
  /** MEDIA_ALLOWED_NETWORKS: special remote addresses (broadcast, multicast, link-local…) allowed anyway (address-policy.ts). */
  allowedNetworks?: readonly string[];
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

export type SrtpMode = 'off' | 'required' | 'optional';

/** An offer we made and are waiting an answer for. Plain data. */
export interface PendingOffer {
  sdp: string;
  srtp: SrtpMode;
  codecs: CodecName[];
  sendKey: SdesKey | null;
  direction: Direction;
  sessionVersion: number;
  /** Profile of our m-line. */
  profile: RtpProfile;
  /** Address family of our media address (the answer must use the same). */
  family: 'IP4' | 'IP6';
  /** The offer's LocalMedia.allowedNetworks, for the answer's addresses. */
  allowedNetworks?: readonly string[];
  /** Codecs as offered, with our PTs, in offer order (the receive PT map). */
  offered: CodecChoice[];
  /** Telephone-event PTs we offered. */
  offeredTelephoneEvents: TelephoneEvent[];
  /** m-lines of the offer; index `mid` is our audio section, the others are port 0. */
  mLines: MLine[];
  mid: number;
  /** Set for an SDES rekey offer: codec state is kept from here (like a reinvite). */
  established: Negotiated | null;
}

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = <T = never>(error: string): Result<T> => ({ ok: false, error });
