import type { Protocol } from '../../runtime/index.js';
import type { Notification } from '../../protocols/objstore/notify.js';

/** What the object store actor accepts (besides its HTTP and, later, FUSE front ends). */
export type ObjstoreMsg =
  | { type: 'info' }
  /** a condition found in another thread (the scheduler's): told through the store's notifier */
  | { type: 'notify'; notification: Notification };

export interface ObjstoreInfo {
  /** the bound HTTP port (80 in the daemon; ephemeral in tests) */
  port: number;
  volumes: { present: number[]; missing: number[] };
  instanceId: string;
}

export interface ObjstoreReplies {
  info: ObjstoreInfo;
}

export type ObjstoreProtocol = Protocol<ObjstoreMsg, ObjstoreReplies>;

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
}

export const OBJSTORE_ID = 'objstore';
