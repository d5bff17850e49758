/** What is mounted where, from /proc/self/mountinfo (the mount table of this process's namespace). */
import { readFile, realpath } from 'node:fs/promises';

export interface MountEntry {
  /** 'major:minor' of the mounted device (as lsblk's MAJ:MIN). */
  majMin: string;
  mountPoint: string;
  fsType: string;
  source: string;
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

export async function readMounts(): Promise<MountEntry[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    // id parent major:minor root mountpoint options [optional fields...] - fstype source superoptions
    const f = line.split(' ');
    const dash = f.indexOf('-', 6);
    if (dash < 0 || f.length < dash + 3) continue;
    out.push({ majMin: f[2]!, mountPoint: unescape(f[4]!), fsType: f[dash + 1]!, source: unescape(f[dash + 2]!) });
  }
  return out;
}

/** Is `dir` itself a mount point (not just a directory on one)? */
export async function isMountPoint(dir: string): Promise<boolean> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch {
    return false;
  }
  return (await readMounts()).some((m) => m.mountPoint === real);
}
