/**
 * How the daemon finds services without the runtime knowing them: each service folder in
 * actors/ has a `service.js` whose `service` export builds the service's supervision tree.
 */
import type { SupervisorSpec } from './supervisor/spec.js';
import type { DaemonSettings, ServiceName } from './config/daemon-settings.js';
import type { Schema, Values } from './config/settings.js';

export interface ServiceContext<V = Record<string, unknown>> {
  settings: DaemonSettings;
  /** This service's own settings, resolved from its schema (flags and environment), typed by it. */
  values: V;
  env: NodeJS.ProcessEnv;
}

export interface ServiceDefinition<S extends Schema = Schema> {
  name: ServiceName;
  /** The service's own settings: they become flags of `hostd daemon` and appear in its --help. */
  settings?: S;
  /**
   * Started after every other service, so that it is stopped first at shutdown while the others
   * keep serving (the session gateway: it drains its calls, which need the media bridges).
   */
  stopsFirst?: boolean;
  /** The service's supervision tree. */
  supervisor(ctx: ServiceContext<Values<S>>): SupervisorSpec;
  /**
   * Commands of the service's own, run as `hostd <service> <args…>` without the daemon
   * (`hostd deployer token create`): `usage` for help, `run` resolves with the exit code.
   */
  command?: ServiceCommand;
}

export interface ServiceCommand {
  usage: string;
  run(args: string[], out: (line: string) => void): Promise<number>;
}

/** Identity function that types a service's `values` by its settings schema (no casts). */
export function defineService<S extends Schema>(def: ServiceDefinition<S> & { settings: S }): ServiceDefinition {
  return def as unknown as ServiceDefinition;
}

/** Service name -> URL of its module, or null when this build does not have it yet. */
export type ServiceCatalogue = Record<ServiceName, string | null>;
