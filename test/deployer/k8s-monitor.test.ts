/**
 * Kubernetes targets through the whole service. No Kubernetes cluster runs here (docs/deployer.md
 * "Kubernetes targets"), so the API server is a loopback stand-in serving only the two paths the
 * thin client reads, with objects shaped as the API server returns them; what is judged is
 * tested on its own in k8s-judge.test.ts. This checks the client's requests (paths, bearer token),
 * pick-up by the pushed revision and chart version, and one parent outcome over both target types.
 */
import test from 'ava';
import { createServer, type IncomingMessage } from 'node:http';
import { bareRemote } from '../helpers/git-remote.js';
import { startDeployer } from '../helpers/deployer.js';
import { APP_URL, chart, SHA } from '../helpers/deploy-setup.js';
import { FAST, readEvents } from '../helpers/swarm-deploy.js';

test('a k8s-deployment target is deployed once the Deployment carries the revision and is rolled out; a stalled HelmRelease fails its target; the parent names it', async (t) => {
  const remote = bareRemote(t);
  const seen: { path: string; auth: string | undefined }[] = [];
  let polls = 0;
  const stub = createServer((req: IncomingMessage, res) => {
    seen.push({ path: req.url ?? '', auth: req.headers.authorization });
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/apis/apps/v1/namespaces/shop/deployments/web') {
      polls++;
      if (polls === 1) return json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'deployments.apps "web" not found', reason: 'NotFound', code: 404 });
      const updated = polls < 4 ? 1 : 2;
      return json(200, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop', generation: 7 },
        spec: { replicas: 2, template: { metadata: { annotations: { 'hostd.deploy/revision': remote.head() } } } },
        status: { observedGeneration: 7, replicas: 2, updatedReplicas: updated, readyReplicas: updated, availableReplicas: updated, conditions: [{ type: 'Progressing', status: 'True', reason: polls < 4 ? 'ReplicaSetUpdated' : 'NewReplicaSetAvailable' }] },
      });
    }
    if (req.url === '/apis/helm.toolkit.fluxcd.io/v2/namespaces/shop/helmreleases/shop') {
      return json(200, {
        apiVersion: 'helm.toolkit.fluxcd.io/v2',
        kind: 'HelmRelease',
        metadata: { name: 'shop', namespace: 'shop', generation: 3 },
        status: { observedGeneration: 3, lastAttemptedRevision: '1.4.0', history: [{ chartVersion: '1.4.0', status: 'failed' }], conditions: [{ type: 'Stalled', status: 'True', reason: 'RetriesExceeded', message: 'Failed to upgrade after 1 attempt(s)' }, { type: 'Ready', status: 'False', reason: 'UpgradeFailed', message: 'Helm upgrade failed' }] },
      });
    }
    return json(404, { kind: 'Status', code: 404 });
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => stub.close(() => r())));
  const port = (stub.address() as { port: number }).port;
  const d = await startDeployer(t, FAST);
  await d.call('POST', '/api/iac-repos', { name: 'infra', url: remote.url, branch: 'main' });
  const cluster = (await d.call('POST', '/api/clusters', { name: 'k8s-b', kind: 'kubernetes', endpoint: `http://127.0.0.1:${port}`, credential: 'sa-token' })).body;
  await d.call('POST', '/api/apps', { name: 'shop', repoUrl: APP_URL });
  const env = await d.call('POST', '/api/apps/1/environments', {
    name: 'production',
    branch: 'main',
    iacRepoId: 1,
    iacPath: 'clusters/prod/shop',
    targets: [
      { clusterId: cluster.id, deployType: 'k8s-deployment', deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: 20 },
      { clusterId: cluster.id, deployType: 'flux-helmrelease', deployNamespace: 'shop', deployName: 'shop', monitorTimeoutSecs: 20 },
    ],
  });
  t.is(env.status, 201, JSON.stringify(env.body));
  const { jobToken } = (await d.call('POST', '/api/job-tokens', { repoUrl: APP_URL, jobId: '4711', ref: 'main', sha: SHA })).body;
  const form = new FormData();
  for (const [k, v] of Object.entries({ repoUrl: APP_URL, jobId: '4711', jobToken, version: 'v1.4.0' })) form.append(k, v);
  form.append('chart', new Blob([chart(t)]), 'c.tgz');
  const { deploymentId } = (await (await fetch(`${d.url}/api/deploy`, { method: 'POST', body: form })).json()) as { deploymentId: string };
  const frames = await readEvents(`${d.url}/api/deployments/${deploymentId}/events`, 30_000);
  const finals = frames.filter((f) => f.event === 'target' && f.data.target.status !== 'monitoring' && f.data.target.status !== 'pending').map((f) => f.data.target.message).sort();
  t.deepEqual(finals, ['deployment "web" successfully rolled out', 'helmrelease shop stalled (RetriesExceeded): Failed to upgrade after 1 attempt(s)']);
  t.deepEqual(frames.at(-1)?.data, { status: 'failed', message: '1 of 2 cluster targets failed: k8s-b: helmrelease shop stalled (RetriesExceeded): Failed to upgrade after 1 attempt(s)' });
  t.true(polls >= 4, 'the Deployment was polled until rolled out');
  t.true(seen.length > 0 && seen.every((s) => s.auth === 'Bearer sa-token'), 'every request carries the cluster credential as a bearer token');
});
