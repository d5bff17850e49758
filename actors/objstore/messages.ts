import type { Protocol } from '../../runtime/index.js';
import type { Notification } from '../../protocols/objstore/notify.js';
import type { JournalOp } from '../../protocols/objstore/journal-format.js';

/**
 * What the object store actor accepts (besides its HTTP front). The mount* messages are the
 * read-only mount's (actors/objstore-mount) questions, answered by mount-source.ts: FUSE paths
 * as the kernel gives them ('/', '/bucket/a/b', '/$<id>').
 */
export type ObjstoreMsg =
  | { type: 'info' }
  /** a condition found in another thread (the scheduler's): told through the store's notifier */
  | { type: 'notify'; notification: Notification }
  /** an entry's attributes (null: no such object or container) */
  | { type: 'mountStat'; path: string }
  /** a container's entries, names only (null: no such container) */
  | { type: 'mountList'; path: string }
  /** the entries `names` of container `path` (each null where there is none), at most MAX_STAT_MANY */
  | { type: 'mountStatMany'; path: string; names: string[] }
  /**
   * bytes [start, start + length) of an object, verified (fewer at its end), written into the
   * existing file `file` at `offset` (a mount windows file: MOUNT_WINDOWS_FILE_RE); the answer is their count.
   * Refused ENOENT, EIO or EINVAL.
   */
  | { type: 'mountRead'; id: string; start: number; length: number; file: string; offset: number }
  /**
   * A record change made on another thread (the scheduler's slice moves and volume flags), for
   * the store's journal: the answer (its sequence number, 0 with the journal off) comes once it
   * is durable; the change's transaction runs then, and journalSettle follows it, committed or not.
   */
  | { type: 'journalAppend'; op: JournalOp }
  | { type: 'journalSettle'; seq: number };

/** An entry of the mount's namespace: a container (dir) or an object with its id and exact size. */
export interface MountEntry {
  name: string;
  dir: boolean;
  id?: string;
  size?: number;
}

/** A container's entries in key order: names, and 1 in `dir` where the entry is a container. */
export interface MountListing {
  names: string[];
  dir: Uint8Array;
}

/** Most names one mountStatMany asks about. */
export const MAX_STAT_MANY = 10_000;

/**
 * The files mountRead writes into: the mount's windows files (actors/objstore-mount/window-file.ts),
 * `<shared memory or temp dir>/hostd-mount-<pid>-<random>/windows`; any other path is refused.
 */
export const MOUNT_WINDOWS_FILE_RE = /^\/(?:[^/]+\/)*hostd-mount-\d+-[^/]+\/windows$/;

/** Refusals of mountRead, named as the errno the mount answers. */
export type MountRefusal = 'ENOENT' | 'EIO' | 'EINVAL';

export interface ObjstoreInfo {
  /** the bound HTTP port (80 in the daemon; ephemeral in tests) */
  port: number;
  volumes: { present: number[]; missing: number[] };
  instanceId: string;
}

export interface ObjstoreReplies {
  info: ObjstoreInfo;
  mountStat: MountEntry | null;
  mountList: MountListing | null;
  mountStatMany: Array<MountEntry | null>;
  mountRead: number;
  journalAppend: number;
}

export type ObjstoreProtocol = Protocol<ObjstoreMsg, ObjstoreReplies, MountRefusal>;

export interface ObjstoreArgs {
  host: string;
  port: number;
  stateDir: string;
  ioTimeoutMs: number;
  maxObjectBytes: number;
  bodyIdleTimeoutMs: number;
  /** a GET whose client takes nothing this long is cut */
  sendIdleTimeoutMs: number;
  /** port 80's limits and timeouts (http/server.ts) */
  maxHeaderBytes: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** browser origins besides the store's own allowed on the management API and in CORS preflights */
  allowedOrigins: string[];
  maxChunkSize: number;
  stripesInFlight: number;
  /** stripe coders (actors/stripe-coder, one thread each) the PUTs are spread over */
  stripeCoders: number;
  volumeMaxInflight: number;
  /** distinct faulty slices that make a volume read-only and unhealthy */
  healthFaultThreshold: number;
  /** make and provision six loop-device volumes when none is registered */
  demoVolumes: boolean;
  demoVolumeMiB: number;
  /** the fleet setting's default: POST /$/volumes without `encrypt` encrypts (until PUT /$/encryption sets it) */
  encryptNewVolumes: boolean;
  /** OBJSTORE_CHAT_WEBHOOK_URL: where notifications go besides the log ('' = the log only) */
  chatWebhookUrl: string;
  /** hotplug: the periodic rescan of the block devices, and OBJSTORE_DISABLE_UDEV */
  deviceScanIntervalMs: number;
  disableUdev: boolean;
  /** the kernel-log watcher: how often it reads /dev/kmsg (0: off), and its cooldown per volume */
  syslogWatchIntervalMs: number;
  syslogVerifyCooldownMs: number;
  /** the metadata journal (journal/journal.ts): on by default; off only to measure what it costs */
  journal: boolean;
  journalReplicas: number;
  /** minutes between scheduled snapshots of the records (0: on demand only) */
  snapshotIntervalMinutes: number;
}

export const OBJSTORE_ID = 'objstore';
