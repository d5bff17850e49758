/**
 * Route lookup as drachtio does it: an HTTP GET to the route handler with the query fields
 * `method, domain, protocol, source_address, fromUser, toUser, uriUser, contentType, uri`,
 * answered `{action, data}`. This file builds the query, calls the handler with a deadline
 * and turns its answer into a typed decision; the core acts on it.
 *
 * Decisions (docs/gateway.md "SIP server"):
 * - Not valid JSON, not an object, or `action`/`data` missing or of the wrong shape → 500.
 * - A handler that cannot be reached or answers a non-2xx HTTP status → 503 + Retry-After.
 * - A lookup over the deadline → 503 + Retry-After too (the handler is overloaded).
 * - `proxy` → 501: the SIP server is a UAS/B2BUA, it does not forward (docs say why).
 */
import type { SipRequest } from '../../protocols/sip/index.js';
import { formatUri, isSipUri } from '../../protocols/sip/index.js';

export type RouteDecision =
  | { action: 'reject'; status: number; reason?: string }
  | { action: 'redirect'; contact: string }
  | { action: 'proxy'; destination: string }
  | { action: 'route'; tag: string }
  | { action: 'error'; status: 500 | 503; reason: string; outcome: 'malformed' | 'unreachable' | 'timeout' };

export function routeQuery(req: SipRequest, protocol: 'udp' | 'tcp', sourceAddress: string): URLSearchParams {
  const user = (u: SipRequest['uri']) => (isSipUri(u) ? (u.user ?? '') : '');
  const q = new URLSearchParams();
  q.set('method', req.method);
  q.set('domain', isSipUri(req.uri) ? req.uri.host : '');
  q.set('protocol', protocol);
  q.set('source_address', sourceAddress);
  q.set('fromUser', user(req.from.uri));
  q.set('toUser', user(req.to.uri));
  q.set('uriUser', user(req.uri));
  q.set('contentType', req.contentType ? `${req.contentType.type}/${req.contentType.subtype}` : '');
  q.set('uri', formatUri(req.uri));
  return q;
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

/** GET the handler; never throws. */
export async function lookupRoute(url: string, query: URLSearchParams, timeoutMs: number): Promise<RouteDecision> {
  const target = `${url}${url.includes('?') ? '&' : '?'}${query.toString()}`;
  let res: Response;
  try {
    res = await fetch(target, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    return timedOut
      ? { action: 'error', status: 503, reason: `route lookup took over ${timeoutMs} ms`, outcome: 'timeout' }
      : { action: 'error', status: 503, reason: 'route handler unreachable', outcome: 'unreachable' };
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    return { action: 'error', status: 503, reason: 'route handler answer cut off', outcome: 'unreachable' };
  }
  if (!res.ok) return { action: 'error', status: 503, reason: `route handler answered HTTP ${res.status}`, outcome: 'unreachable' };
  return parseRouteAnswer(text);
}
