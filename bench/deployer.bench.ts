/**
 * Deployment service benchmark: deploy latency per stage and SSE streams held on one deployment.
 *
 *   npx tsc -p . && node dist/bench/deployer.bench.js [--deploys 20] [--streams 10000] [--heartbeat-ms 2000] [--beats 3]
 *
 * It runs the real daemon (`hostd daemon --services deployer`, a process of its own, so its
 * memory is its own) against a real IaC remote (a bare repository over file://) and measures:
 * - accept: POST /api/deploy until its 202 (upload, checks, chart read, record);
 * - push: the 202 until the deployment's `pushed` status (clone, commit, push), read from the store;
 * - streams: N SSE clients (raw sockets, one GET each) on one deployment held in `pushing` by the
 *   remote's pre-receive hook; the daemon's RSS before and after (memory per stream), and the
 *   heartbeats' lateness against the interval (each stream's beats after its first one).
 * stdout: a table and, last, one JSON line {"bench":"deployer",...}.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { summarize } from './lib/stats.js';

const { values: o } = parseArgs({ options: { deploys: { type: 'string', default: '20' }, streams: { type: 'string', default: '10000' }, 'heartbeat-ms': { type: 'string', default: '2000' }, beats: { type: 'string', default: '3' } } });
const DEPLOYS = Number(o.deploys);
const STREAMS = Number(o.streams);
const HEARTBEAT_MS = Number(o['heartbeat-ms']);
const BEATS = Number(o.beats);
const MAIN = fileURLToPath(new URL('../workers/main.js', import.meta.url));
const APP = 'https://gitlab.example.com/team/shop';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => process.stderr.write(`${s}\n`);

const dir = mkdtempSync(join(tmpdir(), 'hostd-deployer-bench-'));
const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
const bare = join(dir, 'infra.git');
execFileSync('git', ['init', '-q', '--bare', '-b', 'main', bare], { env });
const gate = join(dir, 'go');
writeFileSync(gate, '');
writeFileSync(join(bare, 'hooks', 'pre-receive'), `#!/bin/sh\nwhile [ ! -e ${gate} ]; do sleep 0.05; done\nexit 0\n`);
chmodSync(join(bare, 'hooks', 'pre-receive'), 0o755);
mkdirSync(join(dir, 'chart', 'shop', 'templates'), { recursive: true });
writeFileSync(join(dir, 'chart', 'shop', 'Chart.yaml'), 'apiVersion: v2\nname: shop\nversion: 0.1.0\n');
writeFileSync(join(dir, 'chart', 'shop', 'values.yaml'), 'replicas: 2\n');
writeFileSync(join(dir, 'chart', 'shop', 'templates', 'deploy.yaml'), 'kind: Deployment\n');
execFileSync('tar', ['-czf', join(dir, 'shop.tgz'), '-C', join(dir, 'chart'), 'shop']);
const chart = readFileSync(join(dir, 'shop.tgz'));

const port = await new Promise<number>((r) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const p = (s.address() as { port: number }).port;
    s.close(() => r(p));
  });
});
const token = `hdt_${randomBytes(32).toString('base64url')}`;
const daemon = spawn(process.execPath, [MAIN, 'daemon', '--services', 'deployer', '--state-dir', join(dir, 'state'), '--metrics-port', '0', '--deployer-port', String(port), '--deployer-sse-heartbeat-ms', String(HEARTBEAT_MS), '--log-level', 'warn'], { env: { ...process.env, DEPLOYER_ADMIN_TOKEN: token }, stdio: 'ignore' });
const cleanup = () => {
  if (daemon.exitCode === null) daemon.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanup);
const base = `http://127.0.0.1:${port}`;
const api = async (method: string, path: string, body?: unknown) => (await (await fetch(base + path, { method, headers: { authorization: `Bearer ${token}` }, body: body === undefined ? undefined : JSON.stringify(body) })).json()) as any;
for (let i = 0; i < 200; i++) {
  if (await fetch(`${base}/api/session/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.ok, () => false)) break;
  await sleep(50);
}
await api('POST', '/api/iac-repos', { name: 'infra', url: `file://${bare}`, branch: 'main' });
await api('POST', '/api/clusters', { name: 'swarm-a', kind: 'swarm', endpoint: 'unix:///var/run/docker.sock' });
await api('POST', '/api/apps', { name: 'shop', repoUrl: APP });
await api('POST', '/api/apps/1/environments', { name: 'production', branch: 'main', iacRepoId: 1, iacPath: 'clusters/prod/shop', targets: [{ clusterId: 1, deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web' }] });
const { jobToken } = await api('POST', '/api/job-tokens', { repoUrl: APP, jobId: '1', ref: 'main', sha: 'a'.repeat(40) });

async function deploy(version: string): Promise<{ id: string; acceptMs: number; t0: number }> {
  const form = new FormData();
  for (const [k, v] of Object.entries({ repoUrl: APP, jobId: '1', jobToken, version })) form.append(k, v);
  form.append('chart', new Blob([chart]), 'shop.tgz');
  const t0 = performance.now();
  const res = await fetch(`${base}/api/deploy`, { method: 'POST', body: form });
  const body = (await res.json()) as { deploymentId: string };
  return { id: body.deploymentId, acceptMs: performance.now() - t0, t0 };
}

// ---- deploy latency per stage
const accept: number[] = [];
const push: number[] = [];
for (let i = 0; i < DEPLOYS; i++) {
  const d = await deploy(`v1.0.${i}`);
  accept.push(d.acceptMs);
  for (;;) {
    const s = await api('GET', `/api/deployments/${d.id}`);
    if (s.status !== 'pending' && s.status !== 'validating' && s.status !== 'pushing') break;
    await sleep(5);
  }
  push.push(performance.now() - d.t0 - d.acceptMs);
}

// ---- SSE streams on one held deployment
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${daemon.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
rmSync(gate);
const held = await deploy('v2.0.0');
await sleep(500);
const rssBefore = rss();
const beatsAt: number[][] = [];
const sockets: Socket[] = [];
let opened = 0;
for (let i = 0; i < STREAMS; i++) {
  const at: number[] = [];
  beatsAt.push(at);
  const s = connect(port, '127.0.0.1', () => {
    s.write(`GET /api/deployments/${held.id}/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    opened++;
  });
  s.setEncoding('utf8');
  s.on('data', (chunk: string) => {
    if (chunk.includes('event: heartbeat')) at.push(performance.now());
  });
  s.on('error', () => undefined);
  sockets.push(s);
  if (i % 500 === 499) await sleep(20);
}
while (opened < STREAMS) await sleep(50);
log(`${STREAMS} streams open`);
await sleep(HEARTBEAT_MS * (BEATS + 1) + 500);
const rssAfter = rss();
const lateness: number[] = [];
let withBeats = 0;
for (const at of beatsAt) {
  if (at.length >= 2) withBeats++;
  for (let k = 1; k < at.length; k++) lateness.push(Math.abs(at[k]! - at[k - 1]! - HEARTBEAT_MS));
}
for (const s of sockets) s.destroy();
writeFileSync(gate, '');

const a = summarize(accept);
const p = summarize(push);
const l = summarize(lateness);
const perStream = (rssAfter - rssBefore) / STREAMS;
const f = (n: number) => n.toFixed(1);
process.stdout.write(`deployer bench: ${DEPLOYS} deploys (file:// remote), ${STREAMS} SSE streams, heartbeat ${HEARTBEAT_MS} ms\n`);
process.stdout.write(`stage    p50 ms  p99 ms  max ms\n`);
process.stdout.write(`accept   ${f(a.p50).padStart(6)}  ${f(a.p99).padStart(6)}  ${f(a.max).padStart(6)}\n`);
process.stdout.write(`push     ${f(p.p50).padStart(6)}  ${f(p.p99).padStart(6)}  ${f(p.max).padStart(6)}\n`);
process.stdout.write(`streams: ${withBeats}/${STREAMS} got >= 2 heartbeats; |interval - ${HEARTBEAT_MS}| p50 ${f(l.p50)} ms, p99 ${f(l.p99)} ms, max ${f(l.max)} ms; daemon RSS +${f((rssAfter - rssBefore) / 1048576)} MiB = ${f(perStream / 1024)} KiB per stream\n`);
process.stdout.write(`${JSON.stringify({ bench: 'deployer', deploys: DEPLOYS, acceptMs: a, pushMs: p, streams: STREAMS, streamsWithBeats: withBeats, heartbeatMs: HEARTBEAT_MS, heartbeatErrorMs: l, rssPerStreamBytes: Math.round(perStream) })}\n`);
cleanup();
process.exit(0);
