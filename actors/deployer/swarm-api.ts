/**
 * The deployer's few calls to a swarm cluster's Docker Engine API (dockerode): read a service by
 * name with its status, its tasks, and apply a ServiceSpec (create, or update at the version read).
 * Every call is counted (`deployer_docker_calls_total`, the bench's "dockerd calls per target per
 * second") and bounded by a timeout, so a dockerd that hangs fails one poll, not the monitor.
 */
import Docker from 'dockerode';
import type { SwarmService, SwarmTask } from '../../protocols/deploy/swarm-rollout.js';
import type { AppliedServiceSpec } from '../../protocols/deploy/swarm-values.js';
import { dockerCalls } from './metrics.js';

/** Longest one Engine API call may take. */
const CALL_TIMEOUT_MS = 10_000;

/** dockerode options for a cluster endpoint: unix:///path, tcp://host:port (plain HTTP), http(s)://host:port. */
export function dockerOptions(endpoint: string): Docker.DockerOptions {
  const u = new URL(endpoint);
  if (u.protocol === 'unix:') return { socketPath: u.pathname, timeout: CALL_TIMEOUT_MS };
  const protocol = u.protocol === 'https:' ? 'https' : 'http';
  return { host: u.hostname, port: Number(u.port || (protocol === 'https' ? 2376 : 2375)), protocol, timeout: CALL_TIMEOUT_MS };
}

export class SwarmApi {
  // loaded with the module, not at first use: a synchronous require in the middle of monitoring
  // would hold the thread (and every deadline timer on it) for as long as it takes
  private readonly docker: Docker;

  constructor(readonly endpoint: string) {
    this.docker = new Docker(dockerOptions(endpoint));
  }

  /** The service named exactly `name` (dockerd's name filter matches prefixes), with ServiceStatus; null when absent. */
  async service(name: string): Promise<SwarmService | null> {
    dockerCalls.inc({ op: 'services' });
    const list = (await this.docker.listServices({ status: true, filters: { name: [name] } } as Docker.ServiceListOptions)) as unknown as SwarmService[];
    return list.find((s) => s.Spec.Name === name) ?? null;
  }

  /** The services of a stack (label com.docker.stack.namespace), with ServiceStatus. */
  async stack(namespace: string): Promise<SwarmService[]> {
    dockerCalls.inc({ op: 'services' });
    return (await this.docker.listServices({ status: true, filters: { label: [`com.docker.stack.namespace=${namespace}`] } } as Docker.ServiceListOptions)) as unknown as SwarmService[];
  }

  async tasks(serviceId: string): Promise<SwarmTask[]> {
    dockerCalls.inc({ op: 'tasks' });
    return (await this.docker.listTasks({ filters: { service: [serviceId] } })) as SwarmTask[];
  }

  /** Create the service, or replace the spec of the existing one (at the version read: a concurrent change fails this try). */
  async apply(spec: AppliedServiceSpec): Promise<'created' | 'updated'> {
    const current = await this.service(spec.Name);
    dockerCalls.inc({ op: current === null ? 'create' : 'update' });
    if (current === null) {
      await this.docker.createService(spec as unknown as Docker.CreateServiceOptions);
      return 'created';
    }
    await this.docker.getService(current.ID).update({ version: current.Version?.Index ?? 0, ...spec } as unknown as Docker.ServiceSpec);
    return 'updated';
  }
}

/** One client per endpoint, shared by the reconciler and the monitors. */
const clients = new Map<string, SwarmApi>();
export function swarmApi(endpoint: string): SwarmApi {
  let c = clients.get(endpoint);
  if (c === undefined) {
    c = new SwarmApi(endpoint);
    clients.set(endpoint, c);
  }
  return c;
}
