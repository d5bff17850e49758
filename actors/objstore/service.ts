/** The object store as a service of the daemon: its settings and its supervision tree. */
import { bool, int } from '../../runtime/config/settings.js';
import type { ServiceDefinition } from '../../runtime/service.js';
import type { SupervisorSpec } from '../../runtime/index.js';
import { DEFAULT_SCRUB_INTERVAL_DAYS } from '../../protocols/objstore/maintenance.js';
import { SCHEDULER_ID, type SchedulerArgs } from '../scheduler/messages.js';
import { DEFAULT_HEALTH_FAULT_THRESHOLD } from './metadata.js';
import { DEFAULT_CHUNK_SIZE } from '../../protocols/objstore/layout.js';
import { OBJSTORE_ID, type ObjstoreArgs } from './messages.js';
import { stripeCoderId } from '../stripe-coder/messages.js';
import { availableParallelism } from 'node:os';

export const objstoreSettings = {
  ioTimeoutMs: int({ env: 'OBJSTORE_IO_TIMEOUT_MS', flag: 'objstore-io-timeout-ms', description: 'A disk operation slower than this fails (the disk counts as not answering)', min: 100, max: 600_000, default: 10_000 }),
  bodyIdleTimeoutMs: int({ env: 'OBJSTORE_BODY_IDLE_TIMEOUT_MS', flag: 'objstore-body-idle-timeout-ms', description: 'A PUT body that stalls this long is answered 455 and dropped', min: 100, max: 600_000, default: 30_000 }),
  maxObjectBytes: int({ env: 'OBJSTORE_MAX_OBJECT_BYTES', flag: 'objstore-max-object-bytes', description: 'Largest object accepted (413 above)', min: 1, max: Number.MAX_SAFE_INTEGER, default: 5 * 1024 ** 4 }),
  demoVolumes: bool({ env: 'OBJSTORE_DEMO_VOLUMES', flag: 'demo-volumes', description: 'With no volume registered, make six sparse files in the state directory, attach them as loop devices and provision them (npm start does this)', default: false }),
  drainConcurrency: int({ env: 'OBJSTORE_DRAIN_CONCURRENCY', flag: 'objstore-drain-concurrency', description: 'Objects a drain relocates at once', min: 1, max: 64, default: 4 }),
  scrubIntervalDays: int({ env: 'OBJSTORE_SCRUB_INTERVAL_DAYS', flag: 'objstore-scrub-interval-days', description: 'A full scrub of every volume runs this often (0: never)', min: 0, max: 3650, default: DEFAULT_SCRUB_INTERVAL_DAYS }),
  healthFaultThreshold: int({ env: 'OBJSTORE_HEALTH_FAULT_THRESHOLD', flag: 'objstore-health-fault-threshold', description: 'Distinct faulty slices that make a volume read-only and unhealthy', min: 1, max: 1_000_000, default: DEFAULT_HEALTH_FAULT_THRESHOLD }),
  moveGraceMs: int({ env: 'OBJSTORE_MOVE_GRACE_MS', flag: 'objstore-move-grace-ms', description: 'A relocated slice\'s old copy is deleted this long after the record points to the new one (reads in flight finish on it)', min: 0, max: 3_600_000, default: 60_000 }),
  demoVolumeMiB: int({ env: 'OBJSTORE_DEMO_VOLUME_MIB', flag: 'demo-volume-mib', description: 'Size of each demo volume file (sparse; XFS needs at least 300 MiB)', min: 320, max: 1024 * 1024, default: 4096 }),
};

export interface ObjstoreValues {
  ioTimeoutMs: number;
  bodyIdleTimeoutMs: number;
  maxObjectBytes: number;
  demoVolumes: boolean;
  demoVolumeMiB: number;
  drainConcurrency: number;
  scrubIntervalDays: number;
  healthFaultThreshold: number;
  moveGraceMs: number;
}

export const OBJSTORE_MODULE = new URL('./actor.js', import.meta.url).href;

/** The object store actor's arguments; the daemon binds port 80, tests an ephemeral port. */
export function objstoreArgs(stateDir: string, values: Partial<ObjstoreValues> & Pick<ObjstoreValues, 'ioTimeoutMs' | 'bodyIdleTimeoutMs' | 'maxObjectBytes'>, port = 80, host = '0.0.0.0'): ObjstoreArgs {
  return {
    host,
    port,
    stateDir,
    ioTimeoutMs: values.ioTimeoutMs,
    bodyIdleTimeoutMs: values.bodyIdleTimeoutMs,
    maxObjectBytes: values.maxObjectBytes,
    demoVolumes: values.demoVolumes ?? false,
    demoVolumeMiB: values.demoVolumeMiB ?? 4096,
    maxChunkSize: DEFAULT_CHUNK_SIZE,
    stripesInFlight: 8,
    stripeCoders: Math.max(1, Math.min(4, availableParallelism())),
    volumeMaxInflight: 16,
    healthFaultThreshold: values.healthFaultThreshold ?? DEFAULT_HEALTH_FAULT_THRESHOLD,
  };
}

export const STRIPE_CODER_MODULE = new URL('../stripe-coder/actor.js', import.meta.url).href;

export const SCHEDULER_MODULE = new URL('../scheduler/actor.js', import.meta.url).href;

export function schedulerArgs(stateDir: string, values: Partial<ObjstoreValues> & Pick<ObjstoreValues, 'ioTimeoutMs'>, extra: Partial<SchedulerArgs> = {}): SchedulerArgs {
  return {
    stateDir,
    ioTimeoutMs: values.ioTimeoutMs,
    maxChunkSize: DEFAULT_CHUNK_SIZE,
    drainConcurrency: values.drainConcurrency ?? 4,
    moveGraceMs: values.moveGraceMs ?? 60_000,
    scrubIntervalDays: values.scrubIntervalDays ?? DEFAULT_SCRUB_INTERVAL_DAYS,
    repairIntervalMs: 5000,
    healthFaultThreshold: values.healthFaultThreshold ?? DEFAULT_HEALTH_FAULT_THRESHOLD,
    ...extra,
  };
}

/**
 * The object store's supervision tree: the stripe coders (a thread each: the MD5 and parity of
 * PUTs), the store (HTTP, metadata, the volume actors it spawns), then the maintenance scheduler,
 * on a thread of its own (it starts after the volumes exist).
 */
export function objstoreSupervisor(objstore: ObjstoreArgs, scheduler: SchedulerArgs): SupervisorSpec {
  return {
    id: 'objstore.supervisor',
    children: [
      ...Array.from({ length: objstore.stripeCoders }, (_, n) => ({ id: stripeCoderId(n), module: STRIPE_CODER_MODULE, args: {}, placement: { mode: 'dedicated' as const } })),
      { id: OBJSTORE_ID, module: OBJSTORE_MODULE, args: objstore, shutdownMs: 30_000 },
      { id: SCHEDULER_ID, module: SCHEDULER_MODULE, args: scheduler, placement: { mode: 'dedicated' }, shutdownMs: 30_000 },
    ],
  };
}

export const service: ServiceDefinition = {
  name: 'objstore',
  settings: objstoreSettings,
  supervisor({ settings, values }) {
    const v = values as unknown as ObjstoreValues;
    return objstoreSupervisor(objstoreArgs(settings.stateDir, v), schedulerArgs(settings.stateDir, v));
  },
};
