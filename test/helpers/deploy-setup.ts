/**
 * A deployment service set up for CI requests: an IaC repository at `url` (branch main), a swarm
 * cluster, the app "shop" and its environments (each with one target), a local job token for job
 * 4711 on main, and a client that posts the deploy form and waits for a deployment to finish.
 */
import type { ExecutionContext } from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDeployer, type Deployer } from './deployer.js';
import { CHART_YAML, tarGz, writeTree } from '../deployer/tarballs.js';
import type { DeployerValues } from '../../actors/deployer/service.js';

export const APP_URL = 'https://gitlab.example.com/team/shop.git';
export const SHA = '9fceb02d0ae598e95dc970b74767f19372d61af8';

export function workdir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-chart-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 }));
  return dir;
}

/** A real chart tarball made with tar: mychart/{Chart.yaml, values.yaml, templates/…}. */
export function chart(t: ExecutionContext, files: Record<string, string> = {}): Buffer {
  const dir = workdir(t);
  writeTree(dir, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/values.yaml': 'replicas: 2\n', 'mychart/templates/deploy.yaml': 'kind: Deployment\n', ...files });
  return readFileSync(tarGz(dir, join(dir, 'c.tgz'), ['mychart']));
}

export interface Setup {
  d: Deployer;
  jobToken: string;
  deploy(fields: Record<string, string | Buffer | null>): Promise<{ status: number; body: any }>;
  wait(id: string): Promise<any>;
}

export async function setup(t: ExecutionContext, url: string, opts: { values?: Partial<DeployerValues>; envs?: string[] } = {}): Promise<Setup> {
  const d = await startDeployer(t, opts.values);
  const repo = (await d.call('POST', '/api/iac-repos', { name: 'infra', url, branch: 'main' })).body;
  const cluster = (await d.call('POST', '/api/clusters', { name: 'swarm-a', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock' })).body;
  const app = (await d.call('POST', '/api/apps', { name: 'shop', repoUrl: APP_URL })).body;
  for (const name of opts.envs ?? ['production']) {
    const e = await d.call('POST', `/api/apps/${app.id}/environments`, { name, branch: 'main', iacRepoId: repo.id, iacPath: `clusters/${name}/shop`, targets: [{ clusterId: cluster.id, deployType: 'swarm-service', deployNamespace: 'shop', deployName: `web-${name}` }] });
    if (e.status !== 201) throw new Error(JSON.stringify(e.body));
  }
  const jobToken = (await d.call('POST', '/api/job-tokens', { repoUrl: APP_URL, jobId: '4711', ref: 'main', sha: SHA })).body.jobToken as string;
  return {
    d,
    jobToken,
    async deploy(fields) {
      const form = new FormData();
      const all: Record<string, string | Buffer | null> = { repoUrl: APP_URL, jobId: '4711', jobToken, version: 'v1.4.0', ...fields };
      for (const [k, v] of Object.entries(all)) {
        if (v === null) continue;
        if (typeof v === 'string') form.append(k, v);
        else form.append(k, new Blob([v]), 'chart.tgz');
      }
      const res = await fetch(`${d.url}/api/deploy`, { method: 'POST', body: form });
      return { status: res.status, body: await res.json() };
    },
    async wait(id) {
      for (let i = 0; i < 400; i++) {
        const r = await d.call('GET', `/api/deployments/${id}`);
        if (r.body.status === 'deployed' || r.body.status === 'failed') return r.body;
        await new Promise((res) => setTimeout(res, 50));
      }
      throw new Error(`deployment ${id} did not finish`);
    },
  };
}

