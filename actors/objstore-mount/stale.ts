/**
 * A mount left by a killed daemon: its FUSE process is gone, and every access to the mount point
 * fails with ENOTCONN ("Transport endpoint is not connected"), so nothing can be mounted there.
 * It is detached with `fusermount -uz` (lazy: even if something still has it open). A live FUSE
 * mount (another running daemon's) is never touched.
 */
import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';

export type MountPointState = 'free' | 'stale' | 'live';

/** Octal escapes of /proc/self/mountinfo (a space is \040). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export async function mountedAt(path: string): Promise<boolean> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info.split('\n').some((l) => l.split(' ')[4] !== undefined && unescape(l.split(' ')[4]!) === path);
}

export async function mountPointState(path: string): Promise<MountPointState> {
  if (!(await mountedAt(path))) return 'free';
  try {
    await stat(path);
    return 'live';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTCONN' || code === 'ECONNABORTED' || code === 'ENXIO') return 'stale';
    throw err;
  }
}

export function fusermountUnmount(path: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('fusermount', ['-uz', path], (err, _out, stderr) => (err ? reject(new Error(`fusermount -uz ${path}: ${stderr.trim() || err.message}`)) : resolve())),
  );
}
