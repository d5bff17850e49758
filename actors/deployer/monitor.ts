/**
 * The rollout monitor of one deployment target: polls its probe (a swarm service and its tasks
 * judged by protocols/deploy/swarm-rollout.ts) every `pollMs` until the verdict is final or the
 * target's pinned deadline (`deadlineAt`, an absolute time in the checkpoint) passes, and returns
 * the target's outcome. It keeps nothing of its own: a monitor started again after a restart
 * judges from dockerd's records and the stored deadline alone, so it reports `deployed` at its
 * first poll when the rollout finished (stably, before the deadline) while the daemon was down,
 * and `failed` (timed out) at once when the deadline has passed. An unreachable dockerd is one
 * more reason to wait, named in the timeout message. The instance's signal stops it without an
 * outcome (SIGTERM: the checkpoint stays `monitoring`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeploymentTarget } from '../../protocols/deploy/status.js';
import { judgeSwarmService, judgeSwarmStack, timedOutMessage, type SwarmPhase } from '../../protocols/deploy/swarm-rollout.js';
import { swarmServiceName } from '../../protocols/deploy/swarm-values.js';
import { judgeDeployment, judgeHelmRelease } from '../../protocols/deploy/k8s-rollout.js';
import { monitorPolls } from './metrics.js';
import { swarmApi } from './swarm-api.js';
import type { K8sApi } from './k8s-api.js';

export type ProbeVerdict =
  | { status: 'waiting'; phase: SwarmPhase | string; message: string }
  | { status: 'deployed'; message: string; at?: number }
  | { status: 'failed'; message: string };

export type Probe = (now: number) => Promise<ProbeVerdict>;

export interface MonitorSettings {
  pollMs: number;
  stabilityMs: number;
}

/** The probe of a swarm-service target: refused values first, then the service and its tasks. */
export function swarmServiceProbe(endpoint: string, t: Pick<DeploymentTarget, 'id' | 'deployNamespace' | 'deployName' | 'monitorStartedAt'>, revision: string, stabilityMs: number, refusal: () => string | null): Probe {
  const api = swarmApi(endpoint);
  const serviceName = swarmServiceName(t.deployNamespace, t.deployName);
  return async (now) => {
    const refused = refusal();
    if (refused !== null) return { status: 'failed', message: refused };
    const service = await api.service(serviceName);
    const tasks = service === null ? [] : await api.tasks(service.ID);
    return judgeSwarmService({ service, tasks, serviceName, revision, stabilityMs, now, appliedAfter: t.monitorStartedAt });
  };
}

/** The probe of a k8s-deployment target (pick-up by the pod template's revision annotation) or a flux-helmrelease one (by the chart version). */
export function k8sProbe(endpoint: string, credential: string | null, t: Pick<DeploymentTarget, 'deployType' | 'deployNamespace' | 'deployName'>, revision: string, chartVersion: string): Probe {
  const what = `${t.deployNamespace}/${t.deployName}`;
  let client: K8sApi | null = null;
  return async () => {
    // loaded on first use: @kubernetes/client-node takes about a second to import, which a
    // daemon without Kubernetes targets should not pay at every start (the thread is held while it
    // loads, once: a Kubernetes target's first poll may answer late)
    client ??= new (await import('./k8s-api.js')).K8sApi(endpoint, credential);
    const api = client;
    if (t.deployType === 'k8s-deployment') {
      const d = await api.deployment(t.deployNamespace, t.deployName);
      return d === null ? { status: 'waiting', phase: 'pickup', message: `deployment ${what} does not exist (yet)` } : judgeDeployment(d, revision);
    }
    const hr = await api.helmRelease(t.deployNamespace, t.deployName);
    return hr === null ? { status: 'waiting', phase: 'pickup', message: `helmrelease ${what} does not exist (yet)` } : judgeHelmRelease(hr, chartVersion);
  };
}

/** The probe of a swarm-stack target: every service of the stack `deployNamespace` (applied by the user's reconciler). */
export function swarmStackProbe(endpoint: string, t: Pick<DeploymentTarget, 'deployNamespace' | 'monitorStartedAt'>, revision: string, stabilityMs: number): Probe {
  const api = swarmApi(endpoint);
  return async (now) => {
    const services = await api.stack(t.deployNamespace);
    const withTasks = await Promise.all(services.map(async (service) => ({ service, tasks: await api.tasks(service.ID) })));
    return judgeSwarmStack(t.deployNamespace, withTasks, revision, stabilityMs, now, t.monitorStartedAt);
  };
}

/** How long the one look of a monitor resumed after its deadline may take. */
const LATE_LOOK_MS = 5000;

export interface Outcome {
  to: 'deployed' | 'failed';
  message: string;
}

/** Watch until an outcome; null when `signal` stopped it first. */
export async function watchTarget(t: DeploymentTarget, probe: Probe, pollMs: number, signal: AbortSignal, where: string): Promise<Outcome | null> {
  const deadline = t.deadlineAt ?? Date.now() + t.monitorTimeoutSecs * 1000;
  let phase: string = 'pickup';
  let last = `no answer from ${where} yet`;
  // resumed after its deadline (the daemon was down): one look is still taken, so that the outcome
  // says what the rollout did — deployed if it became stable in time, else what it was doing
  let resumedLate = Date.now() >= deadline;
  while (!signal.aborted) {
    let v: ProbeVerdict;
    const late = new AbortController();
    try {
      // a probe slower than the budget left (a loaded or hung dockerd) does not push the timeout back
      const polled = probe(Date.now());
      const budget = resumedLate ? LATE_LOOK_MS : Math.max(0, deadline - Date.now());
      resumedLate = false;
      const expired = sleep(budget, null, { signal: late.signal }).then(() => null, () => undefined);
      const first = await Promise.race([polled, expired]);
      if (first === null) {
        polled.catch(() => undefined);
        return { to: 'failed', message: timedOutMessage(phase, t.monitorTimeoutSecs, last) };
      }
      v = await polled;
    } catch (err) {
      v = { status: 'waiting', phase, message: `cannot reach ${where}: ${(err as Error).message}` };
      monitorPolls.inc({ deploy_type: t.deployType, result: 'error' });
    } finally {
      late.abort();
    }
    if (signal.aborted) return null;
    monitorPolls.inc({ deploy_type: t.deployType, result: v.status });
    if (v.status === 'failed') return { to: 'failed', message: v.message };
    if (v.status === 'deployed') {
      if (v.at === undefined || v.at <= deadline) return { to: 'deployed', message: v.message };
      phase = 'stability';
      last = `${v.message}, stable only after the deadline`;
    } else {
      phase = v.phase;
      last = v.message;
    }
    const left = deadline - Date.now();
    if (left <= 0) return { to: 'failed', message: timedOutMessage(phase, t.monitorTimeoutSecs, last) };
    await sleep(Math.min(pollMs, left), undefined, { signal }).catch(() => undefined);
  }
  return null;
}
