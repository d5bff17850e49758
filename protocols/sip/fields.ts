/**
 * The scalar header fields of RFC 3261 §20: CSeq, Max-Forwards, Content-Length, Call-ID,
 * Content-Type, and the method names the core knows.
 *
 * Decisions:
 * - CSeq numbers must fit 32 bits (§8.1.1.5; RFC 4475 scalar02, scalarlg); leading zeros are
 *   fine (wsinv). Max-Forwards is 0..255, Content-Length a non-negative decimal (ncl).
 * - A Call-ID is word ["@" word] (§25.1): any LWS inside it is an error.
 */
import { fail, formatParams, isWord, parseParams, Scanner } from './grammar.js';
import type { CSeq, MediaType } from './types.js';

/** Methods of RFC 3261 and the extensions the gateway may see (RFC 3262/3265/3311/3428/3515/3903/6086). */
export const KNOWN_METHODS = ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'PRACK', 'SUBSCRIBE', 'NOTIFY', 'PUBLISH', 'INFO', 'REFER', 'MESSAGE', 'UPDATE'];

export const METHOD = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

export function parseCSeq(text: string): CSeq {
  const m = /^(\d+)[ \t]+([A-Za-z0-9\-.!%*_+`'~]+)$/.exec(text.trim());
  if (!m) fail('CSeq: expected "number method"');
  const seq = Number(m[1]);
  if (!Number.isSafeInteger(seq) || seq > 0xffffffff) fail('CSeq: sequence number larger than 2**32-1');
  return { seq, method: m[2] as string };
}

export function parseMaxForwards(text: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) > 255) fail('Max-Forwards: expected 0..255');
  return Number(t);
}

export function parseContentLength(text: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t))) fail('Content-Length: expected a non-negative integer');
  return Number(t);
}

export function parseCallId(text: string): string {
  const t = text.trim();
  const at = t.indexOf('@');
  const ok = at < 0 ? isWord(t) : isWord(t.slice(0, at)) && isWord(t.slice(at + 1));
  if (!ok) fail('Call-ID: expected word["@"word]');
  return t;
}

export function parseMediaType(text: string): MediaType {
  const s = new Scanner(text.trim());
  const type = s.token('Content-Type type').toLowerCase();
  if (!s.eat('/')) fail('Content-Type: expected type/subtype');
  const subtype = s.token('Content-Type subtype').toLowerCase();
  return { type, subtype, params: parseParams(s, 'Content-Type') };
}

export function formatMediaType(m: MediaType): string {
  return `${m.type}/${m.subtype}${formatParams(m.params)}`;
}
