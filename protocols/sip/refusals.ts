/**
 * Refusal rules of a UAS (RFC 3261 §8.2 and the codes the gateway spec names), as pure
 * functions the SIP server calls in order on each new request: 503 overload, 483 Max-Forwards
 * exhausted, 405/501 method, 416 URI scheme, 482 merged request, 420 Require, 415 body type,
 * 406 Accept (an INVITE whose Accept excludes every body type we answer with, RFC 4475 sdp01);
 * plus 488 and the OPTIONS answer (§11.2).
 *
 * Decisions:
 * - `checkRequest` returns the first refusal in the §8.2 order (method, headers, content)
 *   preceded by overload and hop count, or undefined to go on. ACK is never refused (no
 *   response may be sent to it, §17), CANCEL is not checked for Require (§8.2.2.3).
 * - 483 applies only where the request would be forwarded (`forwarding`, default true, the
 *   routing step of the SIP server); an endpoint answers an OPTIONS with Max-Forwards 0 itself
 *   (RFC 4475 §3.3.11 zeromf, RFC 3261 §16.3 item 2).
 * - A merged request (§8.2.2.2) is detected by the caller, which knows the transactions in
 *   flight; `mergeKey` gives the key it should remember.
 */
import { tagOf } from './address.js';
import { REASON_PHRASES, createResponse } from './build.js';
import { KNOWN_METHODS } from './fields.js';
import { headerValue, headerValues } from './parse.js';
import type { Header, SipRequest, SipResponse } from './types.js';
import { isSipUri } from './types.js';

export interface ServerPolicy {
  /** Methods the server implements (go in Allow). */
  allow: string[];
  /** Option tags the server supports (Supported; anything else in Require is 420). */
  supported: string[];
  /** Body types accepted, e.g. ["application/sdp"] (Accept; others are 415). */
  accept: string[];
  /** Set while overloaded or draining: 503 with Retry-After (seconds). */
  unavailable?: { retryAfter: number };
  /** The request is about to be forwarded (routed): Max-Forwards 0 is then 483. Default true. */
  forwarding?: boolean;
  /** The caller found this to be a merged request (§8.2.2.2): 482. */
  merged?: boolean;
}

export interface Refusal {
  status: number;
  reason: string;
  headers: Header[];
}

function refusal(status: number, headers: Header[] = []): Refusal {
  return { status, reason: REASON_PHRASES[status] ?? 'Error', headers };
}

export function checkRequest(req: SipRequest, p: ServerPolicy): Refusal | undefined {
  if (req.method === 'ACK') return undefined;
  if (p.unavailable) return refusal(503, [{ name: 'Retry-After', value: String(p.unavailable.retryAfter) }]);
  if ((p.forwarding ?? true) && req.maxForwards === 0) return refusal(483);
  const allow = { name: 'Allow', value: p.allow.join(', ') };
  if (!p.allow.includes(req.method)) return refusal(KNOWN_METHODS.includes(req.method) ? 405 : 501, [allow]);
  if (!isSipUri(req.uri)) return refusal(416);
  if (p.merged) return refusal(482);
  if (req.method !== 'CANCEL') {
    const unknown = headerValues(req, 'Require').filter((o) => !p.supported.some((s) => s.toLowerCase() === o.toLowerCase()));
    if (unknown.length > 0) return refusal(420, [{ name: 'Unsupported', value: unknown.join(', ') }]);
  }
  if (req.body.length > 0) {
    // §20.15: a body must come with its Content-Type; one without is not a body we can read.
    const type = req.contentType ? `${req.contentType.type}/${req.contentType.subtype}` : undefined;
    const encodings = headerValues(req, 'Content-Encoding').filter((e) => e.toLowerCase() !== 'identity');
    if (type === undefined || !p.accept.includes(type) || encodings.length > 0) {
      return refusal(415, [{ name: 'Accept', value: p.accept.join(', ') }, { name: 'Accept-Encoding', value: 'identity' }]);
    }
  }
  if (req.method === 'INVITE' && headerValue(req, 'Accept') !== undefined && !acceptsAny(headerValues(req, 'Accept'), p.accept)) return refusal(406);
  return undefined;
}

/**
 * Whether an Accept list (§20.1, HTTP media ranges) takes one of `types`: the any-type range, a
 * type wildcard or the exact type, unless its q is 0. An empty Accept takes nothing (§20.1).
 */
function acceptsAny(ranges: string[], types: string[]): boolean {
  return ranges.some((range) => {
    const [media = '', ...params] = range.split(';').map((x) => x.trim().toLowerCase());
    if (params.some((x) => /^q\s*=\s*0(\.0{0,3})?$/.test(x))) return false;
    return types.some((t) => media === '*/*' || media === t || (media.endsWith('/*') && t.startsWith(media.slice(0, -1))));
  });
}

/** The error response for a refusal (To tag added, §8.2.6.2). */
export function refusalResponse(req: SipRequest, r: Refusal, toTag: string): SipResponse {
  return createResponse(req, r.status, { reason: r.reason, toTag, headers: r.headers });
}

/** 488 Not Acceptable Here (§21.4.26), optionally with a Warning (e.g. 304 "Media type not available"). */
export function notAcceptableHere(req: SipRequest, toTag: string, warning?: string): SipResponse {
  return createResponse(req, 488, { toTag, headers: warning ? [{ name: 'Warning', value: warning }] : [] });
}

/** The 200 to an OPTIONS (§11.2): Allow, Accept, Accept-Encoding, Accept-Language, Supported. */
export function answerOptions(req: SipRequest, p: ServerPolicy, toTag: string): SipResponse {
  return createResponse(req, 200, {
    toTag,
    headers: [
      { name: 'Allow', value: p.allow.join(', ') },
      { name: 'Accept', value: p.accept.join(', ') },
      { name: 'Accept-Encoding', value: 'identity' },
      { name: 'Accept-Language', value: 'en' },
      { name: 'Supported', value: p.supported.join(', ') },
    ],
  });
}

/**
 * The key of §8.2.2.2 merged-request detection: a request without To tag whose key matches a
 * transaction in flight with a different branch is a merged request (482).
 */
export function mergeKey(req: SipRequest): string | undefined {
  if (tagOf(req.to) !== undefined) return undefined;
  return [req.callId, tagOf(req.from) ?? '', req.cseq.seq, req.cseq.method].join('\n'); // one flat string (matching.ts says why)
}
