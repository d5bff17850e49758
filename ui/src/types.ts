/**
 * The management API's answers as the UI reads them (spec: object-store.md; fields:
 * docs/object-store.md and docs/maintenance.md). Only the fields the pages show are declared;
 * the wire types of protocols/ (pure) are imported; the volume view and the block device list
 * are declared here, as the server declares them in actors/ beside Node-only code.
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

/** Drains, the rebalance and verification runs: their wire types are protocols/'s (pure, no I/O). */
export type { DrainProgress as Drain, RebalanceProgress as Rebalance, VerifyProgress as VerifyState, VerifyRun } from '../../protocols/objstore/maintenance.js';

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
