import test from 'ava';
import { execFileSync } from 'node:child_process';
import { attempt } from '../../protocols/deploy/errors.js';
import { commitMessage, deploymentIdOf, iacPath, placeChart } from '../../protocols/deploy/iac.js';
import { tempDir } from '../helpers/util.js';

const ID = '0193a4b2-7c1d-7e2f-8a3b-4c5d6e7f8091';

test('an iacPath inside the repository is normalised', (t) => {
  t.is(iacPath('clusters/prod/shop'), 'clusters/prod/shop');
  t.is(iacPath('./clusters//prod/shop/'), 'clusters/prod/shop');
  t.is(iacPath('apps/.github-like/x'), 'apps/.github-like/x');
  t.is(iacPath('apps/..hidden'), 'apps/..hidden');
  t.is(iacPath('gitops'), 'gitops');
});

test('an iacPath that is absolute, climbs out, touches .git or is the root is refused naming the field', (t) => {
  const cases: [unknown, string][] = [
    ['/etc/shop', 'must be relative to the repository root, not absolute'],
    ['C:/shop', 'must be relative to the repository root, not absolute'],
    ['../outside', "must not contain '..': it has to resolve inside the repository"],
    ['a/../../outside', "must not contain '..': it has to resolve inside the repository"],
    ['a/../b', "must not contain '..': it has to resolve inside the repository"],
    ['.git/hooks', "must not contain a '.git' component"],
    ['a/.GIT/b', "must not contain a '.git' component"],
    ['.', 'must name a directory below the repository root, not the root itself'],
    ['./', 'must name a directory below the repository root, not the root itself'],
    ['a\\b', "must use '/' and contain no backslash"],
    ['a\nb', 'must not contain control characters'],
    ['', 'must not be empty'],
    [7, 'must be a string'],
  ];
  for (const [v, why] of cases) {
    const r = attempt(() => iacPath(v));
    t.false(r.ok, String(v));
    if (!r.ok) {
      t.is(r.error.status, 400);
      t.is(r.error.code, 'INVALID_FIELD');
      t.true(r.error.message.startsWith(`iacPath ${why}; got `), r.error.message);
    }
  }
  const stored = attempt(() => iacPath('../x', 'iacPath', 'IAC_PATH_OUTSIDE'));
  t.true(!stored.ok && stored.error.code === 'IAC_PATH_OUTSIDE' && stored.error.status === 400, 'read back from an older store: the chart/values 400');
});

const FACTS = { app: 'shop', environment: 'production', version: 'v1.4.0', jobId: '4711', sourceSha: 'a'.repeat(40), iacPath: 'clusters/prod/shop', deploymentId: ID };

test('the commit message names app, environment, version and job, with trailers ending in Deployment-Id', (t) => {
  t.is(
    commitMessage(FACTS),
    `deploy shop/production v1.4.0\n\nApp: shop\nEnvironment: production\nVersion: v1.4.0\nJob: 4711\nSource-Commit: ${'a'.repeat(40)}\nIaC-Path: clusters/prod/shop\nDeployment-Id: ${ID}\n`,
  );
  const { sourceSha: _, ...noSha } = FACTS;
  t.false(commitMessage(noSha).includes('Source-Commit'));
  t.throws(() => commitMessage({ ...FACTS, app: 'a\nb' }), { instanceOf: TypeError });
});

test('git itself reads our trailers, and the parser finds the Deployment-Id of a message git stored', (t) => {
  const dir = tempDir(t);
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { encoding: 'utf8' });
  git('init', '-q');
  git('commit', '-q', '--allow-empty', '-m', commitMessage(FACTS));
  const stored = git('log', '-1', '--format=%B');
  t.is(deploymentIdOf(stored), ID);
  t.is(git('log', '-1', '--format=%(trailers:key=Deployment-Id,valueonly)').trim(), ID);
});

test('deploymentIdOf: only in the trailer block, any key case, a UUID value, the last one wins', (t) => {
  t.is(deploymentIdOf(`deploy x\n\ndeployment-id: ${ID.toUpperCase()}\n`), ID);
  t.is(deploymentIdOf(`deploy x\n\nApp: x\nDeployment-Id:   ${ID}  \n\n\n`), ID);
  t.is(deploymentIdOf(`deploy x\r\n\r\nDeployment-Id: ${ID}\r\n`), ID);
  t.is(deploymentIdOf(`deploy x\n\nDeployment-Id: ${ID}\n\nSigned-off-by: someone <s@x>\n`), null, 'a paragraph above the trailers does not count');
  t.is(deploymentIdOf(`Deployment-Id: ${ID}`), null, 'a subject is not a trailer');
  t.is(deploymentIdOf('deploy x\n\nDeployment-Id: not-a-uuid\n'), null);
  t.is(deploymentIdOf('deploy x\n\nDeployment-Ids: ' + ID + '\n'), null);
  const other = '11111111-2222-4333-8444-555555555555';
  t.is(deploymentIdOf(`deploy x\n\nDeployment-Id: ${ID}\nDeployment-Id: ${other}\n`), other);
  t.is(deploymentIdOf(''), null);
  t.is(deploymentIdOf('a manual commit\n\nfixes things\n'), null);
});

test('a chart lands at the iacPath without its top-level directory', (t) => {
  const entries = [
    { path: 'mychart', type: 'directory' },
    { path: 'mychart/Chart.yaml', type: 'file' },
    { path: 'mychart/templates/a.yaml', type: 'file' },
  ];
  t.deepEqual(placeChart('clusters/prod/shop', 'mychart', entries).map((e) => e.repoPath), ['clusters/prod/shop', 'clusters/prod/shop/Chart.yaml', 'clusters/prod/shop/templates/a.yaml']);
  t.throws(() => placeChart('x', 'mychart', [{ path: 'mychartX/a' }]), { instanceOf: TypeError });
});
