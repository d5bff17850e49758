/**
 * The typed shapes of SIP (RFC 3261 §7, §19, §20, §25): URIs, name-addr values, Via, CSeq,
 * requests and responses. Every other file of protocols/sip reads and builds these.
 *
 * Decisions:
 * - The headers the core reasons about (Via, From, To, Call-ID, CSeq, Max-Forwards, Contact,
 *   Route, Record-Route, Content-Type) are typed fields; every other header stays in `headers`
 *   as {name, value} in arrival order, with the canonical long-form name for known headers.
 *   The serializer writes the typed fields, then `headers`, then Content-Length (computed).
 * - Parameter names are lower-cased (they compare case-insensitively, §19.1.4, §20); a
 *   parameter without a value is `null`, never an empty string.
 * - URI parts are stored %-decoded (§19.1.2); the serializer escapes them again.
 */

/** uri-parameters or header parameters, names lower-cased, `null` for "no value". */
export type Params = Record<string, string | null>;

export interface SipUri {
  scheme: 'sip' | 'sips';
  /** Decoded user part (may contain ';', '@', NUL... once decoded). */
  user?: string;
  password?: string;
  /** Hostname (lower-cased), IPv4 dotted quad, or IPv6 reference with its brackets. */
  host: string;
  port?: number;
  params: Params;
  /** URI headers (`?name=value&...`), decoded. */
  headers: Array<[string, string]>;
}

/** Any other absolute URI (tel:, http:, soap.beep:, ...): kept opaque. */
export interface OtherUri {
  scheme: string;
  opaque: string;
}

export type Uri = SipUri | OtherUri;

export function isSipUri(u: Uri): u is SipUri {
  return u.scheme === 'sip' || u.scheme === 'sips';
}

/** name-addr or addr-spec plus header parameters (From, To, Contact, Route, ...). */
export interface NameAddr {
  /** Display name without quotes, quoted-pairs resolved; undefined when absent. */
  displayName?: string;
  uri: Uri;
  params: Params;
}

export interface Via {
  /** "SIP/2.0" */
  protocol: string;
  /** Upper-cased transport: UDP, TCP, TLS, SCTP, WS, or any other token. */
  transport: string;
  host: string;
  port?: number;
  params: Params;
}

export interface CSeq {
  seq: number;
  method: string;
}

export interface MediaType {
  type: string;
  subtype: string;
  params: Params;
}

export interface Header {
  name: string;
  value: string;
}

interface MessageBase {
  via: Via[];
  from: NameAddr;
  to: NameAddr;
  callId: string;
  cseq: CSeq;
  maxForwards?: number;
  contact: NameAddr[];
  /** True for `Contact: *` (REGISTER only). */
  contactStar?: boolean;
  route: NameAddr[];
  recordRoute: NameAddr[];
  contentType?: MediaType;
  /** Every other header, in arrival order, long-form names for known headers. */
  headers: Header[];
  body: Buffer;
}

export interface SipRequest extends MessageBase {
  kind: 'request';
  method: string;
  uri: Uri;
}

export interface SipResponse extends MessageBase {
  kind: 'response';
  status: number;
  reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** What the parser could still read from a malformed message, so a server can answer 400. */
export interface PartialMessage {
  kind?: 'request' | 'response';
  method?: string;
  /** Raw header values, as received (unfolded), for copying into an error response. */
  via: string[];
  from?: string;
  to?: string;
  callId?: string;
  cseq?: string;
}

export type ParseResult =
  | { ok: true; message: SipMessage }
  | { ok: false; status: 400 | 501 | 505 | 513; reason: string; partial: PartialMessage };
