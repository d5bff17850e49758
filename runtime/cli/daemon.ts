/**
 * `hostd daemon`: the supervisor with the chosen services, metrics, and the stop: on a signal
 * (or a service's own request, `drain.requested`) the services with a drain hook drain first,
 * while every service still serves, then the ordered shutdown of the tree.
 */
import { SERVICE_NAMES, type DaemonSettings, type ServiceName } from '../config/daemon-settings.js';
import { ConfigError } from '../config/settings.js';
import { createLogger } from '../log.js';
import { startMetricsServer } from '../metrics/server.js';
import type { ServiceCatalogue, ServiceDefinition, ServiceHandle } from '../service.js';
import { ActorSystem } from '../supervisor/system.js';
import { HEARTBEAT_ID } from '../system/heartbeat/messages.js';

const HEARTBEAT_MODULE = new URL('../system/heartbeat/actor.js', import.meta.url).href;

/** The definitions of every service this build has, in SERVICE_NAMES order. */
export async function loadDefinitions(catalogue: ServiceCatalogue): Promise<ServiceDefinition[]> {
  const defs: ServiceDefinition[] = [];
  for (const n of SERVICE_NAMES) {
    const url = catalogue[n];
    if (!url) continue;
    const mod = (await import(url)) as { service?: ServiceDefinition };
    if (!mod.service) throw new Error(`service module ${url} has no 'service' export`);
    defs.push(mod.service);
  }
  return defs;
}

/** The chosen services in start order: those that stop first (the gateway, which drains) last. */
export function chooseServices(names: readonly ServiceName[], defs: readonly ServiceDefinition[]): ServiceDefinition[] {
  const missing = names.filter((n) => !defs.some((d) => d.name === n));
  if (missing.length) {
    const built = defs.map((d) => d.name);
    throw new ConfigError([
      `invalid setting --services (HOSTD_SERVICES): ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} not built in this version (available: ${built.length ? built.join(', ') : 'none yet'})`,
    ]);
  }
  const chosen = defs.filter((d) => names.includes(d.name));
  return [...chosen.filter((d) => !d.stopsFirst), ...chosen.filter((d) => d.stopsFirst)];
}

export interface ChosenService {
  def: ServiceDefinition;
  values: Record<string, unknown>;
}

export async function runDaemon(settings: DaemonSettings, chosen: ChosenService[]): Promise<number> {
  const log = createLogger(settings.logLevel, 'daemon');
  const services = chosen.map((c) => c.def);
  const trees = chosen.map((c) => c.def.supervisor({ settings, values: c.values, env: process.env }));

  const system = await ActorSystem.start({
    stateDir: settings.stateDir,
    logLevel: settings.logLevel,
    requestTimeoutMs: settings.requestTimeoutMs,
    mailboxCapacity: settings.mailboxCapacity,
    groupThreads: settings.groupThreads,
    poolThreads: settings.poolThreads,
  });
  const metrics = await startMetricsServer(settings.metricsHost, settings.metricsPort, () => system.metrics()).catch(async (err: Error) => {
    await system.shutdown();
    throw new ConfigError([`invalid setting --metrics-port (HOSTD_METRICS_PORT): ${err.message}`]);
  });
  log.info({ port: metrics.port, host: settings.metricsHost }, 'metrics endpoint listening');

  const draining = chosen.filter((c) => c.def.drain);
  const handle = (c: ChosenService): ServiceHandle => ({ values: c.values, ref: (id) => system.ref(id), log: log.child({ service: c.def.name }) });
  /** Aborts the services' `requested` waits once the daemon is stopping. */
  const watching = new AbortController();
  let inDrain = false;
  const drainAll = async (why: string): Promise<void> => {
    if (!draining.length) return;
    inDrain = true;
    log.info({ why, services: draining.map((c) => c.def.name) }, 'draining before the ordered shutdown');
    await Promise.all(draining.map((c) => c.def.drain!.run(handle(c), why).catch((err: Error) => log.error({ service: c.def.name, err: err.message }, 'drain failed; stopping anyway'))));
    inDrain = false;
    log.info('drained');
  };

  let exitCode = 0;
  let stopping: Promise<void> | null = null;
  let markStopped!: () => void;
  const stoppedAt = new Promise<void>((r) => (markStopped = r));
  const stop = (why: string, code: number): Promise<void> => {
    if (stopping) return stopping;
    exitCode = code;
    log.info({ why }, 'shutting down');
    const hard = setTimeout(() => {
      log.fatal({ shutdownTimeoutMs: settings.shutdownTimeoutMs }, 'shutdown deadline passed; exiting now');
      process.exit(1);
    }, settings.shutdownTimeoutMs);
    hard.unref();
    watching.abort();
    stopping = drainAll(why).then(() => system.shutdown()).then(() => {
      metrics.close();
      clearTimeout(hard);
      log.info({ exitCode }, 'stopped');
      markStopped();
    });
    return stopping;
  };

  const onSignal = (sig: NodeJS.Signals) => {
    if (stopping && inDrain) {
      // Irreversible and idempotent: the drain goes on with its first deadline.
      log.info({ signal: sig }, 'signal during the drain: already draining');
      return;
    }
    if (stopping) {
      log.warn({ signal: sig }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    void stop(sig, 0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const startAll = async () => {
    await system.start({
      id: 'system',
      children: [{ id: HEARTBEAT_ID, module: HEARTBEAT_MODULE, args: { intervalMs: settings.heartbeatMs }, placement: { mode: 'shared', group: 'system' } }],
    });
    for (const tree of trees) {
      if (stopping) return;
      await system.start(tree);
    }
  };
  // A signal during start-up wins: the shutdown it began decides the exit code, and a start
  // that can no longer settle (its thread was stopped mid-init) is not waited for.
  const started = await Promise.race([startAll().then(() => 'started' as const, (err: Error) => err), stoppedAt.then(() => 'stopped' as const)]);
  if (started instanceof Error) {
    if (stopping) {
      await stoppedAt;
      return exitCode;
    }
    log.fatal({ err: started.message }, 'start-up failed');
    await stop('start-up failed', 1);
    return 1;
  }
  if (stopping) {
    await stoppedAt;
    return exitCode;
  }
  log.info({ services: services.map((s) => s.name), stateDir: settings.stateDir }, 'daemon ready');
  for (const c of draining) if (c.def.drain!.requested) void watchRequest(c);

  /** A service asks the daemon to stop by itself (the gateway's POST /drain). */
  async function watchRequest(c: ChosenService): Promise<void> {
    while (!watching.signal.aborted) {
      let reason: string | null;
      try {
        reason = await c.def.drain!.requested!(handle(c), watching.signal);
      } catch (err) {
        if (watching.signal.aborted) return;
        log.debug({ service: c.def.name, err: (err as Error).message }, 'drain request watch failed; retrying');
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (reason !== null && !watching.signal.aborted) {
        void stop(reason, 0);
        return;
      }
    }
  }

  void system.failed.then((reason) => stop(`supervision gave up: ${reason}`, 1));
  await stoppedAt;
  return exitCode;
}
