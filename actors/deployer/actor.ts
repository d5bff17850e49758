/**
 * The deployer actor: the deployment service's HTTP front (admin API, and the CI endpoints as they
 * land) over its records in LMDB (store.ts). Its state lives in the store, not in ctx.state: the
 * records are many and each change is its own transaction. `open` opens the store, seeds the
 * admin token of DEPLOYER_ADMIN_TOKEN (hashed), loads the job token key, starts the embedded swarm
 * reconciler, listens and resumes the deployments a restart interrupted (runner.ts). The instance's
 * signal stops the reconciler, the monitors and any git still running: a SIGTERM does not wait for
 * rollouts, their checkpoints stay `monitoring` and the next start resumes them.
 */
import { defineActor } from '../../runtime/index.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { closeApp, listen, loadUws, type TemplatedApp, type us_listen_socket } from '../../runtime/http/uws.js';
import { adminTokenHash } from '../../protocols/deploy/admin-scopes.js';
import type { DeployerArgs, DeployerProtocol } from './messages.js';
import { DeployerStore } from './store.js';
import { loadJobKey } from './keys.js';
import { handleHttp } from './http/front.js';
import { streamCount } from './http/events.js';
import { Runner } from './runner.js';
import { IacPusher } from './iac-push.js';
import { SwarmReconciler } from './swarm-reconciler.js';
import { join } from 'node:path';
import type { Service } from './http/call.js';

interface Live {
  svc: Service;
  app: TemplatedApp;
  socket: us_listen_socket;
  port: number;
}

export default defineActor<DeployerProtocol, null, DeployerArgs, Live>({
  kind: 'deployer',
  init: () => null,
  async open(ctx) {
    const a = ctx.args;
    const store = new DeployerStore(openEnvironment(a.stateDir));
    await store.seedToken(a.seedAdminToken === null ? null : { hash: adminTokenHash(a.seedAdminToken), scopes: ['admin'], label: 'DEPLOYER_ADMIN_TOKEN', createdAt: Date.now() });
    const pusher = new IacPusher(join(a.stateDir, 'deployer', 'iac'), ctx.signal);
    const reconciler = new SwarmReconciler(store, pusher, ctx.log, ctx.signal, a.reconcileMs);
    const runner = new Runner(store, pusher, ctx.log, { reconciler, settings: { pollMs: a.monitorPollMs, stabilityMs: a.stabilityMs }, signal: ctx.signal });
    const svc: Service = { store, runner, args: a, log: ctx.log, jobKey: loadJobKey(a.stateDir, a.jobTokenKey) };
    const app = loadUws()
      .App()
      .any('/*', (res, req) => handleHttp(svc, res, req));
    const { socket, port } = await listen(app, a.host, a.port);
    ctx.log.info({ host: a.host, port }, 'deployment service listening');
    reconciler.start();
    runner.resumeAll();
    return { svc, app, socket, port };
  },
  close: ({ app, socket }) => closeApp(app, socket),
  handlers: {
    info: (_msg, _ctx, { port }) => ({ port, streams: streamCount() }),
  },
});
