/**
 * `POST /api/get/chart` and `POST /api/get/values` over real HTTP against a real IaC remote: a
 * deployed chart comes back as a tarball Helm's layout rules accept (checked with the service's
 * own reader and with the system tar), with the deployed version; the values as JSON; and the
 * spec's error table: missing fields, wrong tokens, unknown repository, several environments,
 * nothing deployed yet, no values file, malformed YAML pushed by someone else, an empty file.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bareRemote, gitSync } from '../helpers/git-remote.js';
import { APP_URL, chart, setup, SHA, workdir, type Setup } from '../helpers/deploy-setup.js';
import { readChart } from '../../actors/deployer/chart-reader.js';
import { DeployerStore } from '../../actors/deployer/store.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';

async function get(s: Setup, what: 'chart' | 'values', body: Record<string, unknown>) {
  const res = await fetch(`${s.d.url}/api/get/${what}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ repoUrl: APP_URL, jobId: '4711', jobToken: s.jobToken, ...body }) });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('content-type'), bytes, json: res.headers.get('content-type') === 'application/json' ? JSON.parse(bytes.toString('utf8')) : null };
}

/** Someone else commits `files` at the remote's main. */
function pushFiles(dir: string, url: string, files: Record<string, string>): void {
  const clone = join(dir, `c${Date.now()}`);
  gitSync(dir, ['clone', '-q', url, clone]);
  for (const [p, text] of Object.entries(files)) {
    execFileSync('mkdir', ['-p', join(clone, p, '..')]);
    writeFileSync(join(clone, p), text);
  }
  gitSync(clone, ['add', '-A']);
  gitSync(clone, ['commit', '-q', '-m', 'by hand']);
  gitSync(clone, ['push', '-q', 'origin', 'HEAD:main']);
}

test('chart and values round-trip: the deployed chart comes back under its name with the version set; the values as JSON', async (t) => {
  const remote = bareRemote(t);
  const s = await setup(t, remote.url);
  const uploaded = chart(t, { 'mychart/values.yaml': 'replicas: 2\nimage:\n  tag: "1.4"\nenabled: yes\n', 'mychart/templates/_helpers.tpl': '{{/* x */}}\n' });
  await s.wait((await s.deploy({ chart: uploaded, environment: 'production' })).body.deploymentId);
  const c = await get(s, 'chart', {});
  t.is(c.status, 200);
  t.is(c.type, 'application/gzip');
  const read = await readChart(c.bytes, { keepContents: true });
  if (!read.ok) return t.fail(read.error.message);
  t.is(read.value.topDir, 'mychart');
  const files = Object.fromEntries(read.value.entries.filter((e) => e.type === 'file').map((e) => [e.path, e.data?.toString('utf8')]));
  t.deepEqual(files, {
    'mychart/Chart.yaml': 'apiVersion: v2\nname: mychart\nversion: 1.4.0\n',
    'mychart/values.yaml': 'replicas: 2\nimage:\n  tag: "1.4"\nenabled: yes\n',
    'mychart/templates/_helpers.tpl': '{{/* x */}}\n',
    'mychart/templates/deploy.yaml': 'kind: Deployment\n',
  });
  const dir = workdir(t);
  writeFileSync(join(dir, 'back.tgz'), c.bytes);
  t.is(execFileSync('tar', ['-xzOf', join(dir, 'back.tgz'), 'mychart/Chart.yaml'], { encoding: 'utf8' }), 'apiVersion: v2\nname: mychart\nversion: 1.4.0\n');
  const v = await get(s, 'values', { environment: 'production' });
  t.is(v.status, 200);
  t.deepEqual(v.json, { replicas: 2, image: { tag: '1.4' }, enabled: true });
  // someone empties the values file: {}; makes it malformed: 400 BAD_YAML
  pushFiles(dir, remote.url, { 'clusters/production/shop/values.yaml': '' });
  t.deepEqual((await get(s, 'values', {})).json, {});
  pushFiles(dir, remote.url, { 'clusters/production/shop/values.yaml': 'a: [1\n' });
  const bad = await get(s, 'values', {});
  t.is(bad.status, 400);
  t.is(bad.json.error.code, 'BAD_YAML');
});

test('chart and values error table: missing fields 400, bad tokens 401, unknown repository and environment 404, several environments 400, nothing there 404', async (t) => {
  const remote = bareRemote(t);
  const s = await setup(t, remote.url, { envs: ['production', 'staging'] });
  for (const what of ['chart', 'values'] as const) {
    for (const field of ['repoUrl', 'jobId', 'jobToken']) {
      const a = await get(s, what, { environment: 'production', [field]: undefined });
      t.deepEqual([a.status, a.json.error.code, a.json.error.message], [400, 'MISSING_FIELD', `${field} is required`], `${what} without ${field}`);
    }
    t.deepEqual((await get(s, what, { environment: 'production', jobToken: 'hjt1.x.y' })).json.error.code, 'JOB_TOKEN_INVALID');
    t.is((await get(s, what, { environment: 'production', jobId: '1' })).status, 401);
    const other = (await s.d.call('POST', '/api/job-tokens', { repoUrl: 'https://gitlab.example.com/team/blog', jobId: '4711', ref: 'main', sha: SHA })).body.jobToken;
    const unknown = await get(s, what, { repoUrl: 'https://gitlab.example.com/team/blog', jobToken: other });
    t.deepEqual([unknown.status, unknown.json.error.code], [404, 'APP_NOT_FOUND']);
    const several = await get(s, what, {});
    t.deepEqual([several.status, several.json.error.code], [400, 'AMBIGUOUS_ENVIRONMENT']);
    const none = await get(s, what, { environment: 'preview' });
    t.deepEqual([none.status, none.json.error.code], [404, 'ENVIRONMENT_NOT_FOUND']);
    const nothing = await get(s, what, { environment: 'staging' });
    t.deepEqual([nothing.status, nothing.json.error.code], [404, what === 'chart' ? 'CHART_NOT_FOUND' : 'VALUES_NOT_FOUND']);
  }
  // a chart without values.yaml: the chart is there, the values are not
  const dir = workdir(t);
  pushFiles(dir, remote.url, { 'clusters/staging/shop/Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 1.0.0\n' });
  t.is((await get(s, 'chart', { environment: 'staging' })).status, 200);
  t.deepEqual((await get(s, 'values', { environment: 'staging' })).json.error.code, 'VALUES_NOT_FOUND');
  t.is((await get(s, 'values', { environment: 'staging', extra: 1 })).status, 400);
});

test('a stored iacPath outside the repository (an older store) is refused with 400 IAC_PATH_OUTSIDE by chart, values and deploy; nothing is written', async (t) => {
  const remote = bareRemote(t);
  const s = await setup(t, remote.url);
  const before = remote.head();
  const store = new DeployerStore(openEnvironment(s.d.stateDir));
  const env = store.environments.get(1);
  if (!env) return t.fail('no environment 1');
  await store.environments.put(1, { ...env, iacPath: '../../outside' });
  for (const what of ['chart', 'values'] as const) {
    const a = await get(s, what, {});
    t.deepEqual([a.status, a.json.error.code], [400, 'IAC_PATH_OUTSIDE'], what);
  }
  const d = await s.deploy({ chart: chart(t) });
  t.deepEqual([d.status, d.body.error.code], [400, 'IAC_PATH_OUTSIDE']);
  t.is(remote.head(), before);
  t.deepEqual((await s.d.call('GET', '/api/deployments')).body, []);
});
