/**
 * Supervision and placement policy as pure functions: no clocks, no threads. Easy to test.
 */
import type { BackoffSpec, IntensitySpec, Placement } from './spec.js';

/** Delay before restart number `attempt` (1-based) within the current window. */
export function backoffDelay(spec: BackoffSpec, attempt: number): number {
  const n = Math.max(1, attempt);
  const d = spec.initialMs * Math.pow(spec.factor, n - 1);
  return Math.min(spec.maxMs, Math.round(d));
}

/**
 * Record a restart at `now` against the intensity window. Returns the restarts still in the
 * window (including this one) and whether the limit is exceeded (Erlang: more than
 * maxRestarts within withinMs means the supervisor gives up and escalates).
 */
export function recordRestart(history: readonly number[], now: number, intensity: IntensitySpec): { history: number[]; exceeded: boolean } {
  const kept = history.filter((t) => now - t < intensity.withinMs);
  kept.push(now);
  return { history: kept, exceeded: kept.length > intensity.maxRestarts };
}

export interface ThreadLoad {
  threadId: number;
  /** Group the thread serves; `dedicated` threads belong to no group. */
  group: string | null;
  actors: number;
  alive: boolean;
}

export type PlacementChoice = { kind: 'existing'; threadId: number } | { kind: 'new'; group: string | null };

/**
 * Where to put a new actor.
 * - dedicated: always a new thread.
 * - with: the thread of the named actor while it runs, else its fallback placement.
 * - shared: while the group has fewer than `groupSize` threads and every thread of it already
 *   hosts an actor, start a new thread (spread first); otherwise the least-loaded thread
 *   (lowest thread id on ties, so the choice is deterministic).
 */
export function choosePlacement(threads: readonly ThreadLoad[], placement: Placement, groupSize: number, locate: (actor: string) => number | null = () => null): PlacementChoice {
  if (placement.mode === 'with') {
    const threadId = locate(placement.actor);
    const alive = threadId !== null && threads.some((t) => t.threadId === threadId && t.alive);
    return alive ? { kind: 'existing', threadId: threadId! } : choosePlacement(threads, placement.fallback, groupSize);
  }
  if (placement.mode === 'dedicated') return { kind: 'new', group: null };
  const group = threads.filter((t) => t.alive && t.group === placement.group);
  const idle = group.filter((t) => t.actors === 0).sort((a, b) => a.threadId - b.threadId);
  if (idle[0]) return { kind: 'existing', threadId: idle[0].threadId };
  if (group.length < Math.max(1, groupSize)) return { kind: 'new', group: placement.group };
  const least = [...group].sort((a, b) => a.actors - b.actors || a.threadId - b.threadId)[0]!;
  return { kind: 'existing', threadId: least.threadId };
}
