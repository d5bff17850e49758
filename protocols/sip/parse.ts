/**
 * The message parser (RFC 3261 §7, §18.3, §20, §25): bytes of one SIP message in, a typed
 * request or response out, or a typed refusal naming what was wrong.
 *
 * Decisions:
 * - Size limits come first and are options: the whole message (default 65535 bytes, a UDP
 *   datagram) and the header count (default 128); over either is 513 (§21.5.14) and nothing
 *   past the limit is looked at, so memory stays bounded by the input.
 * - Datagram mode (default): the body is what follows the blank line, cut to Content-Length;
 *   a Content-Length larger than what arrived is 400 (§18.3, RFC 4475 clerr); without one
 *   the body is the rest of the datagram. Stream mode (`stream: true`, a TCP framer already
 *   cut the message) requires Content-Length.
 * - Strict start line: exactly one SP between its three parts (RFC 4475 lwsstart, trws,
 *   lwsruri); a SIP version other than 2.0 is 505 (badvers); the Request-URI must not carry
 *   URI headers (§19.1.1 table; escruri) and must not be in <> (ltgtruri).
 * - Via, From, To, Call-ID and CSeq are required; From, To, Call-ID, CSeq, Max-Forwards,
 *   Content-Length and Content-Type may appear once (RFC 4475 multi01, mcl01).
 * - A CSeq method different from the request method is 400, or 501 when the request method
 *   is one the core does not know (RFC 4475 mismatch01, mismatch02).
 * - Whatever the outcome, the raw Via, From, To, Call-ID and CSeq values read so far are in
 *   `partial`, so a server can still answer a malformed request with 400 (§8.2, §21.4.1).
 */
import { formatNameAddr, parseNameAddr } from './address.js';
import { fail, splitList } from './grammar.js';
import { canonicalName, isListHeader } from './headers.js';
import { formatMediaType, KNOWN_METHODS, METHOD, parseCallId, parseContentLength, parseCSeq, parseMaxForwards, parseMediaType } from './fields.js';
import type { CSeq, Header, MediaType, NameAddr, ParseResult, PartialMessage, SipMessage, Uri, Via } from './types.js';
import { parseUri } from './uri.js';
import { formatVia, parseVia } from './via.js';

export interface ParseOptions {
  /** Largest message accepted, in bytes (default 65535). */
  maxBytes?: number;
  /** Most header lines accepted after unfolding (default 128). */
  maxHeaders?: number;
  /** The message came from a stream transport already framed: Content-Length is required. */
  stream?: boolean;
}

export const DEFAULT_MAX_BYTES = 65535;
export const DEFAULT_MAX_HEADERS = 128;

/**
 * A header line: a token name, optional SP/HTAB, the colon, the value. A line the token does
 * not reach the colon with (a space inside the name, an empty name, no colon) is a bad line.
 */
const HEADER_LINE = /^([A-Za-z0-9\-.!%*_+`'~]+)[ \t]*:[ \t]*(.*)$/;

/** A CR not followed by LF, or an LF not preceded by CR. */
const BARE_CR_LF = /\r(?!\n)|(?<!\r)\n/;

const SINGLE = new Set(['From', 'To', 'Call-ID', 'CSeq', 'Max-Forwards', 'Content-Length', 'Content-Type']);

class Refusal extends Error {
  constructor(
    readonly status: 400 | 501 | 505 | 513,
    reason: string,
  ) {
    super(reason);
  }
}

export function parseMessage(input: Buffer | string, options: ParseOptions = {}): ParseResult {
  const partial: PartialMessage = { via: [] };
  try {
    return { ok: true, message: parseInto(typeof input === 'string' ? Buffer.from(input, 'utf8') : input, options, partial) };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, status: e.status, reason: e.message, partial };
    if (e instanceof SyntaxError) return { ok: false, status: 400, reason: e.message, partial };
    throw e;
  }
}

function parseInto(buf: Buffer, options: ParseOptions, partial: PartialMessage): SipMessage {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxHeaders = options.maxHeaders ?? DEFAULT_MAX_HEADERS;
  if (buf.length > maxBytes) throw new Refusal(513, `message of ${buf.length} bytes exceeds the limit of ${maxBytes}`);
  let start = 0;
  while (buf[start] === 0x0d && buf[start + 1] === 0x0a) start += 2;
  const end = buf.indexOf('\r\n\r\n', start, 'latin1');
  if (end < 0) fail('no empty line after the headers');
  const head = buf.subarray(start, end).toString('utf8');
  // A CR or LF that is not part of a CRLF (judged below, after the header names are read).
  const bareCrLf = BARE_CR_LF.test(head);
  const lines = unfold(head);
  const startLine = lines.shift() ?? '';
  if (lines.length > maxHeaders) throw new Refusal(513, `${lines.length} header lines exceed the limit of ${maxHeaders}`);

  // One pass over the header lines: the raw values a 400 needs are remembered before anything
  // can fail (a bad line is only reported after the start line has been judged, as before).
  const raw: Header[] = [];
  let badLine: string | undefined;
  for (const line of lines) {
    const m = HEADER_LINE.exec(line);
    if (!m) {
      badLine ??= line;
      continue;
    }
    const name = canonicalName(m[1] as string);
    const value = trimWs(m[2] as string);
    raw.push({ name, value });
    if (name === 'Via') partial.via.push(value);
    else if (name === 'From') partial.from ??= value;
    else if (name === 'To') partial.to ??= value;
    else if (name === 'Call-ID') partial.callId ??= value;
    else if (name === 'CSeq') partial.cseq ??= value;
  }

  let method: string | undefined;
  let uri: Uri | undefined;
  let status: number | undefined;
  let reason = '';
  if (bareCrLf) fail('bare CR or LF inside a line');
  if (/^SIP\//i.test(startLine)) {
    partial.kind = 'response';
    // The version is case-insensitive (§7.1); a missing SP before an empty reason is tolerated (RFC 4475 noreason).
    const m = /^SIP\/2\.0 ([1-6]\d\d)(?: (.*))?$/i.exec(startLine);
    if (!m) fail(/^SIP\/2\.0 /i.test(startLine) ? 'bad status code' : 'bad status line');
    status = Number(m[1]);
    reason = m[2] ?? '';
  } else {
    partial.kind = 'request';
    const first = /^([^ ]+)/.exec(startLine)?.[1];
    if (first && METHOD.test(first)) partial.method = first;
    const m = /^([^ ]+) ([^ ]+) (SIP\/[^ ]+)$/i.exec(startLine);
    if (!m || !METHOD.test(m[1] as string)) fail('bad request line (method SP Request-URI SP SIP-Version)');
    method = m[1] as string;
    if ((m[3] as string).toUpperCase() !== 'SIP/2.0') {
      if (/^SIP\/\d+\.\d+$/i.test(m[3] as string)) throw new Refusal(505, `SIP version ${m[3]} not supported`);
      fail('bad SIP version');
    }
    uri = parseUri(m[2] as string, 'Request-URI');
    if ('host' in uri && uri.headers.length > 0) fail('Request-URI must not contain headers');
  }

  if (badLine !== undefined) fail(`bad header line "${badLine.slice(0, 40)}"`);

  const via: Via[] = [];
  const contact: NameAddr[] = [];
  const route: NameAddr[] = [];
  const recordRoute: NameAddr[] = [];
  const headers: Header[] = [];
  const seen = new Set<string>();
  let from: NameAddr | undefined;
  let to: NameAddr | undefined;
  let callId: string | undefined;
  let cseq: CSeq | undefined;
  let maxForwards: number | undefined;
  let contentLength: number | undefined;
  let contentType: MediaType | undefined;
  let contactStar = false;
  for (const { name, value } of raw) {
    if (SINGLE.has(name)) {
      if (seen.has(name)) fail(`more than one ${name} header`);
      seen.add(name);
    }
    switch (name) {
      case 'Via':
        for (const v of splitList(value, 'Via')) via.push(parseVia(v));
        break;
      case 'From':
        from = parseNameAddr(value, 'From');
        break;
      case 'To':
        to = parseNameAddr(value, 'To');
        break;
      case 'Call-ID':
        callId = parseCallId(value);
        break;
      case 'CSeq':
        cseq = parseCSeq(value);
        break;
      case 'Max-Forwards':
        maxForwards = parseMaxForwards(value);
        break;
      case 'Content-Length':
        contentLength = parseContentLength(value);
        break;
      case 'Content-Type':
        contentType = parseMediaType(value);
        break;
      case 'Contact':
        if (value === '*') contactStar = true;
        else for (const c of splitList(value, 'Contact')) contact.push(parseNameAddr(c, 'Contact'));
        break;
      case 'Route':
        for (const r of splitList(value, 'Route')) route.push(parseNameAddr(r, 'Route'));
        break;
      case 'Record-Route':
        for (const r of splitList(value, 'Record-Route')) recordRoute.push(parseNameAddr(r, 'Record-Route'));
        break;
      default:
        headers.push({ name, value });
    }
  }
  if (via.length === 0) fail('missing Via');
  if (!from) fail('missing From');
  if (!to) fail('missing To');
  if (callId === undefined) fail('missing Call-ID');
  if (!cseq) fail('missing CSeq');
  if (method !== undefined && cseq.method !== method) {
    if (!KNOWN_METHODS.includes(method)) throw new Refusal(501, `method ${method} not implemented (and CSeq method ${cseq.method} does not match)`);
    fail(`CSeq method ${cseq.method} does not match the request method ${method}`);
  }

  const rest = buf.subarray(end + 4);
  if (contentLength === undefined && options.stream) fail('missing Content-Length on a stream transport');
  if (contentLength !== undefined && contentLength > rest.length) fail(`Content-Length ${contentLength} is larger than the ${rest.length} bytes of body received`);
  const body = Buffer.from(rest.subarray(0, contentLength ?? rest.length));

  // Built in one go (no spreads: this runs for every datagram), the optional fields last.
  const msg: SipMessage =
    status !== undefined
      ? { kind: 'response', status, reason: decodeReason(reason), via, from, to, callId, cseq, contact, route, recordRoute, headers, body }
      : { kind: 'request', method: method as string, uri: uri as Uri, via, from, to, callId, cseq, contact, route, recordRoute, headers, body };
  if (maxForwards !== undefined) msg.maxForwards = maxForwards;
  if (contentType) msg.contentType = contentType;
  if (contactStar) msg.contactStar = contactStar;
  return msg;
}

/** Reason-Phrase allows %-escapes (§25.1); decode them when they form valid escapes. */
function decodeReason(r: string): string {
  if (!/%[0-9A-Fa-f]{2}/.test(r)) return r;
  try {
    return decodeURIComponent(r);
  } catch {
    return r;
  }
}

/** Trim SP and HTAB only (String.prototype.trim would also eat U+FEFF, RFC 4475 intmeth). */
function trimWs(v: string): string {
  return v.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** Split the head into lines and join continuation lines (leading SP/HTAB) with one SP. */
function unfold(head: string): string[] {
  const out: string[] = [];
  for (const line of head.split('\r\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && out.length > 0) out[out.length - 1] = `${(out[out.length - 1] as string).replace(/[ \t]+$/, '')} ${trimWs(line)}`;
    else out.push(line);
  }
  return out;
}

/**
 * Every value of a header (compact or long name), list headers split at top-level commas.
 * The typed headers (Via, From, To, Call-ID, CSeq, Max-Forwards, Contact, Route, Record-Route,
 * Content-Type, Content-Length) are read from their fields, formatted as the serializer writes
 * them.
 */
export function headerValues(msg: SipMessage, name: string): string[] {
  const canon = canonicalName(name);
  const typed = typedValues(msg, canon);
  if (typed) return typed;
  const out: string[] = [];
  for (const h of msg.headers) {
    if (h.name.toLowerCase() !== canon.toLowerCase()) continue;
    if (!isListHeader(canon)) out.push(h.value);
    else {
      try {
        out.push(...splitList(h.value, canon));
      } catch {
        out.push(h.value);
      }
    }
  }
  return out;
}

function typedValues(msg: SipMessage, canon: string): string[] | undefined {
  switch (canon) {
    case 'Via':
      return msg.via.map(formatVia);
    case 'From':
      return [formatNameAddr(msg.from)];
    case 'To':
      return [formatNameAddr(msg.to)];
    case 'Call-ID':
      return [msg.callId];
    case 'CSeq':
      return [`${msg.cseq.seq} ${msg.cseq.method}`];
    case 'Max-Forwards':
      return msg.maxForwards === undefined ? [] : [String(msg.maxForwards)];
    case 'Contact':
      return msg.contactStar ? ['*'] : msg.contact.map(formatNameAddr);
    case 'Route':
      return msg.route.map(formatNameAddr);
    case 'Record-Route':
      return msg.recordRoute.map(formatNameAddr);
    case 'Content-Type':
      return msg.contentType ? [formatMediaType(msg.contentType)] : [];
    case 'Content-Length':
      return [String(msg.body.length)];
    default:
      return undefined;
  }
}

/** The first value of a header, or undefined. */
export function headerValue(msg: SipMessage, name: string): string | undefined {
  return headerValues(msg, name)[0];
}
