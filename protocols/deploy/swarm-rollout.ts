/**
 * The rollout judgement of one Docker swarm service: from the service (`GET /services?status=true`)
 * and its tasks (`GET /tasks?filters={"service":[…]}`) as dockerd answers them, and the pinned
 * deadline, whether the deployment's revision is rolled out, still rolling, or failed — and why.
 * Pure: callers pass `now`; the stability window is counted from the times dockerd recorded
 * (a task's running timestamp, the update's CompletedAt), never from when the monitor happened to
 * look, so a restarted monitor judges exactly as the one that was killed.
 *
 * Phases, in order:
 * 1. pickup — the service carries the revision: `Spec.Labels["hostd.deploy/revision"]`. A service
 *    that swarm rolled back carries the previous spec again (and, once the rollback completed, no
 *    PreviousSpec: captured from dockerd 20.10), so a service with UpdateStatus rollback_* whose
 *    PreviousSpec carries the revision, or whose update started after this target began
 *    monitoring (`appliedAfter`; the reconciler applies only then), is this revision rolled back.
 * 2. converge — UpdateStatus.State: `updating` waits; `paused` and `rollback_*` fail with swarm's
 *    message (and the last task error); `completed` or absent (a service created, or updated with
 *    a change that swarm resets the status for) go to the task check: tasks of the current spec
 *    (same ContainerSpec and ForceUpdate as the service's TaskTemplate) running with desired state
 *    running, as many as desired, and no task of an older spec still running.
 *    Early failure: when swarm itself will not decide (no update in progress, or an update whose
 *    FailureAction is `continue`), new-spec tasks made since the service was last updated that are
 *    all failed or rejected, with none in progress, fail the target with the task error.
 * 3. stability — converged for `stabilityMs` since the last new task started running (or the
 *    update completed, whichever is later): deployed.
 * A verdict never looks at the deadline except to say whether a rollout that finished did so in
 * time (a monitor resumed after the deadline reports deployed only if it was stable before it).
 */

export const REVISION_LABEL = 'hostd.deploy/revision';

/** The parts of a dockerd Service object the judgement reads. */
export interface SwarmService {
  ID: string;
  Version?: { Index: number };
  CreatedAt?: string;
  UpdatedAt?: string;
  Spec: SwarmServiceSpec;
  PreviousSpec?: SwarmServiceSpec;
  UpdateStatus?: { State?: string; StartedAt?: string; CompletedAt?: string; Message?: string };
  ServiceStatus?: { RunningTasks: number; DesiredTasks: number; CompletedTasks?: number };
}

export interface SwarmServiceSpec {
  Name: string;
  Labels?: Record<string, string>;
  TaskTemplate: { ContainerSpec?: Record<string, unknown> & { Image?: string }; ForceUpdate?: number };
  Mode?: { Replicated?: { Replicas?: number }; Global?: Record<string, never> };
  UpdateConfig?: { FailureAction?: string; Monitor?: number };
}

/** The parts of a dockerd Task object the judgement reads. */
export interface SwarmTask {
  ID: string;
  CreatedAt: string;
  Spec: { ContainerSpec?: Record<string, unknown>; ForceUpdate?: number };
  DesiredState: string;
  Status: { Timestamp: string; State: string; Message?: string; Err?: string };
  Slot?: number;
}

export type SwarmPhase = 'pickup' | 'converge' | 'stability';

export type SwarmVerdict =
  | { status: 'waiting'; phase: SwarmPhase; message: string }
  | { status: 'deployed'; message: string; /** when the window was first satisfied, ms */ at: number }
  | { status: 'failed'; phase: SwarmPhase; reason: 'paused' | 'rolled_back' | 'tasks_failed'; message: string };

export interface SwarmJudgeInput {
  /** null: no such service (yet) */
  service: SwarmService | null;
  tasks: readonly SwarmTask[];
  serviceName: string;
  revision: string;
  stabilityMs: number;
  now: number;
  /** when the target began monitoring (ms): an update started since then is this deployment's */
  appliedAfter: number | null;
}

/** Task states that are finished (the task will never run again). */
const DONE_STATES = new Set(['complete', 'shutdown', 'failed', 'rejected', 'remove', 'orphaned']);
const FAILED_STATES = new Set(['failed', 'rejected']);

/** dockerd times (RFC 3339 with nanoseconds) as ms since the epoch; NaN when absent or bad. */
export function dockerTime(s: string | undefined): number {
  return s === undefined ? Number.NaN : Date.parse(s);
}

/** JSON with sorted keys: two ContainerSpecs compare equal whatever order dockerd wrote them in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Whether a task was made from the service's current task template (what swarm's updater compares). */
export function isCurrentSpecTask(service: SwarmService, task: SwarmTask): boolean {
  const tpl = service.Spec.TaskTemplate;
  return canonical(task.Spec.ContainerSpec ?? {}) === canonical(tpl.ContainerSpec ?? {}) && (task.Spec.ForceUpdate ?? 0) === (tpl.ForceUpdate ?? 0);
}

/** Tasks wanted: the replica count, or for a global service what swarm says it desires. */
export function desiredTasks(service: SwarmService): number {
  const replicas = service.Spec.Mode?.Replicated?.Replicas;
  if (replicas !== undefined) return replicas;
  if (service.Spec.Mode?.Replicated !== undefined) return 1;
  return service.ServiceStatus?.DesiredTasks ?? 0;
}

/** The newest error among tasks (failed, rejected), e.g. "No such image: t/app:nope". */
function lastTaskError(tasks: readonly SwarmTask[]): string | null {
  let best: SwarmTask | null = null;
  for (const t of tasks) {
    if (!FAILED_STATES.has(t.Status.State)) continue;
    if (best === null || dockerTime(t.Status.Timestamp) > dockerTime(best.Status.Timestamp)) best = t;
  }
  if (best === null) return null;
  return `task ${best.ID.slice(0, 12)} ${best.Status.State}: ${best.Status.Err ?? best.Status.Message ?? 'no message'}`;
}

const image = (spec: SwarmServiceSpec | undefined) => String(spec?.TaskTemplate.ContainerSpec?.Image ?? '?');

export function judgeSwarmService(input: SwarmJudgeInput): SwarmVerdict {
  const { service, tasks, serviceName, revision, stabilityMs, now, appliedAfter } = input;
  if (service === null) return { status: 'waiting', phase: 'pickup', message: `service ${serviceName} does not exist (yet)` };
  const update = service.UpdateStatus;
  const state = update?.State;
  const label = service.Spec.Labels?.[REVISION_LABEL];
  const mine = tasks.filter((t) => isCurrentSpecTask(service, t));
  // UpdatedAt also moves when swarm records a status (paused, rolled back): the update's own start is StartedAt
  const since = dockerTime(update?.StartedAt) || dockerTime(service.CreatedAt) || 0;
  const withError = (m: string) => {
    const err = lastTaskError(tasks.filter((t) => dockerTime(t.CreatedAt) >= since));
    return err === null ? m : `${m}; ${err}`;
  };
  if (label !== revision) {
    const ours = service.PreviousSpec?.Labels?.[REVISION_LABEL] === revision || (appliedAfter !== null && since >= appliedAfter);
    if (state?.startsWith('rollback_') && ours) {
      return { status: 'failed', phase: 'converge', reason: 'rolled_back', message: withError(`rolled back to ${image(service.Spec)} (${state}): ${update?.Message ?? ''}`.trim()) };
    }
    return { status: 'waiting', phase: 'pickup', message: `service ${serviceName} carries revision ${label === undefined ? 'none' : label.slice(0, 12)}; waiting for ${revision.slice(0, 12)}` };
  }
  if (state === 'paused' || state === 'rollback_paused') {
    return { status: 'failed', phase: 'converge', reason: state === 'paused' ? 'paused' : 'rolled_back', message: withError(`update ${state}: ${update?.Message ?? ''}`) };
  }
  if (state?.startsWith('rollback_')) {
    return { status: 'failed', phase: 'converge', reason: 'rolled_back', message: withError(`update ${state}: ${update?.Message ?? ''}`) };
  }
  const desired = desiredTasks(service);
  const running = mine.filter((t) => t.DesiredState === 'running' && t.Status.State === 'running');
  const olderRunning = tasks.filter((t) => !isCurrentSpecTask(service, t) && t.Status.State === 'running');
  const swarmDecides = state === 'updating' && (service.Spec.UpdateConfig?.FailureAction ?? 'pause') !== 'continue';
  if (!swarmDecides && desired > 0) {
    const recent = mine.filter((t) => dockerTime(t.CreatedAt) >= since);
    const inProgress = recent.some((t) => !DONE_STATES.has(t.Status.State));
    if (running.length === 0 && recent.length > 0 && !inProgress && recent.every((t) => FAILED_STATES.has(t.Status.State))) {
      return { status: 'failed', phase: 'converge', reason: 'tasks_failed', message: `every new task of ${image(service.Spec)} failed: ${lastTaskError(recent)}` };
    }
  }
  if (state === 'updating') return { status: 'waiting', phase: 'converge', message: `updating to ${image(service.Spec)}: ${running.length} of ${desired} new tasks running` };
  if (running.length < desired || olderRunning.length > 0) {
    const older = olderRunning.length > 0 ? `, ${olderRunning.length} older still running` : '';
    return { status: 'waiting', phase: 'converge', message: `${running.length} of ${desired} tasks of ${image(service.Spec)} running${older}` };
  }
  const stableFrom = Math.max(dockerTime(update?.CompletedAt) || 0, ...running.map((t) => dockerTime(t.Status.Timestamp) || 0));
  const at = stableFrom + stabilityMs;
  if (now >= at) return { status: 'deployed', at, message: `${desired} of ${desired} tasks of ${image(service.Spec)} running` };
  return { status: 'waiting', phase: 'stability', message: `${desired} of ${desired} tasks of ${image(service.Spec)} running; stable in ${Math.ceil((at - now) / 1000)} s` };
}

/** The message of a target whose deadline passed: the phase and what was last seen. */
export function timedOutMessage(phase: SwarmPhase | string, budgetSecs: number, last: string): string {
  return `timed out in ${phase} after ${budgetSecs} s: ${last}`;
}

/**
 * A stack (`swarm-stack` target): every service labelled `com.docker.stack.namespace=<stack>`
 * judged as above; failed as soon as one fails (naming it), deployed when all are (at the latest
 * one's time), otherwise waiting on the first that waits. No service yet: pickup.
 */
export function judgeSwarmStack(stack: string, services: readonly { service: SwarmService; tasks: readonly SwarmTask[] }[], revision: string, stabilityMs: number, now: number, appliedAfter: number | null): SwarmVerdict {
  if (services.length === 0) return { status: 'waiting', phase: 'pickup', message: `stack ${stack} has no services (yet)` };
  const verdicts = services.map(({ service, tasks }) => ({ name: service.Spec.Name, v: judgeSwarmService({ service, tasks, serviceName: service.Spec.Name, revision, stabilityMs, now, appliedAfter }) }));
  const failed = verdicts.find((x) => x.v.status === 'failed');
  if (failed !== undefined && failed.v.status === 'failed') return { ...failed.v, message: `service ${failed.name}: ${failed.v.message}` };
  const waiting = verdicts.find((x) => x.v.status === 'waiting');
  if (waiting !== undefined && waiting.v.status === 'waiting') return { ...waiting.v, message: `${verdicts.filter((x) => x.v.status === 'deployed').length} of ${verdicts.length} services deployed; ${waiting.v.message}` };
  const at = Math.max(...verdicts.map((x) => (x.v.status === 'deployed' ? x.v.at : 0)));
  return { status: 'deployed', at, message: `all ${verdicts.length} services of stack ${stack} deployed` };
}

