/** The daemon's own settings (services add theirs in their folders). */
import { availableParallelism } from 'node:os';
import { isAbsolute } from 'node:path';
import { LOG_LEVELS } from '../log.js';
import { int, list, oneOf, str, type Values } from './settings.js';

export const SERVICE_NAMES = ['objstore', 'media', 'gateway', 'deployer'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const stateDirSetting = str({
  env: 'HOSTD_STATE_DIR',
  flag: 'state-dir',
  description: 'State directory: LMDB environment (checkpoints, metadata), key file, identity',
  expect: 'an absolute path',
  default: '/var/lib/objstore',
  valid: isAbsolute,
});

export function daemonSchema(available: readonly ServiceName[]) {
  return {
    stateDir: stateDirSetting,
    services: list({
      env: 'HOSTD_SERVICES',
      flag: 'services',
      description: 'Services to run',
      values: SERVICE_NAMES,
      default: () => [...available],
    }),
    metricsPort: int({ env: 'HOSTD_METRICS_PORT', flag: 'metrics-port', description: 'Port of the Prometheus /metrics endpoint (0 = any free port)', min: 0, max: 65535, default: 9464 }),
    metricsHost: str({ env: 'HOSTD_METRICS_HOST', flag: 'metrics-host', description: 'Address the metrics endpoint binds', default: '0.0.0.0' }),
    logLevel: oneOf({ env: 'HOSTD_LOG_LEVEL', flag: 'log-level', description: 'Log level', values: LOG_LEVELS, default: 'info' }),
    requestTimeoutMs: int({ env: 'HOSTD_REQUEST_TIMEOUT_MS', flag: 'request-timeout-ms', description: 'Default deadline of an actor request', min: 1, max: 600_000, default: 5000 }),
    mailboxCapacity: int({ env: 'HOSTD_MAILBOX_CAPACITY', flag: 'mailbox-capacity', description: 'Messages an actor may have waiting before new ones are refused', min: 1, max: 10_000_000, default: 10_000 }),
    groupThreads: int({ env: 'HOSTD_GROUP_THREADS', flag: 'group-threads', description: 'Worker threads per shared placement group', min: 1, max: 256, default: () => availableParallelism() }),
    poolThreads: int({ env: 'HOSTD_POOL_THREADS', flag: 'pool-threads', description: 'Worker threads of the CPU task pool', min: 1, max: 256, default: () => availableParallelism() }),
    heartbeatMs: int({ env: 'HOSTD_HEARTBEAT_MS', flag: 'heartbeat-ms', description: 'Interval of the heartbeat checkpoint', min: 50, max: 3_600_000, default: 5000 }),
    shutdownTimeoutMs: int({ env: 'HOSTD_SHUTDOWN_TIMEOUT_MS', flag: 'shutdown-timeout-ms', description: 'Hard limit on the whole shutdown (gateway drain may take 30 min)', min: 1000, max: 7_200_000, default: 35 * 60_000 }),
  };
}

export type DaemonSettings = Values<ReturnType<typeof daemonSchema>>;
