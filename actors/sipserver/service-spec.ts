/**
 * The SIP server's settings and the child spec the gateway service will put in its
 * supervision tree (`sipserverChild`). Not wired into the daemon's catalogue yet: the gateway
 * service (part 2 of issue 12) owns that.
 */
import { isIP } from 'node:net';
import { int, str, type Values } from '../../runtime/config/settings.js';
import type { ChildSpec } from '../../runtime/supervisor/spec.js';
import { SIPSERVER_ID, type SipServerArgs } from './messages.js';

export const sipserverSettings = {
  port: int({ env: 'SIPSERVER_PORT', flag: 'sipserver-port', description: 'UDP and TCP port of the SIP server', min: 0, max: 65535, default: 5060 }),
  host: str({ env: 'SIPSERVER_HOST', flag: 'sipserver-host', description: 'Address the SIP server binds (loopback by default)', expect: 'an IP address', default: '127.0.0.1', valid: (v) => isIP(v) !== 0 }),
  advertisedAddress: str({ env: 'SIPSERVER_ADVERTISED_ADDRESS', flag: 'sipserver-advertised-address', description: 'Address put in Via and Contact (empty: the bind address, or 127.0.0.1 for a wildcard)', expect: 'an IP address or empty', default: '', valid: (v) => v === '' || isIP(v) !== 0 }),
  routeUrl: str({ env: 'SIPSERVER_ROUTE_URL', flag: 'sipserver-route-url', description: 'Route handler: GET with drachtio\'s query fields, answered {action, data} (default: the local gateway\'s /sipserver/route)', default: 'http://127.0.0.1:3001/sipserver/route', valid: (v) => /^https?:\/\/[^\s]+$/.test(v) }),
  routeTimeoutMs: int({ env: 'SIPSERVER_ROUTE_TIMEOUT_MS', flag: 'sipserver-route-timeout-ms', description: 'A route lookup that takes longer gets 503 + Retry-After', min: 10, max: 60_000, default: 2000 }),
  inviteAnswerMs: int({ env: 'SIPSERVER_INVITE_ANSWER_MS', flag: 'sipserver-invite-answer-ms', description: 'A routed INVITE the gateway has not answered finally within this time gets 408 (the gateway is told)', min: 1000, max: 600_000, default: 180_000 }),
  retryAfter: int({ env: 'SIPSERVER_RETRY_AFTER', flag: 'sipserver-retry-after', description: 'Retry-After (seconds) of 503 answers', min: 0, max: 3600, default: 1 }),
  maxMessageBytes: int({ env: 'SIPSERVER_MAX_MESSAGE_BYTES', flag: 'sipserver-max-message-bytes', description: 'Largest SIP message accepted (larger: 513, or the TCP connection closed)', min: 1024, max: 1_048_576, default: 65_535 }),
  maxConnections: int({ env: 'SIPSERVER_MAX_CONNECTIONS', flag: 'sipserver-max-connections', description: 'TCP connections at most', min: 1, max: 100_000, default: 4096 }),
  tcpIdleMs: int({ env: 'SIPSERVER_TCP_IDLE_MS', flag: 'sipserver-tcp-idle-ms', description: 'A TCP connection idle this long is closed', min: 1000, max: 3_600_000, default: 120_000 }),
};

export type SipServerValues = Values<typeof sipserverSettings>;

export const SIPSERVER_MODULE = new URL('./actor.js', import.meta.url).href;

/** `routeActor`: the local gateway's id when `routeUrl` is its own handler (messages.ts). */
export function sipserverArgs(v: SipServerValues, routeActor: string | null = null): SipServerArgs {
  const wildcard = v.host === '0.0.0.0' || v.host === '::';
  return {
    host: v.host,
    port: v.port,
    advertisedAddress: v.advertisedAddress || (wildcard ? '127.0.0.1' : v.host),
    routeUrl: v.routeUrl,
    routeActor,
    routeTimeoutMs: v.routeTimeoutMs,
    inviteAnswerMs: v.inviteAnswerMs,
    retryAfter: v.retryAfter,
    maxMessageBytes: v.maxMessageBytes,
    maxConnections: v.maxConnections,
    tcpIdleMs: v.tcpIdleMs,
  };
}

/** The SIP server as a child of the gateway service's supervisor. */
export function sipserverChild(args: SipServerArgs, id = SIPSERVER_ID): ChildSpec {
  return { id, module: SIPSERVER_MODULE, args, shutdownMs: 5000 };
}
