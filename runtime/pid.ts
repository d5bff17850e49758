/**
 * Is a process alive? Signal 0 checks without signalling: ESRCH means gone; EPERM means it
 * exists but belongs to someone else (alive). Used to sweep what a killed process left behind
 * (temp directories, shared-memory files named by their pid).
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
