/**
 * The Kubernetes rollout judgement (protocols/deploy/k8s-rollout.ts). No cluster runs here: the
 * objects are shaped as the API server returns them (apps/v1 Deployment status fields and
 * conditions as the deployment controller writes them; helm.toolkit.fluxcd.io/v2 HelmRelease
 * status as helm-controller writes it), with the messages kubectl and Flux print.
 */
import test from 'ava';
import { judgeDeployment, judgeHelmRelease, type FluxHelmRelease, type K8sDeployment } from '../../protocols/deploy/k8s-rollout.js';

const REV = '4f2a9c1e0b7d4f2a9c1e0b7d4f2a9c1e0b7d4f2a';
function deployment(status: NonNullable<K8sDeployment['status']>, over: { generation?: number; replicas?: number; revision?: string } = {}): K8sDeployment {
  return {
    metadata: { name: 'web', generation: over.generation ?? 4, annotations: { 'deployment.kubernetes.io/revision': '4' } },
    spec: { replicas: over.replicas ?? 3, template: { metadata: { annotations: { 'hostd.deploy/revision': over.revision ?? REV } } } },
    status,
  };
}
const progressing = (reason: string, message: string) => ({ type: 'Progressing', status: reason === 'ProgressDeadlineExceeded' ? 'False' : 'True', reason, message, lastTransitionTime: '2026-11-26T17:00:00Z' });
const available = { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' };

test('Deployment: pick-up by the pod template annotation', (t) => {
  t.deepEqual(judgeDeployment(deployment({ observedGeneration: 4 }, { revision: 'aaaaaaaaaaaaaaaa' }), REV), { status: 'waiting', phase: 'pickup', message: 'deployment web carries revision aaaaaaaaaaaa; waiting for 4f2a9c1e0b7d' });
  const bare = deployment({ observedGeneration: 4 });
  delete bare.spec.template;
  t.like(judgeDeployment(bare, REV), { status: 'waiting', phase: 'pickup', message: 'deployment web carries revision none; waiting for 4f2a9c1e0b7d' });
});

test('Deployment: each of kubectl rollout status\'s waiting states, in its order', (t) => {
  t.deepEqual(judgeDeployment(deployment({ observedGeneration: 3, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }), REV), { status: 'waiting', phase: 'converge', message: 'waiting for deployment spec update to be observed' });
  t.deepEqual(judgeDeployment(deployment({ observedGeneration: 4, replicas: 4, updatedReplicas: 1, availableReplicas: 3, conditions: [available, progressing('ReplicaSetUpdated', 'ReplicaSet "web-7d9c" is progressing.')] }), REV), { status: 'waiting', phase: 'converge', message: '1 out of 3 new replicas have been updated' });
  t.deepEqual(judgeDeployment(deployment({ observedGeneration: 4, replicas: 4, updatedReplicas: 3, availableReplicas: 3 }), REV), { status: 'waiting', phase: 'converge', message: '1 old replicas are pending termination' });
  t.deepEqual(judgeDeployment(deployment({ observedGeneration: 4, replicas: 3, updatedReplicas: 3, availableReplicas: 2 }), REV), { status: 'waiting', phase: 'converge', message: '2 of 3 updated replicas are available' });
  t.deepEqual(judgeDeployment(deployment({ observedGeneration: 4, replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3, conditions: [available, progressing('NewReplicaSetAvailable', 'ReplicaSet "web-7d9c" has successfully progressed.')] }), REV), { status: 'deployed', message: 'deployment "web" successfully rolled out' });
});

test('Deployment: ProgressDeadlineExceeded fails, even with replicas left to update; a status not yet written waits', (t) => {
  t.deepEqual(judgeDeployment(deployment({ observedGeneration: 4, replicas: 4, updatedReplicas: 1, conditions: [progressing('ProgressDeadlineExceeded', 'ReplicaSet "web-7d9c" has timed out progressing.')] }), REV), {
    status: 'failed',
    phase: 'converge',
    message: 'deployment "web" exceeded its progress deadline: ReplicaSet "web-7d9c" has timed out progressing.',
  });
  const fresh = deployment({});
  delete fresh.status;
  t.like(judgeDeployment(fresh, REV), { status: 'waiting', phase: 'converge' });
  // scaled to zero: nothing to wait for
  t.like(judgeDeployment(deployment({ observedGeneration: 4 }, { replicas: 0 }), REV), { status: 'deployed' });
});

const VERSION = '0.0.0-g9fceb02d0ae598e95dc970b74767f19372d61af8';
function release(conditions: FluxHelmRelease['status'] extends infer S ? (S extends { conditions?: infer C } ? C : never) : never, over: { attempted?: string; history?: { chartVersion?: string; status?: string }[]; generation?: number; observed?: number } = {}): FluxHelmRelease {
  return {
    metadata: { name: 'shop', generation: over.generation ?? 2 },
    status: {
      observedGeneration: over.observed ?? 2,
      lastAttemptedRevision: over.attempted ?? VERSION,
      conditions,
      history: over.history ?? [{ chartVersion: VERSION, status: 'deployed' }, { chartVersion: '1.3.0', status: 'superseded' }],
    },
  };
}
const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message });

test('HelmRelease: waits for the spec to be observed and for this chart version to be attempted', (t) => {
  t.like(judgeHelmRelease(release([], { generation: 3, observed: 2 }), VERSION), { status: 'waiting', phase: 'pickup' });
  t.deepEqual(judgeHelmRelease(release([cond('Ready', 'True', 'UpgradeSucceeded', 'Helm upgrade succeeded for release shop/shop.v3 with chart mychart@1.3.0')], { attempted: '1.3.0', history: [{ chartVersion: '1.3.0', status: 'deployed' }] }), VERSION), {
    status: 'waiting',
    phase: 'pickup',
    message: `helmrelease shop last attempted 1.3.0; waiting for ${VERSION}`,
  });
  t.like(judgeHelmRelease({ metadata: { name: 'shop', generation: 1 } }, VERSION), { status: 'waiting', phase: 'pickup' });
});

test('HelmRelease: Ready with this version released is deployed; Reconciling waits', (t) => {
  t.deepEqual(judgeHelmRelease(release([cond('Ready', 'True', 'UpgradeSucceeded', `Helm upgrade succeeded for release shop/shop.v4 with chart mychart@${VERSION}`), cond('Released', 'True', 'UpgradeSucceeded', 'Helm upgrade succeeded')]), VERSION), {
    status: 'deployed',
    message: `helmrelease shop released ${VERSION}: Helm upgrade succeeded for release shop/shop.v4 with chart mychart@${VERSION}`,
  });
  t.like(judgeHelmRelease(release([cond('Reconciling', 'True', 'Progressing', 'Running \'upgrade\' action with timeout of 5m0s'), cond('Ready', 'Unknown', 'Progressing', 'Running \'upgrade\' action with timeout of 5m0s')], { history: [{ chartVersion: '1.3.0', status: 'deployed' }] }), VERSION), {
    status: 'waiting',
    phase: 'converge',
    message: "helmrelease shop: Ready=Unknown (Progressing) Running 'upgrade' action with timeout of 5m0s",
  });
  // Ready=True but the newest release is the old one (Ready describes the previous release): not deployed
  t.like(judgeHelmRelease(release([cond('Ready', 'True', 'UpgradeSucceeded', 'ok')], { history: [{ chartVersion: '1.3.0', status: 'deployed' }] }), VERSION), { status: 'waiting' });
});

test('HelmRelease: Stalled, Released=False, TestSuccess=False and a remediation fail with the reason', (t) => {
  t.deepEqual(judgeHelmRelease(release([cond('Stalled', 'True', 'RetriesExceeded', 'Failed to upgrade after 3 attempt(s)'), cond('Ready', 'False', 'UpgradeFailed', 'Helm upgrade failed')]), VERSION), {
    status: 'failed',
    phase: 'converge',
    message: 'helmrelease shop stalled (RetriesExceeded): Failed to upgrade after 3 attempt(s)',
  });
  t.like(judgeHelmRelease(release([cond('Released', 'False', 'UpgradeFailed', 'Helm upgrade failed for release shop/shop with chart mychart: context deadline exceeded')]), VERSION), { status: 'failed', message: 'helmrelease shop release failed (UpgradeFailed): Helm upgrade failed for release shop/shop with chart mychart: context deadline exceeded' });
  t.like(judgeHelmRelease(release([cond('TestSuccess', 'False', 'TestFailed', 'Helm test failed for release shop/shop.v4')]), VERSION), { status: 'failed', message: 'helmrelease shop tests failed (TestFailed): Helm test failed for release shop/shop.v4' });
  t.like(judgeHelmRelease(release([cond('Ready', 'False', 'RollbackSucceeded', 'Helm rollback to previous release shop/shop.v3 with chart mychart@1.3.0 succeeded')], { history: [{ chartVersion: VERSION, status: 'failed' }] }), VERSION), { status: 'failed', message: 'helmrelease shop was remediated (RollbackSucceeded): Helm rollback to previous release shop/shop.v3 with chart mychart@1.3.0 succeeded' });
  // Stalled=False is not a failure
  t.like(judgeHelmRelease(release([cond('Stalled', 'False', 'x', ''), cond('Ready', 'True', 'UpgradeSucceeded', '')]), VERSION), { status: 'deployed' });
});
