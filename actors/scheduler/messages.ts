/**
 * What the maintenance scheduler accepts. One scheduler per object store (`objstore.scheduler`,
 * a sibling of the object store actor under its supervisor): the management API forwards drain,
 * rebalance, verify, freeze and fault requests here, already checked (protocols/objstore/
 * maintenance.ts parses the bodies). Refusals are ReplyErrors with a SchedulerRefusal code and a
 * message that names no route: the object store's front maps each code to its HTTP answer.
 */
import type { Protocol } from '../../runtime/index.js';
import type { DrainProgress, RebalanceProgress, VerifyMode, VerifyProgress, VerifyRun, VerifyTrigger } from '../../protocols/objstore/maintenance.js';

export type SchedulerMsg =
  | { type: 'drainStart'; volumeId: number }
  | { type: 'drainCancel'; volumeId: number }
  | { type: 'drainGet'; volumeId: number }
  | { type: 'rebalanceStart'; deadband: number; maxMoves: number | null; concurrency: number }
  | { type: 'rebalanceGet' }
  | { type: 'rebalanceTune'; concurrency: number }
  | { type: 'rebalanceCancel' }
  | { type: 'verifyStart'; volumeIds: number[] | null; mode: VerifyMode; trigger: VerifyTrigger }
  | { type: 'verifyGet' }
  | { type: 'verifyStop' }
  | { type: 'verifyRuns'; limit: number }
  /** the freeze flag changed in LMDB: stop, or resume in order */
  | { type: 'freezeChanged' }
  | { type: 'acceptLoss'; objectId: string; sliceIndex: number | null; comment: string }
  | { type: 'debug' };

export interface VerifyStartReply {
  startedAt: string;
  accepted: boolean;
  deferred?: boolean;
  /** why not accepted: 'frozen' or 'overlapping-run' */
  reason?: string;
}

export interface AcceptLossReply {
  objectId: string;
  accepted: number;
}

export interface SchedulerDebug {
  frozen: boolean;
  drains: DrainProgress[];
  rebalance: RebalanceProgress;
  verify: VerifyProgress;
  repair: { repaired: number; blocked: number; lastRunAt: string | null };
  /** relocations not finished yet (old slices waiting for their grace period, or a crash) */
  moves: { copying: number; flipped: number };
  /** objects being worked on now */
  busyObjects: number;
}

export interface SchedulerReplies {
  drainStart: DrainProgress;
  drainCancel: DrainProgress;
  drainGet: DrainProgress;
  rebalanceStart: RebalanceProgress;
  rebalanceGet: RebalanceProgress;
  rebalanceTune: RebalanceProgress;
  rebalanceCancel: RebalanceProgress;
  verifyStart: VerifyStartReply;
  verifyGet: VerifyProgress;
  verifyStop: VerifyProgress;
  verifyRuns: VerifyRun[];
  freezeChanged: { frozen: boolean };
  acceptLoss: AcceptLossReply;
  debug: SchedulerDebug;
}

/** Why the scheduler refuses a request (the code of its ReplyError). */
export type SchedulerRefusal =
  /** drainStart, drainCancel, verifyStart: no volume with this id */
  | 'NO_SUCH_VOLUME'
  /** drainStart, verifyStart: the volume is a tombstone */
  | 'VOLUME_DELETED'
  /** drainCancel: the volume was never drained */
  | 'NOT_DRAINING'
  /** drainGet: the volume was never drained */
  | 'NO_DRAIN'
  /** rebalanceStart: one runs already */
  | 'REBALANCE_RUNNING'
  /** rebalanceStart: a maintenance freeze is active */
  | 'FROZEN'
  /** rebalanceTune: none runs */
  | 'NO_REBALANCE'
  /** acceptLoss: no object with this id */
  | 'NOT_FOUND'
  /** acceptLoss: the object (or slice) has no fault */
  | 'NO_FAULT';

export type SchedulerProtocol = Protocol<SchedulerMsg, SchedulerReplies, SchedulerRefusal>;

export interface SchedulerArgs {
  stateDir: string;
  ioTimeoutMs: number;
  maxChunkSize: number;
  /** objects relocated at once by each drain (OBJSTORE_DRAIN_CONCURRENCY) */
  drainConcurrency: number;
  /** an old slice is deleted this long after its record flipped (reads in flight may use it) */
  moveGraceMs: number;
  /** the scheduled full scrub, every this many days (0: never) */
  scrubIntervalDays: number;
  /** how often the repair worker looks for pending faults */
  repairIntervalMs: number;
  healthFaultThreshold: number;
}

export const SCHEDULER_ID = 'objstore.scheduler';
