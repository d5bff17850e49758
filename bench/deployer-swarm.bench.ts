/**
 * Deployment service on a real swarm: deploy-to-deployed latency of a one-replica service, split
 * by stage, and the dockerd calls the monitors make per monitored target per second.
 *
 *   npm run build && node dist/bench/deployer-swarm.bench.js [--deploys 5] [--poll-ms 1000] [--stability-ms 5000]
 *
 * It runs the real daemon (`hostd daemon --services deployer`) with the given monitor settings
 * (the defaults are the service's) against a bare IaC repository over file:// and the local
 * dockerd swarm (test images of test/helpers/swarm.ts), and deploys the tags v1 and v2 in turn to
 * one service of one replica. Per deploy, from the event stream and the bench's own view of dockerd
 * (polled every 20 ms; those calls are not the daemon's):
 * - accept: POST /api/deploy until its 202;
 * - push: the 202 until the `pushed` status (clone, commit, push);
 * - apply: `pushed` until the service carries the deployment's revision (the reconciler's kick);
 * - converge: until the new task is running (swarm stops the old task and starts the new one);
 * - verify: until `deployed` (the stability window plus the poll interval);
 * - total: POST until `deployed`.
 * dockerd calls: deployer_docker_calls_total from the daemon's /metrics before and after, over the
 * sum of the targets' monitoring time. stdout: a table and, last, one JSON line.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { summarize } from './lib/stats.js';
import { ENDPOINT, ensureSwarm, IMAGE, inspectService, removeStack, docker } from '../test/helpers/swarm.js';
import { daemon, freePort } from '../test/helpers/deployer-daemon.js';

const { values: o } = parseArgs({ options: { deploys: { type: 'string', default: '5' }, 'poll-ms': { type: 'string', default: '1000' }, 'stability-ms': { type: 'string', default: '5000' } } });
const DEPLOYS = Number(o.deploys);
const POLL_MS = Number(o['poll-ms']);
const STABILITY_MS = Number(o['stability-ms']);
const APP = 'https://gitlab.example.com/team/shop';
const NS = `bench${randomBytes(3).toString('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await ensureSwarm();
const dir = mkdtempSync(join(tmpdir(), 'hostd-deployer-swarm-bench-'));
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const bare = join(dir, 'infra.git');
execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare], { env });
function chart(tag: string): Buffer {
  const root = join(dir, `chart-${tag}`, 'shop');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'Chart.yaml'), 'apiVersion: v2\nname: shop\nversion: 0.1.0\n');
  writeFileSync(join(root, 'values.yaml'), `image: {repository: ${IMAGE}, tag: ${tag}}\nreplicaCount: 1\nswarm:\n  stopGracePeriod: 1s\n  updateConfig: {parallelism: 1, delay: 0s, monitor: 1s, failureAction: pause}\n`);
  execFileSync('tar', ['-czf', join(dir, `${tag}.tgz`), '-C', join(dir, `chart-${tag}`), 'shop']);
  return readFileSync(join(dir, `${tag}.tgz`));
}
const charts = { v1: chart('v1'), v2: chart('v2') };

const port = await freePort();
const metricsPort = await freePort();
const token = `hdt_${randomBytes(32).toString('base64url')}`;
const proc = await daemon(null, join(dir, 'state'), port, token, { DEPLOYER_MONITOR_POLL_MS: String(POLL_MS), DEPLOYER_STABILITY_MS: String(STABILITY_MS) }, metricsPort);
let cleaned = false;
const cleanup = async () => {
  if (cleaned) return;
  cleaned = true;
  if (proc.exitCode === null) proc.kill('SIGKILL');
  await removeStack(NS);
  rmSync(dir, { recursive: true, force: true });
};
const base = `http://127.0.0.1:${port}`;
const api = async (method: string, path: string, body?: unknown) => (await (await fetch(base + path, { method, headers: { authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) })).json()) as any;
await api('POST', '/api/iac-repos', { name: 'infra', url: `file://${bare}`, branch: 'main' });
await api('POST', '/api/clusters', { name: 'swarm-local', kind: 'swarm', endpoint: ENDPOINT });
await api('POST', '/api/apps', { name: 'shop', repoUrl: APP });
await api('POST', '/api/apps/1/environments', { name: 'production', branch: 'main', iacRepoId: 1, iacPath: 'clusters/prod/shop', targets: [{ clusterId: 1, deployType: 'swarm-service', deployNamespace: NS, deployName: 'web' }] });
const { jobToken } = await api('POST', '/api/job-tokens', { repoUrl: APP, jobId: '1', ref: 'main', sha: 'a'.repeat(40) });

/** deployer_docker_calls_total by op, from the daemon's /metrics. */
async function dockerCalls(): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^deployer_docker_calls_total\{op="(\w+)"\} (\d+)/gm)) out[m[1] as string] = (out[m[1] as string] ?? 0) + Number(m[2]);
  return out;
}

interface Times {
  accept: number;
  push: number;
  apply: number;
  converge: number;
  verify: number;
  total: number;
  monitoringMs: number;
}

async function deployOnce(tag: 'v1' | 'v2', version: string): Promise<Times> {
  const form = new FormData();
  for (const [k, v] of Object.entries({ repoUrl: APP, jobId: '1', jobToken, version })) form.append(k, v);
  form.append('chart', new Blob([charts[tag]]), 'shop.tgz');
  const t0 = performance.now();
  const { deploymentId } = (await (await fetch(`${base}/api/deploy`, { method: 'POST', body: form })).json()) as { deploymentId: string };
  const t1 = performance.now();
  const at: Record<string, number> = {};
  let revision = '';
  let outcome = '';
  const stream = (async () => {
    const res = await fetch(`${base}/api/deployments/${deploymentId}/events`);
    const dec = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      buf += dec.decode(chunk, { stream: true });
      for (const m of buf.matchAll(/event: status\ndata: (\{.*\})\n/g)) {
        const data = JSON.parse(m[1] as string) as { status: string; message: string };
        at[data.status] ??= performance.now();
        if (data.status === 'pushed') revision = /commit ([0-9a-f]{12})/.exec(data.message)?.[1] ?? revision;
        if (data.status === 'deployed' || data.status === 'failed') outcome = `${data.status}: ${data.message}`;
      }
    }
  })();
  // the bench's own view of dockerd: when the service carries the revision, when the new task runs
  let applied = 0;
  let running = 0;
  while (!outcome) {
    const svc = revision === '' ? null : await inspectService(`${NS}_web`);
    const label: string | undefined = svc?.Spec.Labels?.['hostd.deploy/revision'];
    if (applied === 0 && label !== undefined && label.startsWith(revision)) applied = performance.now();
    if (applied !== 0 && running === 0) {
      const tasks = (await docker.listTasks({ filters: { service: [svc.ID], 'desired-state': ['running'] } })) as any[];
      if (tasks.some((x) => x.Spec.ContainerSpec.Image === `${IMAGE}:${tag}` && x.Status.State === 'running')) running = performance.now();
    }
    await sleep(20);
  }
  await stream;
  if (!outcome.startsWith('deployed')) throw new Error(`deploy ${version} ${outcome}`);
  const pushed = at.pushed as number;
  const deployed = at.deployed as number;
  return { accept: t1 - t0, push: pushed - t1, apply: applied - pushed, converge: running - applied, verify: deployed - running, total: deployed - t0, monitoringMs: deployed - (at.monitoring as number) };
}

try {
  const before = await dockerCalls();
  const runs: Times[] = [];
  for (let i = 0; i < DEPLOYS; i++) {
    runs.push(await deployOnce(i % 2 === 0 ? 'v1' : 'v2', `v1.0.${i}`));
    process.stderr.write(`deploy ${i + 1}/${DEPLOYS}: ${runs.at(-1)?.total.toFixed(0)} ms\n`);
  }
  const after = await dockerCalls();
  const monitoredSecs = runs.reduce((s, r) => s + r.monitoringMs, 0) / 1000;
  const calls: Record<string, number> = {};
  for (const op of new Set([...Object.keys(before), ...Object.keys(after)])) calls[op] = (after[op] ?? 0) - (before[op] ?? 0);
  const totalCalls = Object.values(calls).reduce((s, n) => s + n, 0);
  const stages = ['accept', 'push', 'apply', 'converge', 'verify', 'total'] as const;
  const summary = Object.fromEntries(stages.map((s) => [s, summarize(runs.map((r) => r[s]))]));
  const f = (n: number) => n.toFixed(1);
  process.stdout.write(`deployer swarm bench: ${DEPLOYS} deploys of a one-replica service (v1/v2 in turn), poll ${POLL_MS} ms, stability ${STABILITY_MS} ms, 2-core VM\n`);
  process.stdout.write(`stage      p50 ms   p99 ms   max ms\n`);
  for (const s of stages) process.stdout.write(`${s.padEnd(9)} ${f(summary[s]!.p50).padStart(7)}  ${f(summary[s]!.p99).padStart(7)}  ${f(summary[s]!.max).padStart(7)}\n`);
  process.stdout.write(`dockerd calls: ${totalCalls} over ${f(monitoredSecs)} target-seconds of monitoring = ${(totalCalls / monitoredSecs).toFixed(2)} per target per second (${Object.entries(calls).map(([k, v]) => `${k} ${v}`).join(', ')})\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'deployer-swarm', deploys: DEPLOYS, pollMs: POLL_MS, stabilityMs: STABILITY_MS, stagesMs: summary, dockerCalls: calls, monitoredTargetSecs: monitoredSecs, dockerCallsPerTargetSec: totalCalls / monitoredSecs })}\n`);
} finally {
  await cleanup();
}
process.exit(0);
