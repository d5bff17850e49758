/** The object store as a service of the daemon: its settings and its supervision tree. */
import { bool, int, resolve, str, type Setting, type Values } from '../../runtime/config/settings.js';
import { parseAllowedOrigins } from '../../protocols/objstore/origin.js';
import { defineService } from '../../runtime/service.js';
import type { SupervisorSpec } from '../../runtime/index.js';
import { DEFAULT_SCRUB_INTERVAL_DAYS } from '../../protocols/objstore/maintenance.js';
import { SCHEDULER_ID, type SchedulerArgs } from '../scheduler/messages.js';
import { DEFAULT_HEALTH_FAULT_THRESHOLD } from './metadata.js';
import { DEFAULT_CHUNK_SIZE } from '../../protocols/objstore/layout.js';
import { OBJSTORE_ID, type ObjstoreArgs } from './messages.js';
import { stripeCoderId } from '../stripe-coder/messages.js';
import { availableParallelism } from 'node:os';
import { MOUNT_ID, MOUNT_PATH, type MountArgs } from '../objstore-mount/messages.js';
import { objstoreCommand } from './commands.js';

export const objstoreSettings = {
  ioTimeoutMs: int({ env: 'OBJSTORE_IO_TIMEOUT_MS', flag: 'objstore-io-timeout-ms', description: 'A disk operation slower than this fails (the disk counts as not answering)', min: 100, max: 600_000, default: 10_000 }),
  bodyIdleTimeoutMs: int({ env: 'OBJSTORE_BODY_IDLE_TIMEOUT_MS', flag: 'objstore-body-idle-timeout-ms', description: 'A PUT body that stalls this long is answered 455 and dropped (a management request\'s body: 408 BODY_TIMEOUT)', min: 100, max: 600_000, default: 30_000 }),
  sendIdleTimeoutMs: int({ env: 'OBJSTORE_SEND_IDLE_TIMEOUT_MS', flag: 'objstore-send-idle-timeout-ms', description: 'A GET whose client takes nothing of the body this long is cut (and logged); a slow reader that makes progress is never cut', min: 100, max: 3_600_000, default: 60_000 }),
  headersTimeoutMs: int({ env: 'OBJSTORE_HEADERS_TIMEOUT_MS', flag: 'objstore-headers-timeout-ms', description: 'A request line and headers that take longer than this to arrive are answered 408 and the connection closed', min: 100, max: 600_000, default: 20_000 }),
  keepAliveTimeoutMs: int({ env: 'OBJSTORE_KEEPALIVE_TIMEOUT_MS', flag: 'objstore-keepalive-timeout-ms', description: 'An idle keep-alive connection on port 80 is closed after this', min: 100, max: 600_000, default: 5_000 }),
  maxHeaderBytes: int({ env: 'OBJSTORE_MAX_HEADER_BYTES', flag: 'objstore-max-header-bytes', description: 'Largest request line and headers accepted on port 80 (431 above)', min: 1024, max: 1024 * 1024, default: 16 * 1024 }),
  maxObjectBytes: int({ env: 'OBJSTORE_MAX_OBJECT_BYTES', flag: 'objstore-max-object-bytes', description: 'Largest object accepted (413 above)', min: 1, max: Number.MAX_SAFE_INTEGER, default: 5 * 1024 ** 4 }),
  demoVolumes: bool({ env: 'OBJSTORE_DEMO_VOLUMES', flag: 'demo-volumes', description: 'With no volume registered, make six sparse files in the state directory, attach them as loop devices and provision them (npm start does this)', default: false }),
  drainConcurrency: int({ env: 'OBJSTORE_DRAIN_CONCURRENCY', flag: 'objstore-drain-concurrency', description: 'Objects a drain relocates at once', min: 1, max: 64, default: 4 }),
  scrubIntervalDays: int({ env: 'OBJSTORE_SCRUB_INTERVAL_DAYS', flag: 'objstore-scrub-interval-days', description: 'A full scrub of every volume runs this often (0: never)', min: 0, max: 3650, default: DEFAULT_SCRUB_INTERVAL_DAYS }),
  healthFaultThreshold: int({ env: 'OBJSTORE_HEALTH_FAULT_THRESHOLD', flag: 'objstore-health-fault-threshold', description: 'Distinct faulty slices that make a volume read-only and unhealthy', min: 1, max: 1_000_000, default: DEFAULT_HEALTH_FAULT_THRESHOLD }),
  moveGraceMs: int({ env: 'OBJSTORE_MOVE_GRACE_MS', flag: 'objstore-move-grace-ms', description: 'A relocated slice\'s old copy is deleted this long after the record points to the new one (reads in flight finish on it)', min: 0, max: 3_600_000, default: 60_000 }),
  allowedOrigins: {
    env: 'OBJSTORE_ALLOWED_ORIGINS',
    flag: 'objstore-allowed-origins',
    description: "Browser origins (scheme://host[:port], comma-separated) besides the store's own that may use the management API and get the objects' CORS preflight approved; empty by default: a page on another site must not drive an unauthenticated port 80 from the operator's browser",
    expect: 'comma-separated origins like https://ui.example:8443',
    default: [] as string[],
    parse: (raw: string) => parseAllowedOrigins(raw),
    show: (v: string[]) => v.join(',') || '(none)',
  } satisfies Setting<string[]>,
  encryptNewVolumes: bool({ env: 'OBJSTORE_ENCRYPT_NEW_VOLUMES', flag: 'objstore-encrypt-new-volumes', description: 'POST /$/volumes without `encrypt` encrypts the new volume (the fleet setting encryptNewVolumes; PUT /$/encryption changes it for the fleet, and that value, kept in the records, then wins)', default: false }),
  mountPath: str({ env: 'OBJSTORE_MOUNT_PATH', flag: 'objstore-mount-path', description: `Where the read-only FUSE mount is served. For tests only: the spec fixes it at ${MOUNT_PATH}; a test mounting elsewhere does not collide with a daemon or another test`, default: MOUNT_PATH, valid: (v) => v.startsWith('/') }),
  demoVolumeMiB: int({ env: 'OBJSTORE_DEMO_VOLUME_MIB', flag: 'demo-volume-mib', description: 'Size of each demo volume file (sparse; XFS needs at least 300 MiB)', min: 320, max: 1024 * 1024, default: 4096 }),
  chatWebhookUrl: {
    ...str({ env: 'OBJSTORE_CHAT_WEBHOOK_URL', flag: 'objstore-chat-webhook-url', description: 'Chat webhook (Slack, Mattermost, Google Chat incoming webhook) that notifications are POSTed to as JSON {text}, besides the log; empty: the log only', expect: 'an http(s) URL', default: '', valid: (v) => /^https?:\/\/\S+$/.test(v) }),
    // The URL holds the webhook's secret: never shown.
    show: (v: string) => (v ? '(set)' : '(none)'),
  } satisfies Setting<string>,
  deviceScanIntervalMs: int({ env: 'OBJSTORE_DEVICE_SCAN_INTERVAL_MS', flag: 'objstore-device-scan-interval-ms', description: 'The block devices are rescanned this often (a disk gone turns its volume missing; a missing one found again is served), besides hotplug events', min: 100, max: 3_600_000, default: 30_000 }),
  disableUdev: bool({ env: 'OBJSTORE_DISABLE_UDEV', flag: 'objstore-disable-udev', description: 'Ignore hotplug events (udevadm monitor, or /dev); the periodic rescan remains', default: false }),
  syslogWatchIntervalMs: int({ env: 'OBJSTORE_SYSLOG_WATCH_INTERVAL_MS', flag: 'objstore-syslog-watch-interval-ms', description: "The kernel log (/dev/kmsg) is read this often; an I/O error of a volume's disk arms a verify run of it (0: off)", min: 0, max: 3_600_000, default: 10_000 }),
  syslogVerifyCooldownMs: int({ env: 'OBJSTORE_SYSLOG_VERIFY_COOLDOWN_MS', flag: 'objstore-syslog-verify-cooldown-ms', description: 'After the kernel-log watcher armed a verify run of a volume, more I/O errors of it arm none for this long', min: 0, max: 7 * 86_400_000, default: 3_600_000 }),
  journal: bool({ env: 'OBJSTORE_JOURNAL', flag: 'objstore-journal', description: 'Append every metadata change to a journal on several volumes before it commits, so `hostd restore` can rebuild the record database from the disks (turn off only to measure its cost)', default: true }),
  journalReplicas: int({ env: 'OBJSTORE_JOURNAL_REPLICAS', flag: 'objstore-journal-replicas', description: 'Volumes that each carry a copy of the metadata journal (distinct bus groups first)', min: 1, max: 16, default: 3 }),
  snapshotIntervalMinutes: int({ env: 'OBJSTORE_SNAPSHOT_INTERVAL_MINUTES', flag: 'objstore-snapshot-interval-minutes', description: 'A snapshot of the record database is taken this often, stored as an object (0: only on demand, POST /$/snapshots)', min: 0, max: 525_600, default: 1440 }),
};

/** The object store's settings, resolved (typed by the schema above). */
export type ObjstoreValues = Values<typeof objstoreSettings>;

/**
 * Stripes a PUT encodes and writes at once (beyond them the body is paused), and half the stripes
 * a GET reads per batch. A PUT stream is CPU-bound on the VM: 16 or 32 measured the same as 8
 * (the stripes wait longer, none goes faster), with twice or four times the memory per PUT.
 */
const STRIPES_IN_FLIGHT = 8;

/**
 * File operations at once on one disk (its queue; background work gets a quarter of them, see
 * docs/maintenance.md "Low I/O priority"). Enough to keep a SATA/NVMe queue busy with the
 * parallel slices of several PUTs and GETs without one disk taking every handler of its actor.
 */
const VOLUME_MAX_INFLIGHT = 16;

/** How often the repair worker looks for pending faults. */
const REPAIR_INTERVAL_MS = 5000;

/** `values` over the schema's defaults (tests and benches give only a few; undefined = default). */
function withDefaults(values: Partial<ObjstoreValues>): ObjstoreValues {
  const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<ObjstoreValues>;
  return { ...resolve(objstoreSettings, {}, {}), ...given };
}

export const OBJSTORE_MODULE = new URL('./actor.js', import.meta.url).href;

/** The object store actor's arguments; the daemon binds port 80, tests an ephemeral port. */
export function objstoreArgs(stateDir: string, given: Partial<ObjstoreValues>, port = 80, host = '0.0.0.0'): ObjstoreArgs {
  const values = withDefaults(given);
  return {
    host,
    port,
    stateDir,
    ioTimeoutMs: values.ioTimeoutMs,
    bodyIdleTimeoutMs: values.bodyIdleTimeoutMs,
    sendIdleTimeoutMs: values.sendIdleTimeoutMs,
    maxHeaderBytes: values.maxHeaderBytes,
    headersTimeoutMs: values.headersTimeoutMs,
    keepAliveTimeoutMs: values.keepAliveTimeoutMs,
    maxObjectBytes: values.maxObjectBytes,
    allowedOrigins: values.allowedOrigins,
    demoVolumes: values.demoVolumes,
    demoVolumeMiB: values.demoVolumeMiB,
    encryptNewVolumes: values.encryptNewVolumes,
    maxChunkSize: DEFAULT_CHUNK_SIZE,
    stripesInFlight: STRIPES_IN_FLIGHT,
    stripeCoders: Math.max(1, Math.min(4, availableParallelism())),
    volumeMaxInflight: VOLUME_MAX_INFLIGHT,
    healthFaultThreshold: values.healthFaultThreshold,
    chatWebhookUrl: values.chatWebhookUrl,
    deviceScanIntervalMs: values.deviceScanIntervalMs,
    disableUdev: values.disableUdev,
    syslogWatchIntervalMs: values.syslogWatchIntervalMs,
    syslogVerifyCooldownMs: values.syslogVerifyCooldownMs,
    journal: values.journal,
    journalReplicas: values.journalReplicas,
    snapshotIntervalMinutes: values.snapshotIntervalMinutes,
  };
}

export const MOUNT_MODULE = new URL('../objstore-mount/actor.js', import.meta.url).href;

/** The mount actor's arguments (actors/objstore-mount). */
export function mountArgs(given: Partial<ObjstoreValues>): MountArgs {
  const values = withDefaults(given);
  return { path: values.mountPath, store: OBJSTORE_ID, ioTimeoutMs: values.ioTimeoutMs };
}

export const STRIPE_CODER_MODULE = new URL('../stripe-coder/actor.js', import.meta.url).href;

export const SCHEDULER_MODULE = new URL('../scheduler/actor.js', import.meta.url).href;

export function schedulerArgs(stateDir: string, given: Partial<ObjstoreValues>, extra: Partial<SchedulerArgs> = {}): SchedulerArgs {
  const values = withDefaults(given);
  return {
    stateDir,
    ioTimeoutMs: values.ioTimeoutMs,
    maxChunkSize: DEFAULT_CHUNK_SIZE,
    drainConcurrency: values.drainConcurrency,
    moveGraceMs: values.moveGraceMs,
    scrubIntervalDays: values.scrubIntervalDays,
    repairIntervalMs: REPAIR_INTERVAL_MS,
    healthFaultThreshold: values.healthFaultThreshold,
    ...extra,
  };
}

/**
 * The object store's supervision tree: the stripe coders (a thread each: the MD5 and parity of
 * PUTs), the store (HTTP, metadata, the volume actors it spawns), the read-only mount (given
 * `mount`: the daemon always; tests that do not test the mount leave it out, the mount point being
 * one per machine), then the maintenance scheduler, on a thread of its own (it starts after the
 * volumes exist).
 */
export function objstoreSupervisor(objstore: ObjstoreArgs, scheduler: SchedulerArgs, mount?: MountArgs): SupervisorSpec {
  return {
    id: 'objstore.supervisor',
    children: [
      ...Array.from({ length: objstore.stripeCoders }, (_, n) => ({ id: stripeCoderId(n), module: STRIPE_CODER_MODULE, args: {}, placement: { mode: 'dedicated' as const } })),
      { id: OBJSTORE_ID, module: OBJSTORE_MODULE, args: objstore, shutdownMs: 30_000 },
      ...(mount ? [{ id: MOUNT_ID, module: MOUNT_MODULE, args: mount, placement: { mode: 'dedicated' as const }, shutdownMs: 10_000 }] : []),
      { id: SCHEDULER_ID, module: SCHEDULER_MODULE, args: scheduler, placement: { mode: 'dedicated' }, shutdownMs: 30_000 },
    ],
  };
}

export const service = defineService({
  name: 'objstore',
  settings: objstoreSettings,
  command: objstoreCommand,
  supervisor: ({ settings, values }) => objstoreSupervisor(objstoreArgs(settings.stateDir, values), schedulerArgs(settings.stateDir, values), mountArgs(values)),
});
