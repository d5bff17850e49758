/**
 * The rollout judgement of Kubernetes targets, from the objects the API server returns:
 * - `k8s-deployment`: an apps/v1 Deployment, judged as `kubectl rollout status` judges it
 *   (kubectl pkg/polymorphichelpers/rollout_status.go, DeploymentStatusViewer), after pick-up: the
 *   pod template carries the deployment's revision in the annotation `hostd.deploy/revision`
 *   (the chart sets it from a value the pipeline writes);
 * - `flux-helmrelease`: a helm.toolkit.fluxcd.io/v2 HelmRelease, from its conditions: the spec
 *   observed (`status.observedGeneration`), pick-up by the chart version this deployment wrote
 *   (`status.lastAttemptedRevision`, `status.history[0].chartVersion`), `Stalled=True` failed,
 *   `Released=False` / `TestSuccess=False` failed, `Ready=True` with the latest release of this
 *   chart version `deployed` done. Ready is not enough alone: after a remediation (rollback)
 *   helm-controller mirrors Remediated into Ready, describing the previous release.
 * Pure; the client that fetches the objects is actors/deployer/k8s-client.ts.
 */

export const K8S_REVISION_ANNOTATION = 'hostd.deploy/revision';

export interface K8sCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown' | string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface K8sDeployment {
  metadata: { name: string; generation?: number; annotations?: Record<string, string> };
  spec: { replicas?: number; template?: { metadata?: { annotations?: Record<string, string> } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: K8sCondition[];
  };
}

export interface FluxHelmRelease {
  metadata: { name: string; generation?: number };
  status?: {
    observedGeneration?: number;
    lastAttemptedRevision?: string;
    conditions?: K8sCondition[];
    history?: { chartVersion?: string; status?: string; version?: number }[];
  };
}

export type K8sVerdict = { status: 'waiting'; phase: 'pickup' | 'converge'; message: string } | { status: 'deployed'; message: string } | { status: 'failed'; phase: 'converge'; message: string };

const condition = (conds: readonly K8sCondition[] | undefined, type: string) => conds?.find((c) => c.type === type);

/** `kubectl rollout status deployment/<name>`, after the pod template carries `revision`. */
export function judgeDeployment(d: K8sDeployment, revision: string): K8sVerdict {
  const name = d.metadata.name;
  const stamped = d.spec.template?.metadata?.annotations?.[K8S_REVISION_ANNOTATION];
  if (stamped !== revision) {
    return { status: 'waiting', phase: 'pickup', message: `deployment ${name} carries revision ${stamped === undefined ? 'none' : stamped.slice(0, 12)}; waiting for ${revision.slice(0, 12)}` };
  }
  const st = d.status ?? {};
  if ((d.metadata.generation ?? 0) > (st.observedGeneration ?? 0)) return { status: 'waiting', phase: 'converge', message: 'waiting for deployment spec update to be observed' };
  const progressing = condition(st.conditions, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return { status: 'failed', phase: 'converge', message: `deployment ${JSON.stringify(name)} exceeded its progress deadline${progressing.message ? `: ${progressing.message}` : ''}` };
  const updated = st.updatedReplicas ?? 0;
  if (d.spec.replicas !== undefined && updated < d.spec.replicas) return { status: 'waiting', phase: 'converge', message: `${updated} out of ${d.spec.replicas} new replicas have been updated` };
  if ((st.replicas ?? 0) > updated) return { status: 'waiting', phase: 'converge', message: `${(st.replicas ?? 0) - updated} old replicas are pending termination` };
  if ((st.availableReplicas ?? 0) < updated) return { status: 'waiting', phase: 'converge', message: `${st.availableReplicas ?? 0} of ${updated} updated replicas are available` };
  return { status: 'deployed', message: `deployment ${JSON.stringify(name)} successfully rolled out` };
}

/** A Flux HelmRelease after the chart version `chartVersion` was pushed. */
export function judgeHelmRelease(hr: FluxHelmRelease, chartVersion: string): K8sVerdict {
  const name = hr.metadata.name;
  const st = hr.status ?? {};
  if ((hr.metadata.generation ?? 0) > (st.observedGeneration ?? -1)) return { status: 'waiting', phase: 'pickup', message: `helmrelease ${name}: waiting for the spec update to be observed` };
  const latest = st.history?.[0];
  const attempted = st.lastAttemptedRevision ?? latest?.chartVersion;
  if (attempted !== chartVersion && latest?.chartVersion !== chartVersion) {
    return { status: 'waiting', phase: 'pickup', message: `helmrelease ${name} last attempted ${attempted ?? 'nothing'}; waiting for ${chartVersion}` };
  }
  const stalled = condition(st.conditions, 'Stalled');
  if (stalled?.status === 'True') return { status: 'failed', phase: 'converge', message: `helmrelease ${name} stalled (${stalled.reason ?? 'no reason'}): ${stalled.message ?? ''}`.trim() };
  const released = condition(st.conditions, 'Released');
  if (released?.status === 'False') return { status: 'failed', phase: 'converge', message: `helmrelease ${name} release failed (${released.reason ?? 'no reason'}): ${released.message ?? ''}`.trim() };
  const tests = condition(st.conditions, 'TestSuccess');
  if (tests?.status === 'False') return { status: 'failed', phase: 'converge', message: `helmrelease ${name} tests failed (${tests.reason ?? 'no reason'}): ${tests.message ?? ''}`.trim() };
  const ready = condition(st.conditions, 'Ready');
  if (ready?.status === 'False' && (ready.reason === 'RollbackSucceeded' || ready.reason === 'UninstallSucceeded')) {
    return { status: 'failed', phase: 'converge', message: `helmrelease ${name} was remediated (${ready.reason}): ${ready.message ?? ''}`.trim() };
  }
  if (ready?.status === 'True' && latest?.chartVersion === chartVersion && (latest.status === undefined || latest.status === 'deployed')) {
    return { status: 'deployed', message: `helmrelease ${name} released ${chartVersion}${ready.message ? `: ${ready.message}` : ''}` };
  }
  return { status: 'waiting', phase: 'converge', message: `helmrelease ${name}: ${ready ? `Ready=${ready.status} (${ready.reason ?? ''}) ${ready.message ?? ''}`.trim() : 'no Ready condition yet'}` };
}
