/** Small hand-written SIP messages for the transaction and dialog tests (RFC 3261 §24 style). */
import { parseMessage } from '../../protocols/sip/parse.js';
import type { SipMessage, SipRequest, SipResponse } from '../../protocols/sip/types.js';

export function msg(lines: string[], body = ''): SipMessage {
  const r = parseMessage(`${lines.join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  if (!r.ok) throw new Error(`test message refused: ${r.reason}`);
  return r.message;
}

export function request(method: string, o: { branch?: string; cseq?: number; toTag?: string; sentBy?: string; extra?: string[]; uri?: string } = {}): SipRequest {
  const m = msg([
    `${method} ${o.uri ?? 'sip:bob@biloxi.example.com'} SIP/2.0`,
    `Via: SIP/2.0/UDP ${o.sentBy ?? 'pc33.atlanta.example.com'};branch=${o.branch ?? 'z9hG4bK776asdhds'}`,
    'Max-Forwards: 70',
    `To: Bob <sip:bob@biloxi.example.com>${o.toTag ? `;tag=${o.toTag}` : ''}`,
    'From: Alice <sip:alice@atlanta.example.com>;tag=1928301774',
    'Call-ID: a84b4c76e66710@pc33.atlanta.example.com',
    `CSeq: ${o.cseq ?? 314159} ${method}`,
    'Contact: <sip:alice@pc33.atlanta.example.com>',
    ...(o.extra ?? []),
  ]);
  if (m.kind !== 'request') throw new Error('not a request');
  return m;
}

export function response(req: SipRequest, status: number, o: { toTag?: string; extra?: string[] } = {}): SipResponse {
  const m = msg([
    `SIP/2.0 ${status} Whatever`,
    ...req.via.map((v) => `Via: SIP/2.0/${v.transport} ${v.host}${v.port ? `:${v.port}` : ''};branch=${String(v.params['branch'])}`),
    `To: Bob <sip:bob@biloxi.example.com>${o.toTag ? `;tag=${o.toTag}` : ''}`,
    'From: Alice <sip:alice@atlanta.example.com>;tag=1928301774',
    `Call-ID: ${req.callId}`,
    `CSeq: ${req.cseq.seq} ${req.cseq.method}`,
    ...(o.extra ?? []),
  ]);
  if (m.kind !== 'response') throw new Error('not a response');
  return m;
}
