/**
 * Identify: making a drive's activity LED blink so an operator finds it in the rack, by reading
 * the raw block device continuously (`POST /$/volumes/{id}/identify`). A session runs until its
 * deadline (about 3 s after the last POST: the client re-POSTs about once a second) or a DELETE,
 * and stops at once: the loop checks between reads, and each read is one 64 KiB piece.
 *
 * Low priority, never delaying client I/O: one read at a time, 64 KiB, O_DIRECT (past the page
 * cache, so the disk really works and its counters in /sys/block/<dev>/stat move), a pause of
 * READ_GAP_MS between reads; sequential, wrapping to the start at the end of the device. It only
 * ever reads. A disk that fails reads stops blinking after MAX_ERRORS errors (logged).
 */
import { constants as fsc } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { AlignedSlots } from './direct-io.js';

export const IDENTIFY_DEADLINE_MS = 3000;
const PIECE = 64 * 1024;
const READ_GAP_MS = 2;
const MAX_ERRORS = 16;

const slots = new AlignedSlots(PIECE, 4);

interface Session {
  device: string;
  deadline: number;
  stopped: boolean;
  timer: NodeJS.Timeout;
  done: Promise<void>;
}

export interface IdentifyState {
  volumeId: number;
  identifying: boolean;
  device: string | null;
  /** ISO 8601; null when off */
  deadline: string | null;
}

export class Identify {
  private readonly sessions = new Map<number, Session>();

  constructor(
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    private readonly deadlineMs = IDENTIFY_DEADLINE_MS,
  ) {}

  /** Start blinking `device` for the volume, or push the deadline of a running session. */
  start(volumeId: number, device: string, now = Date.now()): IdentifyState & { extended: boolean } {
    const s = this.sessions.get(volumeId);
    if (s && !s.stopped && s.device === device) {
      s.deadline = now + this.deadlineMs;
      this.arm(volumeId, s);
      return { ...this.state(volumeId), extended: true };
    }
    if (s) this.stop(volumeId);
    const session: Session = { device, deadline: now + this.deadlineMs, stopped: false, timer: undefined as never, done: Promise.resolve() };
    this.sessions.set(volumeId, session);
    this.arm(volumeId, session);
    session.done = this.run(volumeId, session);
    this.log.info({ volumeId, device }, 'identify: reading the disk to blink its activity LED');
    return { ...this.state(volumeId), extended: false };
  }

  /** Stop at once; true if a session was running. */
  stop(volumeId: number): boolean {
    const s = this.sessions.get(volumeId);
    if (!s) return false;
    s.stopped = true;
    clearTimeout(s.timer);
    this.sessions.delete(volumeId);
    return true;
  }

  state(volumeId: number): IdentifyState {
    const s = this.sessions.get(volumeId);
    return { volumeId, identifying: !!s, device: s?.device ?? null, deadline: s ? new Date(s.deadline).toISOString() : null };
  }

  close(): void {
    for (const id of [...this.sessions.keys()]) this.stop(id);
  }

  private arm(volumeId: number, s: Session): void {
    clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      if (this.sessions.get(volumeId) === s) this.stop(volumeId);
    }, Math.max(0, s.deadline - Date.now()));
    s.timer.unref();
  }

  private async run(volumeId: number, s: Session): Promise<void> {
    let fh: FileHandle;
    try {
      fh = await open(s.device, fsc.O_RDONLY | fsc.O_DIRECT);
    } catch (err) {
      this.log.warn({ volumeId, device: s.device, err: (err as Error).message }, 'identify: cannot open the disk');
      if (this.sessions.get(volumeId) === s) this.stop(volumeId);
      return;
    }
    const slot = slots.acquire();
    let errors = 0;
    let pos = 0;
    try {
      const size = (await fh.stat()).size || Number.MAX_SAFE_INTEGER;
      while (!s.stopped) {
        try {
          const { bytesRead } = await fh.read(slot, 0, PIECE, pos);
          pos = bytesRead < PIECE || pos + PIECE >= size ? 0 : pos + PIECE;
        } catch (err) {
          pos = 0;
          if (++errors >= MAX_ERRORS) {
            this.log.warn({ volumeId, device: s.device, errors, err: (err as Error).message }, 'identify: the disk fails reads; stopped');
            if (this.sessions.get(volumeId) === s) this.stop(volumeId);
            break;
          }
        }
        await sleep(READ_GAP_MS);
      }
    } finally {
      slots.release(slot);
      await fh.close().catch(() => undefined);
    }
  }
}
