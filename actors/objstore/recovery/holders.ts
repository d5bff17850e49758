/**
 * Who has the record database open: the processes holding `<stateDir>/hostd.lmdb` (or its lock
 * file) open, found the way fuser finds them, through /proc/<pid>/fd. A running daemon keeps the
 * environment open for its whole life, so this is the daemon-is-running check of `hostd recover`
 * (and it cannot go stale the way a pid file does after kill -9). A database file deleted while a
 * daemon still has it open (its link reads "... (deleted)") counts too. Needs root to see other
 * users' processes, as the daemon and recovery run.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ENV_FILE } from '../../../runtime/checkpoint/store.js';

export interface Holder {
  pid: number;
  /** its command line, spaces between the arguments */
  command: string;
  file: string;
}

/** Processes other than this one with the state directory's record database open. */
export async function databaseHolders(stateDir: string): Promise<Holder[]> {
  const env = resolve(stateDir, ENV_FILE);
  const wanted = new Set([env, `${env}-lock`]);
  const out: Holder[] = [];
  for (const name of await readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) continue;
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to see
    }
    for (const fd of fds) {
      const target = await readlink(join(`/proc/${pid}/fd`, fd)).catch(() => '');
      const file = target.replace(/ \(deleted\)$/, '');
      if (!wanted.has(file)) continue;
      const command = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').filter(Boolean).join(' ');
      out.push({ pid, command, file: target });
      break;
    }
  }
  return out;
}
