/**
 * Route lookup as drachtio does it: an HTTP GET to the route handler with the query fields
 * `method, domain, protocol, source_address, fromUser, toUser, uriUser, contentType, uri`,
 * answered `{action, data}`. This file builds the query, calls the handler with a deadline
 * and turns its answer into a typed decision; the core acts on it. When the handler is this
 * daemon's own gateway (the default URL), the query goes to the gateway actor as a
 * `route.lookup` message instead (`askRouteActor`): no HTTP client, server or socket on the
 * way, the same answer text read by the same `parseRouteAnswer`.
 *
 * Decisions (docs/gateway.md "SIP server"):
 * - Not valid JSON, not an object, or `action`/`data` missing or of the wrong shape → 500.
 * - A handler that cannot be reached or answers a non-2xx HTTP status → 503 + Retry-After.
 * - A lookup over the deadline → 503 + Retry-After too (the handler is overloaded).
 * - `proxy` → 501: the SIP server is a UAS/B2BUA, it does not forward (docs say why).
 * - By message: no reply within the deadline → 503 timeout; the gateway actor not running or
 *   failing → 503 unreachable (as a handler that cannot be reached).
 * - With the local gateway as the handler, a new INVITE its copied routes select
 *   (`lookupLocally`) is routed to its tag at once; only the rest is asked.
 */
import http from 'node:http';
import https from 'node:https';
import type { SipRequest } from '../../protocols/sip/index.js';
import { formatUri, isSipUri } from '../../protocols/sip/index.js';
import { ActorError, type ActorRef, type Protocol } from '../../runtime/index.js';
import type { RouteLookup, RouteLookupReplies, RouteQuery } from './gateway-messages.js';
import type { CopiedRoutes } from '../../protocols/gateway/routes.js';
// the route handler's own count: a route answered from its copy is one it would have answered
import { routeLookupsTotal } from '../gateway/route-metrics.js';

export type RouteDecision =
  | { action: 'reject'; status: number; reason?: string }
  | { action: 'redirect'; contact: string }
  | { action: 'proxy'; destination: string }
  | { action: 'route'; tag: string }
  | { action: 'error'; status: 500 | 503; reason: string; outcome: 'malformed' | 'unreachable' | 'timeout' };

export function routeQuery(req: SipRequest, protocol: 'udp' | 'tcp', sourceAddress: string): RouteQuery {
  const user = (u: SipRequest['uri']) => (isSipUri(u) ? (u.user ?? '') : '');
  return {
    method: req.method,
    domain: isSipUri(req.uri) ? req.uri.host : '',
    protocol,
    source_address: sourceAddress,
    fromUser: user(req.from.uri),
    toUser: user(req.to.uri),
    uriUser: user(req.uri),
    contentType: req.contentType ? `${req.contentType.type}/${req.contentType.subtype}` : '',
    uri: formatUri(req.uri),
  };
}

/** The gateway actor as a route handler (gateway-messages.ts `route.lookup`). */
export type RouteHandlerProtocol = Protocol<RouteLookup, RouteLookupReplies>;

/** Ask the local gateway actor; never throws. */
export async function askRouteActor(handler: ActorRef<RouteHandlerProtocol>, query: RouteQuery, timeoutMs: number): Promise<RouteDecision> {
  try {
    const { answer } = await handler.request({ type: 'route.lookup', query }, { timeoutMs, handover: true });
    return parseRouteAnswer(answer);
  } catch (err) {
    if (err instanceof ActorError && err.code === 'TIMEOUT') return { action: 'error', status: 503, reason: `route lookup took over ${timeoutMs} ms`, outcome: 'timeout' };
    return { action: 'error', status: 503, reason: `route handler (the gateway actor) failed: ${(err as Error).message}`, outcome: 'unreachable' };
  }
}

/**
 * The route the local handler's copied table selects (protocols/gateway/routes.ts
 * CopiedRoutes), without asking it; undefined when the copy does not select it (ask). Counted
 * as the handler counts a route it answers (`gateway_route_lookups_total{outcome="route"}`).
 */
export function lookupLocally(copied: CopiedRoutes, query: RouteQuery): Promise<RouteDecision> | undefined {
  const tag = copied.select(query);
  if (tag === undefined) return undefined;
  routeLookupsTotal.inc({ outcome: 'route' });
  return Promise.resolve({ action: 'route', tag });
}

/** Read a handler's answer body. */
export function parseRouteAnswer(text: string): RouteDecision {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { action: 'error', status: 500, reason: 'route handler answer is not JSON', outcome: 'malformed' };
  }
  const bad = (why: string): RouteDecision => ({ action: 'error', status: 500, reason: `route handler answer ${why}`, outcome: 'malformed' });
  if (typeof v !== 'object' || v === null) return bad('is not an object');
  const { action, data } = v as { action?: unknown; data?: unknown };
  if (typeof data !== 'object' || data === null) return bad('has no data object');
  const d = data as Record<string, unknown>;
  switch (action) {
    case 'reject': {
      const status = d.status;
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 300 || status > 699) return bad('reject: data.status must be an integer from 300 to 699');
      if (d.reason !== undefined && (typeof d.reason !== 'string' || /[\r\n]/.test(d.reason))) return bad('reject: data.reason must be a one-line string');
      return d.reason !== undefined ? { action, status, reason: d.reason as string } : { action, status };
    }
    case 'redirect':
      if (typeof d.contact !== 'string' || d.contact === '' || /[\r\n]/.test(d.contact)) return bad('redirect: data.contact must be a SIP URI');
      return { action, contact: d.contact };
    case 'proxy':
      return { action, destination: typeof d.destination === 'string' ? d.destination : String(d.destination) };
    case 'route':
      if (typeof d.tag !== 'string' || d.tag === '') return bad('route: data.tag must be a non-empty string');
      return { action, tag: d.tag };
    default:
      return bad(`has an unknown action ${JSON.stringify(action)}`);
  }
}

/**
 * Keep-alive agents: one route lookup per new call, so the connection to the handler is kept
 * (fetch cost ~0.6 ms of CPU a lookup here, a pooled node:http request a fraction of that).
 */
const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 64 }), https: new https.Agent({ keepAlive: true, maxSockets: 64 }) };
/** A route handler's answer is a small JSON object: more than this is refused. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** A handler URL read once (one lookup per new call): where to connect and the path the query is added to. */
interface Handler {
  secure: boolean;
  options: { hostname: string; port: string | number; auth?: string };
  path: string;
  /** `?` or `&`: how the query joins the path. */
  join: string;
}
const handlers = new Map<string, Handler>();

function handlerOf(url: string): Handler {
  let h = handlers.get(url);
  if (!h) {
    const u = new URL(url);
    const secure = u.protocol === 'https:';
    const auth = u.username || u.password ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : undefined;
    h = {
      secure,
      options: { hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || (secure ? 443 : 80), ...(auth ? { auth } : {}) },
      path: `${u.pathname}${u.search}`,
      join: u.search ? '&' : '?',
    };
    if (handlers.size > 16) handlers.clear();
    handlers.set(url, h);
  }
  return h;
}

/** GET the handler; never throws. */
export function lookupRoute(url: string, fields: RouteQuery, timeoutMs: number): Promise<RouteDecision> {
  let h: Handler;
  try {
    h = handlerOf(url);
  } catch {
    return Promise.resolve({ action: 'error', status: 503, reason: 'route handler URL is not a URL', outcome: 'unreachable' });
  }
  const secure = h.secure;
  const query = new URLSearchParams(fields);
  return new Promise<RouteDecision>((resolve) => {
    let settled = false;
    const done = (d: RouteDecision) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(d);
    };
    let req: http.ClientRequest;
    const send = (mayRetry: boolean) => {
      const r = (secure ? https : http).request({ ...h.options, path: `${h.path}${h.join}${query.toString()}`, agent: secure ? agents.https : agents.http, headers: { accept: 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_ANSWER_BYTES) {
            r.destroy();
            done({ action: 'error', status: 500, reason: `route handler answer is over ${MAX_ANSWER_BYTES} bytes`, outcome: 'malformed' });
          } else chunks.push(c);
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status > 299) done({ action: 'error', status: 503, reason: `route handler answered HTTP ${status}`, outcome: 'unreachable' });
          else done(parseRouteAnswer(Buffer.concat(chunks).toString('utf8')));
        });
        res.on('error', () => done({ action: 'error', status: 503, reason: 'route handler answer cut off', outcome: 'unreachable' }));
        res.on('aborted', () => done({ action: 'error', status: 503, reason: 'route handler answer cut off', outcome: 'unreachable' }));
      });
      req = r;
      // node's documented pattern for kept-alive sockets: one the handler closed while it was idle
      // fails the first write with ECONNRESET; the GET is idempotent, so it goes once more on a new one
      r.on('error', (err: NodeJS.ErrnoException) => {
        if (mayRetry && !settled && r.reusedSocket && err.code === 'ECONNRESET') send(false);
        else done({ action: 'error', status: 503, reason: 'route handler unreachable', outcome: 'unreachable' });
      });
      r.end();
    };
    const timer = setTimeout(() => {
      done({ action: 'error', status: 503, reason: `route lookup took over ${timeoutMs} ms`, outcome: 'timeout' });
      req.destroy();
    }, timeoutMs);
    send(true);
  });
}
