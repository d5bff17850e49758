/**
 * The status machine of a deployment and of its cluster targets, and the events each move emits
 * (the deployment's event log, which the SSE stream replays: sse.ts).
 *
 * Parent: pending → validating → pushing → pushed → monitoring → deployed | failed, one step at a
 * time, in that order (`pushed` is always recorded: it is where the IaC commit is known, and where a
 * restart resumes without pushing again). Any non-terminal status may go to failed. deployed and
 * failed are terminal: nothing moves after them.
 *
 * Targets: pending → monitoring → deployed | failed, and pending → failed. Targets move only while
 * the parent is monitoring. Entering monitoring starts every pending target's budget: its
 * `deadlineAt` is `now + monitorTimeoutSecs` (pinned when queued), stored as an absolute time so
 * that a restart never extends it. Rollout monitors (part 2) report through the same `target`
 * change and use `deadlineAt` / `expiredTargets` for timeouts.
 *
 * The parent's outcome is derived from the targets, waiting for all of them: it stays monitoring
 * until every target has finished (a rollout already picked up by the cluster cannot be called
 * back, so each target's outcome is worth reporting), then is deployed when all are deployed and
 * failed otherwise, with a message naming each failed target. A parent failure before or during
 * monitoring (a refused push, a restart that cannot resume) fails every unfinished target with the
 * same message. Every change emits target events first, then the status event. Pure: callers pass `now`.
 */
import { attempt, refuse, type Result } from './errors.js';
import { resolveMonitorTimeout, type ClusterRef, type DeployType, type TargetConfig } from './targets.js';

export const DEPLOYMENT_STATUSES = ['pending', 'validating', 'pushing', 'pushed', 'monitoring', 'deployed', 'failed'] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];
export const TARGET_STATUSES = ['pending', 'monitoring', 'deployed', 'failed'] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];

/** Longest stored status message; longer ones are cut with '…'. */
export const MAX_MESSAGE_LENGTH = 1000;

export interface DeploymentTarget {
  id: string;
  clusterId: number;
  clusterName: string;
  deployType: DeployType;
  deployNamespace: string;
  deployName: string;
  /** resolved and pinned when queued */
  monitorTimeoutSecs: number;
  status: TargetStatus;
  message: string;
  /** ms since the epoch; set when the target starts monitoring */
  monitorStartedAt: number | null;
  deadlineAt: number | null;
  completedAt: number | null;
}

export interface DeploymentState {
  id: string;
  status: DeploymentStatus;
  message: string;
  targets: DeploymentTarget[];
}

/** A target as target events and deployment responses show it (the spec's Deployment target). */
export interface TargetView {
  id: string;
  clusterId: number;
  clusterName: string;
  monitorTimeoutSecs: number;
  status: TargetStatus;
  message: string;
}

export type DeploymentEvent =
  | { event: 'status'; data: { status: DeploymentStatus; message: string } }
  | { event: 'target'; data: { target: TargetView } };

export type Change =
  /** the next parent step: validating, pushing, pushed or monitoring */
  | { kind: 'advance'; to: 'validating' | 'pushing' | 'pushed' | 'monitoring'; message: string }
  /** the deployment fails as a whole */
  | { kind: 'fail'; message: string }
  /** a target moves (its monitor's report) */
  | { kind: 'target'; targetId: string; to: 'monitoring' | 'deployed' | 'failed'; message: string };

const NEXT: Readonly<Partial<Record<DeploymentStatus, DeploymentStatus>>> = {
  pending: 'validating',
  validating: 'pushing',
  pushing: 'pushed',
  pushed: 'monitoring',
};
const TARGET_NEXT: Readonly<Record<TargetStatus, readonly TargetStatus[]>> = {
  pending: ['monitoring', 'failed'],
  monitoring: ['deployed', 'failed'],
  deployed: [],
  failed: [],
};

export function isTerminal(status: DeploymentStatus | TargetStatus): boolean {
  return status === 'deployed' || status === 'failed';
}

export function clip(message: string): string {
  return message.length <= MAX_MESSAGE_LENGTH ? message : `${message.slice(0, MAX_MESSAGE_LENGTH - 1)}…`;
}

export function targetView(t: DeploymentTarget): TargetView {
  return { id: t.id, clusterId: t.clusterId, clusterName: t.clusterName, monitorTimeoutSecs: t.monitorTimeoutSecs, status: t.status, message: t.message };
}

/** A deployment as `GET /api/deployments/{id}` shows it (the spec's Deployment): targets carry the pinned budget. */
export function deploymentView(d: DeploymentState): { deploymentId: string; status: DeploymentStatus; message: string; targets: TargetView[] } {
  return { deploymentId: d.id, status: d.status, message: d.message, targets: d.targets.map(targetView) };
}

const statusEvent = (d: DeploymentState): DeploymentEvent => ({ event: 'status', data: { status: d.status, message: d.message } });
const targetEvent = (t: DeploymentTarget): DeploymentEvent => ({ event: 'target', data: { target: targetView(t) } });

export interface Applied<D extends DeploymentState> {
  deployment: D;
  events: DeploymentEvent[];
}

/**
 * A new deployment, `pending`, with every target of the environment pinned: its cluster's name and
 * its resolved monitor budget (the override, else `defaultSecs`). The target ids are the
 * environment's target ids. No targets, or a target whose cluster no longer exists, refuses with 409
 * (a deployment without targets would never finish monitoring).
 */
export function queueDeployment(
  id: string,
  targets: readonly (TargetConfig & { id: string })[],
  clusters: readonly ClusterRef[],
  defaultSecs: number,
): Result<Applied<DeploymentState>> {
  return attempt(() => {
    if (targets.length === 0) refuse(409, 'CONFLICT', 'the environment has no cluster targets; a deployment needs at least one');
    const pinned = targets.map((t): DeploymentTarget => {
      const cluster = clusters.find((c) => c.id === t.clusterId);
      if (cluster === undefined) return refuse(409, 'CONFLICT', `target ${t.id} names cluster ${t.clusterId}, which does not exist`);
      return {
        id: t.id,
        clusterId: cluster.id,
        clusterName: cluster.name,
        deployType: t.deployType,
        deployNamespace: t.deployNamespace,
        deployName: t.deployName,
        monitorTimeoutSecs: resolveMonitorTimeout(t.monitorTimeoutSecs, defaultSecs),
        status: 'pending',
        message: 'waiting for the push',
        monitorStartedAt: null,
        deadlineAt: null,
        completedAt: null,
      };
    });
    const deployment: DeploymentState = { id, status: 'pending', message: 'queued', targets: pinned };
    return { deployment, events: [...pinned.map(targetEvent), statusEvent(deployment)] };
  });
}

/** The parent's outcome once every target has finished, or null while any is still running. */
export function outcomeOf(targets: readonly DeploymentTarget[]): { status: 'deployed' | 'failed'; message: string } | null {
  if (!targets.every((t) => isTerminal(t.status))) return null;
  const failed = targets.filter((t) => t.status === 'failed');
  const n = targets.length;
  if (failed.length === 0) return { status: 'deployed', message: n === 1 ? `deployed on cluster ${targets[0]?.clusterName}` : `deployed on all ${n} cluster targets` };
  return { status: 'failed', message: clip(`${failed.length} of ${n} cluster target${n === 1 ? '' : 's'} failed: ${failed.map((t) => `${t.clusterName}: ${t.message}`).join('; ')}`) };
}

const illegal = (message: string): never => refuse(409, 'ILLEGAL_TRANSITION', message);

/** Apply one change; an illegal move is refused (409 ILLEGAL_TRANSITION) and changes nothing. */
export function applyChange<D extends DeploymentState>(d: D, change: Change, now: number): Result<Applied<D>> {
  return attempt(() => {
    if (isTerminal(d.status)) return illegal(`deployment ${d.id} is ${d.status}; it cannot change any more`);
    const message = clip(change.message);
    const targets = d.targets.map((t) => ({ ...t }));
    const events: DeploymentEvent[] = [];
    const finishTarget = (t: DeploymentTarget, to: TargetStatus, msg: string) => {
      t.status = to;
      t.message = msg;
      if (to === 'monitoring') {
        t.monitorStartedAt = now;
        t.deadlineAt = now + t.monitorTimeoutSecs * 1000;
      }
      if (isTerminal(to)) t.completedAt = now;
    };
    let status = d.status;
    let parentMessage = d.message;
    if (change.kind === 'advance') {
      if (NEXT[d.status] !== change.to) return illegal(`deployment ${d.id} cannot go from ${d.status} to ${change.to}`);
      status = change.to;
      parentMessage = message;
      const next = { ...d, status, message: parentMessage, targets };
      if (change.to !== 'monitoring') return { deployment: next, events: [statusEvent(next)] };
      for (const t of targets) {
        if (t.status !== 'pending') continue;
        finishTarget(t, 'monitoring', 'waiting for the rollout');
        events.push(targetEvent(t));
      }
      // target events first, the status event last, as for every other change
      return { deployment: next, events: [...events, statusEvent(next)] };
    }
    if (change.kind === 'fail') {
      for (const t of targets) {
        if (isTerminal(t.status)) continue;
        finishTarget(t, 'failed', message);
        events.push(targetEvent(t));
      }
      const next = { ...d, status: 'failed' as const, message, targets };
      return { deployment: next, events: [...events, statusEvent(next)] };
    }
    if (d.status !== 'monitoring') return illegal(`target ${change.targetId} cannot move while deployment ${d.id} is ${d.status}`);
    const t = targets.find((x) => x.id === change.targetId);
    if (t === undefined) return illegal(`deployment ${d.id} has no target ${change.targetId}`);
    if (!TARGET_NEXT[t.status].includes(change.to)) return illegal(`target ${t.id} cannot go from ${t.status} to ${change.to}`);
    finishTarget(t, change.to, message);
    events.push(targetEvent(t));
    const outcome = outcomeOf(targets);
    const next = outcome === null ? { ...d, targets } : { ...d, status: outcome.status, message: outcome.message, targets };
    if (outcome !== null) events.push(statusEvent(next));
    return { deployment: next, events };
  });
}

/** Targets still monitoring whose pinned deadline has passed at `now` (their monitors fail them as timed out). */
export function expiredTargets(d: DeploymentState, now: number): DeploymentTarget[] {
  return d.targets.filter((t) => t.status === 'monitoring' && t.deadlineAt !== null && now >= t.deadlineAt);
}

/** The earliest deadline among monitoring targets, for the actor's timer; null when none runs. */
export function nextDeadline(d: DeploymentState): number | null {
  let min: number | null = null;
  for (const t of d.targets) if (t.status === 'monitoring' && t.deadlineAt !== null && (min === null || t.deadlineAt < min)) min = t.deadlineAt;
  return min;
}

/**
 * What a restart does with a stored deployment: validate again from the stored chart (pending,
 * validating; a deployment already validating does not advance to validating again), push after looking for its own `Deployment-Id:` commit on the remote (pushing),
 * start monitoring (pushed), resume the monitors with the stored deadlines (monitoring), or
 * nothing (terminal).
 */
export function resumeStep(status: DeploymentStatus): 'validate' | 'push' | 'monitor' | 'resume-monitors' | 'none' {
  switch (status) {
    case 'pending':
    case 'validating':
      return 'validate';
    case 'pushing':
      return 'push';
    case 'pushed':
      return 'monitor';
    case 'monitoring':
      return 'resume-monitors';
    case 'deployed':
    case 'failed':
      return 'none';
  }
}
