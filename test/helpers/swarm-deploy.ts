/**
 * A deployment service wired to the real swarm (test/helpers/swarm.ts) for the swarm-* tests: a
 * bare IaC repository, a swarm cluster on the local dockerd, the app "shop" with one environment
 * whose targets are services of a fresh stack namespace, a local job token, and clients that
 * deploy a chart with given values and read a deployment's event stream to its end. The
 * deployer runs with short intervals (poll 200 ms, stability 1 s, reconcile 1 s).
 */
import type { ExecutionContext } from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startDeployer, type Deployer } from './deployer.js';
import { bareRemote, type Remote } from './git-remote.js';
import { takeFrames, type SseFrame } from './sse-frames.js';
import { APP_URL, SHA } from './deploy-setup.js';
import { CHART_YAML, tarGz, writeTree } from '../deployer/tarballs.js';
import { ENDPOINT, ensureSwarm, IMAGE, swarmNamespace } from './swarm.js';
import type { DeployerValues } from '../../actors/deployer/service.js';

export const FAST: Partial<DeployerValues> = { monitorPollMs: 200, stabilityMs: 1000, reconcileMs: 1000, heartbeatMs: 60_000 };

export interface Frame extends SseFrame {
  /** when the test received it (ms since the epoch) */
  at: number;
}

export interface SwarmTargetSpec {
  name: string;
  monitorTimeoutSecs?: number;
  /** swarm-service (default) or swarm-stack (the stack is the test's namespace) */
  deployType?: 'swarm-service' | 'swarm-stack';
}

export interface SwarmSetup {
  d: Deployer;
  remote: Remote;
  ns: string;
  environmentId: number;
  clusterId: number;
  /** deploy a chart whose values.yaml is `values`; answers the deployment id */
  deploy(values: Record<string, unknown>, version?: string): Promise<string>;
  /** every frame of the deployment's stream until the server closes it */
  events(id: string, ms?: number): Promise<Frame[]>;
  get(id: string): Promise<any>;
}

/** Values for the test image `tag` (fast updates: no delay, a 1 s monitor, a 1 s stop grace). */
export function values(tag: string, extra: { replicas?: number; failureAction?: 'pause' | 'rollback' | 'continue'; env?: Record<string, string> } = {}): Record<string, unknown> {
  return {
    image: { repository: IMAGE, tag },
    replicaCount: extra.replicas ?? 1,
    ...(extra.env ? { env: extra.env } : {}),
    swarm: {
      stopGracePeriod: '1s',
      restartPolicy: { condition: 'any', delay: '500ms' },
      updateConfig: { parallelism: 1, delay: '0s', monitor: '1s', failureAction: extra.failureAction ?? 'pause' },
      rollbackConfig: { parallelism: 1, delay: '0s', monitor: '1s' },
    },
  };
}

export function chartWith(t: ExecutionContext, vals: Record<string, unknown>): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-chart-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeTree(dir, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/values.yaml': stringify(vals), 'mychart/templates/service.yaml': 'kind: swarm-service\n' });
  return readFileSync(tarGz(dir, join(dir, 'c.tgz'), ['mychart']));
}

export async function readEvents(url: string, ms = 60_000): Promise<Frame[]> {
  const res = await fetch(url, { signal: AbortSignal.timeout(ms) });
  if (res.status !== 200 || !res.body) throw new Error(`event stream answered ${res.status}`);
  const frames: Frame[] = [];
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body) {
    const taken = takeFrames(buf + decoder.decode(chunk as Uint8Array, { stream: true }));
    buf = taken.rest;
    const at = Date.now();
    for (const f of taken.frames) frames.push({ ...f, at });
  }
  return frames;
}

export async function swarmSetup(t: ExecutionContext, targets: SwarmTargetSpec[], opts: { values?: Partial<DeployerValues>; appliedElsewhere?: boolean; stateDir?: string } = {}): Promise<SwarmSetup> {
  await ensureSwarm();
  const ns = swarmNamespace(t);
  const remote = bareRemote(t);
  const d = await startDeployer(t, { ...FAST, ...opts.values }, opts.stateDir);
  const ok = (r: { status: number; body: any }) => {
    if (r.status >= 300) throw new Error(JSON.stringify(r.body));
    return r.body;
  };
  const repo = ok(await d.call('POST', '/api/iac-repos', { name: 'infra', url: remote.url, branch: 'main' }));
  const cluster = ok(await d.call('POST', '/api/clusters', { name: 'swarm-local', kind: 'swarm', endpoint: ENDPOINT, appliedElsewhere: opts.appliedElsewhere ?? false }));
  const app = ok(await d.call('POST', '/api/apps', { name: 'shop', repoUrl: APP_URL }));
  const env = ok(
    await d.call('POST', `/api/apps/${app.id}/environments`, {
      name: 'production',
      branch: 'main',
      iacRepoId: repo.id,
      iacPath: 'clusters/prod/shop',
      targets: targets.map((x) => ({ clusterId: cluster.id, deployType: x.deployType ?? 'swarm-service', deployNamespace: ns, deployName: x.name, monitorTimeoutSecs: x.monitorTimeoutSecs ?? 60 })),
    }),
  );
  const jobToken = ok(await d.call('POST', '/api/job-tokens', { repoUrl: APP_URL, jobId: '4711', ref: 'main', sha: SHA })).jobToken as string;
  return {
    d,
    remote,
    ns,
    environmentId: env.id,
    clusterId: cluster.id,
    async deploy(vals, version = 'v1.0.0') {
      const form = new FormData();
      for (const [k, v] of Object.entries({ repoUrl: APP_URL, jobId: '4711', jobToken, version })) form.append(k, v);
      form.append('chart', new Blob([chartWith(t, vals)]), 'chart.tgz');
      const res = await fetch(`${d.url}/api/deploy`, { method: 'POST', body: form });
      const body = (await res.json()) as any;
      if (res.status !== 202) throw new Error(`deploy answered ${res.status}: ${JSON.stringify(body)}`);
      return body.deploymentId as string;
    },
    events: (id, ms) => readEvents(`${d.url}/api/deployments/${id}/events`, ms),
    async get(id) {
      return (await d.call('GET', `/api/deployments/${id}`)).body;
    },
  };
}
