/**
 * Direction algebra, all in the peer's point of view (the SDP attribute the peer wrote).
 * A direction is the set of {peer sends, peer receives}; negotiation intersects sets, and the
 * attribute we write is the mirror (peer sendonly ⇒ we write recvonly).
 */
import type { Direction } from '../types.js';
import { fail, ok, type Result } from './types.js';

const CAPS: Record<Direction, readonly [sends: boolean, receives: boolean]> = {
  sendrecv: [true, true],
  sendonly: [true, false],
  recvonly: [false, true],
  inactive: [false, false],
};

export function fromCaps(sends: boolean, receives: boolean): Direction {
  if (sends) return receives ? 'sendrecv' : 'sendonly';
  return receives ? 'recvonly' : 'inactive';
}

export function peerSends(d: Direction): boolean {
  return CAPS[d][0];
}

/** What both sides allow: the peer sends only if both allow it, same for receiving. */
export function intersect(a: Direction, b: Direction): Direction {
  return fromCaps(CAPS[a][0] && CAPS[b][0], CAPS[a][1] && CAPS[b][1]);
}

/** The attribute for the other side of the same stream. */
export function mirror(d: Direction): Direction {
  return fromCaps(CAPS[d][1], CAPS[d][0]);
}

export function isDirection(x: unknown): x is Direction {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(CAPS, x);
}

export function checkDirection(d: unknown): Result<Direction> {
  return isDirection(d) ? ok(d) : fail(`direction must be sendrecv, sendonly, recvonly or inactive, got ${String(d)}`);
}
