/**
 * How the daemon finds services without the runtime knowing them: each service folder in
 * actors/ has a `service.js` whose `service` export builds the service's supervision tree.
 */
import type { SupervisorSpec } from './supervisor/spec.js';
import type { DaemonSettings, ServiceName } from './config/daemon-settings.js';
import type { Schema } from './config/settings.js';

export interface ServiceContext {
  settings: DaemonSettings;
  /** This service's own settings, resolved from its schema (flags and environment). */
  values: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
}

export interface ServiceDefinition {
  name: ServiceName;
  /** The service's own settings: they become flags of `hostd daemon` and appear in its --help. */
  settings?: Schema;
  /** The service's supervision tree. */
  supervisor(ctx: ServiceContext): SupervisorSpec;
}

/** Service name -> URL of its module, or null when this build does not have it yet. */
export type ServiceCatalogue = Record<ServiceName, string | null>;
