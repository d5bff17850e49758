/**
 * How the daemon finds services without the runtime knowing them: each service folder in
 * actors/ has a `service.js` whose `service` export builds the service's supervision tree.
 */
import type { SupervisorSpec } from './supervisor/spec.js';
import type { DaemonSettings, ServiceName } from './config/daemon-settings.js';

export interface ServiceContext {
  settings: DaemonSettings;
  env: NodeJS.ProcessEnv;
}

export interface ServiceDefinition {
  name: ServiceName;
  /** The service's supervision tree. May throw a ConfigError for its own settings. */
  supervisor(ctx: ServiceContext): SupervisorSpec;
}

/** Service name -> URL of its module, or null when this build does not have it yet. */
export type ServiceCatalogue = Record<ServiceName, string | null>;
