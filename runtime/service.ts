/**
 * How the daemon finds services without the runtime knowing them: each service folder in
 * actors/ has a `service.js` whose `service` export builds the service's supervision tree.
 */
import type { Logger } from 'pino';
import type { ActorRef, Protocol } from './actor/protocol.js';
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
   * Work the service finishes before the daemon's ordered shutdown (the gateway's drain). The
   * daemon runs it while every service still serves, then stops the tree in order.
   */
  drain?: ServiceDrain<Values<S>>;
  /**
   * Commands of the service's own, run as `hostd <service> <args…>` without the daemon
   * (`hostd deployer token create`): `usage` for help, `run` resolves with the exit code.
   */
  command?: ServiceCommand;
}

/** What a service's drain hook may use: its settings and the running actors (by id). */
export interface ServiceHandle<V = Record<string, unknown>> {
  values: V;
  ref<P extends Protocol>(id: string): ActorRef<P>;
  log: Logger;
}

/**
 * A service's drain, generic for the runtime: `run` is called once when the daemon begins to
 * stop (a signal, or `requested` resolving) and resolves when the service's work is finished;
 * the service bounds its own time (its deadline). `requested` lets the service itself ask the
 * daemon to stop (the gateway's authenticated `POST /drain`): the daemon calls it after start
 * and again each time it resolves with null, until it resolves with a reason; `signal` aborts
 * when the daemon is stopping for another cause.
 */
export interface ServiceDrain<V = Record<string, unknown>> {
  run(h: ServiceHandle<V>, reason: string): Promise<void>;
  requested?(h: ServiceHandle<V>, signal: AbortSignal): Promise<string | null>;
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
