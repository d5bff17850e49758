/**
 * Header names: the compact forms (RFC 3261 §7.3.3 and the later RFCs that define one), the
 * canonical long-form spelling of known headers, and which headers are comma-separated lists.
 *
 * Decisions:
 * - A header is split at commas only when its grammar is `#element` (RFC 3261 §7.3.1). The
 *   authentication headers, Date, Subject, Call-ID, ... are not lists, and an unknown header
 *   is never split (RFC 4475 wsinv, UnknownHeaderWithUnusualValue).
 * - Unknown header names keep the spelling they arrived with.
 */

const COMPACT: Record<string, string> = {
  i: 'Call-ID',
  m: 'Contact',
  e: 'Content-Encoding',
  l: 'Content-Length',
  c: 'Content-Type',
  f: 'From',
  s: 'Subject',
  k: 'Supported',
  t: 'To',
  v: 'Via',
  o: 'Event', // RFC 6665
  r: 'Refer-To', // RFC 3515
  b: 'Referred-By', // RFC 3892
  u: 'Allow-Events', // RFC 6665
  a: 'Accept-Contact', // RFC 3841
  j: 'Reject-Contact', // RFC 3841
  d: 'Request-Disposition', // RFC 3841
  x: 'Session-Expires', // RFC 4028
  y: 'Identity', // RFC 8224
  n: 'Identity-Info', // RFC 4474
};

const KNOWN = [
  'Accept', 'Accept-Contact', 'Accept-Encoding', 'Accept-Language', 'Alert-Info', 'Allow', 'Allow-Events',
  'Authentication-Info', 'Authorization', 'Call-ID', 'Call-Info', 'Contact', 'Content-Disposition',
  'Content-Encoding', 'Content-Language', 'Content-Length', 'Content-Type', 'CSeq', 'Date', 'Error-Info',
  'Event', 'Expires', 'From', 'Identity', 'Identity-Info', 'In-Reply-To', 'Max-Forwards', 'Min-Expires',
  'Min-SE', 'MIME-Version', 'Organization', 'P-Asserted-Identity', 'Path', 'Priority', 'Proxy-Authenticate',
  'Proxy-Authorization', 'Proxy-Require', 'RAck', 'Reason', 'Record-Route', 'Refer-To', 'Referred-By',
  'Reject-Contact', 'Reply-To', 'Request-Disposition', 'Require', 'Retry-After', 'Route', 'RSeq',
  'Server', 'Service-Route', 'Session-Expires', 'SIP-ETag', 'SIP-If-Match', 'Subject', 'Subscription-State',
  'Supported', 'Timestamp', 'To', 'Unsupported', 'User-Agent', 'Via', 'Warning', 'WWW-Authenticate',
];

const CANONICAL = new Map<string, string>(KNOWN.map((n) => [n.toLowerCase(), n]));
/** Names already written canonically (most headers of most messages): no lower-casing needed. */
const AS_WRITTEN = new Set<string>(KNOWN);

const LISTS = new Set(
  [
    'Accept', 'Accept-Contact', 'Accept-Encoding', 'Accept-Language', 'Alert-Info', 'Allow', 'Allow-Events',
    'Call-Info', 'Contact', 'Content-Encoding', 'Content-Language', 'Error-Info', 'In-Reply-To',
    'P-Asserted-Identity', 'Path', 'Proxy-Require', 'Reason', 'Record-Route', 'Reject-Contact',
    'Request-Disposition', 'Require', 'Route', 'Service-Route', 'Supported', 'Unsupported', 'Via', 'Warning',
  ].map((n) => n.toLowerCase()),
);

/** The canonical name of a header as written (compact form expanded, case normalised). */
export function canonicalName(name: string): string {
  if (AS_WRITTEN.has(name)) return name;
  const lower = name.toLowerCase();
  if (lower.length === 1) {
    const c = COMPACT[lower];
    if (c) return c;
  }
  return CANONICAL.get(lower) ?? name;
}

/** True when the header's grammar is a comma-separated list. */
export function isListHeader(name: string): boolean {
  return LISTS.has(canonicalName(name).toLowerCase());
}

export function sameHeader(a: string, b: string): boolean {
  return canonicalName(a).toLowerCase() === canonicalName(b).toLowerCase();
}
