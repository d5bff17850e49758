/**
 * The management API's answers as the UI reads them (spec: object-store.md; fields:
 * docs/object-store.md and docs/maintenance.md). Only the fields the pages show are declared;
 * the wire types of protocols/ (pure) are imported rather than declared again.
 */

/** The volume and block device shapes are the server's own (protocols/objstore/volume-view.ts). */
export type { DeviceEntry as BlockDevice, SmartInfo, SmartSummary, VolumeDetailView, VolumeView as Volume } from '../../protocols/objstore/volume-view.js';

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
