/**
 * The deployment service's admin API over real HTTP (the deployer actor on an ephemeral loopback
 * port): every endpoint, the bearer check and the scopes, and the bad inputs — each missing field,
 * bad monitorTimeoutSecs values, unknown and conflicting records — each with its status and JSON error.
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { newAdminToken, startDeployer, type Deployer } from '../helpers/deployer.js';
import { deployerArgs, deployerSettings } from '../../actors/deployer/service.js';
import { resolve } from '../../runtime/config/settings.js';
import { JOB_KEY_FILE } from '../../actors/deployer/keys.js';

const REPO = { name: 'infra', url: 'https://gitlab.example.com/ops/infra.git', branch: 'main' };
const SWARM = { name: 'swarm-a', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock' };
const K8S = { name: 'k8s-b', kind: 'kubernetes', endpoint: 'https://k8s.example:6443', credential: 'sa-token' };
const APP = { name: 'shop', repoUrl: 'https://gitlab.example.com/team/shop.git' };

/** An IaC repository, a swarm and a kubernetes cluster, an app. */
async function seed(d: Deployer) {
  const repo = (await d.call('POST', '/api/iac-repos', REPO)).body;
  const swarm = (await d.call('POST', '/api/clusters', SWARM)).body;
  const k8s = (await d.call('POST', '/api/clusters', K8S)).body;
  const app = (await d.call('POST', '/api/apps', APP)).body;
  return { repo, swarm, k8s, app };
}

function env(repoId: number, clusterId: number, over: Record<string, unknown> = {}, target: Record<string, unknown> = {}) {
  return { name: 'production', branch: 'main', iacRepoId: repoId, iacPath: 'clusters/prod/shop', targets: [{ clusterId, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web', ...target }], ...over };
}

const err = (status: number, code: string, message?: string) => ({ status, code, ...(message === undefined ? {} : { message }) });
function refused(a: { status: number; body: any }, message = false) {
  return { status: a.status, code: a.body?.error?.code, ...(message ? { message: a.body?.error?.message } : {}) };
}

test('session/me needs a token: none, malformed and unknown are 401 with WWW-Authenticate; it shows the default monitor budget', async (t) => {
  const d = await startDeployer(t, { monitorTimeoutSecs: 900 });
  const none = await d.call('GET', '/api/session/me', undefined, null);
  t.deepEqual(refused(none, true), err(401, 'UNAUTHORIZED', 'an admin token is required (Authorization: Bearer <token>)'));
  t.is(none.headers.get('www-authenticate'), 'Bearer');
  t.deepEqual(refused(await d.call('GET', '/api/session/me', undefined, newAdminToken()), true), err(401, 'UNAUTHORIZED', 'unknown admin token'));
  t.deepEqual(refused(await d.call('GET', '/api/session/me', undefined, 'not-a-token')), err(401, 'UNAUTHORIZED'));
  const res = await fetch(`${d.url}/api/session/me`, { headers: { authorization: `Basic ${d.adminToken}` } });
  t.is(res.status, 401);
  const me = await d.call('GET', '/api/session/me');
  t.is(me.status, 200);
  t.deepEqual({ ...me.body, tokenId: typeof me.body.tokenId }, { tokenId: 'string', label: 'DEPLOYER_ADMIN_TOKEN', scopes: ['admin'], defaultMonitorTimeoutSecs: 900 });
});

test('IaC repositories: create, list, get, replace, delete; credentials are write-only; bad bodies are 400 naming the field', async (t) => {
  const d = await startDeployer(t);
  const created = await d.call('POST', '/api/iac-repos', { ...REPO, credential: 'glpat-secret' });
  t.is(created.status, 201);
  t.deepEqual(created.body, { id: 1, name: 'infra', url: REPO.url, branch: 'main', hasCredential: true });
  t.false(JSON.stringify((await d.call('GET', '/api/iac-repos')).body).includes('glpat'));
  t.deepEqual((await d.call('GET', '/api/iac-repos/1')).body, created.body);
  // PUT: credential omitted keeps it, null removes it; branch omitted is the remote's default
  t.deepEqual((await d.call('PUT', '/api/iac-repos/1', { name: 'infra2', url: REPO.url })).body, { id: 1, name: 'infra2', url: REPO.url, branch: null, hasCredential: true });
  t.deepEqual((await d.call('PUT', '/api/iac-repos/1', { name: 'infra2', url: REPO.url, credential: null })).body.hasCredential, false);
  for (const [body, code, message] of [
    [{ url: REPO.url }, 'MISSING_FIELD', 'name is required'],
    [{ name: 'x' }, 'MISSING_FIELD', 'url is required'],
    [{ ...REPO, extra: 1 }, 'INVALID_FIELD', undefined],
    [{ ...REPO, url: 'https://user:tok@gitlab.example.com/ops/infra' }, 'INVALID_FIELD', undefined],
    [{ ...REPO, branch: 'refs/heads/main' }, 'INVALID_FIELD', undefined],
    [[1], 'INVALID_FIELD', undefined],
  ] as const) {
    const a = await d.call('POST', '/api/iac-repos', body);
    t.deepEqual(refused(a, message !== undefined), err(400, code, message), JSON.stringify(body));
  }
  t.deepEqual(refused(await d.call('POST', '/api/iac-repos', '{"name": ')), err(400, 'INVALID_FIELD'));
  t.deepEqual(refused(await d.call('GET', '/api/iac-repos/2')), err(404, 'NOT_FOUND'));
  t.deepEqual(refused(await d.call('GET', '/api/iac-repos/abc')), err(404, 'NOT_FOUND'));
  t.deepEqual(refused(await d.call('PUT', '/api/iac-repos/9', REPO)), err(404, 'NOT_FOUND'));
  t.is((await d.call('DELETE', '/api/iac-repos/1')).status, 204);
  t.deepEqual(refused(await d.call('DELETE', '/api/iac-repos/1')), err(404, 'NOT_FOUND'));
  // ids are never reused
  t.is((await d.call('POST', '/api/iac-repos', REPO)).body.id, 2);
});

test('clusters: kinds and endpoints checked; credentials write-only; a cluster in use is neither deleted nor changes kind (409)', async (t) => {
  const d = await startDeployer(t);
  const { repo, swarm, k8s, app } = await seed(d);
  t.deepEqual(swarm, { id: 1, name: 'swarm-a', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock', appliedElsewhere: false, hasCredential: false });
  t.deepEqual(k8s, { id: 2, name: 'k8s-b', kind: 'kubernetes', endpoint: 'https://k8s.example:6443', appliedElsewhere: false, hasCredential: true });
  t.deepEqual((await d.call('GET', '/api/clusters')).body, [swarm, k8s]);
  for (const [body, code] of [
    [{ kind: 'swarm', endpoint: 'unix:///x.sock' }, 'MISSING_FIELD'],
    [{ name: 'a', endpoint: 'unix:///x.sock' }, 'MISSING_FIELD'],
    [{ name: 'a', kind: 'swarm' }, 'MISSING_FIELD'],
    [{ name: 'a', kind: 'nomad', endpoint: 'unix:///x.sock' }, 'INVALID_FIELD'],
    [{ name: 'a', kind: 'kubernetes', endpoint: 'unix:///x.sock' }, 'INVALID_FIELD'],
    [{ name: 'a', kind: 'kubernetes', endpoint: 'https://u:p@k8s' }, 'INVALID_FIELD'],
    [{ name: 'a', kind: 'swarm', endpoint: 'unix:///x.sock', appliedElsewhere: 'yes' }, 'INVALID_FIELD'],
  ] as const) {
    t.deepEqual(refused(await d.call('POST', '/api/clusters', body)), err(400, code), JSON.stringify(body));
  }
  t.is((await d.call('POST', `/api/apps/${app.id}/environments`, env(repo.id, swarm.id))).status, 201);
  t.deepEqual(refused(await d.call('DELETE', '/api/clusters/1'), true), err(409, 'CONFLICT', 'cluster 1 is a target of environment 1 ("production"); change or delete it first'));
  t.deepEqual(refused(await d.call('PUT', '/api/clusters/1', { ...SWARM, kind: 'kubernetes', endpoint: 'https://k' })), err(409, 'CONFLICT'));
  t.deepEqual(refused(await d.call('DELETE', '/api/iac-repos/1')), err(409, 'CONFLICT'));
  t.is((await d.call('PUT', '/api/clusters/1', { ...SWARM, name: 'swarm-renamed' })).status, 200);
  t.is((await d.call('DELETE', '/api/clusters/2')).status, 204);
  t.deepEqual(refused(await d.call('GET', '/api/clusters/2')), err(404, 'NOT_FOUND'));
});

test('apps: one app per repository key (409 for another spelling of the same repository); deleting an app deletes its environments', async (t) => {
  const d = await startDeployer(t);
  const { repo, swarm, app } = await seed(d);
  t.deepEqual(app, { id: 1, name: 'shop', repoUrl: APP.repoUrl, repoKey: 'gitlab.example.com/team/shop' });
  t.deepEqual(refused(await d.call('POST', '/api/apps', { name: 'again', repoUrl: 'git@GitLab.example.com:team/shop' }), true), err(409, 'CONFLICT', 'app 1 ("shop") already has repository gitlab.example.com/team/shop'));
  t.deepEqual(refused(await d.call('POST', '/api/apps', { name: 'x' })), err(400, 'MISSING_FIELD'));
  t.deepEqual(refused(await d.call('POST', '/api/apps', { repoUrl: 'https://h/a/b' })), err(400, 'MISSING_FIELD'));
  t.deepEqual(refused(await d.call('POST', '/api/apps', { name: 'x', repoUrl: '/srv/git/a' })), err(400, 'INVALID_FIELD'));
  t.is((await d.call('PUT', '/api/apps/1', { name: 'shop2', repoUrl: APP.repoUrl })).body.name, 'shop2');
  t.is((await d.call('POST', `/api/apps/1/environments`, env(repo.id, swarm.id))).status, 201);
  t.is((await d.call('DELETE', '/api/apps/1')).status, 204);
  t.deepEqual(refused(await d.call('GET', '/api/apps/1/environments')), err(404, 'NOT_FOUND'));
  // the workload is free again: a new app's environment may deploy it
  const other = (await d.call('POST', '/api/apps', { name: 'shop', repoUrl: APP.repoUrl })).body;
  t.is((await d.call('POST', `/api/apps/${other.id}/environments`, env(repo.id, swarm.id))).status, 201);
});

test('environments: targets with monitorTimeoutSecs (configured value returned, null for the default); PUT keeps target ids', async (t) => {
  const d = await startDeployer(t);
  const { repo, swarm, k8s, app } = await seed(d);
  const body = {
    ...env(repo.id, swarm.id),
    targets: [
      { clusterId: swarm.id, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web' },
      { clusterId: k8s.id, deployType: 'flux-helmrelease', deployNamespace: 'shop', deployName: 'shop', monitorTimeoutSecs: 900 },
      { clusterId: k8s.id, deployType: 'k8s-deployment', deployNamespace: 'shop', deployName: 'api', monitorTimeoutSecs: 2147483647 },
      { clusterId: swarm.id, deployType: 'swarm-stack', deployNamespace: 'shop', deployName: 'jobs', monitorTimeoutSecs: null },
    ],
    iacPath: './clusters//prod/shop/',
  };
  const created = await d.call('POST', `/api/apps/${app.id}/environments`, body);
  t.is(created.status, 201);
  t.is(created.body.iacPath, 'clusters/prod/shop');
  t.deepEqual(created.body.targets.map((x: any) => x.monitorTimeoutSecs), [null, 900, 2147483647, null]);
  t.true(created.body.targets.every((x: any) => typeof x.id === 'string' && x.id.length > 0));
  const path = `/api/apps/${app.id}/environments/${created.body.id}`;
  t.deepEqual((await d.call('GET', path)).body, created.body);
  t.deepEqual((await d.call('GET', `/api/apps/${app.id}/environments`)).body, [created.body]);
  // GET-edit-PUT: ids kept; a target without id is new
  const edited = { ...body, targets: [{ ...created.body.targets[1], monitorTimeoutSecs: 60 }, body.targets[0]] };
  const put = await d.call('PUT', path, edited);
  t.is(put.status, 200);
  t.is(put.body.targets[0].id, created.body.targets[1].id);
  t.is(put.body.targets[0].monitorTimeoutSecs, 60);
  t.not(put.body.targets[1].id, created.body.targets[0].id);
  t.deepEqual(refused(await d.call('PUT', path, { ...body, targets: [{ ...body.targets[0], id: 'not-mine' }] }), true), err(400, 'INVALID_FIELD', 'targets[0].id "not-mine" is not a target of this environment (leave it out for a new target)'));
  t.is((await d.call('DELETE', path)).status, 204);
  t.deepEqual(refused(await d.call('GET', path)), err(404, 'NOT_FOUND'));
});

test('environments: each missing field, every bad monitorTimeoutSecs, bad paths, unknown records and conflicts', async (t) => {
  const d = await startDeployer(t);
  const { repo, swarm, k8s, app } = await seed(d);
  const post = (body: unknown, appId = app.id) => d.call('POST', `/api/apps/${appId}/environments`, body);
  const good = env(repo.id, swarm.id);
  for (const field of ['name', 'branch', 'iacRepoId', 'iacPath', 'targets']) {
    const body: Record<string, unknown> = { ...good };
    delete body[field];
    t.deepEqual(refused(await post(body), true), err(400, 'MISSING_FIELD', `${field} is required`), field);
  }
  for (const field of ['clusterId', 'deployType', 'deployNamespace', 'deployName']) {
    const target: Record<string, unknown> = { ...good.targets[0] };
    delete target[field];
    t.deepEqual(refused(await post({ ...good, targets: [target] }), true), err(400, 'MISSING_FIELD', `targets[0].${field} is required`), field);
  }
  for (const bad of [0, -1, 1.5, '300', true, 2147483648, {}, []]) {
    const a = await post(env(repo.id, swarm.id, {}, { monitorTimeoutSecs: bad }));
    t.is(a.status, 400, JSON.stringify(bad));
    t.is(a.body.error.code, 'INVALID_FIELD');
    t.true(a.body.error.message.startsWith('targets[0].monitorTimeoutSecs must be a whole number between 1 and 2147483647'), a.body.error.message);
  }
  // a budget as JSON text that is not a number at all (NaN, Infinity) is not JSON: 400
  t.deepEqual(refused(await post(JSON.stringify(good).replace('"deployName":"web"', '"deployName":"web","monitorTimeoutSecs":NaN'))), err(400, 'INVALID_FIELD'));
  for (const [over, target, code, message] of [
    [{ iacPath: '../x' }, {}, 'INVALID_FIELD', undefined],
    [{ iacPath: 'a/../b' }, {}, 'INVALID_FIELD', undefined],
    [{ iacPath: '/abs' }, {}, 'INVALID_FIELD', undefined],
    [{ iacPath: '.' }, {}, 'INVALID_FIELD', undefined],
    [{ iacRepoId: 7 }, {}, 'INVALID_FIELD', 'iacRepoId: no IaC repository 7'],
    [{}, { clusterId: 9 }, 'INVALID_FIELD', 'targets[0].clusterId: no cluster 9'],
    [{}, { clusterId: k8s.id }, 'INVALID_FIELD', 'targets[0].deployType swarm-service needs a swarm cluster; cluster 2 (k8s-b) is kubernetes'],
    [{}, { deployType: 'helm' }, 'INVALID_FIELD', undefined],
    [{}, { deployName: '-web' }, 'INVALID_FIELD', undefined],
    [{ targets: [] }, {}, 'INVALID_FIELD', 'targets must have at least one target'],
    [{ targets: [good.targets[0], good.targets[0]] }, {}, 'CONFLICT', 'targets[1] names the same workload as targets[0]'],
  ] as const) {
    t.deepEqual(refused(await post(env(repo.id, swarm.id, over, target)), message !== undefined), err(400, code, message), JSON.stringify([over, target]));
  }
  t.deepEqual(refused(await post(good, 9)), err(404, 'NOT_FOUND'));
  t.is((await post(good)).status, 201);
  t.deepEqual(refused(await post(env(repo.id, swarm.id, {}, { deployName: 'other' })), true), err(409, 'CONFLICT', 'app 1 already has an environment named "production" (1)'));
  t.deepEqual(refused(await post(env(repo.id, swarm.id, { name: 'staging' })), true), err(409, 'CONFLICT', 'targets[0] names a workload that environment "production" already deploys'));
  // an environment of another app is not found under this one
  const other = (await d.call('POST', '/api/apps', { name: 'blog', repoUrl: 'https://gitlab.example.com/team/blog' })).body;
  t.deepEqual(refused(await d.call('GET', `/api/apps/${other.id}/environments/1`)), err(404, 'NOT_FOUND'));
  t.deepEqual(refused(await d.call('GET', `/api/apps/${app.id}/environments/x`)), err(404, 'NOT_FOUND'));
});

test('scopes: read sees, cannot write (403); iac:<id> manages only environments of that repository, old and new', async (t) => {
  const d = await startDeployer(t);
  const { repo, swarm, app } = await seed(d);
  const repo2 = (await d.call('POST', '/api/iac-repos', { ...REPO, name: 'infra2' })).body;
  const mint = async (scopes: unknown) => d.call('POST', '/api/tokens', { scopes, label: 'test' });
  const read = await mint(['read']);
  t.is(read.status, 201);
  t.regex(read.body.token, /^hdt_[A-Za-z0-9_-]{43}$/);
  const iac1 = (await mint([`iac:${repo.id}`])).body.token as string;
  t.deepEqual(refused(await mint([])), err(400, 'INVALID_FIELD'));
  t.deepEqual(refused(await mint(['root'])), err(400, 'INVALID_FIELD'));
  t.deepEqual(refused(await d.call('POST', '/api/tokens', { label: 'x' })), err(400, 'INVALID_FIELD'));
  const r = read.body.token as string;
  t.deepEqual((await d.call('GET', '/api/session/me', undefined, r)).body.scopes, ['read']);
  t.is((await d.call('GET', '/api/apps', undefined, r)).status, 200);
  t.is((await d.call('GET', '/api/deployments', undefined, r)).status, 200);
  for (const [method, path, body] of [
    ['POST', '/api/iac-repos', REPO],
    ['PUT', '/api/clusters/1', SWARM],
    ['DELETE', '/api/apps/1', undefined],
    ['POST', '/api/tokens', { scopes: ['admin'] }],
    ['POST', '/api/job-tokens', {}],
    ['POST', `/api/apps/${app.id}/environments`, env(repo.id, swarm.id)],
  ] as const) {
    t.deepEqual(refused(await d.call(method, path, body, r)), err(403, 'FORBIDDEN'), `${method} ${path}`);
  }
  // iac:1 creates on repository 1, not on 2, cannot move one to 2, and cannot touch apps
  t.deepEqual(refused(await d.call('POST', `/api/apps/${app.id}/environments`, env(repo2.id, swarm.id), iac1), true), err(403, 'FORBIDDEN', `this token (scopes iac:${repo.id}) lacks the scope iac:${repo2.id}`));
  const e = await d.call('POST', `/api/apps/${app.id}/environments`, env(repo.id, swarm.id), iac1);
  t.is(e.status, 201);
  const path = `/api/apps/${app.id}/environments/${e.body.id}`;
  t.deepEqual(refused(await d.call('PUT', path, env(repo2.id, swarm.id), iac1)), err(403, 'FORBIDDEN'));
  t.is((await d.call('PUT', path, env(repo.id, swarm.id, {}, { monitorTimeoutSecs: 30 }), iac1)).status, 200);
  t.deepEqual(refused(await d.call('PUT', '/api/apps/1', APP, iac1)), err(403, 'FORBIDDEN'));
  t.is((await d.call('GET', path, undefined, iac1)).status, 200);
  t.is((await d.call('DELETE', path, undefined, iac1)).status, 204);
});

test('job tokens are minted for the admin only; deployments list and unknown id; unknown paths 404, other methods 405, big bodies 413', async (t) => {
  const d = await startDeployer(t, { maxBodyBytes: 1024 });
  const sha = '9fceb02d0ae598e95dc970b74767f19372d61af8';
  const minted = await d.call('POST', '/api/job-tokens', { repoUrl: APP.repoUrl, jobId: '4711', ref: 'main', sha });
  t.is(minted.status, 201);
  t.regex(minted.body.jobToken, /^hjt1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  t.true(Date.parse(minted.body.expiresAt) > Date.now() + 3500_000);
  for (const field of ['repoUrl', 'jobId', 'ref', 'sha']) {
    const body: Record<string, unknown> = { repoUrl: APP.repoUrl, jobId: '4711', ref: 'main', sha };
    delete body[field];
    t.deepEqual(refused(await d.call('POST', '/api/job-tokens', body), true), err(400, 'MISSING_FIELD', `${field} is required`));
  }
  t.deepEqual(refused(await d.call('POST', '/api/job-tokens', { repoUrl: APP.repoUrl, jobId: '4711', ref: 'main', sha: 'abc' })), err(400, 'INVALID_FIELD'));
  t.deepEqual(refused(await d.call('POST', '/api/job-tokens', { repoUrl: APP.repoUrl, jobId: '4711', ref: 'main', sha, ttlSecs: 86401 })), err(400, 'INVALID_FIELD'));
  t.deepEqual((await d.call('GET', '/api/deployments')).body, []);
  t.deepEqual(refused(await d.call('GET', '/api/deployments/0193a4b2-7c1d-7e2f-8a3b-4c5d6e7f8091')), err(404, 'DEPLOYMENT_NOT_FOUND'));
  t.deepEqual(refused(await d.call('GET', '/api/nothing')), err(404, 'NO_SUCH_ENDPOINT'));
  const m = await d.call('PATCH', '/api/apps');
  t.deepEqual(refused(m, true), err(405, 'METHOD_NOT_ALLOWED', 'PATCH is not allowed on /api/apps (GET, POST)'));
  t.is(m.headers.get('allow'), 'GET, POST');
  t.deepEqual(refused(await d.call('POST', '/api/apps', { name: 'x'.repeat(2000), repoUrl: APP.repoUrl }), true), err(413, 'BODY_TOO_LARGE', 'request body over 1024 bytes'));
  t.deepEqual((await d.call('GET', '/api/apps')).body, [], 'nothing was created');
  t.true(existsSync(join(d.stateDir, JOB_KEY_FILE)), 'the generated job token key is kept in the state directory');
});

test('the seeded admin token: a new DEPLOYER_ADMIN_TOKEN replaces the old one across a restart; records and the job key survive', async (t) => {
  const first = newAdminToken();
  const d1 = await startDeployer(t, { adminToken: first });
  t.is((await d1.call('POST', '/api/apps', APP)).status, 201);
  const jobToken = (await d1.call('POST', '/api/job-tokens', { repoUrl: APP.repoUrl, jobId: '1', ref: 'main', sha: 'a'.repeat(40) })).body.jobToken as string;
  const extra = (await d1.call('POST', '/api/tokens', { scopes: ['read'] })).body.token as string;
  await d1.system.shutdown();
  const d2 = await startDeployer(t, { adminToken: newAdminToken() }, d1.stateDir);
  t.deepEqual(refused(await d2.call('GET', '/api/apps', undefined, first)), err(401, 'UNAUTHORIZED'));
  t.is((await d2.call('GET', '/api/apps', undefined, extra)).status, 200, 'issued tokens survive');
  t.deepEqual((await d2.call('GET', '/api/apps')).body.map((a: any) => a.name), ['shop']);
  t.truthy(jobToken);
});

test('settings: a non-loopback host without an admin token is refused; defaults are the spec\'s', (t) => {
  const v = resolve(deployerSettings, {}, {});
  t.is(v.port, 3003);
  t.is(v.host, '127.0.0.1');
  t.is(v.monitorTimeoutSecs, 300);
  t.is(v.heartbeatMs, 15_000);
  t.throws(() => deployerArgs('/tmp/x', { ...v, host: '0.0.0.0' }), { message: /DEPLOYER_HOST 0\.0\.0\.0 is not a loopback address: set DEPLOYER_ADMIN_TOKEN/ });
  t.is(deployerArgs('/tmp/x', { ...v, host: '0.0.0.0', adminToken: newAdminToken() }).host, '0.0.0.0');
  t.throws(() => resolve(deployerSettings, {}, { DEPLOY_MONITOR_TIMEOUT_SECS: '0' }));
  t.throws(() => resolve(deployerSettings, {}, { DEPLOYER_ADMIN_TOKEN: 'short' }));
  t.throws(() => resolve(deployerSettings, {}, { DEPLOYER_JOB_TOKEN_KEY: 'c2hvcnQ=' }));
});

test('hostd deployer token create issues a token a running service accepts at once; bad scopes exit 2', async (t) => {
  const d = await startDeployer(t);
  const main = fileURLToPath(new URL('../../workers/main.js', import.meta.url));
  const token = execFileSync(process.execPath, [main, 'deployer', 'token', 'create', '--state-dir', d.stateDir, '--scopes', 'read,iac:3', '--label', 'ci bot'], { encoding: 'utf8' }).trim();
  t.regex(token, /^hdt_[A-Za-z0-9_-]{43}$/);
  const me = await d.call('GET', '/api/session/me', undefined, token);
  t.deepEqual({ scopes: me.body.scopes, label: me.body.label }, { scopes: ['read', 'iac:3'], label: 'ci bot' });
  const bad = spawnSync(process.execPath, [main, 'deployer', 'token', 'create', '--state-dir', d.stateDir, '--scopes', 'root'], { encoding: 'utf8' });
  t.is(bad.status, 2);
  t.is(bad.stderr.trim(), 'hostd deployer: --scopes[0] must be admin, read or iac:<iacRepoId>; got "root"');
});
