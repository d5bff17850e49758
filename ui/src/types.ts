/**
 * The management API's answers as the UI reads them (spec: object-store.md; fields:
 * docs/object-store.md and docs/maintenance.md). Only the fields the pages show are declared;
 * the server's own types stay on the server (they import Node modules this bundle has not).
 */

export interface SmartInfo {
  available: boolean;
  reason?: string;
  passed?: boolean;
  model?: string | null;
  serial?: string | null;
  temperatureC?: number | null;
  powerOnHours?: number | null;
  attributes?: Array<{ id: number; name: string; value: number; worst: number; thresh: number; raw: number | string }>;
  messages?: string[];
}

export interface Volume {
  id: number;
  label: string;
  comment: string;
  isEnabled: boolean;
  isReadOnly: boolean;
  isHealthy: boolean;
  isDraining: boolean;
  isDeleted: boolean;
  isMissing: boolean;
  /** absent from a server without encryption at all; false where it is not encrypted */
  isEncrypted?: boolean;
  device: string | null;
  lastDevice: string | null;
  bytesTotal: number | null;
  bytesFree: number | null;
  busGroup: string;
  faults: number;
  createdAt: string;
  smartInfo: SmartInfo;
}

export interface Status {
  volumes: Record<'writable' | 'readOnly' | 'unhealthy' | 'draining' | 'missing' | 'disabled' | 'deleted', number[]>;
  objects: number;
  gbStored: number;
  gbCapacity: number;
  gbFree: number;
}

export interface Fault {
  objectId: string;
  sliceIndex: number;
  volumeId: number;
  code: string;
  message: string;
  firstSeenAt: number;
  lastSeenAt: number;
  count: number;
  repairStatus: 'pending' | 'repairing' | 'blocked' | string;
  repairBlockedReason: string | null;
}

export interface Drain {
  volumeId: number;
  state: 'running' | 'completed' | 'cancelled';
  startedAt: string;
  finishedAt: string | null;
  moved: number;
  copied: number;
  reconstructed: number;
  bytesMoved: number;
  noDest: number;
  stuck: Array<{ objectId: string; index: number; reason: string }>;
  remaining: number;
  pausedBy: string | null;
}

export interface Rebalance {
  running: boolean;
  concurrency: number;
  targetFill: number;
  deadband: number;
  bytesToMove: number;
  bytesMoved: number;
  bytesPerSec: number;
  etaSeconds: number | null;
  sourceVolumeIds: number[];
  currentSourceVolumeId: number | null;
  startedAt: string | null;
  moves: number;
  pausedBy?: string | null;
}

export interface VerifyRun {
  id: string;
  trigger: { kind: string; device?: string; signal?: string; detail?: string };
  mode: 'light' | 'full';
  volumeIds: number[] | null;
  status: 'running' | 'completed' | 'stopped';
  requestedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  objectsChecked: number;
  slicesChecked: number;
  bytesChecked: number;
  errors: Record<string, number>;
  stopReason: string | null;
}

export interface VerifyState {
  running: boolean;
  waitingOnRebalance: boolean;
  frozen: boolean;
  run: VerifyRun | null;
  objectsTotal: number;
  percent: number;
}

export interface BlockDevice {
  name: string;
  path: string;
  size: number;
  model: string | null;
  serial: string | null;
  type: string;
  fstype: string | null;
  label: string | null;
  mountpoints: Array<string | null>;
  children: BlockDevice[];
}

export interface Bucket {
  name: string;
  publicRead: boolean;
  publicWrite: boolean;
  deleteProtected: boolean;
}

export interface BucketStats {
  takenAt: string;
  buckets: Array<{ name: string; objects: number; logicalBytes: number }>;
}
