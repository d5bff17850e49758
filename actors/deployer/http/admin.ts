/**
 * The admin API of the deployment service: tokens and the session, IaC repositories, clusters,
 * apps and their environments, local job tokens and the deployments' records. Bodies are checked
 * by protocols/deploy/api.ts; scopes by admin-scopes.ts (environment writes need the scope of
 * their IaC repository, old and new); records are kept by store.ts. Order of refusals: 401 (no or
 * unknown token), 403 (the scope), 400 (the body), 404 / 409 (the records) — except environment
 * writes, whose scope depends on the body: 401, 400, then 403. Credentials are write-only: responses say only whether
 * one is set (`hasCredential`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeParam, routeFor, type Params, type Route } from '../../../runtime/http/router.js';
import { checkApp, checkCluster, checkEnvironment, checkIacRepo, checkJobTokenRequest, NAME_RULE } from '../../../protocols/deploy/api.js';
import { adminToken, adminTokenHash, environmentNeed, scopeList } from '../../../protocols/deploy/admin-scopes.js';
import { refuse, unwrap, type Result } from '../../../protocols/deploy/errors.js';
import { MAX_ID, onlyKnown, own, textValue } from '../../../protocols/deploy/fields.js';
import { mintJobToken } from '../../../protocols/deploy/job-tokens.js';
import { deploymentView } from '../../../protocols/deploy/status.js';
import type { AppRecord, ClusterRecord, DeployerStore, EnvironmentRecord, IacRepoRecord } from '../store.js';
import { authenticate, authorize, type Call } from './call.js';
import { readJson, send, sendJson } from './respond.js';

const route = routeFor<Call, Promise<void> | void>();

/** A numeric id from the path: anything else names no record (404). */
function pathId(raw: string, what: string): number {
  const n = /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : NaN;
  return Number.isInteger(n) && n <= MAX_ID ? n : refuse(404, 'NOT_FOUND', `no ${what} ${JSON.stringify(decodeParam(raw) ?? raw)}`);
}

const iacRepoView = (x: IacRepoRecord) => ({ id: x.id, name: x.name, url: x.url, branch: x.branch, hasCredential: x.credential !== null });
const clusterView = (x: ClusterRecord) => ({ id: x.id, name: x.name, kind: x.kind, endpoint: x.endpoint, appliedElsewhere: x.appliedElsewhere === true, hasCredential: x.credential !== null });
const environmentView = (e: EnvironmentRecord) => ({
  id: e.id,
  appId: e.appId,
  name: e.name,
  branch: e.branch,
  iacRepoId: e.iacRepoId,
  iacPath: e.iacPath,
  targets: e.targets.map((t) => ({ id: t.id, clusterId: t.clusterId, deployType: t.deployType, deployNamespace: t.deployNamespace, deployName: t.deployName, monitorTimeoutSecs: t.monitorTimeoutSecs })),
});

const noContent = (call: Call) => send(call.r, 204, '');

/**
 * The five routes of an admin-only record kind (IaC repositories, clusters, apps): list and get
 * with `read`; create, replace and delete with `admin`.
 */
function adminResource<I, R>(o: {
  path: string;
  what: string;
  check: (body: unknown) => Result<I>;
  view: (rec: R) => unknown;
  list: (store: DeployerStore) => R[];
  get: (store: DeployerStore, id: number) => R | undefined;
  put: (store: DeployerStore, id: number | null, input: I) => Promise<R>;
  remove: (store: DeployerStore, id: number) => Promise<void>;
}): Route<Call, Promise<void> | void>[] {
  const one = `${o.path}/:id`;
  const idOf = (params: Params) => pathId(params.id ?? '', o.what);
  return [
    { method: 'GET', path: o.path, handle: (call) => (authorize(call, { kind: 'read' }), sendJson(call.r, 200, o.list(call.svc.store).map(o.view))) },
    {
      method: 'POST',
      path: o.path,
      handle: async (call) => {
        authorize(call, { kind: 'admin' });
        const input = unwrap(o.check(await readJson(call.body)));
        sendJson(call.r, 201, o.view(await o.put(call.svc.store, null, input)));
      },
    },
    {
      method: 'GET',
      path: one,
      handle: (call, params) => {
        authorize(call, { kind: 'read' });
        const rec = o.get(call.svc.store, idOf(params));
        sendJson(call.r, 200, o.view(rec ?? refuse(404, 'NOT_FOUND', `no ${o.what} ${params.id}`)));
      },
    },
    {
      method: 'PUT',
      path: one,
      handle: async (call, params) => {
        authorize(call, { kind: 'admin' });
        const input = unwrap(o.check(await readJson(call.body)));
        sendJson(call.r, 200, o.view(await o.put(call.svc.store, idOf(params), input)));
      },
    },
    {
      method: 'DELETE',
      path: one,
      handle: async (call, params) => {
        authorize(call, { kind: 'admin' });
        await o.remove(call.svc.store, idOf(params));
        noContent(call);
      },
    },
  ];
}

/** POST /api/tokens {scopes, label?}: a new admin token, shown once. */
function tokenRequest(o: Record<string, unknown>): { scopes: ReturnType<typeof scopeList>; label: string } {
  onlyKnown(o, ['scopes', 'label'], 'body');
  const label = own(o, 'label');
  return { scopes: scopeList(own(o, 'scopes')), label: label === undefined ? '' : textValue(label, 'label', NAME_RULE) };
}

export const adminRoutes = [
  route('GET', '/api/session/me', (call) => {
    const token = authorize(call, { kind: 'read' });
    sendJson(call.r, 200, { tokenId: token.id, label: token.label, scopes: token.scopes, defaultMonitorTimeoutSecs: call.svc.args.defaultMonitorTimeoutSecs });
  }),

  route('POST', '/api/tokens', async (call) => {
    authorize(call, { kind: 'admin' });
    const req = tokenRequest(await readJson(call.body));
    const token = adminToken(randomBytes(32));
    const rec = { id: randomUUID(), hash: adminTokenHash(token), scopes: req.scopes, label: req.label, createdAt: Date.now() };
    await call.svc.store.addToken(rec);
    sendJson(call.r, 201, { id: rec.id, token, scopes: rec.scopes, label: rec.label });
  }),

  ...adminResource({ path: '/api/iac-repos', what: 'IaC repository', check: checkIacRepo, view: iacRepoView, list: (st) => st.listIacRepos(), get: (st, id) => st.iacRepos.get(id), put: (st, id, input) => st.putIacRepo(id, input), remove: (st, id) => st.deleteIacRepo(id) }),
  ...adminResource({ path: '/api/clusters', what: 'cluster', check: checkCluster, view: clusterView, list: (st) => st.listClusters(), get: (st, id) => st.clusters.get(id), put: (st, id, input) => st.putCluster(id, input), remove: (st, id) => st.deleteCluster(id) }),
  ...adminResource({ path: '/api/apps', what: 'app', check: checkApp, view: (x: AppRecord) => x, list: (st) => st.listApps(), get: (st, id) => st.apps.get(id), put: (st, id, input) => st.putApp(id, input), remove: (st, id) => st.deleteApp(id) }),

  // ---- environments (the scope of their IaC repository)
  route('GET', '/api/apps/:appId/environments', (call, { appId }) => {
    authorize(call, { kind: 'read' });
    const id = pathId(appId, 'app');
    if (!call.svc.store.apps.get(id)) refuse(404, 'NOT_FOUND', `no app ${id}`);
    sendJson(call.r, 200, call.svc.store.environmentsOf(id).map(environmentView));
  }),
  route('POST', '/api/apps/:appId/environments', async (call, { appId }) => {
    authenticate(call);
    const input = unwrap(checkEnvironment(await readJson(call.body)));
    authorize(call, environmentNeed(null, input.iacRepoId));
    sendJson(call.r, 201, environmentView(await call.svc.store.putEnvironment(pathId(appId, 'app'), null, input, randomUUID)));
  }),
  route('GET', '/api/apps/:appId/environments/:environmentId', (call, { appId, environmentId }) => {
    authorize(call, { kind: 'read' });
    sendJson(call.r, 200, environmentView(call.svc.store.environment(pathId(appId, 'app'), pathId(environmentId, 'environment'))));
  }),
  route('PUT', '/api/apps/:appId/environments/:environmentId', async (call, { appId, environmentId }) => {
    authenticate(call);
    const input = unwrap(checkEnvironment(await readJson(call.body)));
    const app = pathId(appId, 'app');
    const id = pathId(environmentId, 'environment');
    authorize(call, environmentNeed(call.svc.store.environment(app, id).iacRepoId, input.iacRepoId));
    sendJson(call.r, 200, environmentView(await call.svc.store.putEnvironment(app, id, input, randomUUID)));
  }),
  route('DELETE', '/api/apps/:appId/environments/:environmentId', async (call, { appId, environmentId }) => {
    authenticate(call);
    const app = pathId(appId, 'app');
    const id = pathId(environmentId, 'environment');
    authorize(call, environmentNeed(call.svc.store.environment(app, id).iacRepoId, null));
    await call.svc.store.deleteEnvironment(app, id);
    noContent(call);
  }),

  // ---- local job tokens (admin) and deployments (read)
  route('POST', '/api/job-tokens', async (call) => {
    authorize(call, { kind: 'admin' });
    const req = unwrap(checkJobTokenRequest(await readJson(call.body)));
    const { token, exp } = mintJobToken(call.svc.jobKey, { repoKey: req.repoKey, jobId: req.jobId, ref: req.ref, sha: req.sha }, Date.now(), req.ttlSecs, randomBytes(16));
    sendJson(call.r, 201, { jobToken: token, expiresAt: new Date(exp * 1000).toISOString() });
  }),
  route('GET', '/api/deployments', (call) => {
    authorize(call, { kind: 'read' });
    sendJson(call.r, 200, call.svc.store.listDeployments().map(deploymentView));
  }),
  route('GET', '/api/deployments/:id', (call, { id }) => {
    authorize(call, { kind: 'read' });
    const d = call.svc.store.deployments.get(decodeParam(id) ?? id);
    sendJson(call.r, 200, deploymentView(d ?? refuse(404, 'DEPLOYMENT_NOT_FOUND', `no deployment ${JSON.stringify(id)}`)));
  }),
];
