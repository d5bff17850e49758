/** `hostd daemon`: the supervisor with the chosen services, metrics, ordered shutdown on signals. */
import { SERVICE_NAMES, type DaemonSettings, type ServiceName } from '../config/daemon-settings.js';
import { ConfigError } from '../config/settings.js';
import { createLogger } from '../log.js';
import { startMetricsServer } from '../metrics/server.js';
import type { ServiceCatalogue, ServiceDefinition } from '../service.js';
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
    stopping = system.shutdown().then(() => {
      metrics.close();
      clearTimeout(hard);
      log.info({ exitCode }, 'stopped');
      markStopped();
    });
    return stopping;
  };

  const onSignal = (sig: NodeJS.Signals) => {
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

  void system.failed.then((reason) => stop(`supervision gave up: ${reason}`, 1));
  await stoppedAt;
  return exitCode;
}
