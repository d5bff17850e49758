/**
 * The deployment service's records in LMDB (the runtime's environment under the state
 * directory), one named database per record kind. Every change that touches several records —
 * and every deployment change with the events it emits — is one transaction, so the event log
 * never disagrees with the state it describes and a crash loses both or neither.
 *
 *   deployer.tokens        token id   -> TokenRecord (the SHA-256 of the token, never the token)
 *   deployer.iacRepos      id         -> IacRepoRecord
 *   deployer.clusters      id         -> ClusterRecord
 *   deployer.apps          id         -> AppRecord
 *   deployer.environments  id         -> EnvironmentRecord (its app id inside)
 *   deployer.deployments   UUID       -> DeploymentRecord
 *   deployer.events        "<UUID>/<seq, 10 digits>" -> DeploymentEvent (seq 1, 2, 3… per deployment)
 *   deployer.meta          key        -> value (the next id of each numbered kind)
 *
 * The rules (what a valid record is, who may write it) are in protocols/deploy; this module only
 * keeps records and re-checks, inside the transaction, what depends on other records (unique
 * names and keys, references, workloads across environments), so two racing writes cannot both
 * pass. Refusals are thrown as protocols/deploy `Refused` and abort the transaction.
 */
import type { Database, RootDatabase } from 'lmdb';
import { refuse } from '../../protocols/deploy/errors.js';
import type { Scope } from '../../protocols/deploy/admin-scopes.js';
import { checkTargetsAgainst, type ClusterKind, type TargetConfig } from '../../protocols/deploy/targets.js';
import type { DeploymentEvent, DeploymentState } from '../../protocols/deploy/status.js';
import type { AppInput, ClusterInput, CredentialChange, EnvironmentInput, IacRepoInput } from '../../protocols/deploy/api.js';

export interface TokenRecord {
  id: string;
  /** SHA-256 of the token, hex */
  hash: string;
  scopes: Scope[];
  label: string;
  createdAt: number;
}

export interface IacRepoRecord {
  id: number;
  name: string;
  url: string;
  branch: string | null;
  credential: string | null;
}

export interface ClusterRecord {
  id: number;
  name: string;
  kind: ClusterKind;
  endpoint: string;
  credential: string | null;
  /** the user's own reconciler applies this cluster; hostd only monitors (absent in records of part 1: false) */
  appliedElsewhere?: boolean;
}

export interface AppRecord {
  id: number;
  name: string;
  repoUrl: string;
  repoKey: string;
}

export type StoredTarget = TargetConfig & { id: string };

export interface EnvironmentRecord {
  id: number;
  appId: number;
  name: string;
  branch: string;
  iacRepoId: number;
  iacPath: string;
  targets: StoredTarget[];
}

/** A deployment: its state (protocols/deploy/status.ts) and what it deploys where. */
export interface DeploymentRecord extends DeploymentState {
  appId: number;
  appName: string;
  environmentId: number;
  environmentName: string;
  iacRepoId: number;
  iacPath: string;
  /** as sent, and as written into Chart.yaml */
  version: string;
  chartVersion: string;
  jobId: string;
  ref: string;
  sha: string;
  /** the stored upload under the state directory, and its SHA-256 */
  chartFile: string;
  chartDigest: string;
  /** the IaC commit, once known */
  commit: string | null;
  createdAt: number;
  updatedAt: number;
  /** seq of the last logged event */
  lastSeq: number;
}

export interface LoggedEvent {
  seq: number;
  event: DeploymentEvent;
}

type Kind = 'iacRepos' | 'clusters' | 'apps' | 'environments';

const notFound = (what: string, id: number | string): never => refuse(404, 'NOT_FOUND', `no ${what} ${id}`);
const conflict = (message: string): never => refuse(409, 'CONFLICT', message);
const eventKey = (id: string, seq: number) => `${id}/${String(seq).padStart(10, '0')}`;

/** A credential write: undefined keeps the old one (PUT) or none (POST), null removes, a string sets. */
function credentialAfter(change: CredentialChange, old: string | null): string | null {
  return change === undefined ? old : change;
}

export class DeployerStore {
  readonly tokens: Database<TokenRecord, string>;
  readonly iacRepos: Database<IacRepoRecord, number>;
  readonly clusters: Database<ClusterRecord, number>;
  readonly apps: Database<AppRecord, number>;
  readonly environments: Database<EnvironmentRecord, number>;
  readonly deployments: Database<DeploymentRecord, string>;
  readonly events: Database<DeploymentEvent, string>;
  readonly meta: Database<number, string>;

  constructor(readonly root: RootDatabase) {
    this.tokens = root.openDB({ name: 'deployer.tokens' });
    this.iacRepos = root.openDB({ name: 'deployer.iacRepos' });
    this.clusters = root.openDB({ name: 'deployer.clusters' });
    this.apps = root.openDB({ name: 'deployer.apps' });
    this.environments = root.openDB({ name: 'deployer.environments' });
    this.deployments = root.openDB({ name: 'deployer.deployments' });
    this.events = root.openDB({ name: 'deployer.events' });
    this.meta = root.openDB({ name: 'deployer.meta' });
  }

  /** Inside a transaction: the next id of a numbered kind (never reused, even after a delete). */
  private nextId(kind: Kind): number {
    const id = (this.meta.get(`next.${kind}`) ?? 0) + 1;
    this.meta.putSync(`next.${kind}`, id);
    return id;
  }

  private all<T>(db: Database<T, number>): T[] {
    return [...db.getRange()].map(({ value }) => value);
  }

  // ---- admin tokens

  listTokens(): TokenRecord[] {
    return [...this.tokens.getRange()].map(({ value }) => value);
  }

  /**
   * The token DEPLOYER_ADMIN_TOKEN seeds, under the id `seed`: a new value replaces the old one,
   * and no value removes it (the setting is where the seed lives).
   */
  async seedToken(rec: Omit<TokenRecord, 'id'> | null): Promise<void> {
    if (rec === null) await this.tokens.remove('seed');
    else if (this.tokens.get('seed')?.hash !== rec.hash) await this.tokens.put('seed', { ...rec, id: 'seed' });
  }

  addToken(rec: TokenRecord): Promise<void> {
    return this.root.transaction(() => {
      if (this.listTokens().some((t) => t.hash === rec.hash)) return;
      this.tokens.putSync(rec.id, rec);
    });
  }

  // ---- IaC repositories

  listIacRepos(): IacRepoRecord[] {
    return this.all(this.iacRepos);
  }

  putIacRepo(id: number | null, input: IacRepoInput): Promise<IacRepoRecord> {
    return this.root.transaction(() => {
      const old = id === null ? undefined : (this.iacRepos.get(id) ?? notFound('IaC repository', id));
      const rec: IacRepoRecord = {
        id: old?.id ?? this.nextId('iacRepos'),
        name: input.name,
        url: input.url,
        branch: input.branch,
        credential: credentialAfter(input.credential, old?.credential ?? null),
      };
      this.iacRepos.putSync(rec.id, rec);
      return rec;
    });
  }

  deleteIacRepo(id: number): Promise<void> {
    return this.root.transaction(() => {
      if (!this.iacRepos.get(id)) notFound('IaC repository', id);
      const user = this.all(this.environments).find((e) => e.iacRepoId === id);
      if (user) conflict(`IaC repository ${id} is the destination of environment ${user.id} (${JSON.stringify(user.name)}); change or delete it first`);
      this.iacRepos.removeSync(id);
    });
  }

  // ---- clusters

  listClusters(): ClusterRecord[] {
    return this.all(this.clusters);
  }

  putCluster(id: number | null, input: ClusterInput): Promise<ClusterRecord> {
    return this.root.transaction(() => {
      const old = id === null ? undefined : (this.clusters.get(id) ?? notFound('cluster', id));
      if (old && old.kind !== input.kind) {
        const user = this.all(this.environments).find((e) => e.targets.some((t) => t.clusterId === old.id));
        if (user) conflict(`cluster ${old.id} is a ${old.kind} target of environment ${user.id} (${JSON.stringify(user.name)}); its kind cannot change`);
      }
      const rec: ClusterRecord = {
        id: old?.id ?? this.nextId('clusters'),
        name: input.name,
        kind: input.kind,
        endpoint: input.endpoint,
        credential: credentialAfter(input.credential, old?.credential ?? null),
        appliedElsewhere: input.appliedElsewhere,
      };
      this.clusters.putSync(rec.id, rec);
      return rec;
    });
  }

  deleteCluster(id: number): Promise<void> {
    return this.root.transaction(() => {
      if (!this.clusters.get(id)) notFound('cluster', id);
      const user = this.all(this.environments).find((e) => e.targets.some((t) => t.clusterId === id));
      if (user) conflict(`cluster ${id} is a target of environment ${user.id} (${JSON.stringify(user.name)}); change or delete it first`);
      this.clusters.removeSync(id);
    });
  }

  // ---- apps

  listApps(): AppRecord[] {
    return this.all(this.apps);
  }

  appByKey(repoKey: string): AppRecord | undefined {
    return this.listApps().find((a) => a.repoKey === repoKey);
  }

  putApp(id: number | null, input: AppInput): Promise<AppRecord> {
    return this.root.transaction(() => {
      const old = id === null ? undefined : (this.apps.get(id) ?? notFound('app', id));
      const other = this.appByKey(input.repoKey);
      if (other && other.id !== old?.id) conflict(`app ${other.id} (${JSON.stringify(other.name)}) already has repository ${input.repoKey}`);
      const rec: AppRecord = { id: old?.id ?? this.nextId('apps'), name: input.name, repoUrl: input.repoUrl, repoKey: input.repoKey };
      this.apps.putSync(rec.id, rec);
      return rec;
    });
  }

  /** An app and its environments, in one transaction (deployments stay: they are history). */
  deleteApp(id: number): Promise<void> {
    return this.root.transaction(() => {
      if (!this.apps.get(id)) notFound('app', id);
      for (const e of this.environmentsOf(id)) this.environments.removeSync(e.id);
      this.apps.removeSync(id);
    });
  }

  // ---- environments

  environmentsOf(appId: number): EnvironmentRecord[] {
    return this.all(this.environments).filter((e) => e.appId === appId);
  }

  /** The environment `id` of app `appId` (404 when either is unknown, or it belongs to another app). */
  environment(appId: number, id: number): EnvironmentRecord {
    if (!this.apps.get(appId)) notFound('app', appId);
    const e = this.environments.get(id);
    return e && e.appId === appId ? e : notFound(`environment of app ${appId} with id`, id);
  }

  /**
   * Create (`id` null) or replace an environment. Re-checked in the transaction: the app and the
   * IaC repository exist, the name is unique within the app (409), the targets fit their clusters
   * and no other environment deploys their workloads (targets.ts). A target keeps the id it was
   * given if it is one of this environment's; an id that is not is refused; new targets get one.
   */
  putEnvironment(appId: number, id: number | null, input: EnvironmentInput, newTargetId: () => string): Promise<EnvironmentRecord> {
    return this.root.transaction(() => {
      const old = id === null ? (this.apps.get(appId) ? undefined : notFound('app', appId)) : this.environment(appId, id);
      if (!this.iacRepos.get(input.iacRepoId)) refuse(400, 'INVALID_FIELD', `iacRepoId: no IaC repository ${input.iacRepoId}`);
      const same = this.environmentsOf(appId).find((e) => e.name === input.name && e.id !== old?.id);
      if (same) conflict(`app ${appId} already has an environment named ${JSON.stringify(input.name)} (${same.id})`);
      const others = this.all(this.environments).filter((e) => e.id !== old?.id);
      checkTargetsAgainst(input.targets, this.listClusters(), others);
      const targets = input.targets.map((t, i): StoredTarget => {
        if (t.id !== undefined && !old?.targets.some((o) => o.id === t.id)) refuse(400, 'INVALID_FIELD', `targets[${i}].id ${JSON.stringify(t.id)} is not a target of this environment (leave it out for a new target)`);
        return { ...t, id: t.id ?? newTargetId() };
      });
      const rec: EnvironmentRecord = { id: old?.id ?? this.nextId('environments'), appId, name: input.name, branch: input.branch, iacRepoId: input.iacRepoId, iacPath: input.iacPath, targets };
      this.environments.putSync(rec.id, rec);
      return rec;
    });
  }

  deleteEnvironment(appId: number, id: number): Promise<void> {
    return this.root.transaction(() => {
      this.environment(appId, id);
      this.environments.removeSync(id);
    });
  }

  // ---- deployments and their event log

  listDeployments(): DeploymentRecord[] {
    return [...this.deployments.getRange()].map(({ value }) => value).sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Write a deployment and append its events, in one transaction; `expectSeq` (the lastSeq the
   * caller read) guards against a concurrent writer. Returns the record with its new lastSeq.
   */
  recordDeployment(d: DeploymentRecord, events: readonly DeploymentEvent[], expectSeq: number): Promise<DeploymentRecord> {
    return this.root.transaction(() => {
      const stored = this.deployments.get(d.id);
      if ((stored?.lastSeq ?? 0) !== expectSeq) throw new Error(`deployment ${d.id} changed under its writer (seq ${stored?.lastSeq} ≠ ${expectSeq})`);
      let seq = expectSeq;
      for (const e of events) this.events.putSync(eventKey(d.id, ++seq), e);
      const rec = { ...d, lastSeq: seq, updatedAt: Date.now() };
      this.deployments.putSync(d.id, rec);
      return rec;
    });
  }

  /** The logged events of a deployment with seq above `after`, in order. */
  eventsAfter(id: string, after: number): LoggedEvent[] {
    const out: LoggedEvent[] = [];
    for (const { key, value } of this.events.getRange({ start: eventKey(id, after + 1), end: `${id}/~` })) {
      out.push({ seq: Number(key.slice(id.length + 1)), event: value });
    }
    return out;
  }
}
