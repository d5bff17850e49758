import test from 'ava';
import { selectEnvironment } from '../../protocols/deploy/selection.js';
import { attempt } from '../../protocols/deploy/errors.js';
import { checkTargetsAgainst, defaultMonitorTimeout, resolveMonitorTimeout, type TargetConfig } from '../../protocols/deploy/targets.js';
import { refused } from './results.js';

const APPS = [
  { id: 1, name: 'shop', repoKey: 'gitlab.example.com/team/shop' },
  { id: 2, name: 'blog', repoKey: 'gitlab.example.com/team/blog' },
];
const ENVS = [
  { id: 10, appId: 1, name: 'staging', branch: 'main' },
  { id: 11, appId: 1, name: 'production', branch: 'main' },
  { id: 12, appId: 1, name: 'preview', branch: 'develop' },
  { id: 20, appId: 2, name: 'production', branch: 'main' },
];
const SHOP = 'gitlab.example.com/team/shop';

test('one environment on the branch is chosen without environment', (t) => {
  const r = selectEnvironment(APPS, ENVS, { repoKey: SHOP, ref: 'develop' });
  t.true(r.ok);
  if (r.ok) t.deepEqual([r.value.app.id, r.value.environment.id], [1, 12]);
  const blog = selectEnvironment(APPS, ENVS, { repoKey: 'gitlab.example.com/team/blog', ref: 'refs/heads/main' });
  t.true(blog.ok && blog.value.environment.id === 20, 'refs/heads/main is the branch main');
});

test('404 when no app is configured for the repository', (t) => {
  t.deepEqual(refused(selectEnvironment(APPS, ENVS, { repoKey: 'gitlab.example.com/team/other', ref: 'main' })), {
    status: 404,
    code: 'APP_NOT_FOUND',
    message: 'no app is configured for repository gitlab.example.com/team/other',
  });
});

test('400 when several environments match the branch and environment is absent, naming them', (t) => {
  t.deepEqual(refused(selectEnvironment(APPS, ENVS, { repoKey: SHOP, ref: 'main' })), {
    status: 400,
    code: 'AMBIGUOUS_ENVIRONMENT',
    message: 'several environments of app "shop" follow branch "main" ("production", "staging"); say which with environment',
  });
});

test('environment picks among the branch environments', (t) => {
  for (const [name, id] of [['staging', 10], ['production', 11]] as const) {
    const r = selectEnvironment(APPS, ENVS, { repoKey: SHOP, ref: 'main', environment: name });
    t.true(r.ok && r.value.environment.id === id, name);
  }
  const single = selectEnvironment(APPS, ENVS, { repoKey: SHOP, ref: 'develop', environment: 'preview' });
  t.true(single.ok, 'naming the only one is fine too');
});

test('404 when no environment matches: a branch without one, a name not on the branch, a name of another branch, a non-branch ref', (t) => {
  const cases: [Parameters<typeof selectEnvironment>[2], string][] = [
    [{ repoKey: SHOP, ref: 'feature/x' }, 'app "shop" has no environment for branch "feature/x"'],
    [{ repoKey: SHOP, ref: 'main', environment: 'qa' }, 'app "shop" has no environment "qa" for branch "main"'],
    [{ repoKey: SHOP, ref: 'main', environment: 'preview' }, 'app "shop" has no environment "preview" for branch "main"'],
    [{ repoKey: SHOP, ref: 'main', environment: 'Production' }, 'app "shop" has no environment "Production" for branch "main"'],
    [{ repoKey: SHOP, ref: 'refs/tags/v1.0.0' }, `the job's ref "refs/tags/v1.0.0" is not a branch; no environment matches it`],
    [{ repoKey: SHOP, ref: 'refs/merge-requests/7/head' }, `the job's ref "refs/merge-requests/7/head" is not a branch; no environment matches it`],
  ];
  for (const [req, message] of cases) t.deepEqual(refused(selectEnvironment(APPS, ENVS, req)), { status: 404, code: 'ENVIRONMENT_NOT_FOUND', message });
});

test('a target budget resolves to its override, else the server default (300 unless set)', (t) => {
  t.is(resolveMonitorTimeout(600, 300), 600);
  t.is(resolveMonitorTimeout(null, 300), 300);
  t.is(resolveMonitorTimeout(undefined, 120), 120);
  t.is(resolveMonitorTimeout(1, 300), 1);
  t.is(defaultMonitorTimeout(undefined), 300);
  t.is(defaultMonitorTimeout(2147483647), 2147483647);
  for (const bad of [0, 2147483648, 1.5, '300']) {
    const r = attempt(() => defaultMonitorTimeout(bad));
    t.regex(refused(r).message, /^DEPLOY_MONITOR_TIMEOUT_SECS must be a whole number between 1 and 2147483647/);
  }
});

const T = (o: Partial<TargetConfig>): TargetConfig => ({ clusterId: 1, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: null, ...o });
const CLUSTERS = [
  { id: 1, name: 'swarm-a', kind: 'swarm' as const },
  { id: 2, name: 'k8s-b', kind: 'kubernetes' as const },
];

test('targets against clusters: unknown cluster and kind mismatch are 400, a workload another environment deploys is 409', (t) => {
  t.true(attempt(() => checkTargetsAgainst([T({}), T({ clusterId: 2, deployType: 'flux-helmrelease' })], CLUSTERS, [])).ok);
  t.deepEqual(refused(attempt(() => checkTargetsAgainst([T({}), T({ clusterId: 9 })], CLUSTERS, []))), { status: 400, code: 'INVALID_FIELD', message: 'targets[1].clusterId: no cluster 9' });
  t.is(
    refused(attempt(() => checkTargetsAgainst([T({ clusterId: 2 })], CLUSTERS, []))).message,
    'targets[0].deployType swarm-service needs a swarm cluster; cluster 2 (k8s-b) is kubernetes',
  );
  t.is(refused(attempt(() => checkTargetsAgainst([T({ clusterId: 1, deployType: 'helm-release' })], CLUSTERS, []))).message, 'targets[0].deployType helm-release needs a kubernetes cluster; cluster 1 (swarm-a) is swarm');
  const other = [{ id: 5, name: 'staging', targets: [T({ monitorTimeoutSecs: 60 })] }];
  t.deepEqual(refused(attempt(() => checkTargetsAgainst([T({})], CLUSTERS, other))), { status: 409, code: 'CONFLICT', message: 'targets[0] names a workload that environment "staging" already deploys' });
  t.true(attempt(() => checkTargetsAgainst([T({ deployName: 'api' })], CLUSTERS, other)).ok);
});
