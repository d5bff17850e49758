/**
 * What the gateway actor accepts: the SIP server's casts (gateway-messages.ts of the SIP
 * server: requests routed to our tag, dialogs, ACKs, cancels, provisional responses) and its
 * own `info` request (tests and the daemon read the bound port and counts there). Also the
 * gateway's arguments, built from the service settings (service.ts).
 */
import type { Protocol } from '../../runtime/index.js';
import type { RouteLookup, RouteLookupReplies, SipServerCast } from '../sipserver/gateway-messages.js';

export const GATEWAY_ID = 'gateway';

export type GatewayMsg =
  | SipServerCast
  /** The SIP server's route lookup by message (the local route handler without HTTP). */
  | RouteLookup
  | { type: 'info' }
  /** Begin the drain (idempotent: the first deadline is kept); the reply comes when it is over. */
  | { type: 'drain'; reason: string }
  /** Long-poll of the daemon: answers with the reason once a drain has begun (POST /drain...), or null after `waitMs`. */
  | { type: 'drain.wait'; waitMs: number };

export interface GatewayInfo {
  port: number;
  tag: string;
  attached: boolean;
  accepting: boolean;
  calls: number;
  connections: number;
  routes: number;
}

export interface GatewayReplies extends RouteLookupReplies {
  info: GatewayInfo;
  drain: { outcome: 'drained' | 'forced' };
  'drain.wait': { reason: string | null };
}

export type GatewayProtocol = Protocol<GatewayMsg, GatewayReplies>;

export interface GatewayArgs {
  host: string;
  /** HTTP + control WebSocket port (0: any; `info` tells). */
  port: number;
  /** Bearer token of /control (null: none; loopback only). */
  token: string | null;
  /** Origins a browser page may open /control from (others with an Origin header are refused). */
  allowedOrigins: string[];
  /** SIPSERVER_APP_TAG: the tag this gateway attaches to the SIP server with. */
  tag: string;
  /** The SIP server actor's id. */
  sipserver: string;
  /** SIPSERVER_ROUTE_FALLBACK_URL: where route lookups that are not ours go ('' = none: 404). */
  fallbackUrl: string;
  /** How long a fallback lookup may take before it counts as failed (502). */
  fallbackTimeoutMs: number;
  /** The owner has this long to answer sip.invite / sip.reinvite (then 504). */
  answerTimeoutMs: number;
  /** Media bridge backends (ws URLs) for the media link, and their token. */
  mediaBackends: string[];
  mediaToken: string | null;
  /** URL of the module exporting `createMediaLink` (actors/gateway/media/link.js); none: media commands answer NOT_IMPLEMENTED. */
  mediaLinkModule: string | null;
  /** SHUTDOWN_MAX_WAIT_MS: the drain's deadline, from its first trigger. */
  maxWaitMs: number;
  /** SHUTDOWN_CLEANUP_TIMEOUT_MS: bound on the forced cleanup at the deadline. */
  cleanupTimeoutMs: number;
  /**
   * The drain also turns the SIP server's `acceptingNew` off (OPTIONS and new INVITEs 503):
   * true for the daemon's one gateway; false where several gateways share a SIP server and
   * one drains while the others take the new calls.
   */
  drainsSipServer: boolean;
  /** GATEWAY_RECORDING_BUCKET (the bridge's MEDIA_RECORDING_BUCKET): the bucket recordings are objects in (null: none; the recording routes answer 503). */
  recordingBucket: string | null;
}
