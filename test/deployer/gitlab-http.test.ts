/**
 * The `gitlab` CI provider over HTTP. GitLab cannot run here, so a loopback HTTP server stands in
 * for it — the only stand-in of these tests: it answers `GET /api/v4/job` as GitLab documents it
 * (header JOB-TOKEN; the job as JSON with id, ref, tag, web_url, pipeline.sha; 401 for a token it
 * does not know). The deployment service under test is real, and so is the IaC remote.
 */
import test, { type ExecutionContext } from 'ava';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { bareRemote } from '../helpers/git-remote.js';
import { startDeployer, type Deployer } from '../helpers/deployer.js';
import { chart } from '../helpers/deploy-setup.js';

const SHA = '9fceb02d0ae598e95dc970b74767f19372d61af8';

/** A GitLab job API on loopback: token → job; counts requests. */
async function gitlabStub(t: ExecutionContext, jobs: Record<string, (base: string) => unknown>) {
  const seen: string[] = [];
  let base = '';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push(`${req.method} ${req.url} ${req.headers['job-token'] ?? ''}`);
    const make = jobs[String(req.headers['job-token'])];
    if (req.url !== '/api/v4/job' || make === undefined) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"401 Unauthorized"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(make(base)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { base, seen };
}

const job = (id: number, project: string, extra: Record<string, unknown> = {}) => (base: string) => ({ id, status: 'running', ref: 'main', tag: false, web_url: `${base}/${project}/-/jobs/${id}`, pipeline: { id: 7, sha: SHA, ref: 'main' }, commit: { id: SHA }, ...extra });

async function configure(d: Deployer, gitlab: string, iacUrl: string) {
  const repo = (await d.call('POST', '/api/iac-repos', { name: 'infra', url: iacUrl, branch: 'main' })).body;
  const cluster = (await d.call('POST', '/api/clusters', { name: 'swarm-a', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock' })).body;
  const app = (await d.call('POST', '/api/apps', { name: 'shop', repoUrl: `${gitlab}/team/shop.git` })).body;
  await d.call('POST', `/api/apps/${app.id}/environments`, { name: 'production', branch: 'main', iacRepoId: repo.id, iacPath: 'clusters/prod/shop', targets: [{ clusterId: cluster.id, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web' }] });
}

test('GitLab verifies the job: a matching job deploys; another job, another project, a tag or an unknown token is 401; another host is 401 without asking', async (t) => {
  const gl = await gitlabStub(t, {
    'glcbt-good': job(4711, 'team/shop'),
    'glcbt-other-project': job(4711, 'team/blog'),
    'glcbt-tag': job(4711, 'team/shop', { ref: 'v1.0.0', tag: true }),
  });
  const remote = bareRemote(t);
  const d = await startDeployer(t, { gitlabUrl: gl.base });
  await configure(d, gl.base, remote.url);
  const values = (body: Record<string, unknown>) =>
    fetch(`${d.url}/api/get/values`, { method: 'POST', body: JSON.stringify({ repoUrl: `${gl.base}/team/shop`, jobId: '4711', ...body }) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  // the good token passes verification and selects production (nothing deployed yet: 404 VALUES_NOT_FOUND)
  t.is((await values({ jobToken: 'glcbt-good' })).body.error.code, 'VALUES_NOT_FOUND');
  t.deepEqual(gl.seen.at(-1), 'GET /api/v4/job glcbt-good');
  for (const [body, why] of [
    [{ jobToken: 'glcbt-good', jobId: '4712' }, 'the token belongs to another job'],
    [{ jobToken: 'glcbt-other-project' }, 'the token belongs to a job of another repository'],
    [{ jobToken: 'glcbt-unknown' }, 'GitLab does not know this job token (or the job has finished)'],
  ] as const) {
    const a = await values(body);
    t.deepEqual([a.status, a.body.error.code, a.body.error.message], [401, 'JOB_TOKEN_INVALID', `job token verification failed: ${why}`]);
  }
  t.is((await values({ jobToken: 'glcbt-tag' })).body.error.code, 'ENVIRONMENT_NOT_FOUND', 'a tag job follows no branch');
  const before = gl.seen.length;
  const elsewhere = await values({ jobToken: 'glcbt-good', repoUrl: 'https://gitlab.example.com/team/shop' });
  t.is(elsewhere.status, 401);
  t.is(gl.seen.length, before, 'no request for a repository on another host');
  // and a real deploy with the GitLab token lands its commit
  const form = new FormData();
  for (const [k, v] of Object.entries({ repoUrl: `${gl.base}/team/shop.git`, jobId: '4711', jobToken: 'glcbt-good', version: 'v3.0.0' })) form.append(k, v);
  form.append('chart', new Blob([chart(t)]), 'c.tgz');
  const res = await fetch(`${d.url}/api/deploy`, { method: 'POST', body: form });
  t.is(res.status, 202);
  const { deploymentId } = (await res.json()) as { deploymentId: string };
  for (let i = 0; i < 200 && remote.show('clusters/prod/shop/Chart.yaml') === null; i++) await new Promise((r) => setTimeout(r, 50));
  t.is(remote.show('clusters/prod/shop/Chart.yaml'), 'apiVersion: v2\nname: mychart\nversion: 3.0.0\n');
  t.regex(remote.log()[0]?.message ?? '', new RegExp(`Deployment-Id: ${deploymentId}`));
});

test('GitLab that cannot be reached gives 502, not 500', async (t) => {
  const gl = await gitlabStub(t, {});
  const d = await startDeployer(t, { gitlabUrl: 'http://127.0.0.1:9' });
  await configure(d, 'http://127.0.0.1:9', bareRemote(t).url);
  const r = await fetch(`${d.url}/api/get/chart`, { method: 'POST', body: JSON.stringify({ repoUrl: 'http://127.0.0.1:9/team/shop', jobId: '4711', jobToken: 'glcbt-x' }) });
  t.is(r.status, 502);
  const body = (await r.json()) as any;
  t.is(body.error.code, 'VERIFIER_UNAVAILABLE');
  t.regex(body.error.message, /^GitLab at http:\/\/127\.0\.0\.1:9 could not be reached to verify the job token/);
  t.is(gl.seen.length, 0);
});
