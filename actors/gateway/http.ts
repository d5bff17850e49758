/**
 * The gateway's HTTP side on its port (3001): GET /healthz, GET /readyz and the SIP server's
 * route handler GET /sipserver/route (drachtio's query fields in, `{action, data}` out; the
 * rules in route-handler.ts, shared with the local SIP server's `route.lookup` message), as a
 * route table (runtime/http/router.ts). Unknown paths 404, other methods 405 with Allow, all as
 * the project's JSON error body. The /control WebSocket upgrade is in actor.ts.
 *
 * /sipserver/route is not authenticated: the SIP server (ours, or drachtio) cannot add headers,
 * and it answers only which tag takes a call. /healthz and /readyz are probes, open too.
 * POST /drain, POST /terminate, GET /drain, the call and session routes (http-calls.ts) and the
 * recording routes (recordings.ts) are protected (`protect`): the bearer token when
 * one is set, else (a loopback listener) the same Origin and Host rule as the /control upgrade.
 * While draining, a lookup this gateway would have taken goes to the fallback (the
 * replacement) when there is one, else it is a 503 reject.
 */
import { Router, routeFor } from '../../runtime/http/router.js';
import { reply, type Reply } from '../../runtime/http/reply.js';
import type { HttpRequest, HttpResponse } from '../../runtime/http/uws.js';
import { errorBody, statusLine } from '../../protocols/objstore/errors.js';
import { authorize, isLoopback } from '../../runtime/http/bearer.js';
import { originAllowed } from '../../protocols/objstore/origin.js';
import type { Drain } from './drain.js';
import { callRoutes, type HttpApi } from './http-calls.js';
import { recordingRoutes, type RecordingsApi } from './recordings.js';
import { answerRoute, type RouteHandlerState } from './route-handler.js';

/** What the HTTP side reads of the gateway. */
export interface HttpState extends RouteHandlerState {
  attached(): boolean;
  calls(): number;
  connections(): number;
  token: string | null;
  allowedOrigins: string[];
  drain: Drain;
  api: HttpApi;
  recordings: RecordingsApi;
}

export interface Call {
  s: HttpState;
  r: Reply;
  method: string;
  query: URLSearchParams;
  /** The request headers the handlers read (uWS's request is gone after the first await). */
  headers: { authorization: string; origin: string; host: string };
}

export function send(r: Reply, status: number, body: string, headers: Array<[string, string]> = []): void {
  if (r.aborted || r.done) return;
  r.done = true;
  r.res.cork(() => {
    r.res.writeStatus(statusLine(status)).writeHeader('Content-Type', 'application/json').writeHeader('Cache-Control', 'no-store');
    for (const [k, v] of headers) r.res.writeHeader(k, v);
    r.res.end(body);
  });
}

const route = routeFor<Call, void | Promise<void>>();

const router = new Router<Call, void | Promise<void>>([
  route('GET', '/healthz', ({ s, r }) => {
    const attached = s.attached();
    send(r, attached ? 200 : 503, JSON.stringify({ status: attached ? 'ok' : 'sip-server-detached', sipServer: { attached, tag: s.tag }, calls: s.calls(), controlConnections: s.connections(), accepting: s.accepting() }));
  }),
  route('GET', '/readyz', ({ s, r }) => {
    const ready = s.attached() && s.accepting();
    send(r, ready ? 200 : 503, JSON.stringify({ ready, sipServer: { attached: s.attached() }, accepting: s.accepting() }));
  }),
  route('GET', '/sipserver/route', (call) => lookup(call)),
  route('POST', '/drain', (call) => protect(call, () => beginDrain(call, 'POST /drain'))),
  route('POST', '/terminate', (call) => protect(call, () => beginDrain(call, 'POST /terminate'))),
  route('GET', '/drain', (call) => protect(call, () => send(call.r, 200, JSON.stringify(call.s.drain.status())))),
  ...callRoutes,
  ...recordingRoutes,
]);

/** Run `then` only for an authenticated request; 401 (or 403) and nothing happens otherwise. */
export function protect(call: Call, then: () => void): void {
  const { s, r, headers } = call;
  const denied = authorize(s.token, headers.authorization, '');
  if (denied) return send(r, 401, errorBody('UNAUTHORIZED', denied), [['WWW-Authenticate', 'Bearer']]);
  if (s.token === null) {
    const origin = headers.origin || undefined;
    if (!originAllowed(origin, undefined, s.allowedOrigins)) return send(r, 403, errorBody('ORIGIN_NOT_ALLOWED', `origin ${JSON.stringify(origin)} may not use this route (GATEWAY_ALLOWED_ORIGINS)`));
    if (!isLoopback(hostName(headers.host))) return send(r, 403, errorBody('HOST_NOT_ALLOWED', `without a token this route takes only a loopback Host; got ${JSON.stringify(headers.host)}`));
  }
  then();
}

function beginDrain({ s, r }: Call, reason: string): void {
  s.drain.begin(reason);
  send(r, 202, JSON.stringify({ ok: true, draining: true }));
}

/** The host name of a Host header (no port; IPv6 brackets removed). */
export function hostName(host: string): string {
  const m = /^\[([^\]]+)\](:\d+)?$/.exec(host);
  if (m) return m[1]!;
  return host.replace(/:\d+$/, '');
}

async function lookup({ s, r, query }: Call): Promise<void> {
  send(r, 200, await answerRoute(s, Object.fromEntries(query)));
}

/** Answer one HTTP request (uWS `any('/*')`). */
export function handleHttp(s: HttpState, res: HttpResponse, req: HttpRequest): void {
  const r = reply(res);
  const method = req.getMethod().toUpperCase();
  const m = router.match(method, req.getUrl());
  if (m.kind === 'not-found') return send(r, 404, errorBody('NOT_FOUND', `no route ${method} ${req.getUrl()}`));
  if (m.kind === 'method-not-allowed') return send(r, 405, errorBody('METHOD_NOT_ALLOWED', `${method} is not allowed on ${m.path}`), [['Allow', m.allow.join(', ')]]);
  const call: Call = { s, r, method, query: new URLSearchParams(req.getQuery() ?? ''), headers: { authorization: req.getHeader('authorization'), origin: req.getHeader('origin'), host: req.getHeader('host') } };
  try {
    const done = m.route.handle(call, m.params);
    if (done) done.catch((err: unknown) => fail(s, r, err));
  } catch (err) {
    fail(s, r, err);
  }
}

function fail(s: HttpState, r: Reply, err: unknown): void {
  s.log.error({ err }, 'HTTP handler failed');
  send(r, 500, errorBody('INTERNAL', (err as Error).message));
}
