/**
 * The bearer rule of the daemon's WebSocket and HTTP fronts (media bridge command channel,
 * gateway control channel and its protected routes), in one place: a front listens on
 * loopback only with no token by default; bound to any other address it requires a bearer
 * token (the daemon refuses to start without one), given as `Authorization: Bearer <token>`
 * or, for clients that cannot set headers on a WebSocket (browsers), `?token=<token>`. The
 * comparison is constant-time.
 */
import { timingSafeEqual } from 'node:crypto';

/** null when allowed, else why not. */
export function authorize(token: string | null, authorization: string, queryToken: string): string | null {
  if (token === null) return null;
  const m = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  const given = m ? m[1]!.trim() : decodeURIComponent(queryToken);
  if (!given) return 'a bearer token is required (Authorization: Bearer <token>, or ?token=<token>)';
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b) ? null : 'the bearer token is not valid';
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}
