import test from 'ava';
import {
  applyChange,
  DEPLOYMENT_STATUSES,
  deploymentView,
  expiredTargets,
  isTerminal,
  nextDeadline,
  outcomeOf,
  queueDeployment,
  resumeStep,
  TARGET_STATUSES,
  type Applied,
  type Change,
  type DeploymentState,
} from '../../protocols/deploy/status.js';
import type { TargetConfig } from '../../protocols/deploy/targets.js';
import { accepted, refused } from './results.js';

const ID = '0193a4b2-7c1d-7e2f-8a3b-4c5d6e7f8091';
const NOW = 1_790_000_000_000;
const CLUSTERS = [
  { id: 1, name: 'swarm-a', kind: 'swarm' as const },
  { id: 2, name: 'swarm-b', kind: 'swarm' as const },
];
const ENV_TARGETS: (TargetConfig & { id: string })[] = [
  { id: 't1', clusterId: 1, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: null },
  { id: 't2', clusterId: 2, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: 30 },
];

function queued(): DeploymentState {
  return accepted(queueDeployment(ID, ENV_TARGETS, CLUSTERS, 300)).deployment;
}
/** Apply changes in order, collecting the events. */
function run(d: DeploymentState, changes: Change[], now = NOW): Applied<DeploymentState> {
  const events: Applied<DeploymentState>['events'] = [];
  for (const c of changes) {
    const r = accepted(applyChange(d, c, now));
    d = r.deployment;
    events.push(...r.events);
  }
  return { deployment: d, events };
}
const TO_MONITORING: Change[] = [
  { kind: 'advance', to: 'validating', message: 'checking the chart' },
  { kind: 'advance', to: 'pushing', message: 'pushing to infra' },
  { kind: 'advance', to: 'pushed', message: 'pushed abc123' },
  { kind: 'advance', to: 'monitoring', message: 'watching 2 targets' },
];

test('the spec statuses: seven for a deployment, four for a target; deployed and failed are terminal', (t) => {
  t.deepEqual([...DEPLOYMENT_STATUSES], ['pending', 'validating', 'pushing', 'pushed', 'monitoring', 'deployed', 'failed']);
  t.deepEqual([...TARGET_STATUSES], ['pending', 'monitoring', 'deployed', 'failed']);
  t.deepEqual(DEPLOYMENT_STATUSES.filter(isTerminal), ['deployed', 'failed']);
});

test('queueing pins each target: cluster name and the resolved monitorTimeoutSecs (override, else the default)', (t) => {
  const r = accepted(queueDeployment(ID, ENV_TARGETS, CLUSTERS, 300));
  t.is(r.deployment.status, 'pending');
  t.deepEqual(
    r.deployment.targets.map((x) => [x.id, x.clusterId, x.clusterName, x.monitorTimeoutSecs, x.status]),
    [
      ['t1', 1, 'swarm-a', 300, 'pending'],
      ['t2', 2, 'swarm-b', 30, 'pending'],
    ],
  );
  t.deepEqual(r.events.map((e) => e.event), ['target', 'target', 'status']);
  t.deepEqual(r.events[0]?.data, { target: { id: 't1', clusterId: 1, clusterName: 'swarm-a', monitorTimeoutSecs: 300, status: 'pending', message: 'waiting for the push' } });
  // editing the environment afterwards changes nothing already queued
  ENV_TARGETS[0]!.monitorTimeoutSecs = 5;
  t.is(r.deployment.targets[0]?.monitorTimeoutSecs, 300);
  ENV_TARGETS[0]!.monitorTimeoutSecs = null;
  t.deepEqual(refused(queueDeployment(ID, [{ ...ENV_TARGETS[0]!, clusterId: 9 }], CLUSTERS, 300)), { status: 409, code: 'CONFLICT', message: 'target t1 names cluster 9, which does not exist' });
  t.deepEqual(refused(queueDeployment(ID, [], CLUSTERS, 300)), { status: 409, code: 'CONFLICT', message: 'the environment has no cluster targets; a deployment needs at least one' });
});

test('the happy path emits statuses in the spec order validating, pushing, (pushed), monitoring, deployed; targets before the final status', (t) => {
  const { deployment, events } = run(queued(), [
    ...TO_MONITORING,
    { kind: 'target', targetId: 't1', to: 'deployed', message: 'running 2/2' },
    { kind: 'target', targetId: 't2', to: 'deployed', message: 'running 1/1' },
  ]);
  t.deepEqual(
    events.filter((e) => e.event === 'status').map((e) => (e.event === 'status' ? e.data.status : '')),
    ['validating', 'pushing', 'pushed', 'monitoring', 'deployed'],
  );
  t.deepEqual(events.slice(-2).map((e) => e.event), ['target', 'status']);
  t.is(deployment.status, 'deployed');
  t.is(deployment.message, 'deployed on all 2 cluster targets');
});

test('entering monitoring emits the targets\' events first and the status event last', (t) => {
  const before = run(queued(), TO_MONITORING.slice(0, -1)).deployment;
  const { events } = accepted(applyChange(before, { kind: 'advance', to: 'monitoring', message: 'watching 2 targets' }, NOW));
  t.deepEqual(events.map((e) => e.event), ['target', 'target', 'status']);
});

test('entering monitoring starts every target with an absolute deadline of now + its pinned budget', (t) => {
  const { deployment, events } = run(queued(), TO_MONITORING);
  t.deepEqual(
    deployment.targets.map((x) => [x.status, x.monitorStartedAt, x.deadlineAt]),
    [
      ['monitoring', NOW, NOW + 300_000],
      ['monitoring', NOW, NOW + 30_000],
    ],
  );
  t.deepEqual(events.slice(-3).map((e) => e.event), ['target', 'target', 'status']);
  t.is(nextDeadline(deployment), NOW + 30_000);
  t.deepEqual(expiredTargets(deployment, NOW + 29_999), []);
  t.deepEqual(expiredTargets(deployment, NOW + 30_000).map((x) => x.id), ['t2']);
  t.deepEqual(expiredTargets(deployment, NOW + 300_000).map((x) => x.id), ['t1', 't2']);
});

test('the parent waits for every target: one failure leaves it monitoring until the other finishes, then failed naming the target', (t) => {
  let d = run(queued(), TO_MONITORING).deployment;
  const first = accepted(applyChange(d, { kind: 'target', targetId: 't2', to: 'failed', message: 'timed out after 30 s' }, NOW + 30_000));
  d = first.deployment;
  t.is(d.status, 'monitoring');
  t.deepEqual(first.events.map((e) => e.event), ['target']);
  t.is(nextDeadline(d), NOW + 300_000);
  const last = accepted(applyChange(d, { kind: 'target', targetId: 't1', to: 'deployed', message: 'running' }, NOW + 40_000));
  t.is(last.deployment.status, 'failed');
  t.is(last.deployment.message, '1 of 2 cluster targets failed: swarm-b: timed out after 30 s');
  t.is(last.deployment.targets[1]?.completedAt, NOW + 30_000);
  t.is(nextDeadline(last.deployment), null);
});

test('a failure before monitoring fails every unfinished target with the same message', (t) => {
  const d = run(queued(), TO_MONITORING.slice(0, 2)).deployment;
  const r = accepted(applyChange(d, { kind: 'fail', message: 'push refused by hook: protected path' }, NOW));
  t.is(r.deployment.status, 'failed');
  t.deepEqual(r.deployment.targets.map((x) => [x.status, x.message]), [
    ['failed', 'push refused by hook: protected path'],
    ['failed', 'push refused by hook: protected path'],
  ]);
  t.deepEqual(r.events.map((e) => e.event), ['target', 'target', 'status']);
});

test('illegal moves are refused and change nothing: skipping, going back, repeating, moving after the end', (t) => {
  const d = queued();
  const bad: [DeploymentState, Change, RegExp][] = [
    [d, { kind: 'advance', to: 'pushing', message: '' }, /cannot go from pending to pushing/],
    [d, { kind: 'advance', to: 'monitoring', message: '' }, /cannot go from pending to monitoring/],
    [run(d, TO_MONITORING.slice(0, 1)).deployment, { kind: 'advance', to: 'validating', message: '' }, /cannot go from validating to validating/],
    [run(d, TO_MONITORING.slice(0, 2)).deployment, { kind: 'advance', to: 'validating', message: '' }, /cannot go from pushing to validating/],
    [d, { kind: 'target', targetId: 't1', to: 'monitoring', message: '' }, /cannot move while deployment .* is pending/],
    [run(d, TO_MONITORING).deployment, { kind: 'target', targetId: 't9', to: 'deployed', message: '' }, /has no target t9/],
    [run(d, TO_MONITORING).deployment, { kind: 'target', targetId: 't1', to: 'monitoring', message: '' }, /target t1 cannot go from monitoring to monitoring/],
    [run(d, [{ kind: 'fail', message: 'x' }]).deployment, { kind: 'fail', message: 'again' }, /is failed; it cannot change any more/],
    [run(d, [...TO_MONITORING, { kind: 'target', targetId: 't1', to: 'deployed', message: '' }, { kind: 'target', targetId: 't2', to: 'deployed', message: '' }]).deployment, { kind: 'fail', message: '' }, /is deployed; it cannot change any more/],
  ];
  for (const [state, change, re] of bad) {
    const before = JSON.stringify(state);
    const e = refused(applyChange(state, change, NOW));
    t.is(e.code, 'ILLEGAL_TRANSITION');
    t.regex(e.message, re);
    t.is(JSON.stringify(state), before);
  }
  const monitoring = run(d, [...TO_MONITORING, { kind: 'target', targetId: 't1', to: 'failed', message: 'x' }]).deployment;
  t.regex(refused(applyChange(monitoring, { kind: 'target', targetId: 't1', to: 'deployed', message: '' }, NOW)).message, /target t1 cannot go from failed to deployed/, 'a finished target stays finished');
});

test('until part 2: targets whose cluster kind has no monitor fail at once with a clear message', (t) => {
  const r = run(queued(), [
    ...TO_MONITORING,
    { kind: 'target', targetId: 't1', to: 'failed', message: 'no rollout monitor for swarm clusters yet' },
    { kind: 'target', targetId: 't2', to: 'failed', message: 'no rollout monitor for swarm clusters yet' },
  ]);
  t.is(r.deployment.status, 'failed');
  t.is(r.deployment.message, '2 of 2 cluster targets failed: swarm-a: no rollout monitor for swarm clusters yet; swarm-b: no rollout monitor for swarm clusters yet');
});

test('outcome wording for one target, and long messages are clipped to 1000 characters', (t) => {
  const one = accepted(queueDeployment(ID, [ENV_TARGETS[0]!], CLUSTERS, 300)).deployment;
  const r = run(one, [...TO_MONITORING, { kind: 'target', targetId: 't1', to: 'deployed', message: 'ok' }]);
  t.is(r.deployment.message, 'deployed on cluster swarm-a');
  t.is(outcomeOf(queued().targets), null);
  const long = accepted(applyChange(queued(), { kind: 'fail', message: 'x'.repeat(5000) }, NOW)).deployment.message;
  t.is(long.length, 1000);
  t.true(long.endsWith('…'));
});

test('restart resumes from the stored status', (t) => {
  t.deepEqual(
    DEPLOYMENT_STATUSES.map((s) => resumeStep(s)),
    ['validate', 'validate', 'push', 'monitor', 'resume-monitors', 'none', 'none'],
  );
});

test('GET /api/deployments/{id} shows the spec fields: deploymentId, status, message, targets with the pinned budget', (t) => {
  const d = queued();
  t.deepEqual(deploymentView(d), {
    deploymentId: ID,
    status: 'pending',
    message: 'queued',
    targets: [
      { id: 't1', clusterId: 1, clusterName: 'swarm-a', monitorTimeoutSecs: 300, status: 'pending', message: 'waiting for the push' },
      { id: 't2', clusterId: 2, clusterName: 'swarm-b', monitorTimeoutSecs: 30, status: 'pending', message: 'waiting for the push' },
    ],
  });
});
