/**
 * The values file of an environment's chart mapped to a Docker swarm ServiceSpec: what the
 * embedded swarm reconciler (actors/deployer/swarm-reconciler.ts) applies to a `swarm-service`
 * target. The keys follow Helm's conventions where Helm has one (`image.repository`, `image.tag`,
 * `replicaCount`) and swarm's own vocabulary under `swarm:` otherwise:
 *
 *   image: {repository: shop/web, tag: "1.4.0"}   # or image: "shop/web:1.4.0"; required
 *   replicaCount: 2                               # replicated mode; default 1
 *   env: {LOG_LEVEL: info}                        # or [{name: LOG_LEVEL, value: info}]
 *   swarm:
 *     stopGracePeriod: 10s
 *     updateConfig:   {parallelism: 1, delay: 0s, failureAction: pause, monitor: 5s, maxFailureRatio: 0, order: stop-first}
 *     rollbackConfig: {parallelism: 1, delay: 0s, failureAction: pause, monitor: 5s, maxFailureRatio: 0, order: stop-first}
 *     restartPolicy:  {condition: any, delay: 5s, maxAttempts: 0}
 *
 * Durations are Go/Compose style strings ("1m30s", "500ms") or a number of seconds. Keys outside
 * this list are ignored (they are the chart's own values). The service is named
 * `<deployNamespace>_<deployName>`, as `docker stack deploy` names a stack's services, and carries
 * the stack label and the deployment's revision label. The spec is the whole truth: applying it
 * replaces the service's spec (what is not in the values returns to swarm's default). Pure.
 */
import { invalid } from './errors.js';
import { describe } from './fields.js';
import { REVISION_LABEL } from './swarm-rollout.js';

export const STACK_LABEL = 'com.docker.stack.namespace';

export interface SwarmUpdatePolicy {
  Parallelism?: number;
  Delay?: number;
  FailureAction?: 'pause' | 'continue' | 'rollback';
  Monitor?: number;
  MaxFailureRatio?: number;
  Order?: 'stop-first' | 'start-first';
}

/** The ServiceSpec the reconciler sends (Docker Engine API, `POST /services/create` and `/update`). */
export interface AppliedServiceSpec {
  Name: string;
  Labels: Record<string, string>;
  TaskTemplate: {
    ContainerSpec: { Image: string; Env?: string[]; StopGracePeriod?: number };
    RestartPolicy?: { Condition?: 'none' | 'on-failure' | 'any'; Delay?: number; MaxAttempts?: number };
    ForceUpdate?: number;
  };
  Mode: { Replicated: { Replicas: number } };
  UpdateConfig?: SwarmUpdatePolicy;
  RollbackConfig?: SwarmUpdatePolicy;
}

export const swarmServiceName = (namespace: string, name: string) => `${namespace}_${name}`;

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** A duration as nanoseconds (what the Engine API takes): "1m30s", "500ms", or seconds as a number. */
export function durationNs(v: unknown, name: string): number {
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v < 0) invalid(`${name} must be a duration ("5s", "500ms") or a number of seconds ≥ 0; got ${describe(v)}`);
    return Math.round(v * 1e9);
  }
  if (typeof v !== 'string' || !/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(v)) invalid(`${name} must be a duration ("5s", "500ms", "1m30s") or a number of seconds; got ${describe(v)}`);
  let total = 0;
  for (const m of (v as string).matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(m[1]) * (UNIT_NS[m[2] as string] as number);
  return Math.round(total);
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function mapAt(o: Record<string, unknown>, key: string, name: string): Record<string, unknown> | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!isMap(v)) invalid(`${name} must be a mapping; got ${describe(v)}`);
  return v as Record<string, unknown>;
}

function count(v: unknown, name: string, min = 0): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 100_000) invalid(`${name} must be a whole number from ${min} to 100000; got ${describe(v)}`);
  return v as number;
}

function oneOf<T extends string>(v: unknown, name: string, allowed: readonly T[]): T {
  if (typeof v !== 'string' || !allowed.includes(v as T)) invalid(`${name} must be one of ${allowed.join(', ')}; got ${describe(v)}`);
  return v as T;
}

/** `image.repository` + `image.tag` (a number tag like 1.4 is kept as written by YAML), or one string. */
export function imageOf(values: Record<string, unknown>): string {
  const v = values.image;
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  if (!isMap(v)) return invalid(`values.image must be a mapping {repository, tag} or an image reference string; got ${describe(v)}`);
  const repo = v.repository;
  if (typeof repo !== 'string' || !/^[a-z0-9][a-z0-9._\-/:]*$/.test(repo)) return invalid(`values.image.repository must be an image repository (lower case, e.g. "shop/web"); got ${describe(repo)}`);
  const tag = typeof v.tag === 'number' ? String(v.tag) : v.tag;
  if (tag === undefined || tag === null) return repo;
  if (typeof tag !== 'string' || !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) return invalid(`values.image.tag must be a tag (letters, digits, '_', '.', '-', up to 128); got ${describe(v.tag)}`);
  return `${repo}:${tag}`;
}

function envOf(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const scalar = (x: unknown, name: string) => {
    if (typeof x === 'string') return x;
    if (typeof x === 'number' || typeof x === 'boolean') return String(x);
    return invalid(`${name} must be a string, number or boolean; got ${describe(x)}`);
  };
  const key = (k: unknown, name: string) => {
    if (typeof k !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(k)) invalid(`${name} must be an environment variable name; got ${describe(k)}`);
    return k as string;
  };
  if (Array.isArray(v)) {
    return v.map((item, i) => {
      if (!isMap(item)) return invalid(`values.env[${i}] must be {name, value}; got ${describe(item)}`);
      return `${key(item.name, `values.env[${i}].name`)}=${scalar(item.value ?? '', `values.env[${i}].value`)}`;
    });
  }
  if (!isMap(v)) return invalid(`values.env must be a mapping or a list of {name, value}; got ${describe(v)}`);
  return Object.keys(v)
    .sort()
    .map((k) => `${key(k, `values.env key ${JSON.stringify(k)}`)}=${scalar(v[k], `values.env.${k}`)}`);
}

function policy(o: Record<string, unknown> | undefined, name: string): SwarmUpdatePolicy | undefined {
  if (o === undefined) return undefined;
  const known = ['parallelism', 'delay', 'failureAction', 'monitor', 'maxFailureRatio', 'order'];
  for (const k of Object.keys(o)) if (!known.includes(k)) invalid(`${name}.${k} is not a swarm update setting (${known.join(', ')})`);
  const p: SwarmUpdatePolicy = {};
  if (o.parallelism !== undefined) p.Parallelism = count(o.parallelism, `${name}.parallelism`);
  if (o.delay !== undefined) p.Delay = durationNs(o.delay, `${name}.delay`);
  if (o.failureAction !== undefined) p.FailureAction = oneOf(o.failureAction, `${name}.failureAction`, ['pause', 'continue', 'rollback'] as const);
  if (o.monitor !== undefined) p.Monitor = durationNs(o.monitor, `${name}.monitor`);
  if (o.maxFailureRatio !== undefined) {
    const r = o.maxFailureRatio;
    if (typeof r !== 'number' || !(r >= 0 && r <= 1)) invalid(`${name}.maxFailureRatio must be a number from 0 to 1; got ${describe(r)}`);
    p.MaxFailureRatio = r as number;
  }
  if (o.order !== undefined) p.Order = oneOf(o.order, `${name}.order`, ['stop-first', 'start-first'] as const);
  return p;
}

/** The ServiceSpec for a target from the environment's values, stamped with `revision`. */
export function serviceSpecFromValues(values: Record<string, unknown>, target: { deployNamespace: string; deployName: string }, revision: string): AppliedServiceSpec {
  const swarm = mapAt(values, 'swarm', 'values.swarm') ?? {};
  const replicas = values.replicaCount === undefined ? 1 : count(values.replicaCount, 'values.replicaCount');
  const container: AppliedServiceSpec['TaskTemplate']['ContainerSpec'] = { Image: imageOf(values) };
  const env = envOf(values.env);
  if (env !== undefined) container.Env = env;
  if (swarm.stopGracePeriod !== undefined) container.StopGracePeriod = durationNs(swarm.stopGracePeriod, 'values.swarm.stopGracePeriod');
  const spec: AppliedServiceSpec = {
    Name: swarmServiceName(target.deployNamespace, target.deployName),
    Labels: { [STACK_LABEL]: target.deployNamespace, [REVISION_LABEL]: revision },
    TaskTemplate: { ContainerSpec: container },
    Mode: { Replicated: { Replicas: replicas } },
  };
  const restart = mapAt(swarm, 'restartPolicy', 'values.swarm.restartPolicy');
  if (restart !== undefined) {
    const r: NonNullable<AppliedServiceSpec['TaskTemplate']['RestartPolicy']> = {};
    if (restart.condition !== undefined) r.Condition = oneOf(restart.condition, 'values.swarm.restartPolicy.condition', ['none', 'on-failure', 'any'] as const);
    if (restart.delay !== undefined) r.Delay = durationNs(restart.delay, 'values.swarm.restartPolicy.delay');
    if (restart.maxAttempts !== undefined) r.MaxAttempts = count(restart.maxAttempts, 'values.swarm.restartPolicy.maxAttempts');
    spec.TaskTemplate.RestartPolicy = r;
  }
  const update = policy(mapAt(swarm, 'updateConfig', 'values.swarm.updateConfig'), 'values.swarm.updateConfig');
  if (update !== undefined) spec.UpdateConfig = update;
  const rollback = policy(mapAt(swarm, 'rollbackConfig', 'values.swarm.rollbackConfig'), 'values.swarm.rollbackConfig');
  if (rollback !== undefined) spec.RollbackConfig = rollback;
  return spec;
}
