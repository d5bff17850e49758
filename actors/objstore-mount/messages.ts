/**
 * What the mount actor accepts, and its arguments. The actor keeps the object store's read-only
 * FUSE mount (spec: "File-system mount") served: fuse-native runs its callbacks on the main loop
 * of the process that mounts (uv_default_loop), so the file system itself is served by a child
 * process this actor starts (fuse-process.ts), which asks the actor, and the actor the store, for
 * records and bytes by messages (wire.ts). See docs/object-store.md "The mount".
 */
import type { Protocol } from '../../runtime/index.js';

/** The mount point (spec: fixed). */
export const MOUNT_PATH = '/run/objstore/data';

export const MOUNT_ID = 'objstore.mount';

export interface MountArgs {
  /** where to mount: MOUNT_PATH, except in tests (OBJSTORE_MOUNT_PATH) */
  path: string;
  /** the store actor to ask */
  store: string;
  /** the store's disk timeout: a mount read may take twice that (a slice read, then the parity) */
  ioTimeoutMs: number;
  /** which file system serves the mount (fuse-process.ts); default: 'libfuse3' when native/objstore-fuse is built */
  engine?: MountEngine;
}

/** 'libfuse3': native/objstore-fuse, reads answered in C; 'fuse-native': libfuse 2, reads through JavaScript (the fallback). */
export type MountEngine = 'libfuse3' | 'fuse-native';

export interface MountStatus {
  path: string;
  mounted: boolean;
  /** the FUSE process serving it */
  pid: number | null;
  /** the file system serving it */
  engine: MountEngine;
  /** mounts made by this instance (a remount after the FUSE process died counts) */
  mounts: number;
  /** why the last mount attempt failed or the mount went away */
  lastError: string | null;
}

export type MountMsg = { type: 'status' };

export interface MountReplies {
  status: MountStatus;
}

export type MountProtocol = Protocol<MountMsg, MountReplies>;
