/**
 * `POST /api/deploy` end to end against REAL git remotes: a bare repository over file:// and one
 * served by `git daemon` on loopback with a rejecting pre-receive hook. One deploy lands one
 * commit with the chart under the iacPath and the version set; concurrent deploys give a linear
 * history; a commit someone else pushes between the service's fetch and push is rebased over; an
 * identical chart deploys without a new commit; every bad request gets its status and JSON error
 * and leaves the remote untouched.
 */
import test from 'ava';
import { readFileSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { bareRemote, gitDaemon, gitHttp, gitSync } from '../helpers/git-remote.js';
import { chart, setup, SHA, workdir } from '../helpers/deploy-setup.js';
import { CHART_YAML, gzipBomb, rawTar, gzip, tarGz, writeTree } from './tarballs.js';

// the test charts carry no image: the swarm reconciler refuses their values, and the target fails at once
const NO_MONITOR =
  '1 of 1 cluster target failed: swarm-a: the values cannot be applied: values.image must be a mapping {repository, tag} or an image reference string; got nothing';

test('over file://: one deploy lands exactly one commit with the chart under the iacPath and the version set; the same chart again makes no commit', async (t) => {
  const remote = bareRemote(t);
  const s = await setup(t, remote.url);
  const before = remote.head();
  const a = await s.deploy({ chart: chart(t) });
  t.is(a.status, 202, JSON.stringify(a.body));
  t.regex(a.body.deploymentId, /^[0-9a-f-]{36}$/);
  const done = await s.wait(a.body.deploymentId);
  t.is(done.status, 'failed');
  t.is(done.message, NO_MONITOR);
  t.is(done.targets[0].monitorTimeoutSecs, 300, 'the pinned default');
  const log = remote.log();
  t.is(log.length, 2, 'the first commit and the deploy');
  t.is(log[1]?.sha, before);
  t.is(
    log[0]?.message,
    `deploy shop/production v1.4.0\n\nApp: shop\nEnvironment: production\nVersion: v1.4.0\nJob: 4711\nSource-Commit: ${SHA}\nIaC-Path: clusters/production/shop\nDeployment-Id: ${a.body.deploymentId}\n`,
  );
  t.is(remote.show('clusters/production/shop/Chart.yaml'), 'apiVersion: v2\nname: mychart\nversion: 1.4.0\n');
  t.is(remote.show('clusters/production/shop/templates/deploy.yaml'), 'kind: Deployment\n');
  t.is(remote.show('README.md'), '# infra\n', 'the rest of the repository stays');
  // the same chart and version: success, no new commit
  const again = await s.deploy({ chart: chart(t) });
  t.is(again.status, 202);
  t.is((await s.wait(again.body.deploymentId)).message, NO_MONITOR);
  t.is(remote.log().length, 2);
  // a new chart replaces the directory: a file the new chart lacks is removed
  const next = await s.deploy({ chart: chart(t, { 'mychart/templates/deploy.yaml': 'kind: StatefulSet\n' }), version: '0123abc' });
  await s.wait(next.body.deploymentId);
  t.is(remote.log().length, 3);
  t.is(remote.show('clusters/production/shop/Chart.yaml'), 'apiVersion: v2\nname: mychart\nversion: 0.0.0-g0123abc\n');
  t.is(remote.show('clusters/production/shop/templates/deploy.yaml'), 'kind: StatefulSet\n');
  const metrics = await s.d.system.metrics();
  t.regex(metrics, /deployer_deployments_total\{status="failed"\} 3/);
  t.regex(metrics, /deployer_push_seconds_count\{outcome="pushed"\} 2/);
  t.regex(metrics, /deployer_push_seconds_count\{outcome="unchanged"\} 1/);
});

test('over git daemon: a rejecting pre-receive hook fails the deployment with the hook\'s message and the remote is untouched', async (t) => {
  const remote = bareRemote(t);
  remote.hook('pre-receive', 'echo "pushes to infra are frozen until Monday" >&2\nexit 1');
  const url = await gitDaemon(t, remote);
  const s = await setup(t, url);
  const before = remote.head();
  const a = await s.deploy({ chart: chart(t) });
  t.is(a.status, 202);
  const done = await s.wait(a.body.deploymentId);
  t.is(done.status, 'failed');
  t.true(done.message.startsWith('the IaC repository refused the push: pushes to infra are frozen until Monday'), done.message);
  t.is(done.targets[0].status, 'failed');
  t.is(remote.head(), before);
});

test('over git daemon: concurrent deploys to one IaC repository give a linear history and lose nothing', async (t) => {
  const remote = bareRemote(t);
  const url = await gitDaemon(t, remote);
  const envs = ['e1', 'e2', 'e3', 'e4', 'e5'];
  const s = await setup(t, url, { envs });
  const ids = await Promise.all(envs.map(async (environment, i) => (await s.deploy({ chart: chart(t), environment, version: `v1.0.${i}` })).body.deploymentId as string));
  for (const id of ids) t.is((await s.wait(id)).message, NO_MONITOR);
  const log = remote.log();
  t.is(log.length, 6);
  t.is(gitSync(remote.bare, ['rev-list', '--merges', '--count', 'main']).trim(), '0', 'no merges: linear');
  envs.forEach((e, i) => t.is(remote.show(`clusters/${e}/shop/Chart.yaml`), `apiVersion: v2\nname: mychart\nversion: 1.0.${i}\n`));
  t.deepEqual(log.slice(0, 5).map((c) => /Deployment-Id: (\S+)/.exec(c.message)?.[1]).sort(), [...ids].sort());
});

test('a commit someone else pushes between the service\'s fetch and its push is rebased over', async (t) => {
  const remote = bareRemote(t);
  const s = await setup(t, remote.url);
  await s.wait((await s.deploy({ chart: chart(t) })).body.deploymentId);
  // someone else's clone, and a post-commit hook in the service's own clone that pushes from it once
  const other = join(workdir(t), 'other');
  gitSync(remote.base, ['clone', '-q', remote.bare, other]);
  const marker = join(workdir(t), 'pushed');
  const hook = join(s.d.stateDir, 'deployer', 'iac', '1', '.git', 'hooks', 'post-commit');
  writeFileSync(hook, `#!/bin/sh\n[ -e ${marker} ] && exit 0\ntouch ${marker}\nunset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE\ncd ${other} && git pull -q && echo x > other.txt && git add other.txt && git commit -q -m foreign && git push -q origin HEAD:main\n`);
  chmodSync(hook, 0o755);
  const b = await s.deploy({ chart: chart(t), version: 'v2.0.0' });
  t.is((await s.wait(b.body.deploymentId)).message, NO_MONITOR);
  t.true(existsSync(marker), 'the foreign push happened');
  const log = remote.log();
  t.deepEqual(log.map((c) => c.message.split('\n')[0]), ['deploy shop/production v2.0.0', 'foreign', 'deploy shop/production v1.4.0', 'first']);
  t.is(remote.show('other.txt'), 'x\n');
  t.is(remote.show('clusters/production/shop/Chart.yaml'), 'apiVersion: v2\nname: mychart\nversion: 2.0.0\n');
});

test('bad deploy requests: each missing field, wrong tokens, unknown repository, several environments, every bad tarball; the remote is untouched', async (t) => {
  const remote = bareRemote(t);
  const s = await setup(t, remote.url, { envs: ['production', 'staging'], values: { maxUploadBytes: 2 * 1024 * 1024 } });
  const before = remote.head();
  const good = chart(t);
  const env = { environment: 'production' };
  const dir = workdir(t);
  const expect = async (fields: Record<string, string | Buffer | null>, status: number, code: string | null, what: string) => {
    const a = await s.deploy(fields).catch((e) => { throw new Error(`${what}: ${e.cause?.message ?? e.message}`); });
    t.is(a.status, status, `${what}: ${JSON.stringify(a.body)}`);
    if (code) t.is(a.body.error?.code, code, what);
  };
  for (const field of ['repoUrl', 'jobId', 'jobToken', 'version', 'chart']) await expect({ ...env, chart: good, [field]: null }, 400, 'MISSING_FIELD', `no ${field}`);
  await expect({ ...env, chart: good, extra: 'x' }, 400, 'INVALID_FIELD', 'unknown field');
  await expect({ ...env, chart: good, version: 'latest' }, 400, 'INVALID_FIELD', 'bad version');
  await expect({ ...env, chart: good, jobToken: `${s.jobToken}x` }, 401, 'JOB_TOKEN_INVALID', 'tampered token');
  await expect({ ...env, chart: good, jobId: '4712' }, 401, 'JOB_TOKEN_INVALID', 'token of another job');
  const otherRepo = (await s.d.call('POST', '/api/job-tokens', { repoUrl: 'https://gitlab.example.com/team/other', jobId: '4711', ref: 'main', sha: SHA })).body.jobToken;
  await expect({ ...env, chart: good, jobToken: otherRepo }, 401, 'JOB_TOKEN_INVALID', 'token of another repository');
  await expect({ ...env, chart: good, jobToken: otherRepo, repoUrl: 'https://gitlab.example.com/team/other' }, 404, 'APP_NOT_FOUND', 'unknown repository');
  await expect({ chart: good }, 400, 'AMBIGUOUS_ENVIRONMENT', 'several environments');
  await expect({ chart: good, environment: 'preview' }, 404, 'ENVIRONMENT_NOT_FOUND', 'no such environment');
  writeTree(dir, { 'evil/Chart.yaml': CHART_YAML, 'flat/Chart.yaml': CHART_YAML, 'badvalues/mychart/Chart.yaml': CHART_YAML, 'badvalues/mychart/values.yaml': 'a: [1\n' });
  const traversal = gzip(rawTar([{ name: 'mychart/Chart.yaml', data: Buffer.from(CHART_YAML) }, { name: '../x', data: Buffer.from('x') }]));
  const symlink = gzip(rawTar([{ name: 'mychart/Chart.yaml', data: Buffer.from(CHART_YAML) }, { name: 'mychart/link', type: '2', linkname: '/etc/passwd' }]));
  const bomb = readFileSync(gzipBomb(dir).path);
  const cases: [string, Buffer, number, string][] = [
    ['traversal', traversal, 400, 'BAD_CHART'],
    ['symlink', symlink, 400, 'BAD_CHART'],
    ['not gzip', Buffer.from('hello'), 400, 'BAD_CHART'],
    ['flat', readFileSync(tarGz(join(dir, 'flat'), join(dir, 'flat.tgz'), ['Chart.yaml'])), 400, 'BAD_CHART'],
    ['bad values.yaml', readFileSync(tarGz(join(dir, 'badvalues'), join(dir, 'bv.tgz'), ['mychart'])), 400, 'BAD_YAML'],
    ['oversize', Buffer.alloc(3 * 1024 * 1024, 1), 413, 'BODY_TOO_LARGE'],
    ['gzip bomb', bomb, 400, 'BAD_CHART'],
  ];
  for (const [what, bytes, status, code] of cases) await expect({ ...env, chart: bytes }, status, code, what);
  t.is(remote.head(), before, 'nothing was pushed');
  t.deepEqual((await s.d.call('GET', '/api/deployments')).body, [], 'nothing was queued');
  // not multipart at all
  const res = await fetch(`${s.d.url}/api/deploy`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.is(res.status, 400);
});

test('over smart HTTP with authentication: the IaC repository\'s credential is sent (a bare token as oauth2:<token>); a wrong one fails the deployment clearly', async (t) => {
  const remote = bareRemote(t);
  const http = await gitHttp(t, remote, 'oauth2', 'glpat-secret');
  const s = await setup(t, http.url);
  const before = remote.head();
  // without the credential: refused
  const a = await s.deploy({ chart: chart(t) });
  const failed = await s.wait(a.body.deploymentId);
  t.is(failed.status, 'failed');
  t.regex(failed.message, /^deployment failed: git ls-remote failed/);
  t.is(remote.head(), before);
  // with it: lands
  t.is((await s.d.call('PUT', '/api/iac-repos/1', { name: 'infra', url: http.url, branch: 'main', credential: 'glpat-secret' })).status, 200);
  const b = await s.deploy({ chart: chart(t), version: 'v5.0.0' });
  t.is((await s.wait(b.body.deploymentId)).message, NO_MONITOR);
  t.is(remote.show('clusters/production/shop/Chart.yaml'), 'apiVersion: v2\nname: mychart\nversion: 5.0.0\n');
  t.true(http.seen.some((r) => r.authorized && r.path.endsWith('/git-receive-pack')));
  t.false(JSON.stringify((await s.d.call('GET', '/api/iac-repos/1')).body).includes('glpat'));
});
