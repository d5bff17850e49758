/**
 * The scheduler's state: plain data, checkpointed as is in LMDB after every batch of work
 * (`hostd inspect objstore.scheduler` prints it), restored at boot, so every job resumes where
 * its last batch ended. Cursors are object ids: the objects database is ordered by id, so a
 * resumed scan skips exactly what was done.
 */
import type { RebalanceCounters, VerifyRun } from '../../protocols/objstore/maintenance.js';

export interface StuckSlice {
  objectId: string;
  index: number;
  reason: string;
  /**
   * A hard failure, which no retry fixes by itself: too few good slices with no repair pending
   * for the object, a rebuild that does not reproduce the MD5, no destination. Else the drain
   * tries the slice again (drain.ts). Absent in checkpoints of older versions: hard.
   */
  hard?: boolean;
}

export interface DrainState {
  volumeId: number;
  state: 'running' | 'completed' | 'cancelled';
  startedAt: number;
  finishedAt: number | null;
  /** the last object id examined in this pass */
  cursor: string | null;
  /** passes over the objects (a pass that leaves movable slices behind is followed by another) */
  pass: number;
  moved: number;
  copied: number;
  reconstructed: number;
  bytesMoved: number;
  noDest: number;
  /** slices that could not move in the last pass */
  stuck: StuckSlice[];
  /** slices (`objectId/index`) that were soft-stuck in a pass and have not moved yet */
  softStuck?: string[];
  /** slices moved in a later pass after they were soft-stuck (a fault the repair fixed, say) */
  movedOnRetry?: number;
  /** retries after the quick passes (each waits for the repair, or a backoff) */
  retries?: number;
  /** since when the drain waits to retry the slices that could not move (null: it is moving) */
  waitingSince?: number | null;
  /** when the wait ends at the latest */
  waitingUntil?: number | null;
}

export interface RebalanceState {
  running: boolean;
  deadband: number;
  maxMoves: number | null;
  concurrency: number;
  startedAt: number | null;
  finishedAt: number | null;
  lastOutcome: string | null;
  targetFill: number;
  bytesToMove: number;
  bytesMoved: number;
  sourceVolumeIds: number[];
  currentSourceVolumeId: number | null;
  currentMinObjectSize: number;
  /** sources shed as far as they can go in this run */
  doneSources: number[];
  counters: RebalanceCounters;
  /** moves in the last batch, and the concurrency it ran with */
  lastBatch: { size: number; concurrency: number } | null;
}

export interface VerifyState {
  run: VerifyRun;
  /** the last object id checked */
  cursor: string | null;
  objectsTotal: number;
  /** waiting for a rebalance to end before it starts (a deferred request) */
  deferred: boolean;
}

export interface SchedulerState {
  drains: Record<string, DrainState>;
  rebalance: RebalanceState | null;
  verify: VerifyState | null;
  lastScheduledScrubAt: number | null;
  firstSeenAt: number;
  repairs: { repaired: number; blocked: number; lastRunAt: number | null };
}

export function initialState(now: number): SchedulerState {
  return { drains: {}, rebalance: null, verify: null, lastScheduledScrubAt: null, firstSeenAt: now, repairs: { repaired: 0, blocked: 0, lastRunAt: null } };
}
