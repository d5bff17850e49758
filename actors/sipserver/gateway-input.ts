/**
 * What the SIP server takes from a gateway, checked before it reaches the wire: the refusal type
 * (CoreError, whose codes are the sipserver protocol's) and the checks of headers and content
 * types a gateway asks the server to send. A refused input sends nothing.
 */
import type * as sip from '../../protocols/sip/index.js';
import type { SipHeader } from './messages.js';

export class CoreError extends Error {
  constructor(readonly code: 'NO_TRANSACTION' | 'INVALID' | 'NO_DIALOG' | 'TIMEOUT' | 'TAG_TAKEN', message: string) {
    super(message);
  }
}

/** A text on one line (for reasons and log fields). */
export function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ');
}

/** Headers a gateway may set: token names, one-line values, none the server sets itself. */
export function checkHeaders(headers: SipHeader[]): SipHeader[] {
  for (const h of headers) {
    if (typeof h?.name !== 'string' || !/^[A-Za-z0-9!%'*+\-.^_`|~]+$/.test(h.name)) throw new CoreError('INVALID', `header name ${JSON.stringify(h?.name)} is not a token`);
    if (typeof h.value !== 'string' || /[\r\n]/.test(h.value)) throw new CoreError('INVALID', `header ${h.name}: the value must be one line`);
    if (/^(via|v|from|f|to|t|call-id|i|cseq|content-length|l|content-type|c)$/i.test(h.name)) throw new CoreError('INVALID', `header ${h.name} is set by the SIP server`);
  }
  return headers;
}

/** `type/subtype` of a body a gateway sends. */
export function parseContentType(text: string): sip.MediaType {
  const m = /^\s*([!#$%&'*+\-.^_`|~\w]+)\/([!#$%&'*+\-.^_`|~\w]+)\s*$/.exec(text);
  if (!m) throw new CoreError('INVALID', `contentType ${JSON.stringify(text)} is not type/subtype`);
  return { type: m[1]!.toLowerCase(), subtype: m[2]!.toLowerCase(), params: {} };
}
