/**
 * What a session actor accepts. Commands come from the bridge front (already validated); the
 * rest are session-to-session messages for `endpoint.transfer` and for relaying the media of
 * an endpoint whose sockets stayed on another thread.
 */
import type { Protocol } from '../../runtime/index.js';
import type { Command } from '../../protocols/media/commands.js';
import type { ErrorCode } from '../../protocols/media/envelope.js';
import type { EndpointSnapshot } from './snapshot.js';

export type CommandOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; code: ErrorCode; message: string };

export type SessionMsg =
  /** A command of the bound connection. */
  | { type: 'command'; command: Exclude<Command, { method: 'session.create' | 'session.attach' }>; targetActor?: string }
  /** Transfer: adopt an endpoint (its sockets are on this thread's shelf when the threads match). */
  | { type: 'adopt'; snapshot: EndpointSnapshot; from: string }
  /** Relay: a datagram that arrived at an endpoint's sockets on the home thread. */
  | { type: 'relayIn'; endpointId: string; data: ArrayBuffer; address: string; port: number; rtcp: boolean }
  /** Relay: send a datagram from the sockets this session holds for a departed endpoint. */
  | { type: 'relayOut'; endpointId: string; data: ArrayBuffer; address: string; port: number; rtcp: boolean }
  /** Relay: the endpoint now lives in `to` (or came home: `to` on this thread took the sockets). */
  | { type: 'relayRetarget'; endpointId: string; to: string }
  /** Relay: the endpoint was removed; close its sockets. */
  | { type: 'relayClose'; endpointId: string; closeSockets: boolean };

export interface SessionReplies {
  command: CommandOutcome;
  adopt: CommandOutcome;
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
  peerPolicy: 'strict' | 'address' | 'latch';
  /** How often the session checks that the front still knows it (default 5000 ms). */
  ownerCheckMs?: number;
}

export const sessionActorId = (sessionId: string) => `media.session.${sessionId}`;
