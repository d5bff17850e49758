/**
 * Child and supervisor specifications: plain data, so they can cross threads
 * (an actor may ask for a child to be spawned).
 */

/** Erlang's restart types. */
export type RestartType =
  /** Always restarted (crash or normal stop). */
  | 'permanent'
  /** Restarted only after a crash. */
  | 'transient'
  /** Never restarted. */
  | 'temporary';

/**
 * Where an actor runs.
 * - `dedicated`: a worker thread of its own (long-lived actors with heavy or latency-critical work).
 * - `shared`: one of the threads of a named group; many actors per thread (per-session, per-volume).
 * - `with`: the thread of another, running actor (actors that must share thread-bound
 *   resources such as sockets); if that actor is not running, the `fallback` placement.
 */
export type Placement =
  | { mode: 'dedicated' }
  | { mode: 'shared'; group: string }
  | { mode: 'with'; actor: string; fallback: { mode: 'dedicated' } | { mode: 'shared'; group: string } };

export interface BackoffSpec {
  initialMs: number;
  maxMs: number;
  factor: number;
}

export interface ChildSpec {
  id: string;
  /** URL or absolute path of the compiled module whose default export is the ActorDefinition. */
  module: string;
  args?: unknown;
  restart?: RestartType;
  placement?: Placement;
  /** How long onStop may take before the instance is abandoned. Default 5000 ms. */
  shutdownMs?: number;
  backoff?: Partial<BackoffSpec>;
}

export interface IntensitySpec {
  /** More than this many restarts within `withinMs` escalates to the parent. */
  maxRestarts: number;
  withinMs: number;
}

export interface SupervisorSpec {
  id: string;
  /** Children in start order; they stop in reverse order. */
  children: Array<ChildSpec | SupervisorSpec>;
  intensity?: Partial<IntensitySpec>;
  /** Restart policy of this supervisor within its parent. */
  restart?: RestartType;
  backoff?: Partial<BackoffSpec>;
}

export function isSupervisorSpec(s: ChildSpec | SupervisorSpec): s is SupervisorSpec {
  return Array.isArray((s as SupervisorSpec).children);
}

export const DEFAULT_BACKOFF: BackoffSpec = { initialMs: 100, maxMs: 30_000, factor: 2 };
export const DEFAULT_INTENSITY: IntensitySpec = { maxRestarts: 5, withinMs: 10_000 };
export const DEFAULT_SHUTDOWN_MS = 5_000;
