/**
 * The session gateway as a service of the daemon: its settings (the gateway's and the SIP
 * server's), and its supervision tree — the SIP server first, then the gateway actor, by
 * default on a thread of its own (GATEWAY_THREAD: it holds the higher call rate, docs/gateway.md).
 * `stopsFirst`: started after every other service and stopped (drained, part 2) first, while the
 * media bridges it uses keep serving.
 */
import { int, oneOf, str, type Values } from '../../runtime/config/settings.js';
import type { ChildSpec } from '../../runtime/supervisor/spec.js';
import { defineService } from '../../runtime/service.js';
import { isLoopback } from '../../runtime/http/bearer.js';
import { parseAllowedOrigins } from '../../protocols/objstore/origin.js';
import { SIPSERVER_ID } from '../sipserver/messages.js';
import { sipserverArgs, sipserverChild, sipserverSettings } from '../sipserver/service-spec.js';
import { isValidBucketName } from '../../protocols/objstore/paths.js';
import { GATEWAY_ID, type GatewayArgs, type GatewayProtocol } from './messages.js';

const isWsUrl = (v: string) => /^wss?:\/\/[^\s,]+$/.test(v);
const DEFAULT_ROUTE_URL = 'http://127.0.0.1:3001/sipserver/route';

export const gatewaySettings = {
  port: int({ env: 'GATEWAY_PORT', flag: 'gateway-port', description: 'Port of the gateway\'s HTTP endpoints and /control WebSocket', min: 0, max: 65535, default: 3001 }),
  host: str({ env: 'GATEWAY_HOST', flag: 'gateway-host', description: 'Address the gateway binds (loopback by default; any other address needs GATEWAY_AUTH_TOKEN)', default: '127.0.0.1' }),
  token: str({ env: 'GATEWAY_AUTH_TOKEN', flag: 'gateway-auth-token', description: 'Bearer token of the /control WebSocket (Authorization: Bearer <token> or ?token=); required when GATEWAY_HOST is not loopback', default: '' }),
  allowedOrigins: str({ env: 'GATEWAY_ALLOWED_ORIGINS', flag: 'gateway-allowed-origins', description: 'Comma-separated origins whose pages may open /control (requests without Origin always may)', default: '', valid: (v) => { try { parseAllowedOrigins(v); return true; } catch { return false; } } }),
  tag: str({ env: 'SIPSERVER_APP_TAG', flag: 'sipserver-app-tag', description: 'Tag the gateway attaches to the SIP server with (distinct for each concurrently running instance; at most 32 characters)', expect: '1-32 letters, digits, dots, dashes or underscores', default: 'hostd', valid: (v) => /^[A-Za-z0-9._-]{1,32}$/.test(v) }),
  fallbackUrl: str({ env: 'SIPSERVER_ROUTE_FALLBACK_URL', flag: 'sipserver-route-fallback-url', description: 'Route handler asked for route lookups this gateway does not take (its answer passed through; a failure gives a 502 reject); empty: 404 reject', default: '', valid: (v) => v === '' || /^https?:\/\/[^\s]+$/.test(v) }),
  fallbackTimeoutMs: int({ env: 'GATEWAY_ROUTE_FALLBACK_TIMEOUT_MS', flag: 'gateway-route-fallback-timeout-ms', description: 'A fallback route lookup slower than this fails (502 reject); keep it under SIPSERVER_ROUTE_TIMEOUT_MS', min: 10, max: 60_000, default: 1500 }),
  answerTimeoutMs: int({ env: 'GATEWAY_ANSWER_TIMEOUT_MS', flag: 'gateway-answer-timeout-ms', description: 'The owner must answer sip.invite (and sip.reinvite) within this time, else 504', min: 100, max: 600_000, default: 30_000 }),
  mediaBackends: str({ env: 'GATEWAY_MEDIA_BACKENDS', flag: 'gateway-media-backends', description: 'Comma-separated media bridge command WebSocket URLs', expect: 'ws:// or wss:// URLs, comma-separated', default: 'ws://127.0.0.1:3002', valid: (v) => v.split(',').every((u) => isWsUrl(u.trim())) }),
  shutdownMaxWaitMs: int({ env: 'SHUTDOWN_MAX_WAIT_MS', flag: 'shutdown-max-wait-ms', description: 'The drain\'s deadline: calls still up then get BYE (or CANCEL), media sessions are destroyed and owners closed (1001); keep HOSTD_SHUTDOWN_TIMEOUT_MS and the platform\'s termination grace above it plus the cleanup bound', min: 1, max: 2_147_483_647, default: 1_800_000 }),
  shutdownCleanupTimeoutMs: int({ env: 'SHUTDOWN_CLEANUP_TIMEOUT_MS', flag: 'shutdown-cleanup-timeout-ms', description: 'Bound on the forced cleanup at the drain\'s deadline (BYE/CANCEL, media sessions destroyed, owners closed); then the daemon stops anyway', min: 1, max: 2_147_483_647, default: 5000 }),
  recordingBucket: str({ env: 'GATEWAY_RECORDING_BUCKET', flag: 'gateway-recording-bucket', description: "Bucket the recording routes read recordings from (<bucket>/<session_id>/<file>): the media bridge's MEDIA_RECORDING_BUCKET; empty: the routes answer 503", expect: 'a bucket name (no /, not starting with $) or empty', default: '', valid: (v) => v === '' || isValidBucketName(v) }),
  thread: oneOf({ env: 'GATEWAY_THREAD', flag: 'gateway-thread', description: "Where the gateway actor runs: 'own' (a thread of its own: the SIP path on two cores; holds the higher call rate, docs/gateway.md \"Calls per second\") or 'sipserver' (the SIP server's thread: less CPU per call in all, for a machine with one core to give)", values: ['sipserver', 'own'] as const, default: 'own' }),
  mediaToken: str({ env: 'GATEWAY_MEDIA_TOKEN', flag: 'gateway-media-token', description: 'Bearer token the gateway presents to the media bridges (their MEDIA_TOKEN)', default: '' }),
  ...sipSettings(),
};

/** The SIP server's settings under keys of their own (`sipPort`...), same env vars and flags. */
function sipSettings() {
  const s = sipserverSettings;
  return {
    sipPort: s.port,
    sipHost: s.host,
    sipAdvertisedAddress: s.advertisedAddress,
    sipRouteUrl: s.routeUrl,
    sipRouteTimeoutMs: s.routeTimeoutMs,
    sipInviteAnswerMs: s.inviteAnswerMs,
    sipRetryAfter: s.retryAfter,
    sipMaxMessageBytes: s.maxMessageBytes,
    sipMaxConnections: s.maxConnections,
    sipTcpIdleMs: s.tcpIdleMs,
  };
}

export type GatewayValues = Values<typeof gatewaySettings>;

export const GATEWAY_MODULE = new URL('./actor.js', import.meta.url).href;
/** The media link's implementation (actors/gateway/media/link.ts). */
export const MEDIA_LINK_MODULE = new URL('./media/link.js', import.meta.url).href;

/** The gateway's arguments from the settings' values; throws with a clear message on a bad mix. */
export function gatewayArgs(v: GatewayValues, overrides: Partial<GatewayArgs> = {}): GatewayArgs {
  const token = v.token ? v.token : null;
  if (!token && !isLoopback(v.host)) throw new Error(`GATEWAY_HOST ${v.host} is not a loopback address: set GATEWAY_AUTH_TOKEN (applications then send Authorization: Bearer <token>)`);
  return {
    host: v.host,
    port: v.port,
    token,
    allowedOrigins: parseAllowedOrigins(v.allowedOrigins),
    tag: v.tag,
    sipserver: SIPSERVER_ID,
    fallbackUrl: v.fallbackUrl,
    fallbackTimeoutMs: v.fallbackTimeoutMs,
    answerTimeoutMs: v.answerTimeoutMs,
    mediaBackends: v.mediaBackends.split(',').map((u) => u.trim()),
    mediaToken: v.mediaToken || null,
    mediaLinkModule: MEDIA_LINK_MODULE,
    maxWaitMs: v.shutdownMaxWaitMs,
    cleanupTimeoutMs: v.shutdownCleanupTimeoutMs,
    drainsSipServer: true,
    recordingBucket: v.recordingBucket || null,
    ...overrides,
  };
}

/**
 * The SIP server's route URL: the default follows GATEWAY_PORT (the local gateway's handler),
 * and is then asked by message (`route.lookup` to the gateway actor: no HTTP round trip per
 * call). An operator-set URL — even one naming this gateway — is always asked over HTTP.
 * `gatewayId`: the local gateway actor's id (tests run gateways under other ids).
 */
export function sipArgs(v: GatewayValues, gatewayId: string = GATEWAY_ID) {
  const local = v.sipRouteUrl === DEFAULT_ROUTE_URL;
  const routeUrl = local ? `http://127.0.0.1:${v.port}/sipserver/route` : v.sipRouteUrl;
  return sipserverArgs({
    port: v.sipPort,
    host: v.sipHost,
    advertisedAddress: v.sipAdvertisedAddress,
    routeUrl,
    routeTimeoutMs: v.sipRouteTimeoutMs,
    inviteAnswerMs: v.sipInviteAnswerMs,
    retryAfter: v.sipRetryAfter,
    maxMessageBytes: v.sipMaxMessageBytes,
    maxConnections: v.sipMaxConnections,
    tcpIdleMs: v.sipTcpIdleMs,
  }, local ? gatewayId : null);
}

/**
 * The gateway actor as a child of the service's tree: by default on a thread of its own
 * (GATEWAY_THREAD=own); with GATEWAY_THREAD=sipserver on the SIP server's thread (a thread of
 * its own if the SIP server is not running when it starts).
 */
export function gatewayChild(v: GatewayValues): ChildSpec {
  const placement: ChildSpec['placement'] = v.thread === 'sipserver' ? { mode: 'with', actor: SIPSERVER_ID, fallback: { mode: 'dedicated' } } : { mode: 'dedicated' };
  return { id: GATEWAY_ID, module: GATEWAY_MODULE, args: gatewayArgs(v), shutdownMs: 10_000, placement };
}

export const service = defineService({
  name: 'gateway',
  settings: gatewaySettings,
  stopsFirst: true,
  supervisor({ values }) {
    return {
      id: 'gateway.supervisor',
      children: [sipserverChild(sipArgs(values)), gatewayChild(values)],
    };
  },
  drain: {
    // The gateway actor drains (drain.ts) and answers when its work is done or its deadline's
    // cleanup is over; the daemon then stops the tree in order.
    async run(h, reason) {
      const gateway = h.ref<GatewayProtocol>(GATEWAY_ID);
      const r = await gateway.request({ type: 'drain', reason }, { timeoutMs: h.values.shutdownMaxWaitMs + h.values.shutdownCleanupTimeoutMs + 10_000 });
      h.log.info({ outcome: r.outcome }, 'gateway drained');
    },
    async requested(h, signal) {
      const gateway = h.ref<GatewayProtocol>(GATEWAY_ID);
      const r = await gateway.request({ type: 'drain.wait', waitMs: DRAIN_WAIT_MS }, { timeoutMs: DRAIN_WAIT_MS + 5000 });
      return signal.aborted ? null : r.reason;
    },
  },
});

/** How long one `drain.wait` long-poll lasts before it answers null (and is asked again). */
const DRAIN_WAIT_MS = 20_000;
