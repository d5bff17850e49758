/**
 * Background maintenance of the object store as the management API shows it, and its pure rules:
 * request bodies (drain, rebalance, verify-volumes, accept-loss) checked field by field, the
 * rebalance arithmetic (capacity-weighted target fill, sources and destinations, bytes to move),
 * which verify run covers which request, when the scheduled scrub is due, and the order in which
 * work resumes after a freeze. No I/O, no clock: callers pass `now`.
 */

export type VerifyMode = 'light' | 'full';

export type VerifyTrigger =
  | { kind: 'manual' }
  | { kind: 'scheduled' }
  /** armed by the kernel-log watcher or SMART: the device, the signal, the line that armed it */
  | { kind: 'fault'; device: string; signal: 'pending' | 'ioerror'; detail: string };

export type VerifyStatus = 'running' | 'completed' | 'stopped';

/** Errors a scrub counts, by what was wrong with a slice (or the whole object's MD5). */
export interface VerifyErrors {
  missing: number;
  badHeader: number;
  checksum: number;
  unreadable: number;
  timeout: number;
  parityMismatch: number;
  md5Mismatch: number;
}

export const NO_ERRORS: VerifyErrors = { missing: 0, badHeader: 0, checksum: 0, unreadable: 0, timeout: 0, parityMismatch: 0, md5Mismatch: 0 };

/** One verification run (GET /$/verify-runs lists them, most recent first). */
export interface VerifyRun {
  id: string;
  trigger: VerifyTrigger;
  mode: VerifyMode;
  /** null: the whole fleet */
  volumeIds: number[] | null;
  status: VerifyStatus;
  /** ISO 8601 */
  requestedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  objectsChecked: number;
  slicesChecked: number;
  bytesChecked: number;
  /** totals so far; final once the run has finished */
  errors: VerifyErrors;
  /** why it stopped (DELETE, freeze at boot, ...) */
  stopReason: string | null;
}

/** GET /$/verify-volumes */
export interface VerifyProgress {
  running: boolean;
  /** waiting for a running rebalance to finish (a deferred request, or a run parked by one) */
  waitingOnRebalance: boolean;
  /** the freeze holds it */
  frozen: boolean;
  run: VerifyRun | null;
  /** objects scheduled for this run (counted when it started) and checked so far */
  objectsTotal: number;
  percent: number;
}

export interface RebalanceCounters {
  moves: number;
  copied: number;
  reconstructed: number;
  noDest: number;
  unrecoverable: number;
  sourceDeleteFailed: number;
  duplicateRefs: number;
}

export const ZERO_REBALANCE_COUNTERS: RebalanceCounters = { moves: 0, copied: 0, reconstructed: 0, noDest: 0, unrecoverable: 0, sourceDeleteFailed: 0, duplicateRefs: 0 };

/** GET /$/rebalance: the spec's fields, plus why it is paused and how it ended. */
export interface RebalanceProgress extends RebalanceCounters {
  running: boolean;
  concurrency: number;
  targetFill: number;
  deadband: number;
  bytesToMove: number;
  bytesMoved: number;
  bytesPerSec: number;
  etaSeconds: number;
  sourceVolumeIds: number[];
  currentSourceVolumeId: number | null;
  currentMinObjectSize: number;
  startedAt: string | null;
  maxMoves: number | null;
  /** 'freeze' or 'drain' while running but held; null otherwise */
  pausedBy: 'freeze' | 'drain' | null;
  /** how the last job ended: completed, cancelled, maxMoves */
  lastOutcome: string | null;
  finishedAt: string | null;
  /** the last batch: how many moves, at what concurrency (a retune shows here); null before the first */
  lastBatch: { size: number; concurrency: number } | null;
}

export interface DrainProgress {
  volumeId: number;
  state: 'running' | 'completed' | 'cancelled';
  /**
   * Where the drain is: `moving` slices; `waiting` to retry slices that could not move (a fault a
   * repair may fix, a busy object: see `waiting` and `stuck`); `old-copies-waiting`: finished, but
   * the old copies of moved slices wait for their grace period before they are deleted (see
   * `oldCopies`); `done`; `cancelled`.
   */
  phase: 'moving' | 'waiting' | 'old-copies-waiting' | 'done' | 'cancelled';
  startedAt: string;
  finishedAt: string | null;
  /** passes over the objects so far */
  passes: number;
  /** slices moved off the volume: copied (read from it) or reconstructed (from the others) */
  moved: number;
  /** of them, slices that moved in a later pass after they could not (a fault the repair fixed, say) */
  movedOnRetry: number;
  copied: number;
  reconstructed: number;
  bytesMoved: number;
  /** slices on the volume that could not move: no destination, or too few slices to rebuild */
  noDest: number;
  /** slices that could not move in the last pass, each with its reason; hard: no retry fixes it by itself */
  stuck: Array<{ objectId: string; index: number; reason: string; hard: boolean }>;
  /** slices still on the volume (counted from the records) */
  remaining: number;
  /** while waiting to retry: since when, and until when at the latest (sooner once the repair fixed the faults) */
  waiting: { since: string; until: string | null } | null;
  /** old copies of slices this drain moved, not deleted yet: how many, and when the last one's grace period ends */
  oldCopies: { waiting: number; graceEndsAt: string | null };
  pausedBy: 'freeze' | null;
}

// ------------------------------------------------------------------ request bodies

export class BodyError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'BodyError';
    this.code = code;
  }
}

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw new BodyError('UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (allowed: ${allowed.length ? allowed.join(', ') : 'none'})`);
}

export const MAX_CONCURRENCY = 64;
export const MAX_DEADBAND = 0.5;
export const DEFAULT_DEADBAND = 0.05;
export const DEFAULT_REBALANCE_CONCURRENCY = 2;

function concurrency(v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_CONCURRENCY) {
    throw new BodyError('INVALID_FIELD', `concurrency must be an integer from 1 to ${MAX_CONCURRENCY}; got ${JSON.stringify(v)}`);
  }
  return v;
}

/** POST /$/rebalance {deadband?, maxMoves?, concurrency?} */
export function parseRebalanceStart(body: Record<string, unknown>): { deadband: number; maxMoves: number | null; concurrency: number } {
  onlyFields(body, ['deadband', 'maxMoves', 'concurrency']);
  let deadband = DEFAULT_DEADBAND;
  if (body.deadband !== undefined) {
    if (typeof body.deadband !== 'number' || !Number.isFinite(body.deadband) || body.deadband < 0 || body.deadband > MAX_DEADBAND) {
      throw new BodyError('INVALID_FIELD', `deadband must be a number from 0 to ${MAX_DEADBAND}; got ${JSON.stringify(body.deadband)}`);
    }
    deadband = body.deadband;
  }
  let maxMoves: number | null = null;
  if (body.maxMoves !== undefined && body.maxMoves !== null) {
    if (typeof body.maxMoves !== 'number' || !Number.isSafeInteger(body.maxMoves) || body.maxMoves < 1) {
      throw new BodyError('INVALID_FIELD', `maxMoves must be a positive integer (or null for no limit); got ${JSON.stringify(body.maxMoves)}`);
    }
    maxMoves = body.maxMoves;
  }
  return { deadband, maxMoves, concurrency: body.concurrency === undefined ? DEFAULT_REBALANCE_CONCURRENCY : concurrency(body.concurrency) };
}

/** PUT /$/rebalance {concurrency} */
export function parseRebalanceTune(body: Record<string, unknown>): { concurrency: number } {
  onlyFields(body, ['concurrency']);
  if (body.concurrency === undefined) throw new BodyError('MISSING_FIELD', 'concurrency is required (an integer from 1 to 64)');
  return { concurrency: concurrency(body.concurrency) };
}

/** POST /$/verify-volumes {volumeIds?, mode?} (mode defaults to full) */
export function parseVerifyStart(body: Record<string, unknown>): { volumeIds: number[] | null; mode: VerifyMode } {
  onlyFields(body, ['volumeIds', 'mode']);
  const mode = body.mode ?? 'full';
  if (mode !== 'light' && mode !== 'full') throw new BodyError('INVALID_FIELD', `mode must be "light" or "full"; got ${JSON.stringify(mode)}`);
  let volumeIds: number[] | null = null;
  if (body.volumeIds !== undefined && body.volumeIds !== null) {
    if (!Array.isArray(body.volumeIds)) throw new BodyError('INVALID_FIELD', `volumeIds must be an array of volume ids; got ${JSON.stringify(body.volumeIds)}`);
    if (body.volumeIds.length === 0) throw new BodyError('INVALID_FIELD', 'volumeIds is empty: omit it to verify the whole fleet');
    for (const v of body.volumeIds) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new BodyError('INVALID_FIELD', `volumeIds must hold positive integers; got ${JSON.stringify(v)}`);
    }
    volumeIds = [...new Set(body.volumeIds as number[])].sort((a, b) => a - b);
  }
  return { volumeIds, mode };
}

/** Bodies that take no field (drain, its cancel): an empty body is {}. */
export function parseEmpty(body: Record<string, unknown>, what: string): void {
  const keys = Object.keys(body);
  if (keys.length) throw new BodyError('UNKNOWN_FIELD', `${what} takes no fields; got ${keys.join(', ')}`);
}

/** POST /$/faults/accept-loss {objectId, sliceIndex?, comment?}: the operator accepts a loss. */
export function parseAcceptLoss(body: Record<string, unknown>): { objectId: string; sliceIndex: number | null; comment: string } {
  onlyFields(body, ['objectId', 'sliceIndex', 'comment']);
  if (typeof body.objectId !== 'string' || !/^\$[0-9a-fA-F]{24}$/.test(body.objectId)) {
    throw new BodyError('INVALID_FIELD', `objectId must be an object id ('$' and 24 hex characters); got ${JSON.stringify(body.objectId)}`);
  }
  let sliceIndex: number | null = null;
  if (body.sliceIndex !== undefined && body.sliceIndex !== null) {
    if (typeof body.sliceIndex !== 'number' || !Number.isInteger(body.sliceIndex) || body.sliceIndex < 0 || body.sliceIndex > 63) {
      throw new BodyError('INVALID_FIELD', `sliceIndex must be an integer from 0 to 63 (or omitted for every fault of the object); got ${JSON.stringify(body.sliceIndex)}`);
    }
    sliceIndex = body.sliceIndex;
  }
  if (body.comment !== undefined && (typeof body.comment !== 'string' || body.comment.length > 1024)) {
    throw new BodyError('INVALID_FIELD', 'comment must be a string of at most 1024 characters');
  }
  return { objectId: body.objectId.toLowerCase(), sliceIndex, comment: (body.comment as string | undefined) ?? '' };
}

// ------------------------------------------------------------------ rebalance arithmetic

export interface VolumeFill {
  id: number;
  bytesTotal: number;
  bytesUsed: number;
}

/** Capacity-weighted target fill: the fill every volume would have if data were spread evenly. */
export function targetFill(vols: readonly VolumeFill[]): number {
  let used = 0;
  let total = 0;
  for (const v of vols) {
    if (!(v.bytesTotal > 0)) continue;
    used += Math.max(0, v.bytesUsed);
    total += v.bytesTotal;
  }
  return total > 0 ? Math.min(1, used / total) : 0;
}

export function fillOf(v: VolumeFill): number {
  return v.bytesTotal > 0 ? Math.max(0, v.bytesUsed) / v.bytesTotal : 0;
}

export interface RebalancePlan {
  targetFill: number;
  /** volumes above target + deadband, most over first */
  sources: number[];
  /** volumes below target, emptiest first */
  destinations: number[];
  /** bytes the sources hold above the target */
  bytesToMove: number;
}

/**
 * Which volumes shed and which receive. A source is above `target + deadband`; a destination is
 * below the target. bytesToMove is what the sources hold above the target: recomputed from the
 * live fills each time, so it is right after a restart.
 */
export function planRebalance(vols: readonly VolumeFill[], deadband: number): RebalancePlan {
  const t = targetFill(vols);
  const live = vols.filter((v) => v.bytesTotal > 0);
  const sources = live
    .filter((v) => fillOf(v) > t + deadband)
    .sort((a, b) => fillOf(b) - t - (fillOf(a) - t) || a.id - b.id)
    .map((v) => v.id);
  const destinations = live
    .filter((v) => fillOf(v) < t)
    .sort((a, b) => fillOf(a) - fillOf(b) || a.id - b.id)
    .map((v) => v.id);
  let bytesToMove = 0;
  for (const v of live) if (sources.includes(v.id)) bytesToMove += Math.max(0, Math.round(v.bytesUsed - t * v.bytesTotal));
  return { targetFill: t, sources, destinations, bytesToMove };
}

/**
 * The destination for a slice of `sliceBytes` leaving `source`: a destination volume that holds
 * no slice of the object and stays at or below the target after taking it; the emptiest first.
 * null when none can, or when the move would take the source below the target (counted as noDest).
 */
export function chooseDestination(vols: readonly VolumeFill[], destinations: readonly number[], holding: ReadonlySet<number>, sliceBytes: number, target: number, source?: number): number | null {
  if (source !== undefined) {
    // A move that takes its source below the target overshoots: it would only move the imbalance.
    const s = vols.find((x) => x.id === source);
    if (s && s.bytesTotal > 0 && (s.bytesUsed - sliceBytes) / s.bytesTotal < target) return null;
  }
  let best: VolumeFill | null = null;
  for (const id of destinations) {
    if (holding.has(id)) continue;
    const v = vols.find((x) => x.id === id);
    if (!v || !(v.bytesTotal > 0)) continue;
    if ((v.bytesUsed + sliceBytes) / v.bytesTotal > target) continue;
    if (!best || fillOf(v) < fillOf(best)) best = v;
  }
  return best ? best.id : null;
}

/** Object size tiers shed biggest first (currentMinObjectSize walks down them). */
export const SIZE_TIERS: readonly number[] = [1024 ** 3, 256 * 1024 ** 2, 64 * 1024 ** 2, 16 * 1024 ** 2, 4 * 1024 ** 2, 1024 ** 2, 256 * 1024, 64 * 1024, 0];

/** The tier below `current`, or null after the last (0). */
export function nextTier(current: number): number | null {
  const i = SIZE_TIERS.indexOf(current);
  if (i < 0) return SIZE_TIERS.find((t) => t < current) ?? null;
  return i + 1 < SIZE_TIERS.length ? SIZE_TIERS[i + 1]! : null;
}

/** The upper bound (exclusive) of a tier; Infinity for the top one. */
export function tierCeiling(tier: number): number {
  const i = SIZE_TIERS.indexOf(tier);
  return i <= 0 ? Infinity : SIZE_TIERS[i - 1]!;
}

/** bytes per second and seconds to go, from what moved since the start. */
export function rate(bytesMoved: number, elapsedMs: number, bytesToMove: number): { bytesPerSec: number; etaSeconds: number } {
  const bytesPerSec = elapsedMs > 0 ? Math.round((bytesMoved * 1000) / elapsedMs) : 0;
  const etaSeconds = bytesPerSec > 0 ? Math.ceil(bytesToMove / bytesPerSec) : 0;
  return { bytesPerSec, etaSeconds };
}

// ------------------------------------------------------------------ verify rules

/** Does a run (scope, mode) already cover a request? full covers light; the fleet covers any scope. */
export function covers(run: { volumeIds: number[] | null; mode: VerifyMode }, req: { volumeIds: number[] | null; mode: VerifyMode }): boolean {
  if (run.mode === 'light' && req.mode === 'full') return false;
  if (run.volumeIds === null) return true;
  if (req.volumeIds === null) return false;
  return req.volumeIds.every((v) => run.volumeIds!.includes(v));
}

export const DAY_MS = 24 * 3600 * 1000;
export const DEFAULT_SCRUB_INTERVAL_DAYS = 90;

/**
 * When the scheduled full scrub is next due: `intervalDays` after the last one started (or after
 * the store was first seen, so a new store is not scrubbed on its first boot). 0 disables it.
 */
export function nextScrubAt(lastScheduledAt: number | null, firstSeenAt: number, intervalDays: number): number | null {
  if (intervalDays <= 0) return null;
  return (lastScheduledAt ?? firstSeenAt) + intervalDays * DAY_MS;
}

export type MaintenanceKind = 'drain' | 'scrub' | 'repair' | 'rebalance';

/**
 * May a kind of work run now? The freeze stops everything; a running rebalance parks the scrub;
 * a rebalance waits for drains (so, after a freeze, work resumes in order: drains, then scrub
 * and repair, then rebalance).
 */
export function mayRun(kind: MaintenanceKind, s: { frozen: boolean; drainsActive: boolean; rebalanceActive: boolean }): boolean {
  if (s.frozen) return false;
  if (kind === 'scrub') return !s.rebalanceActive;
  if (kind === 'rebalance') return !s.drainsActive;
  return true;
}

/** The order work resumes in after a freeze is lifted. */
export const RESUME_ORDER: readonly MaintenanceKind[] = ['drain', 'scrub', 'repair', 'rebalance'];
