/**
 * The gateway's route handler: which tag takes a new out-of-dialog request, from drachtio's
 * query fields (`method, domain, protocol, source_address, fromUser, toUser, uriUser, ...`),
 * answered as `{action, data}` text. One home for both ways it is asked: GET /sipserver/route
 * (http.ts: an external SIP server, or ours with an operator-set URL) and the local SIP
 * server's `route.lookup` message (actor.ts: the default route URL, no HTTP on the way). Both
 * answer the same text and count the same metric (`gateway_route_lookups_total`).
 *
 * Rules (protocols/gateway/routes.ts `decideRoute`): this gateway's tag for an INVITE a
 * registered route matches while new work is accepted; otherwise the fallback handler's answer
 * passed through when SIPSERVER_ROUTE_FALLBACK_URL is set (a failing fallback: a 502 reject),
 * else 404 — or 503 while draining.
 */
import type { Logger } from 'pino';
import { decideRoute, fallbackFailed, notFound, type RouteTable } from '../../protocols/gateway/routes.js';
import type { RouteQuery } from '../sipserver/gateway-messages.js';
import { routeLookupsTotal } from './metrics.js';

/** What the route handler reads of the gateway. */
export interface RouteHandlerState {
  log: Logger;
  routes: RouteTable;
  tag: string;
  fallbackUrl: string;
  fallbackTimeoutMs: number;
  accepting(): boolean;
}

/** The answer to one route query, as the text the handler answers (never throws). */
export async function answerRoute(s: RouteHandlerState, q: RouteQuery): Promise<string> {
  const decision = decideRoute(q, s.routes, s.tag, s.accepting());
  if (decision.kind === 'route') {
    routeLookupsTotal.inc({ outcome: 'route' });
    s.log.debug({ uriUser: q.uriUser, owner: decision.owner }, 'route lookup: ours');
    return JSON.stringify(decision.body);
  }
  if (!s.fallbackUrl && !s.accepting()) {
    routeLookupsTotal.inc({ outcome: 'draining' });
    return JSON.stringify({ action: 'reject', data: { status: 503, reason: 'Service Unavailable', detail: decision.reason } });
  }
  if (!s.fallbackUrl) {
    routeLookupsTotal.inc({ outcome: 'not-found' });
    return JSON.stringify(notFound(decision.reason));
  }
  const url = new URL(s.fallbackUrl);
  for (const [k, v] of Object.entries(q)) url.searchParams.append(k, v);
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(s.fallbackTimeoutMs) });
    const text = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    routeLookupsTotal.inc({ outcome: 'fallback' });
    return text;
  } catch (err) {
    routeLookupsTotal.inc({ outcome: 'fallback-failed' });
    s.log.warn({ fallback: url.origin + url.pathname, err: (err as Error).message }, 'fallback route handler failed: 502');
    return JSON.stringify(fallbackFailed(`the fallback route handler failed: ${(err as Error).message}`));
  }
}
