/**
 * The messages between the mount actor and its FUSE process (fuse-process.ts). Questions and
 * answers go over the child's IPC channel ('advanced' serialization); the bytes of a successful
 * read go over a pipe of their own (the child's fd DATA_FD), as frames of a DATA_HEADER-byte
 * header (u32 question number, u32 length, big-endian) and the bytes: Node's IPC channel moves
 * ~200 MiB/s of large messages here, a plain pipe several times that. One declaration for both sides.
 */
export const DATA_FD = 4;
export const DATA_HEADER = 8;
import type { MountEntry, MountListing } from '../objstore/messages.js';

export type Question =
  | { op: 'stat'; path: string }
  | { op: 'list'; path: string }
  | { op: 'statMany'; path: string; names: string[] }
  | { op: 'read'; id: string; start: number; length: number };

export type FromFuse =
  /** mounted: serving */
  | { t: 'mounted' }
  /** the mount failed; the process exits */
  | { t: 'failed'; message: string }
  | ({ t: 'ask'; n: number } & Question);

export type ToFuse =
  /** errno: null, or the errno name the file system answers ('ENOENT', 'EIO', ...) */
  | { t: 'answer'; n: number; errno: string | null; message?: string; entry?: MountEntry | null; listing?: MountListing | null; entries?: Array<MountEntry | null>; data?: Uint8Array }
  /** unmount and exit */
  | { t: 'unmount' };

/** What the FUSE process needs to know, as its one argument (JSON). */
export interface FuseProcessArgs {
  path: string;
  /** a FUSE operation not answered in this time fails with ETIMEDOUT (fuse-native's own timer) */
  opTimeoutMs: number;
}
