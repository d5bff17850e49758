/**
 * Which browser pages may drive the object store over HTTP (issue 21 item 11). Port 80 has no
 * authentication (spec), so a page on another site must not be able to use the operator's
 * browser against it: a management request carrying an `Origin` that is neither the store's own
 * (its UI, served from the same host) nor in the allow-list setting is refused; a state-changing
 * management request with a body must say `Content-Type: application/json` (a form or a
 * `text/plain` fetch, which need no preflight, cannot); the objects' OPTIONS preflight approves
 * only allowed origins. Requests without `Origin` (curl, scripts, servers) are not browser
 * requests from another site and pass. Pure: no I/O.
 */

/** `scheme://host[:port]`, lowercase, as browsers send Origin. */
const ORIGIN_RE = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/;

/** Parse the allow-list setting: comma-separated origins; throws naming the bad entry. */
export function parseAllowedOrigins(raw: string): string[] {
  const items = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const o of items) {
    if (!ORIGIN_RE.test(o.toLowerCase())) throw new Error(`${JSON.stringify(o)} is not an origin (scheme://host[:port], no path)`);
  }
  return items.map((o) => o.toLowerCase());
}

/**
 * May a request with this `Origin` header use the store? No Origin: yes (not a browser page on
 * another site). The store's own origin (`http(s)://<Host>`): yes. Else only if allow-listed
 * (compared lowercase; `null`, sent by sandboxed pages and file: URLs, never is).
 */
export function originAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || origin === '') return true;
  const o = origin.trim().toLowerCase();
  if (host && (o === `http://${host.toLowerCase()}` || o === `https://${host.toLowerCase()}`)) return true;
  return allowed.includes(o);
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

export interface ManagementRequest {
  method: string;
  origin: string | undefined;
  host: string | undefined;
  contentType: string | undefined;
  /** the request has a body (a Content-Length above 0, or Transfer-Encoding) */
  hasBody: boolean;
}

/** Why a management request is refused before it is routed (403 or 415), or null. */
export function managementRefusal(req: ManagementRequest, allowed: readonly string[]): { status: number; code: string; message: string } | null {
  if (!originAllowed(req.origin, req.host, allowed)) {
    return { status: 403, code: 'ORIGIN_NOT_ALLOWED', message: `requests from origin ${JSON.stringify(req.origin)} may not use the management API: it is not this store's own origin nor in OBJSTORE_ALLOWED_ORIGINS` };
  }
  if (STATE_CHANGING.has(req.method)) {
    const type = (req.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    // A body of another type (a form, text/plain: what a page may send without a preflight) is
    // refused; so is a type other than JSON on a request without a body.
    if ((req.hasBody || type !== '') && type !== 'application/json') {
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: `${req.method} on the management API takes Content-Type: application/json${type ? `, not ${type}` : ' (none was given)'}` };
    }
  }
  return null;
}
