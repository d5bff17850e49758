/**
 * kill -9 of the real daemon (`hostd daemon --services deployer`) at each stage of a deployment:
 * - after the upload was accepted and recorded, before the push began (the remote's git daemon
 *   is stopped, so the service's first fetch hangs): the restarted service pushes once;
 * - while its push waits in the IaC remote's pre-receive hook: when that push then lands (after
 *   the push, before it is recorded) the restarted service finds its own `Deployment-Id:` commit
 *   and does not commit again; when it dies too (before the push) the restarted service pushes once.
 * Every time the deployment ends in a terminal state with a clear message — never stuck, never a
 * duplicate.
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareRemote, gitDaemonProcess, type Remote } from '../helpers/git-remote.js';
import { APP_URL, chart, SHA, workdir } from '../helpers/deploy-setup.js';
import { newAdminToken } from '../helpers/deployer.js';
import { daemon, freePort } from '../helpers/deployer-daemon.js';

/** A daemon on a fresh state directory with one environment on the IaC repository at `remoteUrl`, one deployment accepted, and how to read it. */
async function deployTo(t: ExecutionContext, remoteUrl: string) {
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-deployer-kill-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const port = await freePort();
  const token = newAdminToken();
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) });
    return (await r.json()) as any;
  };
  const first = await daemon(t, stateDir, port, token);
  await api('POST', '/api/iac-repos', { name: 'infra', url: remoteUrl, branch: 'main' });
  await api('POST', '/api/clusters', { name: 'swarm-a', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock' });
  await api('POST', '/api/apps', { name: 'shop', repoUrl: APP_URL });
  await api('POST', '/api/apps/1/environments', { name: 'production', branch: 'main', iacRepoId: 1, iacPath: 'clusters/prod/shop', targets: [{ clusterId: 1, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web' }] });
  const { jobToken } = await api('POST', '/api/job-tokens', { repoUrl: APP_URL, jobId: '4711', ref: 'main', sha: SHA });
  const form = new FormData();
  for (const [k, v] of Object.entries({ repoUrl: APP_URL, jobId: '4711', jobToken, version: 'v1.4.0' })) form.append(k, v);
  form.append('chart', new Blob([chart(t)]), 'c.tgz');
  const accepted = await fetch(`http://127.0.0.1:${port}/api/deploy`, { method: 'POST', body: form });
  const { deploymentId } = (await accepted.json()) as { deploymentId: string };
  const finished = async () => {
    let d: any;
    for (let i = 0; i < 200; i++) {
      d = await api('GET', `/api/deployments/${deploymentId}`);
      if (d.status === 'failed' || d.status === 'deployed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return d;
  };
  return { stateDir, port, token, api, first, acceptedStatus: accepted.status, deploymentId, finished, restart: () => daemon(t, stateDir, port, token) };
}

/** deployTo a file:// remote whose pre-receive hook holds the push until `gate` exists. */
async function heldInHook(t: ExecutionContext) {
  const remote: Remote = bareRemote(t);
  const gate = join(workdir(t), 'go');
  const hookPid = join(workdir(t), 'hook.pid');
  remote.hook('pre-receive', `echo $$ > ${hookPid}\nwhile [ ! -e ${gate} ]; do sleep 0.05; done\nexit 0`);
  const h = await deployTo(t, remote.url);
  for (let i = 0; i < 200 && !existsSync(hookPid); i++) await new Promise((r) => setTimeout(r, 25));
  return { ...h, remote, gate, hookPid };
}

/** Processes whose working directory is in `dir` (the git commands of a service whose state it is). */
function processesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`).startsWith(dir + '/')) pids.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

// the test charts carry no image: the swarm reconciler refuses their values, and the target fails at once
const NO_MONITOR =
  '1 of 1 cluster target failed: swarm-a: the values cannot be applied: values.image must be a mapping {repository, tag} or an image reference string; got nothing';

test('kill -9 after the push landed, before it was recorded: the restarted service finds its own commit and finishes without a second one', async (t) => {
  t.timeout(90_000);
  const h = await heldInHook(t);
  const { remote, deploymentId } = h;
  h.first.kill('SIGKILL');
  await new Promise((r) => h.first.once('exit', r));
  // the orphaned git push completes: the commit lands, the dead service never recorded it
  writeFileSync(h.gate, '');
  for (let i = 0; i < 200 && remote.log().length < 2; i++) await new Promise((r) => setTimeout(r, 25));
  t.is(remote.log().length, 2, 'the push landed after the kill');
  await h.restart();
  const d = await h.finished();
  t.is(d.status, 'failed');
  t.is(d.message, NO_MONITOR);
  const log = remote.log();
  t.is(log.length, 2, 'no second commit');
  t.true(log[0]?.message.includes(`Deployment-Id: ${deploymentId}`));
  // the event stream of the resumed deployment says the push was found, not repeated
  const events = await (await fetch(`http://127.0.0.1:${h.port}/api/deployments/${deploymentId}/events`, { headers: { 'last-event-id': '0' } })).text();
  t.regex(events, /"status":"pushed","message":"commit [0-9a-f]{12} of this deployment is already on infra main \(pushed before a restart\)"/);
  t.is((events.match(/"status":"pushing"/g) ?? []).length, 1);
});

test('kill -9 before the push landed (the push dies with the service): the restarted service pushes it once', async (t) => {
  t.timeout(90_000);
  const h = await heldInHook(t);
  const before = h.remote.head();
  h.first.kill('SIGKILL');
  await new Promise((r) => h.first.once('exit', r));
  // the push the dead service started dies too (its hook is killed: the remote refuses it)
  process.kill(Number(readFileSync(h.hookPid, 'utf8').trim()), 'SIGKILL');
  await new Promise((r) => setTimeout(r, 300));
  t.is(h.remote.head(), before, 'nothing landed');
  writeFileSync(h.gate, '');
  await h.restart();
  const d = await h.finished();
  t.is(d.message, NO_MONITOR);
  const log = h.remote.log();
  t.is(log.length, 2, 'exactly one deploy commit');
  t.true(log[0]?.message.includes(`Deployment-Id: ${h.deploymentId}`));
  t.is(h.remote.show('clusters/prod/shop/Chart.yaml'), 'apiVersion: v2\nname: mychart\nversion: 1.4.0\n');
});

test('kill -9 after the upload was accepted, before the push began: the restarted service pushes it once', async (t) => {
  t.timeout(90_000);
  const remote = bareRemote(t);
  const gitd = await gitDaemonProcess(t, remote);
  const before = remote.head();
  // Every fetch from the remote now hangs: the deployment is accepted and recorded, and waits for its first fetch.
  gitd.proc.kill('SIGSTOP');
  const h = await deployTo(t, gitd.url);
  t.is(h.acceptedStatus, 202);
  const recorded = await h.api('GET', `/api/deployments/${h.deploymentId}`);
  t.true(['pending', 'validating', 'pushing'].includes(recorded.status), `recorded, not pushed yet: ${recorded.status}`);
  h.first.kill('SIGKILL');
  await new Promise((r) => h.first.once('exit', r));
  // The git the dead service started (hung on the stopped remote) dies with it, as a service
  // manager kills the whole unit; a git killed mid-way is what the restart must cope with.
  const orphans = processesUnder(h.stateDir);
  for (const pid of orphans) process.kill(pid, 'SIGKILL');
  t.is(remote.head(), before, 'nothing was pushed before the kill');
  gitd.proc.kill('SIGCONT');
  await h.restart();
  const d = await h.finished();
  t.is(d.status, 'failed');
  t.is(d.message, NO_MONITOR);
  const log = remote.log();
  t.is(log.length, 2, 'exactly one deploy commit');
  t.true(log[0]?.message.includes(`Deployment-Id: ${h.deploymentId}`));
  t.is(remote.show('clusters/prod/shop/Chart.yaml'), 'apiVersion: v2\nname: mychart\nversion: 1.4.0\n');
});
