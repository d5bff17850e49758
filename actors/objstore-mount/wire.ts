/**
 * The messages between the mount actor and its FUSE process (fuse-process.ts), over the child's
 * IPC channel ('advanced' serialization). The bytes of a read never cross it: the FUSE process
 * names a slot of the windows file (window-file.ts) and the store writes the window there; the
 * answer says how many bytes it wrote. One declaration for both sides.
 */
import type { MountEntry, MountListing } from '../objstore/messages.js';
import type { MountEngine } from './messages.js';

export type Question =
  | { op: 'stat'; path: string }
  | { op: 'list'; path: string }
  | { op: 'statMany'; path: string; names: string[] }
  /** bytes [start, start + length) of object `id`, written at `offset` of the windows file */
  | { op: 'read'; id: string; start: number; length: number; offset: number };

export type FromFuse =
  /** mounted: serving; `readAhead`: why the kernel's read-ahead could not be raised (bdi.ts), if it could not */
  | { t: 'mounted'; readAhead?: string }
  /** the mount failed; the process exits */
  | { t: 'failed'; message: string }
  | ({ t: 'ask'; n: number } & Question);

export type ToFuse =
  /** errno: null, or the errno name the file system answers ('ENOENT', 'EIO', ...); `bytes`: a read's count */
  | { t: 'answer'; n: number; errno: string | null; message?: string; entry?: MountEntry | null; listing?: MountListing | null; entries?: Array<MountEntry | null>; bytes?: number }
  /** unmount and exit */
  | { t: 'unmount' };

/** What the FUSE process needs to know, as its one argument (JSON). */
export interface FuseProcessArgs {
  path: string;
  /** a FUSE operation not answered in this time fails with ETIMEDOUT (fuse-native's own timer) */
  opTimeoutMs: number;
  /** the windows file (window-file.ts), made by the actor */
  windows: string;
  engine: MountEngine;
}
