/**
 * pino JSON logs, one line per event on stdout. Every thread builds its own root logger with
 * the same base fields; actors log through a child with `ns` (the actor kind) and `actor` (id).
 */
import { threadId } from 'node:worker_threads';
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export const LOG_LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The thread's root logger (no `ns`); pass `ns` for a child tagged with that namespace. */
export function createLogger(level: string, ns?: string): Logger {
  const root = pino(
    {
      level,
      base: { pid: process.pid, thread: threadId },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Synchronous writes: a crashing thread's last lines are not lost.
    pino.destination({ fd: 1, sync: true }),
  );
  return ns ? root.child({ ns }) : root;
}
