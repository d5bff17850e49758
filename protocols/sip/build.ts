/**
 * Building messages: a response from a request (RFC 3261 §8.2.6), a 400 from what the parser
 * could read of a malformed request, new requests, the ACK of a non-2xx final response
 * (§17.1.1.3), CANCEL (§9.1), and the identifiers a UA invents (branch, tag, Call-ID) from
 * random bytes the caller passes in, so this module stays pure.
 */
import { tagOf, withTag } from './address.js';
import { headerValue } from './parse.js';
import type { Header, MediaType, NameAddr, PartialMessage, SipRequest, SipResponse, Uri, Via } from './types.js';
import { MAGIC_COOKIE } from './via.js';

const NO_BODY = Buffer.alloc(0);

/** Default reason phrases (RFC 3261 §21 and the extensions the gateway uses). */
export const REASON_PHRASES: Record<number, string> = {
  100: 'Trying', 180: 'Ringing', 181: 'Call Is Being Forwarded', 182: 'Queued', 183: 'Session Progress',
  200: 'OK', 202: 'Accepted', 300: 'Multiple Choices', 301: 'Moved Permanently', 302: 'Moved Temporarily',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 407: 'Proxy Authentication Required', 408: 'Request Timeout', 415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme', 420: 'Bad Extension', 480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist', 482: 'Loop Detected', 483: 'Too Many Hops', 486: 'Busy Here',
  487: 'Request Terminated', 488: 'Not Acceptable Here', 491: 'Request Pending', 500: 'Server Internal Error',
  501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Server Time-out',
  505: 'Version Not Supported', 513: 'Message Too Large', 603: 'Decline',
};

export interface ResponseOptions {
  reason?: string;
  /** To tag to add when the request's To has none (ignored for 100, §8.2.6.2). */
  toTag?: string;
  headers?: Header[];
  contact?: NameAddr[];
  body?: Buffer;
  contentType?: MediaType;
}

/** A response to `req`: Via, From, To, Call-ID and CSeq copied (§8.2.6.2), Record-Route for 1xx/2xx (§12.1.1). */
export function createResponse(req: SipRequest, status: number, o: ResponseOptions = {}): SipResponse {
  const to = o.toTag !== undefined && status !== 100 && tagOf(req.to) === undefined ? withTag(req.to, o.toTag) : req.to;
  const headers: Header[] = [];
  const timestamp = status === 100 ? headerValue(req, 'Timestamp') : undefined;
  if (timestamp !== undefined) headers.push({ name: 'Timestamp', value: timestamp });
  headers.push(...(o.headers ?? []));
  const res: SipResponse = {
    kind: 'response',
    status,
    reason: o.reason ?? REASON_PHRASES[status] ?? 'Unknown',
    via: req.via,
    from: req.from,
    to,
    callId: req.callId,
    cseq: req.cseq,
    contact: o.contact ?? [],
    route: [],
    recordRoute: status > 100 && status < 300 ? req.recordRoute : [],
    headers,
    body: o.body ?? NO_BODY, // one empty buffer for every bodiless response (nothing writes into zero bytes)
  };
  if (o.contentType) res.contentType = o.contentType;
  return res;
}

/**
 * The bytes of an error response to a request the parser refused, built from the raw values
 * it could read (§8.2, §21.4.1), plus `headers` (e.g. Allow with a 501). Undefined when there
 * is nothing to answer: a response, a refused ACK, or no Via / Call-ID / CSeq / From / To to copy.
 */
export function rawErrorResponse(partial: PartialMessage, status: number, reason: string, toTag?: string, headers: Header[] = []): Buffer | undefined {
  if (partial.kind !== 'request' || partial.method === 'ACK') return undefined;
  if (partial.via.length === 0 || !partial.from || !partial.to || !partial.callId || !partial.cseq) return undefined;
  const safe = (v: string) => v.replace(/[\r\n]/g, ' ');
  const to = toTag !== undefined && !/;\s*tag\s*=/i.test(partial.to) ? `${partial.to};tag=${toTag}` : partial.to;
  const lines = [
    `SIP/2.0 ${status} ${safe(reason)}`,
    ...partial.via.map((v) => `Via: ${safe(v)}`),
    `From: ${safe(partial.from)}`,
    `To: ${safe(to)}`,
    `Call-ID: ${safe(partial.callId)}`,
    `CSeq: ${safe(partial.cseq)}`,
    ...headers.map((h) => `${h.name}: ${safe(h.value)}`),
    'Content-Length: 0',
    '',
    '',
  ];
  return Buffer.from(lines.join('\r\n'), 'utf8');
}

function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** A branch with the magic cookie (§8.1.1.7) from at least 8 random bytes. */
export function newBranch(random: Uint8Array): string {
  return MAGIC_COOKIE + b64url(random).replace(/_/g, '.');
}

/** A tag (§19.3): at least 32 bits of randomness; 8 bytes recommended. */
export function newTag(random: Uint8Array): string {
  return b64url(random).replace(/_/g, '.');
}

/** A Call-ID (§8.1.1.4), optionally `@host`. */
export function newCallId(random: Uint8Array, host?: string): string {
  const id = b64url(random).replace(/_/g, '.');
  return host ? `${id}@${host}` : id;
}

export interface RequestFields {
  method: string;
  uri: Uri;
  from: NameAddr;
  to: NameAddr;
  callId: string;
  cseq: number;
  via: Via;
  maxForwards?: number;
  contact?: NameAddr[];
  route?: NameAddr[];
  headers?: Header[];
  body?: Buffer;
  contentType?: MediaType;
}

/** A new request (§8.1.1): Max-Forwards 70 unless given. */
export function createRequest(f: RequestFields): SipRequest {
  const req: SipRequest = {
    kind: 'request',
    method: f.method,
    uri: f.uri,
    via: [f.via],
    maxForwards: f.maxForwards ?? 70,
    from: f.from,
    to: f.to,
    callId: f.callId,
    cseq: { seq: f.cseq, method: f.method },
    contact: f.contact ?? [],
    route: f.route ?? [],
    recordRoute: [],
    headers: f.headers ?? [],
    body: f.body ?? Buffer.alloc(0),
  };
  if (f.contentType) req.contentType = f.contentType;
  return req;
}

/**
 * A request of the same transaction as `req` (§17.1.1.3 ACK, §9.1 CANCEL): same Request-URI,
 * Call-ID, From, CSeq number, top Via (so the same branch) and Route, another method.
 */
function sameTransactionRequest(req: SipRequest, method: 'ACK' | 'CANCEL', to: NameAddr): SipRequest {
  return {
    kind: 'request',
    method,
    uri: req.uri,
    via: req.via.slice(0, 1),
    maxForwards: req.maxForwards ?? 70,
    from: req.from,
    to,
    callId: req.callId,
    cseq: { seq: req.cseq.seq, method },
    contact: [],
    route: req.route,
    recordRoute: [],
    headers: [],
    body: Buffer.alloc(0),
  };
}

/** The ACK for a non-2xx final response to `invite` (§17.1.1.3): same branch, To from the response. */
export function createNon2xxAck(invite: SipRequest, response: SipResponse): SipRequest {
  return sameTransactionRequest(invite, 'ACK', response.to);
}

/** CANCEL for a pending request (§9.1): same Request-URI, Call-ID, From, To, CSeq number, top Via and Route. */
export function createCancel(req: SipRequest): SipRequest {
  return sameTransactionRequest(req, 'CANCEL', req.to);
}
