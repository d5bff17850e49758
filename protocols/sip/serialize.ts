/**
 * The serializer: a typed request or response to the bytes of one SIP message (RFC 3261 §7).
 *
 * Decisions:
 * - Canonical long-form header names, one header line per Via/Route/Record-Route/Contact
 *   value, CRLF line ends, and a Content-Length always written and always equal to the body
 *   length (so the output frames correctly on TCP too, §18.3).
 * - Order: Via, Max-Forwards, Route, Record-Route, From, To, Call-ID, CSeq, Contact, the other
 *   headers in their order, Content-Type, Content-Length. A Content-Length left in `headers`
 *   is dropped (the computed one wins).
 */
import { formatNameAddr } from './address.js';
import { formatMediaType } from './fields.js';
import { canonicalName } from './headers.js';
import type { SipMessage } from './types.js';
import { formatUri } from './uri.js';
import { formatVia } from './via.js';

/**
 * `own`: the bytes get memory of their own instead of a slice of node's shared 8 KiB pool —
 * for bytes kept long (a response a transaction resends for up to 64·T1), since one retained
 * slice keeps its whole pool block alive.
 */
export function serializeMessage(msg: SipMessage, o: { own?: boolean } = {}): Buffer {
  const lines: string[] = [msg.kind === 'request' ? `${msg.method} ${formatUri(msg.uri)} SIP/2.0` : `SIP/2.0 ${msg.status} ${msg.reason}`];
  for (const v of msg.via) lines.push(`Via: ${formatVia(v)}`);
  if (msg.maxForwards !== undefined) lines.push(`Max-Forwards: ${msg.maxForwards}`);
  for (const r of msg.route) lines.push(`Route: ${formatNameAddr(r)}`);
  for (const r of msg.recordRoute) lines.push(`Record-Route: ${formatNameAddr(r)}`);
  lines.push(`From: ${formatNameAddr(msg.from)}`, `To: ${formatNameAddr(msg.to)}`, `Call-ID: ${msg.callId}`, `CSeq: ${msg.cseq.seq} ${msg.cseq.method}`);
  if (msg.contactStar) lines.push('Contact: *');
  for (const c of msg.contact) lines.push(`Contact: ${formatNameAddr(c)}`);
  for (const h of msg.headers) {
    const name = canonicalName(h.name);
    if (name === 'Content-Length' || name === 'Content-Type') continue;
    lines.push(`${name}: ${h.value}`);
  }
  if (msg.contentType) lines.push(`Content-Type: ${formatMediaType(msg.contentType)}`);
  lines.push(`Content-Length: ${msg.body.length}`, '', '');
  const text = lines.join('\r\n');
  const head = Buffer.byteLength(text, 'utf8');
  const out = o.own ? Buffer.allocUnsafeSlow(head + msg.body.length) : Buffer.allocUnsafe(head + msg.body.length);
  out.write(text, 0, 'utf8');
  msg.body.copy(out, head);
  return out;
}
