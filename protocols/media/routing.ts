/**
 * Who hears whom in a session: the routing plan, from each endpoint's effective direction
 * (peer's point of view) and codec. Pure, so every case of the spec's direction table is
 * tested without sockets.
 *
 * - A source is an endpoint whose peer sends (`sendonly`, `sendrecv`); a destination is one
 *   whose peer receives (`recvonly`, `sendrecv`). `inactive` is neither.
 * - Every destination hears every source but itself.
 * - One source with the destination's codec (same name and RTP clock): packets are forwarded
 *   without decoding (`forward`). Anything else (another codec, a tone, two or more sources):
 *   decode, resample, mix and encode per destination on the 20 ms clock (`mix`).
 * - PCM endpoints (WebSocket, bridge) have no codec: as sources and as destinations they are
 *   always mixed, never forwarded.
 * - A bridge destination never hears a bridge source, so sessions wired in a ring (A↔B, B↔C,
 *   C↔A) never carry audio round it back to where it came from.
 */
import type { CodecName, Direction } from './types.js';

export interface RouteNode {
  id: string;
  direction: Direction;
  /** Codec the endpoint sends in (what the peer decodes), or null when it has none yet. */
  codec: CodecName | null;
  /** A generator (tone, file): always mixed, since it makes PCM, not packets. */
  generator?: boolean;
  /** Negotiated far enough to send to (an RTP endpoint before its answer is not). */
  canSend?: boolean;
  /** Takes and gives PCM, no codec (WebSocket, bridge): a destination without a codec. */
  pcm?: boolean;
  /** A bridge endpoint: it does not hear other bridge endpoints (loop guard). */
  bridge?: boolean;
}

export interface Route {
  destination: string;
  sources: string[];
  mode: 'forward' | 'mix' | 'silent';
}

export const isSource = (d: Direction): boolean => d === 'sendonly' || d === 'sendrecv';
export const isDestination = (d: Direction): boolean => d === 'recvonly' || d === 'sendrecv';

export function routingPlan(nodes: readonly RouteNode[]): Map<string, Route> {
  const plan = new Map<string, Route>();
  const sources = nodes.filter((n) => isSource(n.direction));
  for (const d of nodes) {
    if (!isDestination(d.direction) || d.generator || (d.codec === null && !d.pcm) || d.canSend === false) continue;
    const heard = sources.filter((s) => s.id !== d.id && !(d.bridge && s.bridge));
    let mode: Route['mode'] = 'mix';
    if (heard.length === 0) mode = 'silent';
    else if (heard.length === 1 && !heard[0]!.generator && d.codec !== null && heard[0]!.codec === d.codec) mode = 'forward';
    plan.set(d.id, { destination: d.id, sources: heard.map((s) => s.id), mode });
  }
  return plan;
}

/** Intersection of two directions (both in the peer's point of view). */
export function intersectDirections(a: Direction, b: Direction): Direction {
  const send = isSource(a) && isSource(b);
  const recv = isDestination(a) && isDestination(b);
  return send && recv ? 'sendrecv' : send ? 'sendonly' : recv ? 'recvonly' : 'inactive';
}
