/**
 * Who may open the command channel, beyond the bearer token (issue 16): a web page the operator
 * opens must not reach `ws://127.0.0.1:3002`, neither by a cross-site WebSocket upgrade nor by DNS
 * rebinding. So an upgrade that carries an `Origin` not in MEDIA_ALLOWED_ORIGINS is refused (with
 * or without a token: a browser always sends Origin, other clients do not), and a client that
 * sent no token to a bridge that has none, from a loopback address, must name a loopback `Host`
 * (a rebound name like `attacker.example` resolving to 127.0.0.1 does not). Pure decisions;
 * actor.ts answers 403 with the message.
 */
import { isLoopback } from '../../runtime/http/bearer.js';

/** `scheme://host[:port]` lower-cased, as browsers send Origin; the allow-list's entries are compared in this form. */
export function normalOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}

/** The host part of a Host header (`127.0.0.1:3002`, `[::1]:3002`, `localhost`), or null. */
export function hostOf(header: string): string | null {
  const h = header.trim().toLowerCase();
  if (!h) return null;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 1 ? h.slice(1, end) : null;
  }
  const colon = h.indexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

/** A Host name that can only mean this machine (`127.0.0.1.evil.example` is not one). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(host);
}

/** A loopback remote address as uWebSockets prints it (IPv4, IPv6, or IPv4-mapped IPv6). */
export function isLoopbackPeer(address: string): boolean {
  const a = address.toLowerCase();
  return isLoopback(a) || a === '0000:0000:0000:0000:0000:0000:0000:0001' || /^(::ffff:|0000:0000:0000:0000:0000:ffff:)127\./.test(a);
}

export interface UpgradeFacts {
  origin: string;
  host: string;
  remoteAddress: string;
  /** The bridge has a bearer token (the client passed authorize()). */
  authenticated: boolean;
}

/** null when the upgrade may go on, else why not. */
export function refuseUpgrade(f: UpgradeFacts, allowedOrigins: readonly string[]): string | null {
  if (f.origin !== '' && !allowedOrigins.includes(normalOrigin(f.origin))) {
    return `Origin ${f.origin.slice(0, 200)} is not allowed (MEDIA_ALLOWED_ORIGINS): web pages may not open the command channel`;
  }
  if (!f.authenticated && isLoopbackPeer(f.remoteAddress)) {
    const host = hostOf(f.host);
    if (host === null || !isLoopbackHost(host)) {
      return `Host ${f.host.slice(0, 200) || '(none)'} is not a loopback name: an unauthenticated loopback client must connect to 127.0.0.1, [::1] or localhost`;
    }
  }
  return null;
}
