/** What the bridge front accepts from session actors: events for the owning connection. */
import type { UrlPolicy } from '../../protocols/media/url-policy.js';
import type { Protocol } from '../../runtime/index.js';
import type { Events } from '../../protocols/media/results.js';
import type { PeerPolicy } from '../../protocols/media/types.js';

/** The events a session emits (session.detached is the front's own). */
export type SessionEvent = Exclude<keyof Events, 'session.detached'>;
/** An event's data as a session emits it: the front adds `session_id` when it pushes it. */
export type SessionEventData<E extends SessionEvent> = Omit<Events[E], 'session_id'>;

/** A session's event for the connection that owns it (one member per event). */
export type BridgeEventMsg<E extends SessionEvent = SessionEvent> = { [K in E]: { type: 'event'; sessionId: string; event: K; data: SessionEventData<K> } }[E];

export type BridgeMsg =
  | BridgeEventMsg
  /** A session that lingered only to relay sockets has let go of its last one. */
  | { type: 'sessionIdle'; sessionId: string }
  /** The bound port (tests listen on port 0) and the number of sessions. */
  | { type: 'info' }
  /** A session actor asks whether the front still knows it (a restarted front does not). */
  | { type: 'owns'; sessionId: string }
  /** WebSocket PCM: one 20 ms frame for the endpoint's client (transferred). */
  | { type: 'wsSend'; endpointId: string; data: ArrayBuffer }
  /** WebSocket PCM: the endpoint ended; close its client's socket and forget its token. */
  | { type: 'wsClose'; endpointId: string; reason: string };

export interface BridgeReplies {
  info: { port: number; sessions: number };
  owns: boolean;
}

export type BridgeProtocol = Protocol<BridgeMsg, BridgeReplies>;

export const BRIDGE_ID = 'media.bridge';

export interface BridgeArgs {
  host: string;
  port: number;
  token: string | null;
  /** Address put in SDP (c=) for peers to send to. */
  advertisedAddress: string;
  /** Address the RTP sockets bind to. */
  rtpBindAddress: string;
  rtpPortMin: number;
  rtpPortMax: number;
  mediaTimeoutMs: number;
  orphanTimeoutMs: number;
  maxEndpointsPerSession: number;
  maxSessions: number;
  /** Sessions one connection may own (created or attached) at once. */
  maxSessionsPerConnection: number;
  /** Origins (`scheme://host[:port]`, lower case) whose web pages may open the command channel; empty: none. */
  allowedOrigins: string[];
  /** Networks (CIDR) in which SDP may name broadcast, multicast, unspecified or link-local addresses. */
  allowedNetworks: string[];
  peerPolicy: PeerPolicy;
  /** Directory local files are played from (null: local file playback is off). */
  fileDir: string | null;
  fileMaxBytes: number;
  /** MEDIA_FILE_ORIGINS / MEDIA_FILE_NETWORKS */
  urlPolicy: UrlPolicy;
  /** MEDIA_FILE_CA's PEM text (null: the system's CAs only) */
  fileCa: string | null;
  /** A WebSocket endpoint not dialled in this long is removed. */
  wsConnectTimeoutMs: number;
  recordingDir: string | null;
  recordingQueuePackets: number;
  /** MEDIA_RECORDING_BUCKET (null: off). */
  recordingBucket: string | null;
  sessionModule: string;
}
