/**
 * Cluster targets of an environment: the item of the Environment payload's `targets`, the rules
 * that tie a target to its cluster, and the monitor budget pinned when a deployment is queued.
 *
 * `monitorTimeoutSecs` is a whole number of seconds from 1 to 2147483647, or null / omitted for
 * the server default (`DEPLOY_MONITOR_TIMEOUT_SECS`, default 300). Environment responses return
 * the configured value (null when the default applies); a deployment pins the resolved value per
 * target when it is queued, so later edits of the environment or of the default only affect
 * future deployments.
 *
 * `deployType` says what the target's monitor watches; each type belongs to one cluster kind:
 * swarm-service and swarm-stack to swarm clusters, k8s-deployment, flux-helmrelease and
 * helm-release to kubernetes clusters. One (cluster, type, namespace, name) is one workload, so it
 * may appear only once in an environment and in only one environment. Pure.
 */
import { invalid, refuse } from './errors.js';
import { describe, idField, joinName, objectAt, onlyKnown, own, requiredText, wholeNumber, type Body } from './fields.js';

export const MONITOR_TIMEOUT_MIN = 1;
export const MONITOR_TIMEOUT_MAX = 2147483647;
/** The server default when the setting DEPLOY_MONITOR_TIMEOUT_SECS is not given. */
export const DEFAULT_MONITOR_TIMEOUT_SECS = 300;
/** Most targets in one environment. */
export const MAX_TARGETS = 32;

export type ClusterKind = 'swarm' | 'kubernetes';
export const CLUSTER_KINDS: readonly ClusterKind[] = ['swarm', 'kubernetes'];

export const DEPLOY_TYPES = {
  'swarm-service': 'swarm',
  'swarm-stack': 'swarm',
  'k8s-deployment': 'kubernetes',
  'flux-helmrelease': 'kubernetes',
  'helm-release': 'kubernetes',
} as const satisfies Record<string, ClusterKind>;
export type DeployType = keyof typeof DEPLOY_TYPES;

/** A target as configured on an environment (create, update and responses). */
export interface TargetConfig {
  /** a target id the client got back from the service, kept on update; absent for a new target */
  id?: string;
  clusterId: number;
  deployType: DeployType;
  deployNamespace: string;
  deployName: string;
  /** the configured override; null means the server default */
  monitorTimeoutSecs: number | null;
}

/** Swarm stack and service names, Kubernetes namespaces and names: letters, digits, '-', '_', '.'. */
const WORKLOAD_NAME_RE = /^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?$/;
const TARGET_FIELDS = ['id', 'clusterId', 'deployType', 'deployNamespace', 'deployName', 'monitorTimeoutSecs'] as const;

/** A configured monitorTimeoutSecs: null when null or omitted, else a whole number 1..2147483647. */
export function monitorTimeoutSecs(v: unknown, name: string): number | null {
  if (v === undefined || v === null) return null;
  return wholeNumber(v, name, MONITOR_TIMEOUT_MIN, MONITOR_TIMEOUT_MAX);
}

function workloadName(o: Body, key: string, parent: string): string {
  const s = requiredText(o, key, parent, { max: 253 });
  if (!WORKLOAD_NAME_RE.test(s)) invalid(`${joinName(parent, key)} must be letters, digits, '-', '_' or '.', beginning and ending with a letter or digit; got ${describe(s)}`);
  return s;
}

export function targetConfig(v: unknown, name: string): TargetConfig {
  const o = objectAt(v, name);
  onlyKnown(o, TARGET_FIELDS, name);
  const deployType = own(o, 'deployType');
  if (deployType === undefined) return refuse(400, 'MISSING_FIELD', `${name}.deployType is required`);
  if (typeof deployType !== 'string' || !Object.hasOwn(DEPLOY_TYPES, deployType)) {
    return invalid(`${name}.deployType must be one of ${Object.keys(DEPLOY_TYPES).join(', ')}; got ${describe(deployType)}`);
  }
  const id = own(o, 'id');
  const out: TargetConfig = {
    clusterId: idField(o, 'clusterId', name),
    deployType: deployType as DeployType,
    deployNamespace: workloadName(o, 'deployNamespace', name),
    deployName: workloadName(o, 'deployName', name),
    monitorTimeoutSecs: monitorTimeoutSecs(own(o, 'monitorTimeoutSecs'), `${name}.monitorTimeoutSecs`),
  };
  if (id !== undefined) out.id = requiredText(o, 'id', name, { max: 64 });
  return out;
}

/** The `targets` array: 1..32 items, no workload twice. */
export function targetList(v: unknown, name = 'targets'): TargetConfig[] {
  if (v === undefined) return refuse(400, 'MISSING_FIELD', `${name} is required`);
  if (!Array.isArray(v)) return invalid(`${name} must be an array; got ${describe(v)}`);
  if (v.length === 0) invalid(`${name} must have at least one target`);
  if (v.length > MAX_TARGETS) invalid(`${name} must have at most ${MAX_TARGETS} targets`);
  const out = v.map((item, i) => targetConfig(item, `${name}[${i}]`));
  const seen = new Map<string, number>();
  out.forEach((t, i) => {
    const k = workloadKey(t);
    const first = seen.get(k);
    if (first !== undefined) refuse(400, 'CONFLICT', `${name}[${i}] names the same workload as ${name}[${first}]`);
    seen.set(k, i);
  });
  return out;
}

/** One workload on one cluster. Kubernetes names are case-sensitive and swarm's are too: compared as given. */
export function workloadKey(t: Pick<TargetConfig, 'clusterId' | 'deployType' | 'deployNamespace' | 'deployName'>): string {
  return JSON.stringify([t.clusterId, t.deployType, t.deployNamespace, t.deployName]);
}

export interface ClusterRef {
  id: number;
  name: string;
  kind: ClusterKind;
}

/**
 * Refuse targets whose cluster does not exist (400, naming `targets[i].clusterId`), whose type does
 * not fit the cluster's kind (400), or whose workload another environment already deploys (409).
 */
export function checkTargetsAgainst(
  targets: readonly TargetConfig[],
  clusters: readonly ClusterRef[],
  otherEnvironments: readonly { id: number; name: string; targets: readonly TargetConfig[] }[],
): void {
  const taken = new Map<string, string>();
  for (const env of otherEnvironments) for (const t of env.targets) taken.set(workloadKey(t), env.name);
  targets.forEach((t, i) => {
    const cluster = clusters.find((c) => c.id === t.clusterId);
    if (cluster === undefined) invalid(`targets[${i}].clusterId: no cluster ${t.clusterId}`);
    else if (DEPLOY_TYPES[t.deployType] !== cluster.kind) {
      invalid(`targets[${i}].deployType ${t.deployType} needs a ${DEPLOY_TYPES[t.deployType]} cluster; cluster ${cluster.id} (${cluster.name}) is ${cluster.kind}`);
    }
    const owner = taken.get(workloadKey(t));
    if (owner !== undefined) refuse(409, 'CONFLICT', `targets[${i}] names a workload that environment ${JSON.stringify(owner)} already deploys`);
  });
}

/** The resolved budget: the target's override, else the server default. */
export function resolveMonitorTimeout(configured: number | null | undefined, defaultSecs: number): number {
  if (configured === null || configured === undefined) return defaultSecs;
  return configured;
}

/** The server default, checked like a target's override (the setting must obey the same range). */
export function defaultMonitorTimeout(v: unknown, name = 'DEPLOY_MONITOR_TIMEOUT_SECS'): number {
  return v === undefined ? DEFAULT_MONITOR_TIMEOUT_SECS : wholeNumber(v, name, MONITOR_TIMEOUT_MIN, MONITOR_TIMEOUT_MAX);
}
