/**
 * The HTTP routes of the control commands, for applications not connected by WebSocket (all
 * protected like /drain, JSON in and out, errors as the project's JSON error body):
 *
 * - `POST /calls {requestUri, sdp, receiverUrl, headers?, from?, auth?, callId?}`: an outbound
 *   call (sip.createOutbound) owned by an HTTP owner (http-owners.ts); answers
 *   `{callId, status, sdp}` once the far end answers; follow-up events go to `receiverUrl`.
 * - `DELETE /calls/:callId`: BYE (or CANCEL while it rings) of an HTTP-owned call.
 * - `POST /sessions {callId?, …}`: a media session (session.create); `DELETE /sessions/:id`.
 *
 * While draining, a new call and a session without the callId of a call the gateway holds are
 * 503 `SHUTTING_DOWN` + Retry-After. A request in flight counts as open work for the drain.
 */
import { collectBody } from '../../runtime/http/reply.js';
import { routeFor } from '../../runtime/http/router.js';
import { errorBody } from '../../protocols/objstore/errors.js';
import { checkGatewayCommand } from '../../protocols/gateway/commands.js';
import type { GatewayErrorCode } from '../../protocols/gateway/envelope.js';
import { CommandError, type Calls } from './calls.js';
import { HTTP_MEDIA_OWNER, isHttpOwner, type HttpOwners } from './http-owners.js';
import type { MediaLink } from './media-link.js';
import type { Call } from './http.js';
import { protect, send } from './http.js';

/** What the call and session routes use of the gateway. */
export interface HttpApi {
  calls: Calls;
  media(): MediaLink | null;
  owners: HttpOwners;
  /** HTTP requests of these routes in flight. */
  inFlight: number;
}

const MAX_BODY = 64 * 1024;

const STATUS: Partial<Record<GatewayErrorCode, number>> = {
  INVALID_PARAMS: 400,
  INVALID_REQUEST: 400,
  CALL_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  CALL_STATE: 409,
  SHUTTING_DOWN: 503,
  SIP_ERROR: 502,
  BACKEND_UNAVAILABLE: 503,
  NOT_IMPLEMENTED: 501,
} as Partial<Record<GatewayErrorCode, number>>;

const route = routeFor<Call, void | Promise<void>>();

export const callRoutes = [
  route('POST', '/calls', (call) => protect(call, () => tracked(call, placeCall))),
  route('DELETE', '/calls/:callId', (call, params) => protect(call, () => tracked(call, () => hangUp(call, params.callId!)))),
  route('POST', '/sessions', (call) => protect(call, () => tracked(call, createSession))),
  route('DELETE', '/sessions/:id', (call, params) => protect(call, () => tracked(call, () => destroySession(call, params.id!)))),
];

/** Run a route's work, counted in flight, its refusals answered as JSON errors. */
function tracked(call: Call, work: (call: Call, body: Promise<Buffer | null>) => Promise<void>): void {
  const api = call.s.api;
  // The body must be asked for before the handler returns (uWS hands it only then).
  const body = call.method === 'POST' ? collectBody(call.r, MAX_BODY) : Promise.resolve(Buffer.alloc(0));
  api.inFlight++;
  void work(call, body)
    .catch((err: unknown) => {
      const code = err instanceof CommandError ? err.code : typeof (err as { code?: unknown })?.code === 'string' ? ((err as { code: string }).code as GatewayErrorCode) : 'INTERNAL_ERROR';
      const status = STATUS[code] ?? 500;
      if (status === 500) call.s.log.error({ ns: 'control', err }, 'HTTP command failed');
      send(call.r, status, errorBody(code, (err as Error).message), code === 'SHUTTING_DOWN' ? [['Retry-After', '1']] : []);
    })
    .finally(() => api.inFlight--);
}

async function jsonBody(body: Promise<Buffer | null>): Promise<Record<string, unknown>> {
  const buf = await body;
  if (buf === null) throw new CommandError('INVALID_REQUEST', `the body is larger than ${MAX_BODY} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(buf.toString('utf8'));
  } catch {
    throw new CommandError('INVALID_REQUEST', 'the body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CommandError('INVALID_REQUEST', 'the body must be a JSON object');
  return value as Record<string, unknown>;
}

async function placeCall(call: Call, body: Promise<Buffer | null>): Promise<void> {
  const { s, r } = call;
  const { receiverUrl, ...params } = await jsonBody(body);
  if (typeof receiverUrl !== 'string' || !/^https?:\/\/[^\s]+$/.test(receiverUrl)) throw new CommandError('INVALID_PARAMS', 'receiverUrl must be an http:// or https:// URL (it receives the call\'s follow-up events)');
  if (!s.accepting()) throw new CommandError('SHUTTING_DOWN', 'the gateway takes no new calls (draining)');
  const checked = checkGatewayCommand('sip.createOutbound', params);
  if (!checked.ok) throw new CommandError(checked.code, checked.message);
  if (checked.command.method !== 'sip.createOutbound') throw new CommandError('INVALID_PARAMS', 'not an outbound call');
  const owner = s.api.owners.add(receiverUrl);
  try {
    const result = await s.api.calls.createOutbound(owner, checked.command.params);
    send(r, 200, JSON.stringify(result));
  } catch (err) {
    s.api.owners.remove(owner);
    throw err;
  }
}

async function hangUp({ s, r }: Call, rawCallId: string): Promise<void> {
  const callId = decodePath(rawCallId);
  const found = s.api.calls.ownerOf(callId);
  if (!found || !isHttpOwner(found.owner)) throw new CommandError('CALL_NOT_FOUND', `no HTTP-owned call ${callId}`);
  const result = found.state === 'calling' ? await s.api.calls.cancelOutbound(found.owner, callId) : await s.api.calls.bye(found.owner, callId);
  send(r, 200, JSON.stringify(result));
}

function decodePath(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new CommandError('INVALID_PARAMS', `the path segment ${JSON.stringify(segment)} is not valid percent-encoding`);
  }
}

function mediaOf(s: Call['s']): MediaLink {
  const media = s.api.media();
  if (!media) throw new CommandError('NOT_IMPLEMENTED', 'this gateway has no media link');
  return media;
}

async function createSession({ s, r }: Call, body: Promise<Buffer | null>): Promise<void> {
  const params = await jsonBody(body);
  if (!s.accepting() && (typeof params.callId !== 'string' || !s.api.calls.has(params.callId))) {
    throw new CommandError('SHUTTING_DOWN', 'the gateway takes no new standalone media sessions (draining); only ones with the callId of a call it holds');
  }
  const result = await mediaOf(s).command(HTTP_MEDIA_OWNER, 'session.create', params);
  send(r, 201, JSON.stringify(result));
}

async function destroySession({ s, r }: Call, id: string): Promise<void> {
  const result = await mediaOf(s).command(HTTP_MEDIA_OWNER, 'session.destroy', { session_id: decodePath(id) });
  send(r, 200, JSON.stringify(result));
}
