/**
 * Restarts of the real daemon (`hostd daemon --services deployer`) while a deployment is being
 * monitored on the real swarm. The deadline of each target is an absolute time in the LMDB
 * checkpoint (read here from the state directory): a restart resumes the monitor with it and never
 * extends it, never pushes a second commit, and judges from dockerd's records alone — so a rollout
 * that finished while the daemon was down is deployed at the first poll, and one whose deadline
 * passed while it was down fails soon after boot. SIGTERM does not wait for rollouts.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { bareRemote } from '../helpers/git-remote.js';
import { APP_URL, SHA } from '../helpers/deploy-setup.js';
import { newAdminToken } from '../helpers/deployer.js';
import { daemon, exited, freePort } from '../helpers/deployer-daemon.js';
import { ENDPOINT, ensureSwarm, inspectService, SLOW_SECS, swarmNamespace } from '../helpers/swarm.js';
import { chartWith, readEvents, values } from '../helpers/swarm-deploy.js';

const FAST_ENV = { DEPLOYER_MONITOR_POLL_MS: '200', DEPLOYER_STABILITY_MS: '1000', DEPLOYER_RECONCILE_MS: '1000' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The deployment's checkpoint as the daemon wrote it (read from another process's LMDB). */
function checkpoint(stateDir: string, id: string): any {
  const root = openEnvironment(stateDir, { readOnly: true });
  try {
    return root.openDB({ name: 'deployer.deployments' }).get(id);
  } finally {
    void root.close();
  }
}

async function deploying(t: ExecutionContext, tag: string, budgetSecs: number, env?: Record<string, string>) {
  t.timeout(120_000);
  await ensureSwarm();
  const ns = swarmNamespace(t);
  const remote = bareRemote(t);
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-deployer-swarm-kill-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 }));
  const port = await freePort();
  const token = newAdminToken();
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) }).catch((err: Error & { cause?: Error }) => {
      throw new Error(`${method} ${path}: ${err.message} (${err.cause?.message ?? 'no cause'})`);
    });
    return (await res.json()) as any;
  };
  const first = await daemon(t, stateDir, port, token, FAST_ENV);
  await api('POST', '/api/iac-repos', { name: 'infra', url: remote.url, branch: 'main' });
  await api('POST', '/api/clusters', { name: 'swarm-local', kind: 'swarm', endpoint: ENDPOINT });
  await api('POST', '/api/apps', { name: 'shop', repoUrl: APP_URL });
  await api('POST', '/api/apps/1/environments', { name: 'production', branch: 'main', iacRepoId: 1, iacPath: 'clusters/prod/shop', targets: [{ clusterId: 1, deployType: 'swarm-service', deployNamespace: ns, deployName: 'web', monitorTimeoutSecs: budgetSecs }] });
  const { jobToken } = await api('POST', '/api/job-tokens', { repoUrl: APP_URL, jobId: '4711', ref: 'main', sha: SHA });
  const form = new FormData();
  for (const [k, v] of Object.entries({ repoUrl: APP_URL, jobId: '4711', jobToken, version: 'v1.4.0' })) form.append(k, v);
  form.append('chart', new Blob([chartWith(t, values(tag, env ? { env } : {}))]), 'c.tgz');
  const { deploymentId } = (await (await fetch(`http://127.0.0.1:${port}/api/deploy`, { method: 'POST', body: form })).json()) as { deploymentId: string };
  const status = async () => (await api('GET', `/api/deployments/${deploymentId}`)).status as string;
  // monitoring, and the reconciler has applied the service: the rollout is under way
  for (let i = 0; i < 200 && ((await status()) !== 'monitoring' || (await inspectService(`${ns}_web`)) === null); i++) await sleep(50);
  const finished = async () => {
    for (let i = 0; i < 600; i++) {
      const d = await api('GET', `/api/deployments/${deploymentId}`);
      if (d.status === 'deployed' || d.status === 'failed') return d;
      await sleep(50);
    }
    throw new Error('the deployment did not finish');
  };
  const kill9 = async () => {
    first.kill('SIGKILL');
    await exited(first);
  };
  return { ns, remote, stateDir, port, deploymentId, first, status, finished, kill9, restart: () => daemon(t, stateDir, port, token, FAST_ENV), events: () => readEvents(`http://127.0.0.1:${port}/api/deployments/${deploymentId}/events`) };
}

test('kill -9 during monitoring, then restart: a reconnecting stream gets the monitoring snapshot, the monitor resumes and reaches deployed, with no second commit and the same deadline', async (t) => {
  // ready after 20 s: still rolling out when the restarted daemon is up, even on a loaded machine
  const h = await deploying(t, 'slow', 60, { READY_AFTER: '20' });
  t.is(await h.status(), 'monitoring');
  const before = checkpoint(h.stateDir, h.deploymentId);
  t.is(before.targets[0].status, 'monitoring');
  const commits = h.remote.log().length;
  await h.kill9();
  await h.restart();
  const frames = await h.events();
  t.deepEqual(frames.slice(0, 2).map((f) => (f.event === 'target' ? `target:${f.data.target.status}` : `${f.event}:${f.data.status}`)), ['target:monitoring', 'status:monitoring'], 'the snapshot first');
  t.deepEqual(frames.at(-1)?.data, { status: 'deployed', message: 'deployed on cluster swarm-local' });
  const after = checkpoint(h.stateDir, h.deploymentId);
  t.is(after.targets[0].deadlineAt, before.targets[0].deadlineAt, 'the deadline is the one pinned before the kill');
  t.is(after.targets[0].monitorStartedAt, before.targets[0].monitorStartedAt);
  t.true(after.targets[0].completedAt <= after.targets[0].deadlineAt);
  t.is(h.remote.log().length, commits, 'no second commit');
});

test('the rollout finished while the daemon was down: deployed at the first poll after boot', async (t) => {
  const h = await deploying(t, 'v1', 60);
  await h.kill9();
  // wait for swarm to finish the rollout (and its stability window) with nobody watching
  for (let i = 0; i < 200; i++) {
    const svc = await inspectService(`${h.ns}_web`);
    if (svc?.ServiceStatus?.RunningTasks === 1) break;
    await sleep(100);
  }
  await sleep(1500);
  await h.restart();
  const up = Date.now();
  const d = await h.finished();
  t.is(d.status, 'deployed', d.message);
  t.true(Date.now() - up < 2000, `deployed ${Date.now() - up} ms after the restarted daemon was up`);
});

test('the deadline passed while the daemon was down: failed (timed out) soon after boot', async (t) => {
  const h = await deploying(t, 'slow', 3);
  await h.kill9();
  const deadline = checkpoint(h.stateDir, h.deploymentId).targets[0].deadlineAt as number;
  await sleep(Math.max(0, deadline - Date.now()) + 500);
  await h.restart();
  const up = Date.now();
  const d = await h.finished();
  t.is(d.status, 'failed');
  // one look at boot says what the rollout was doing: still starting, or running but stable only after the deadline
  t.regex(d.message, /^1 of 1 cluster target failed: swarm-local: timed out in (converge|stability) after 3 s: [01] of 1 tasks of hostd-test\/app:slow running/);
  t.true(Date.now() - up < 2000, `failed ${Date.now() - up} ms after the restarted daemon was up`);
  t.is(checkpoint(h.stateDir, h.deploymentId).targets[0].deadlineAt, deadline);
});

test('SIGTERM does not wait for the rollout: the daemon stops at once with the deployment checkpointed in monitoring, and the next start finishes it', async (t) => {
  const h = await deploying(t, 'slow', 60);
  const stopping = Date.now();
  h.first.kill('SIGTERM');
  await exited(h.first);
  const took = Date.now() - stopping;
  t.true(took < SLOW_SECS * 1000, `stopped in ${took} ms, the rollout needs ${SLOW_SECS} s`);
  t.is(h.first.exitCode, 0);
  t.is(checkpoint(h.stateDir, h.deploymentId).status, 'monitoring');
  await h.restart();
  t.is((await h.finished()).status, 'deployed');
});
