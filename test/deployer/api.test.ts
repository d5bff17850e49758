import test from 'ava';
import {
  checkApp,
  checkCluster,
  checkDeployForm,
  checkEnvironment,
  checkIacRepo,
  checkJobBody,
  checkJobTokenRequest,
  parseJsonObject,
  type FormPart,
} from '../../protocols/deploy/api.js';
import { refusalBody } from '../../protocols/deploy/errors.js';
import { accepted, refused } from './results.js';

const TARGET = { clusterId: 1, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web' };
const ENV = { name: 'production', branch: 'main', iacRepoId: 3, iacPath: 'clusters/prod/shop', targets: [TARGET] };

test('error bodies are the project JSON shape {"error": {"code", "message"}}', (t) => {
  const e = refused(checkApp({ repoUrl: 'https://h.example/g/app' }));
  t.deepEqual(e, { status: 400, code: 'MISSING_FIELD', message: 'name is required' });
  t.is(refusalBody(e), '{"error":{"code":"MISSING_FIELD","message":"name is required"}}');
});

test('a body must be a JSON object', (t) => {
  t.deepEqual(refused(parseJsonObject('{"a":')), { status: 400, code: 'INVALID_FIELD', message: 'body is not valid JSON' });
  for (const text of ['[]', 'null', '3', '"x"']) t.regex(refused(parseJsonObject(text)).message, /^body must be a JSON object/, text);
  t.deepEqual(accepted(parseJsonObject('{"a":1}')), { a: 1 });
  t.is(refused(checkApp(undefined)).code, 'MISSING_FIELD');
  t.regex(refused(checkApp([])).message, /body must be a JSON object; got an array/);
});

test('POST /api/iac-repos {name, url, branch?}: branch null or omitted means the remote default; credential is write-only', (t) => {
  t.deepEqual(accepted(checkIacRepo({ name: 'infra', url: 'file:///srv/git/infra.git' })), { name: 'infra', url: 'file:///srv/git/infra.git', branch: null, credential: undefined });
  t.deepEqual(accepted(checkIacRepo({ name: 'infra', url: 'https://h.example/ops/infra', branch: 'release/v2', credential: 'glpat-x' })), {
    name: 'infra',
    url: 'https://h.example/ops/infra',
    branch: 'release/v2',
    credential: 'glpat-x',
  });
  t.is(accepted(checkIacRepo({ name: 'i', url: 'https://h.example/o/i', credential: null })).credential, null, 'null removes it on PUT');
  t.is(accepted(checkIacRepo({ name: 'i', url: 'https://h.example/o/i', branch: null })).branch, null);
  const bad: [unknown, string][] = [
    [{ url: 'https://h.example/o/i' }, 'name is required'],
    [{ name: '', url: 'https://h.example/o/i' }, 'name must not be empty'],
    [{ name: 'a\nb', url: 'https://h.example/o/i' }, 'name must not contain control characters'],
    [{ name: 'x'.repeat(101), url: 'https://h.example/o/i' }, 'name is longer than 100 characters'],
    [{ name: 'i' }, 'url is required'],
    [{ name: 'i', url: 'https://u:p@h.example/o/i' }, 'url must not carry a password or token; give the credential separately'],
    [{ name: 'i', url: 'https://h.example/o/i', branch: 'a..b' }, `branch must not contain '..'; got "a..b"`],
    [{ name: 'i', url: 'https://h.example/o/i', branch: 'refs/heads/main' }, `branch is a ref, not a branch name (leave out 'refs/heads/'); got "refs/heads/main"`],
    [{ name: 'i', url: 'https://h.example/o/i', branch: 7 }, 'branch must be a string; got number 7'],
    [{ name: 'i', url: 'https://h.example/o/i', credential: 5 }, 'credential must be a string; got number 5'],
    [{ name: 'i', url: 'https://h.example/o/i', token: 'x' }, 'unknown field "token" (allowed: name, url, branch, credential)'],
  ];
  for (const [body, message] of bad) t.is(refused(checkIacRepo(body)).message, message);
});

test('branch names follow git check-ref-format', (t) => {
  for (const ok of ['main', 'release/1.2', 'feature/x-y_z', 'a.b']) t.true(checkIacRepo({ name: 'i', url: 'https://h.example/o/i', branch: ok }).ok, ok);
  for (const bad of ['', 'a b', 'a~1', 'a^', 'a:b', 'a?', 'a*', 'a[', 'a\\b', '-x', '/x', 'x/', 'a//b', 'x.', '.x', 'a/.b', 'x.lock', 'a/b.lock/c', '@', 'a@{1}']) {
    t.false(checkIacRepo({ name: 'i', url: 'https://h.example/o/i', branch: bad }).ok, bad);
  }
});

test('POST /api/clusters {name, kind: "swarm" | "kubernetes", endpoint}', (t) => {
  t.deepEqual(accepted(checkCluster({ name: 'local', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock' })), { name: 'local', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock', credential: undefined, appliedElsewhere: false });
  t.true(accepted(checkCluster({ name: 'l', kind: 'swarm', endpoint: 'unix:///run/d.sock', appliedElsewhere: true })).appliedElsewhere);
  t.regex(refused(checkCluster({ name: 'l', kind: 'swarm', endpoint: 'unix:///run/d.sock', appliedElsewhere: 1 })).message, /^appliedElsewhere must be true or false/);
  t.true(checkCluster({ name: 's', kind: 'swarm', endpoint: 'tcp://10.0.0.1:2376' }).ok);
  t.true(checkCluster({ name: 'k', kind: 'kubernetes', endpoint: 'https://k8s.example:6443', credential: 'token' }).ok);
  t.is(refused(checkCluster({ name: 'k', endpoint: 'https://x' })).message, 'kind is required');
  t.is(refused(checkCluster({ name: 'k', kind: 'nomad', endpoint: 'https://x' })).message, 'kind must be one of swarm, kubernetes; got "nomad"');
  t.is(refused(checkCluster({ name: 'k', kind: 'kubernetes', endpoint: 'unix:///var/run/docker.sock' })).message, 'endpoint of a kubernetes cluster must be a URL with scheme https, http; got "unix:///var/run/docker.sock"');
  t.regex(refused(checkCluster({ name: 'k', kind: 'swarm', endpoint: 'docker.sock' })).message, /^endpoint of a swarm cluster must be a URL/);
  t.is(refused(checkCluster({ name: 'k', kind: 'swarm', endpoint: 'unix:///' })).message, 'endpoint has no socket path; got "unix:///"');
  t.is(refused(checkCluster({ name: 'k', kind: 'kubernetes', endpoint: 'https://a:b@k8s.example' })).message, 'endpoint must not carry credentials; give them in credential');
  t.is(refused(checkCluster({ name: 'k', kind: 'swarm' })).code, 'MISSING_FIELD');
});

test('POST /api/apps {name, repoUrl}: the repository key is computed', (t) => {
  t.deepEqual(accepted(checkApp({ name: 'shop', repoUrl: 'git@gitlab.example.com:team/shop.git' })), { name: 'shop', repoUrl: 'git@gitlab.example.com:team/shop.git', repoKey: 'gitlab.example.com/team/shop' });
  t.is(refused(checkApp({ name: 'shop' })).message, 'repoUrl is required');
  t.is(refused(checkApp({ name: 'shop', repoUrl: 'shop' })).code, 'INVALID_FIELD');
});

test('POST /api/apps/{appId}/environments: the whole payload, iacPath normalised, targets with null or omitted budgets', (t) => {
  const v = accepted(checkEnvironment({ ...ENV, iacPath: './clusters//prod/shop/', targets: [TARGET, { ...TARGET, deployName: 'worker', monitorTimeoutSecs: 600 }, { ...TARGET, deployName: 'cron', monitorTimeoutSecs: null }] }));
  t.is(v.iacPath, 'clusters/prod/shop');
  t.deepEqual(
    v.targets.map((x) => x.monitorTimeoutSecs),
    [null, 600, null],
  );
  t.deepEqual(v.targets[0], { clusterId: 1, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: null });
  t.is(accepted(checkEnvironment({ ...ENV, targets: [{ ...TARGET, id: 't1' }] })).targets[0]?.id, 't1', 'a target id from a GET is kept on PUT');
});

test('monitorTimeoutSecs: 1 and 2147483647, null and omitted accepted; 0, negatives, fractions, strings, booleans, 2147483648, NaN and Infinity refused naming the field', (t) => {
  for (const ok of [1, 300, 2147483647, null, undefined]) {
    const target = ok === undefined ? TARGET : { ...TARGET, monitorTimeoutSecs: ok };
    t.is(accepted(checkEnvironment({ ...ENV, targets: [target] })).targets[0]?.monitorTimeoutSecs, ok ?? null, String(ok));
  }
  for (const bad of [0, -1, 1.5, '300', true, 2147483648, NaN, Infinity, -Infinity, [], {}]) {
    const e = refused(checkEnvironment({ ...ENV, targets: [TARGET, { ...TARGET, deployName: 'w', monitorTimeoutSecs: bad }] }));
    t.is(e.status, 400);
    t.regex(e.message, /^targets\[1\]\.monitorTimeoutSecs must be a whole number between 1 and 2147483647; got /, String(bad));
  }
});

test('environment fields refused by name', (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ ...ENV, name: undefined }, 'name is required'],
    [{ ...ENV, branch: undefined }, 'branch is required'],
    [{ ...ENV, iacRepoId: '3' }, 'iacRepoId must be a whole number between 1 and 2147483647; got "3"'],
    [{ ...ENV, iacRepoId: 0 }, 'iacRepoId must be a whole number between 1 and 2147483647; got number 0'],
    [{ ...ENV, iacPath: undefined }, 'iacPath is required'],
    [{ ...ENV, iacPath: '../outside' }, `iacPath must not contain '..': it has to resolve inside the repository; got "../outside"`],
    [{ ...ENV, iacPath: '/abs' }, 'iacPath must be relative to the repository root, not absolute; got "/abs"'],
    [{ ...ENV, targets: undefined }, 'targets is required'],
    [{ ...ENV, targets: {} }, 'targets must be an array; got an object'],
    [{ ...ENV, targets: [] }, 'targets must have at least one target'],
    [{ ...ENV, targets: Array.from({ length: 33 }, (_, i) => ({ ...TARGET, deployName: `w${i}` })) }, 'targets must have at most 32 targets'],
    [{ ...ENV, targets: [null] }, 'targets[0] must be a JSON object; got null'],
    [{ ...ENV, targets: [{ ...TARGET, clusterId: undefined }] }, 'targets[0].clusterId is required'],
    [{ ...ENV, targets: [{ ...TARGET, clusterId: 1.5 }] }, 'targets[0].clusterId must be a whole number between 1 and 2147483647; got number 1.5'],
    [{ ...ENV, targets: [{ ...TARGET, deployType: undefined }] }, 'targets[0].deployType is required'],
    [{ ...ENV, targets: [{ ...TARGET, deployType: 'helm' }] }, 'targets[0].deployType must be one of swarm-service, swarm-stack, k8s-deployment, flux-helmrelease, helm-release; got "helm"'],
    [{ ...ENV, targets: [{ ...TARGET, deployNamespace: '' }] }, 'targets[0].deployNamespace must not be empty'],
    [{ ...ENV, targets: [{ ...TARGET, deployName: 'a b' }] }, `targets[0].deployName must be letters, digits, '-', '_' or '.', beginning and ending with a letter or digit; got "a b"`],
    [{ ...ENV, targets: [{ ...TARGET, helmType: 'flux' }] }, 'targets[0]: unknown field "helmType" (allowed: id, clusterId, deployType, deployNamespace, deployName, monitorTimeoutSecs)'],
    [{ ...ENV, targets: [TARGET, { ...TARGET, monitorTimeoutSecs: 5 }] }, 'targets[1] names the same workload as targets[0]'],
    [{ ...ENV, iacBranch: 'x' }, 'unknown field "iacBranch" (allowed: name, branch, iacRepoId, iacPath, targets)'],
  ];
  for (const [body, message] of cases) {
    const e = refused(checkEnvironment(body));
    t.is(e.message, message);
    t.is(e.status, 400);
  }
  t.is(refused(checkEnvironment({ ...ENV, name: undefined })).code, 'MISSING_FIELD');
  t.is(refused(checkEnvironment({ ...ENV, targets: [TARGET, TARGET] })).code, 'CONFLICT');
});

test('POST /api/job-tokens {repoUrl, jobId, ref, sha, ttlSecs?}', (t) => {
  const sha = 'A'.repeat(40);
  t.deepEqual(accepted(checkJobTokenRequest({ repoUrl: 'https://h.example/g/app.git', jobId: '4711', ref: 'main', sha })), {
    repoUrl: 'https://h.example/g/app.git',
    repoKey: 'h.example/g/app',
    jobId: '4711',
    ref: 'main',
    sha: 'a'.repeat(40),
    ttlSecs: 3600,
  });
  t.is(accepted(checkJobTokenRequest({ repoUrl: 'https://h.example/g/app', jobId: '1', ref: 'refs/heads/main', sha, ttlSecs: 60 })).ttlSecs, 60);
  t.is(refused(checkJobTokenRequest({ repoUrl: 'https://h.example/g/app', jobId: '1', ref: 'main', sha: 'abc' })).message, 'sha must be a full commit id (40 or 64 hex digits); got "abc"');
  t.is(refused(checkJobTokenRequest({ repoUrl: 'https://h.example/g/app', jobId: '1', ref: 'main', sha, ttlSecs: 86401 })).message, 'ttlSecs must be a whole number between 1 and 86400; got number 86401');
  t.is(refused(checkJobTokenRequest({ repoUrl: 'https://h.example/g/app', jobId: '1', ref: 'a b', sha })).message, 'ref must not contain spaces, control characters or any of ~ ^ : ? * [ \\; got "a b"');
  for (const key of ['repoUrl', 'jobId', 'ref', 'sha']) {
    const body: Record<string, unknown> = { repoUrl: 'https://h.example/g/app', jobId: '1', ref: 'main', sha };
    delete body[key];
    t.deepEqual(refused(checkJobTokenRequest(body)), { status: 400, code: 'MISSING_FIELD', message: `${key} is required` });
  }
});

test('chart and values body {repoUrl, jobId, jobToken, environment?}: each required field missing or empty is 400', (t) => {
  const body = { repoUrl: 'https://h.example/g/app', jobId: '12', jobToken: 'tok' };
  t.deepEqual(accepted(checkJobBody(body)), { ...body, repoKey: 'h.example/g/app' });
  t.is(accepted(checkJobBody({ ...body, environment: 'staging' })).environment, 'staging');
  for (const key of ['repoUrl', 'jobId', 'jobToken']) {
    t.deepEqual(refused(checkJobBody({ ...body, [key]: undefined })), { status: 400, code: 'MISSING_FIELD', message: `${key} is required` });
    t.deepEqual(refused(checkJobBody({ ...body, [key]: '' })), { status: 400, code: 'INVALID_FIELD', message: `${key} must not be empty` });
    t.is(refused(checkJobBody({ ...body, [key]: 12 })).message, `${key} must be a string; got number 12`);
  }
  t.is(accepted(checkJobBody({ ...body, environment: '' })).environment, undefined, 'an empty environment is not given');
  t.is(accepted(checkJobBody({ ...body, environment: null })).environment, undefined, 'nor is null');
  t.is(refused(checkJobBody({ ...body, environment: 7 })).message, 'environment must be a string; got number 7');
  t.is(refused(checkJobBody({ ...body, environment: 'a\tb' })).message, 'environment must not contain control characters');
  t.is(refused(checkJobBody({ ...body, version: '1' })).message, 'unknown field "version" (allowed: repoUrl, jobId, jobToken, environment)');
  t.is(refused(checkJobBody(JSON.parse('{"repoUrl":"https://h.example/g/app","jobId":"1","jobToken":"t","__proto__":{}}'))).message, 'unknown field "__proto__" (allowed: repoUrl, jobId, jobToken, environment)');
});

const field = (name: string, v: string): FormPart => ({ name, kind: 'field', value: v });
const CHART: FormPart = { name: 'chart', kind: 'file', filename: 'mychart-0.1.0.tgz' };
const FORM = [field('repoUrl', 'https://h.example/g/app'), field('jobId', '12'), field('jobToken', 'tok'), field('version', 'v1.4.0'), CHART];

test('POST /api/deploy form: six fields in any order, the chart part first too; version mapped to the chart version', (t) => {
  t.deepEqual(accepted(checkDeployForm(FORM)), { repoUrl: 'https://h.example/g/app', repoKey: 'h.example/g/app', jobId: '12', jobToken: 'tok', version: 'v1.4.0', chartVersion: '1.4.0' });
  const v = accepted(checkDeployForm([CHART, ...FORM.slice(0, 4).reverse(), field('environment', 'prod')]));
  t.is(v.environment, 'prod');
  t.is(v.chartVersion, '1.4.0');
  t.false('environment' in accepted(checkDeployForm([...FORM, field('environment', '')])), '-F environment= with an empty variable');
});

test('POST /api/deploy form: missing, empty, duplicate, unknown and misplaced parts refused by name', (t) => {
  for (const name of ['repoUrl', 'jobId', 'jobToken', 'version', 'chart']) {
    t.deepEqual(refused(checkDeployForm(FORM.filter((p) => p.name !== name))), { status: 400, code: 'MISSING_FIELD', message: `${name} is required` });
  }
  t.is(refused(checkDeployForm(FORM.map((p) => (p.name === 'jobId' ? field('jobId', '') : p)))).message, 'jobId must not be empty');
  t.is(refused(checkDeployForm([...FORM, field('jobId', '13')])).message, 'jobId is given more than once');
  t.is(refused(checkDeployForm([...FORM, CHART])).message, 'chart is given more than once');
  t.is(refused(checkDeployForm([...FORM.slice(0, 4), field('chart', 'H4sI...')])).message, 'chart must be a file part (a .tgz upload), not a text field');
  t.is(refused(checkDeployForm([...FORM.slice(1), { name: 'repoUrl', kind: 'file', filename: 'x' }])).message, 'repoUrl must be a text field, not a file');
  t.is(refused(checkDeployForm([...FORM, field('monitorTimeoutSecs', '5')])).message, 'unknown field "monitorTimeoutSecs" (allowed: repoUrl, jobId, jobToken, environment, version, chart)');
  t.is(refused(checkDeployForm(FORM.map((p) => (p.name === 'version' ? field('version', 'latest') : p)))).message, 'version must be a SemVer tag (1.2.3 or v1.2.3) or a commit id (7 to 40 hex digits); got "latest"');
});
