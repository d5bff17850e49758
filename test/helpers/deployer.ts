/**
 * A deployment service for tests: the deployer actor in a fresh actor system on a temporary
 * state directory, on an ephemeral loopback port, with a seeded admin token; plus a small JSON
 * client. Everything is shut down and removed at teardown.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ActorSystem } from '../../runtime/system.js';
import { resolve } from '../../runtime/config/settings.js';
import { DEPLOYER_MODULE, deployerArgs, deployerSettings, type DeployerValues } from '../../actors/deployer/service.js';
import { DEPLOYER_ID, type DeployerProtocol } from '../../actors/deployer/messages.js';

export interface Answer {
  status: number;
  headers: Headers;
  /** the parsed JSON body (null when empty) */
  body: any;
}

export interface Deployer {
  system: ActorSystem;
  stateDir: string;
  url: string;
  adminToken: string;
  /** a JSON request; `token` null sends no Authorization */
  call(method: string, path: string, body?: unknown, token?: string | null): Promise<Answer>;
}

export const newAdminToken = () => `hdt_${randomBytes(32).toString('base64url')}`;

export async function startDeployer(t: ExecutionContext, values: Partial<DeployerValues> = {}, stateDir?: string): Promise<Deployer> {
  const dir = stateDir ?? mkdtempSync(join(tmpdir(), 'hostd-deployer-'));
  const system = await ActorSystem.start({ stateDir: dir, logLevel: process.env.TEST_LOG_LEVEL ?? 'silent', groupThreads: 1, poolThreads: 1 });
  t.teardown(async () => {
    await system.shutdown();
    if (!stateDir) rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 }); // a git of a push still finishing may write into it for a moment
  });
  const adminToken = values.adminToken ?? newAdminToken();
  const args = deployerArgs(dir, { ...resolve(deployerSettings, {}, {}), port: 0, adminToken, ...values });
  await system.start({ id: 'deployer.supervisor', children: [{ id: DEPLOYER_ID, module: DEPLOYER_MODULE, args }] });
  // the first request waits for the actor's start; on a loaded 2-core machine that can pass the 5 s default
  const { port } = await system.ref<DeployerProtocol>(DEPLOYER_ID).request({ type: 'info' }, { timeoutMs: 30_000 });
  const url = `http://127.0.0.1:${port}`;
  return {
    system,
    stateDir: dir,
    url,
    adminToken,
    async call(method, path, body, token = adminToken) {
      const headers: Record<string, string> = {};
      if (token !== null) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
    },
  };
}
