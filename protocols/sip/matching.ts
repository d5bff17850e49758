/**
 * Transaction matching (RFC 3261 §17.1.3 for responses, §17.2.3 for requests) as string keys.
 *
 * Decisions:
 * - Server side, RFC 3261 branch (magic cookie plus at least one character): branch +
 *   sent-by + method, with ACK folded onto INVITE so the ACK of a non-2xx finds its INVITE
 *   transaction; CANCEL keeps its own method and so its own transaction (§9.2), and
 *   `cancelledInviteKey` gives the key of the INVITE it targets.
 * - Otherwise (RFC 2543 peers, or the bare cookie of RFC 4475 badbranch) the §17.2.3 fallback:
 *   Request-URI, From tag, Call-ID, CSeq number, top Via and method (ACK folded onto
 *   INVITE). The To tag is left out: a retransmitted INVITE has none, and the ACK's equals the
 *   tag of our own response, so it adds nothing to the match.
 * - Client side: the branch of the top Via plus the CSeq method (§17.1.3).
 */
import { tagOf } from './address.js';
import type { SipRequest, SipResponse } from './types.js';
import { formatUri } from './uri.js';
import { branchOf, formatVia, isRfc3261Branch, sentByKey } from './via.js';

/**
 * Keys are joined, not concatenated: a concatenation is a tree of its pieces in V8 until it is
 * flattened, and a key stored for 64·T1 kept every piece — each piece a slice of the message's
 * header text, so the whole text. `join` makes one flat string.
 */
function serverKeyFor(req: SipRequest, method: string): string {
  const top = req.via[0];
  if (!top) throw new Error('request without Via');
  const branch = branchOf(top);
  if (isRfc3261Branch(branch)) return ['s', branch, sentByKey(top), method].join('|');
  return ['s2543', formatUri(req.uri), tagOf(req.from) ?? '', req.callId, req.cseq.seq, formatVia(top), method].join('|');
}

/** The server transaction a received request belongs to. */
export function serverTransactionKey(req: SipRequest): string {
  return serverKeyFor(req, req.method === 'ACK' ? 'INVITE' : req.method);
}

/** The INVITE server transaction a CANCEL targets (§9.2). */
export function cancelledInviteKey(cancel: SipRequest): string {
  return serverKeyFor(cancel, 'INVITE');
}

/** The client transaction of a request we send. */
export function clientTransactionKey(req: SipRequest): string {
  return ['c', branchOf(req.via[0] ?? { protocol: '', transport: '', host: '', params: {} }) ?? '', req.method].join('|');
}

/** The client transaction a received response belongs to. */
export function responseTransactionKey(res: SipResponse): string {
  const top = res.via[0];
  return `c|${top ? (branchOf(top) ?? '') : ''}|${res.cseq.method}`;
}
