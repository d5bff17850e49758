/**
 * What a session actor accepts. Commands come from the bridge front (already validated); the
 * rest are session-to-session messages for `endpoint.transfer` and for relaying the media of
 * an endpoint whose sockets stayed on another thread.
 */
import type { UrlPolicy } from '../../protocols/media/url-policy.js';
import type { Protocol } from '../../runtime/index.js';
import type { Command, Method } from '../../protocols/media/commands.js';
import type { ErrorCode } from '../../protocols/media/envelope.js';
import type { Results } from '../../protocols/media/results.js';
import type { Direction, PeerPolicy } from '../../protocols/media/types.js';
import type { EndpointSnapshot } from './snapshot.js';

/** A command the bridge front passes to the bound session (it answers the other two itself). */
export type SessionCommand = Exclude<Command, { method: 'session.create' | 'session.attach' }>;
export type SessionMethod = SessionCommand['method'];

/** A refused command: the error code and message the client gets. */
export type Refusal = { ok: false; code: ErrorCode; message: string };
/** A command's refusal: its code and a message naming what was wrong. */
export const refusal = (code: ErrorCode, message: string): Refusal => ({ ok: false, code, message });

/** A command's answer: its result as the client's `Results` declares it, or a refusal. */
export type CommandOutcome<M extends Method = Method> = { [K in M]: { ok: true; result: Results[K] } }[M] | Refusal;

/**
 * What a session answers: the client's results, except that session.destroy also says whether
 * the actor must linger to relay the sockets of endpoints it gave away (the front keeps that
 * to itself). Every session outcome is a CommandOutcome.
 */
export type SessionResults = Omit<Results, 'session.destroy'> & { 'session.destroy': Results['session.destroy'] & { lingering: boolean } };
export type SessionOutcome<M extends SessionMethod = SessionMethod> = { [K in M]: { ok: true; result: SessionResults[K] } }[M] | Refusal;

/** A transfer's answer from the target session. */
export type AdoptOutcome = { ok: true; result: { endpoint_id: string } } | Refusal;

export type SessionMsg =
  /** A command of the bound connection. */
  | { type: 'command'; command: SessionCommand; targetActor?: string }
  /** Transfer: adopt an endpoint (its sockets are on this thread's shelf when the threads match). */
  | { type: 'adopt'; snapshot: EndpointSnapshot; from: string }
  /** Relay: a datagram that arrived at an endpoint's sockets on the home thread. */
  | { type: 'relayIn'; endpointId: string; data: ArrayBuffer; address: string; port: number; rtcp: boolean }
  /** Relay: send a datagram from the sockets this session holds for a departed endpoint. */
  | { type: 'relayOut'; endpointId: string; data: ArrayBuffer; address: string; port: number; rtcp: boolean }
  /** Relay: the endpoint now lives in `to` (or came home: `to` on this thread took the sockets). */
  | { type: 'relayRetarget'; endpointId: string; to: string }
  /** Relay: the endpoint was removed; close its sockets. */
  | { type: 'relayClose'; endpointId: string; closeSockets: boolean }
  /** WebSocket PCM: a client dialled in with the endpoint's token (answer: false when it is gone). */
  | { type: 'wsOpen'; endpointId: string }
  /** WebSocket PCM: a binary message from the client (transferred). */
  | { type: 'wsAudio'; endpointId: string; data: ArrayBuffer }
  /** WebSocket PCM: the client's socket closed. */
  | { type: 'wsClosed'; endpointId: string }
  /** Bridge: make this session's side of a pair (answer: a refusal when it cannot). */
  | { type: 'bridgeAttach'; attach: BridgeAttach }
  /** Bridge: one 20 ms frame of 48 kHz PCM for this session's side `endpointId` (transferred). */
  | { type: 'bridgeAudio'; endpointId: string; data: ArrayBuffer }
  /** Bridge: the other side went; remove this side. */
  | { type: 'bridgeDetach'; endpointId: string; reason: 'peer removed' | 'peer session closed' };

/** The other session's request to make its pair's side here. */
export interface BridgeAttach {
  endpointId: string;
  direction: Direction;
  peerActor: string;
  peerSessionId: string;
  peerEndpointId: string;
}

export interface SessionReplies {
  command: SessionOutcome;
  adopt: AdoptOutcome;
  wsOpen: boolean;
  bridgeAttach: { ok: true } | Refusal;
}

export type SessionProtocol = Protocol<SessionMsg, SessionReplies>;

export interface SessionArgs {
  sessionId: string;
  bridge: string;
  advertisedAddress: string;
  family: 'IP4' | 'IP6';
  bindAddress: string;
  rtpPortMin: number;
  rtpPortMax: number;
  mediaTimeoutMs: number;
  maxEndpoints: number;
  peerPolicy: PeerPolicy;
  /** Directory local files are played from (null or absent: local file playback is off). */
  fileDir?: string | null;
  /** Largest file a file endpoint opens, in bytes (absent: 100 MiB). */
  fileMaxBytes?: number;
  /** URL file sources: the origins and networks allowed (url-policy.ts); absent: URL playback off. */
  urlPolicy?: UrlPolicy;
  /** Extra CA certificates (PEM) for https file sources. */
  fileCa?: string | null;
  /** A WebSocket endpoint not dialled in this long is removed (absent: 30 s). */
  wsConnectTimeoutMs?: number;
  /** Directory recordings are written to (null or absent: recording is off). */
  recordingDir?: string | null;
  /** Records a recording keeps waiting for the disk at most (absent: 1000); beyond, they are dropped and counted. */
  recordingQueuePackets?: number;
  /** MEDIA_RECORDING_BUCKET: finished recordings are stored as objects under it (null: they stay in recordingDir). */
  recordingBucket?: string | null;
  /** MEDIA_ALLOWED_NETWORKS (absent: none): special remote addresses SDP may name anyway. */
  allowedNetworks?: string[];
  /** How often the session checks that the front still knows it (default 5000 ms). */
  ownerCheckMs?: number;
}

const SESSION_ACTOR_PREFIX = 'media.session.';
/** The id of a session's actor, and back. */
export const sessionActorId = (sessionId: string) => `${SESSION_ACTOR_PREFIX}${sessionId}`;
export const sessionIdOf = (actorId: string) => actorId.slice(SESSION_ACTOR_PREFIX.length);
