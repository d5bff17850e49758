/**
 * Which media bridge backend takes a new session: a pure rule, tested without sockets.
 *
 * - A session pinned to a backend (its callId already has sessions there, or `colocate_with`
 *   names a session there) goes there and nowhere else: sessions of one call share a bridge, so
 *   their endpoints can be transferred and mixed between them. A pinned backend that is down is
 *   BACKEND_UNAVAILABLE, never another backend.
 * - Otherwise the backend holding the fewest sessions of this gateway, ties to the one listed
 *   first; backends known to be down come after every reachable one (they are still tried, last,
 *   in case they came back since). The link tries them in this order until one creates the
 *   session: one that is unreachable or full (LIMIT_EXCEEDED) passes it to the next.
 */

export interface BackendLoad {
  /** Position in the backend list. */
  index: number;
  /** Sessions this gateway holds there (and creations under way). */
  sessions: number;
  /** False while the backend's last connection attempt failed. */
  reachable: boolean;
}

/** Backends to try for a new session, best first. */
export function placementOrder(loads: readonly BackendLoad[], pinned?: number): number[] {
  if (pinned !== undefined) return loads.some((l) => l.index === pinned) ? [pinned] : [];
  return [...loads]
    .sort((a, b) => Number(b.reachable) - Number(a.reachable) || a.sessions - b.sessions || a.index - b.index)
    .map((l) => l.index);
}
