/**
 * The kernel log as the kernel-log watcher reads it (actors/objstore/kmsg-watch.ts): one /dev/kmsg
 * record parsed (`priority,sequence,timestamp,flags;message`, continuation lines after it), and the
 * I/O-error lines of a disk recognised, with the device they name. Pure: tested on real lines.
 *
 * Only facility 0 (kernel) counts: a user process can write to /dev/kmsg, but the kernel never
 * gives its records facility 0 (Documentation/ABI/testing/dev-kmsg), so no one can fake a disk
 * error to arm verify runs. Forms recognised (the error kinds the block layer, XFS and the SCSI
 * disk driver print; "operation not supported error" — a discard the device does not do — is not one):
 * - block layer: `I/O error, dev loop3, sector 262336 op 0x0:(READ) …` and its siblings
 *   (`critical medium error, dev sdb, …`, `critical target error`, `timeout error`, …);
 *   `Buffer I/O error on dev sdb1, logical block 0, …`; `loop8: writeback error on inode …`;
 * - XFS: `XFS (sdb): metadata I/O error in "…" at daddr 0x0 len 1 error 5`, `log I/O error`,
 *   `SB validate failed with error -5`, `Filesystem has been shut down`, `Corruption … detected`;
 * - SCSI: `sd 2:0:0:0: [sdb] tag#3 Sense Key : Medium Error [current]`, `… Add. Sense: Unrecovered
 *   read error`, `[sdb] … FAILED Result: …`, `rejecting I/O to offline device`, `Device not ready`.
 */

export interface KmsgRecord {
  facility: number;
  level: number;
  seq: number;
  /** microseconds since boot */
  usec: number;
  message: string;
}

/** One record as read() returns it; null when it is not one (a truncated read, say). */
export function parseKmsgRecord(raw: string): KmsgRecord | null {
  const semi = raw.indexOf(';');
  if (semi < 0) return null;
  const [prio, seq, usec] = raw.slice(0, semi).split(',');
  const p = Number(prio);
  if (!Number.isInteger(p) || p < 0 || !/^\d+$/.test(seq ?? '') || !/^\d+$/.test(usec ?? '')) return null;
  const message = raw.slice(semi + 1).split('\n')[0]!;
  return { facility: p >> 3, level: p & 7, seq: Number(seq), usec: Number(usec), message };
}

export type IoErrorForm = 'block' | 'xfs' | 'scsi';

export interface IoErrorLine {
  /** the kernel name in the line (a partition's name is kept: diskOf maps it) */
  device: string;
  form: IoErrorForm;
}

const NAME = '([a-z][a-z0-9_-]*[0-9a-z])';
const BLOCK_KINDS = ['I/O error', 'critical medium error', 'critical target error', 'critical nexus error', 'critical space allocation error', 'recoverable transport error', 'timeout error', 'hardware error', 'medium error', 'device offline error', 'unaligned write command'];
const BLOCK = new RegExp(`\\b(?:${BLOCK_KINDS.map((k) => k.replace(/[/]/g, '\\/')).join('|')}), dev ${NAME},`);
const BUFFER = new RegExp(`^Buffer I\\/O error on dev ${NAME},`);
const WRITEBACK = new RegExp(`^${NAME}: writeback error on `);
const XFS = new RegExp(`^XFS \\(${NAME}\\): .*(?:I\\/O error|validate failed with error|[Ff]ilesystem has been shut down|Corruption .*detected|writeback error)`);
const SCSI = new RegExp(`\\[${NAME}\\] .*(?:Medium Error|Hardware Error|Unrecovered read error|Unrecovered write error|FAILED Result|rejecting I\\/O to offline device|[Dd]evice offline|Device not ready|critical target error|unaligned partial completion)`);

/** The disk I/O error a kernel message reports, or null. Lines that are not errors of a disk never match. */
export function matchIoError(message: string): IoErrorLine | null {
  if (/^operation not supported error/.test(message)) return null;
  let m = BLOCK.exec(message) ?? BUFFER.exec(message) ?? WRITEBACK.exec(message);
  if (m) return { device: m[1]!, form: 'block' };
  m = XFS.exec(message);
  if (m) return { device: m[1]!, form: 'xfs' };
  m = SCSI.exec(message);
  if (m) return { device: m[1]!, form: 'scsi' };
  return null;
}

/** The whole disk of a kernel name: sdf1 → sdf, nvme0n1p2 → nvme0n1, mmcblk0p1 → mmcblk0, loop3p1 → loop3. */
export function diskOf(name: string): string {
  let m = /^((?:nvme\d+n\d+)|(?:mmcblk\d+)|(?:loop\d+)|(?:md\d+))p\d+$/.exec(name);
  if (m) return m[1]!;
  m = /^((?:sd|vd|hd|xvd)[a-z]+)\d+$/.exec(name);
  if (m) return m[1]!;
  return name;
}
