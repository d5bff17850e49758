/**
 * The WebRTC endpoint's SDP rules that hostd keeps itself rather than leave to werift (issue 16):
 * the peer's DTLS identity (`a=fingerprint`) read from an SDP so it can be pinned after the first
 * accepted SDP and checked before werift sees a later one (werift would add a new fingerprint to
 * the accepted set), the offer-generation check that runs before an answer is parsed, and the
 * host-candidate filter that keeps only the bridge's own address in what we send. Pure.
 */
import type { Result } from './types.js';

export interface Fingerprint {
  /** Hash function, lower case (`sha-256`). */
  algorithm: string;
  /** Upper-case hex pairs joined by colons. */
  value: string;
}

const FINGERPRINT = /^a=fingerprint:(\S+)\s+([0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})+)\s*$/gm;

/**
 * The one fingerprint an SDP names (session or media level). Several lines that all agree are one
 * identity; lines that disagree, or none, are refused: a pinned peer has exactly one certificate.
 */
export function remoteFingerprint(sdp: string): Result<Fingerprint> {
  const found = new Map<string, Fingerprint>();
  for (const m of sdp.matchAll(FINGERPRINT)) {
    const f = { algorithm: m[1]!.toLowerCase(), value: m[2]!.toUpperCase() };
    found.set(`${f.algorithm} ${f.value}`, f);
  }
  if (found.size === 0) return { ok: false, error: 'the SDP has no a=fingerprint line (DTLS-SRTP needs the peer\'s certificate fingerprint)' };
  if (found.size > 1) return { ok: false, error: `the SDP names ${found.size} different DTLS fingerprints; a WebRTC endpoint takes one peer identity` };
  return { ok: true, value: [...found.values()][0]! };
}

export const sameFingerprint = (a: Fingerprint, b: Fingerprint): boolean => a.algorithm === b.algorithm && a.value === b.value;

/** For session.info and messages: the algorithm and the first bytes (enough to tell two apart). */
export const showFingerprint = (f: Fingerprint): string => `${f.algorithm} ${f.value.slice(0, 23)}…`;

/**
 * Spec, accept_answer rule 1: a given `offer_generation` must be the pending offer's, and this is
 * checked before the SDP is parsed (a stale answer changes nothing). null: go on.
 */
export function checkOfferGeneration(pending: number | null, given: number | undefined): { code: 'ENDPOINT_ERROR' | 'OFFER_GENERATION_MISMATCH'; message: string } | null {
  if (pending === null) return { code: 'ENDPOINT_ERROR', message: 'the endpoint has no offer waiting for an answer (create_offer or ice_restart makes one)' };
  if (given !== undefined && given !== pending) {
    return { code: 'OFFER_GENERATION_MISMATCH', message: `offer_generation ${given} is not the pending offer's (${pending}); the pending offer is kept` };
  }
  return null;
}

/**
 * Our SDP with only the host candidates on `address` (werift binds every interface it finds, and
 * falls back to all of them when the configured one is not an interface, as loopback is not). An
 * SDP without a candidate on `address` is returned unchanged, so a misconfiguration shows as
 * extra candidates rather than none.
 */
export function keepCandidates(sdp: string, address: string): string {
  const lines = sdp.split('\r\n');
  const isCandidate = (l: string) => l.startsWith('a=candidate:');
  const onAddress = (l: string) => l.split(' ')[4] === address;
  if (!lines.some((l) => isCandidate(l) && onAddress(l))) return sdp;
  return lines.filter((l) => !isCandidate(l) || onAddress(l)).join('\r\n');
}

/**
 * The peer's SDP with the `generation N` extension dropped from its a=candidate lines. Browsers
 * write `generation 0` on every candidate, also after an ICE restart; werift 0.24 nominates a
 * pair only when its remote candidate's generation equals werift's own restart count, so after
 * our first restart it would not nominate a signalled candidate. Without the attribute werift
 * takes the candidate as current (the ICE credentials already tell generations apart). One of
 * two workarounds for werift's restart (the other: webrtc-endpoint.ts resumeIce).
 */
export function withoutCandidateGeneration(sdp: string): string {
  return sdp.replace(/^(a=candidate:[^\r\n]*?) generation \d+/gm, '$1');
}

/** The ICE username fragments an SDP declares (`a=ice-ufrag`, session or media level). */
export function iceUfrags(sdp: string): string[] {
  return [...new Set([...sdp.matchAll(/^a=ice-ufrag:(\S+)\s*$/gm)].map((m) => m[1]!))];
}

/**
 * The sender's ufrag in an ICE check (a STUN Binding request) from its USERNAME, which is
 * `<recipient's ufrag>:<sender's ufrag>` (RFC 8445 §7.2.2); null when it is not of that form.
 * The recipient's half only proves the sender read our SDP (any peer that was given our offer
 * did); the sender's half says which of the peer's SDPs it follows.
 */
export function checkSender(username: unknown): string | null {
  const s = typeof username === 'string' ? username : Buffer.isBuffer(username) ? username.toString('utf8') : null;
  if (s === null) return null;
  const colon = s.indexOf(':');
  return colon > 0 && colon < s.length - 1 ? s.slice(colon + 1) : null;
}
