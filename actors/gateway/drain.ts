/**
 * The gateway's drain, as the spec's state table says: serving → draining (irreversible) on the
 * first trigger (SIGTERM/SIGINT through the daemon, an authenticated POST /drain or
 * /terminate); a repeated trigger answers the same and keeps the first deadline. While
 * draining it polls the open work every 100 ms and finishes `drained` when none is left (SIP
 * calls, reserved incoming calls, media sessions, commands and HTTP requests in flight,
 * follow-up callbacks, recording downloads and merges being streamed: what `work()` counts);
 * at the deadline it runs `force()` (BYE/CANCEL, media destroyed, owners closed 1001, streams cut), bounded by the cleanup timeout, and finishes `forced`.
 * Idle control connections are not work. One home for the rule; the actor wires what it counts
 * and what forcing does.
 */
import type { Logger } from 'pino';

/** What keeps a draining gateway open. */
export interface DrainWork {
  /** SIP calls set up or being set up (outbound INVITEs out, answered calls). */
  calls: number;
  /** Inbound INVITEs offered to their owner and not answered yet. */
  reservedCalls: number;
  mediaSessions: number;
  /** Control commands and HTTP requests in flight. */
  commands: number;
  /** Follow-up callbacks (HTTP POSTs to a receiverUrl) not yet delivered. */
  callbacks: number;
  /** Recording downloads and merges still being streamed to their client. */
  recordingStreams: number;
}

export interface DrainOptions {
  maxWaitMs: number;
  cleanupTimeoutMs: number;
  log: Logger;
  work(): DrainWork;
  /** Called once, on entry (accepting off, the owners told). */
  onStart(reason: string, maxWaitMs: number): void;
  /** The deadline's cleanup. */
  force(): Promise<void>;
  timers: { setTimeout(fn: () => void, ms: number): NodeJS.Timeout; setInterval(fn: () => void, ms: number): NodeJS.Timeout };
}

export type DrainOutcome = 'drained' | 'forced';

const POLL_MS = 100;

export class Drain {
  private started: { reason: string; at: number; deadlineAt: number } | null = null;
  private outcome: DrainOutcome | null = null;
  private finish!: (o: DrainOutcome) => void;
  private startWaiters: Array<(reason: string) => void> = [];
  /** Resolves when the drain is over. */
  readonly finished: Promise<DrainOutcome>;

  constructor(private readonly o: DrainOptions) {
    this.finished = new Promise((r) => (this.finish = r));
  }

  get draining(): boolean {
    return this.started !== null;
  }

  /** Enter the drain, or (already draining) change nothing. The deadline is the first one. */
  begin(reason: string): { first: boolean; deadlineAt: number } {
    if (this.started) return { first: false, deadlineAt: this.started.deadlineAt };
    const at = Date.now();
    this.started = { reason, at, deadlineAt: at + this.o.maxWaitMs };
    this.o.log.info({ reason, maxWaitMs: this.o.maxWaitMs, work: this.o.work() }, 'draining: no new calls, routes or standalone media sessions');
    this.o.onStart(reason, this.o.maxWaitMs);
    for (const w of this.startWaiters.splice(0)) w(reason);
    const poll = this.o.timers.setInterval(() => {
      if (this.outcome || !idle(this.o.work())) return;
      clearInterval(poll);
      this.end('drained');
    }, POLL_MS);
    this.o.timers.setTimeout(() => {
      clearInterval(poll);
      if (this.outcome) return;
      void this.deadline();
    }, this.o.maxWaitMs);
    return { first: true, deadlineAt: this.started.deadlineAt };
  }

  /** The reason of the drain once it begins; null if none began within `ms`. */
  waitForStart(ms: number): Promise<string | null> {
    if (this.started) return Promise.resolve(this.started.reason);
    return new Promise((resolve) => {
      const timer = this.o.timers.setTimeout(() => {
        this.startWaiters = this.startWaiters.filter((w) => w !== waiter);
        resolve(null);
      }, ms);
      const waiter = (reason: string) => {
        clearTimeout(timer);
        resolve(reason);
      };
      this.startWaiters.push(waiter);
    });
  }

  /** What GET /drain reports. */
  status(): Record<string, unknown> {
    const open = this.o.work();
    if (!this.started) return { draining: false, open };
    const s = this.started;
    return {
      draining: true,
      reason: s.reason,
      startedAt: new Date(s.at).toISOString(),
      deadline: new Date(s.deadlineAt).toISOString(),
      remainingMs: Math.max(0, s.deadlineAt - Date.now()),
      state: this.outcome ?? 'draining',
      open,
    };
  }

  private async deadline(): Promise<void> {
    const work = this.o.work();
    this.o.log.warn({ work, cleanupTimeoutMs: this.o.cleanupTimeoutMs }, 'drain deadline reached: ending what is left');
    let bound!: NodeJS.Timeout;
    const timedOut = new Promise<'timeout'>((r) => (bound = this.o.timers.setTimeout(() => r('timeout'), this.o.cleanupTimeoutMs)));
    const r = await Promise.race([this.o.force().then(() => 'done' as const, (err: Error) => (this.o.log.warn({ err: err.message }, 'drain cleanup failed'), 'done' as const)), timedOut]);
    clearTimeout(bound);
    if (r === 'timeout') this.o.log.warn({ work: this.o.work() }, 'drain cleanup bound reached: stopping anyway');
    this.end('forced');
  }

  private end(outcome: DrainOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.o.log.info({ outcome, ms: Date.now() - this.started!.at }, 'drain finished');
    this.finish(outcome);
  }
}

function idle(w: DrainWork): boolean {
  return w.calls + w.reservedCalls + w.mediaSessions + w.commands + w.callbacks + w.recordingStreams === 0;
}
