/**
 * At most `maxInflight` file operations in flight on one disk, the rest wait; an operation that
 * does not end in time fails with IoTimeout after `timeoutMs`.
 *
 * Two priorities, each with its own FIFO. 'normal' (client traffic) is what the queue always was:
 * its timeout counts from submission, waiting included. 'low' (background work: drain, rebalance,
 * scrub, repair) starts only when no normal operation waits, a slot is free and fewer than
 * `maxLowInflight` low operations run (default a quarter of maxInflight, at least 1): normal
 * operations are never held up by low ones beyond those already running. A low operation's timeout
 * counts from its start: waiting behind client traffic is not the disk failing, and a TIMEOUT
 * refusal counts as a disk error. The kernel's I/O priorities do not survive a loop device, hence
 * this queue. The priority is the `priority` argument of run(), else the one of the caller's async
 * context (`ioPriority.run('low', ...)`, set by the volume actor per message), else normal; an
 * operation started later by the queue runs in its submitter's async context.
 *
 * A timeout frees the caller, not the operation: Node runs file system calls on the libuv thread
 * pool (4 threads per process unless UV_THREADPOOL_SIZE says otherwise, shared by every worker
 * thread of the process), and a syscall stuck on a disk that stopped answering keeps its pool
 * thread busy until the kernel gives up. So a timed-out operation keeps its slot here until it
 * really ends: a dead disk can hold at most `maxInflight` pool threads, and further operations
 * on it time out in the queue instead of taking more threads from the other disks. The process's
 * pool must therefore be larger than the sum of maxInflight over the disks that may hang at once.
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { Priority, PriorityStats } from './messages.js';

/** The I/O priority of the current async context (IoQueue.run reads it when given none). */
export const ioPriority = new AsyncLocalStorage<Priority>();

export class IoTimeout extends Error {
  readonly what: string;
  readonly ms: number;
  constructor(what: string, ms: number) {
    super(`${what}: no answer from the disk within ${ms} ms`);
    this.name = 'IoTimeout';
    this.what = what;
    this.ms = ms;
  }
}

export interface IoQueueOptions {
  /** At most this many low-priority operations at once (default max(1, floor(maxInflight / 4))). */
  maxLowInflight?: number;
}

/** One priority: its waiting operations and its figures. */
class Lane {
  active = 0;
  readonly waiting: Array<() => void> = [];
  started = 0;
  completed = 0;
  waitMsTotal = 0;
  waitMsMax = 0;

  stats(): PriorityStats {
    return { started: this.started, completed: this.completed, active: this.active, queued: this.waiting.length, waitMsTotal: this.waitMsTotal, waitMsMax: this.waitMsMax };
  }
}

export class IoQueue {
  private active = 0;
  private readonly normal = new Lane();
  private readonly low = new Lane();
  private readonly maxInflight: number;
  private readonly maxLowInflight: number;
  private readonly timeoutMs: number;

  constructor(maxInflight: number, timeoutMs: number, opts: IoQueueOptions = {}) {
    if (!Number.isSafeInteger(maxInflight) || maxInflight < 1) throw new RangeError(`maxInflight must be a positive integer, got ${String(maxInflight)}`);
    if (!(timeoutMs > 0)) throw new RangeError(`ioTimeoutMs must be positive, got ${String(timeoutMs)}`);
    const maxLow = opts.maxLowInflight ?? Math.max(1, Math.floor(maxInflight / 4));
    if (!Number.isSafeInteger(maxLow) || maxLow < 1) throw new RangeError(`maxLowInflight must be a positive integer, got ${String(maxLow)}`);
    this.maxInflight = maxInflight;
    this.maxLowInflight = maxLow;
    this.timeoutMs = timeoutMs;
  }

  /** Operations running now, both priorities (timed-out ones whose syscall has not returned included). */
  get inflight(): number {
    return this.active;
  }

  /** Operations waiting, both priorities. */
  get queued(): number {
    return this.normal.waiting.length + this.low.waiting.length;
  }

  /** Figures per priority since the queue was made. */
  stats(): { normal: PriorityStats; low: PriorityStats } {
    return { normal: this.normal.stats(), low: this.low.stats() };
  }

  /**
   * Run `op` when a slot is free. `late` is called if the operation ends after its caller was
   * answered with a timeout, with its result (undefined if it failed): to close a file that was
   * opened too late, or recycle the buffer the syscall was writing into. `priority` defaults to
   * the async context's (ioPriority), else normal.
   */
  run<T>(what: string, op: () => Promise<T>, late?: (result: T | undefined) => void, priority?: Priority): Promise<T> {
    const prio = priority ?? ioPriority.getStore() ?? 'normal';
    if (prio !== 'normal' && prio !== 'low') throw new RangeError(`I/O priority must be 'normal' or 'low', got ${JSON.stringify(prio)}`);
    const lane = prio === 'low' ? this.low : this.normal;
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      let started = false;
      let timer: NodeJS.Timeout | undefined;
      let waiter: (() => void) | undefined;
      const submitted = performance.now();
      const arm = () => {
        timer = setTimeout(() => {
          answered = true;
          if (!started && waiter) {
            const i = lane.waiting.indexOf(waiter);
            if (i >= 0) lane.waiting.splice(i, 1);
          }
          reject(new IoTimeout(what, this.timeoutMs));
        }, this.timeoutMs);
      };
      const start = () => {
        started = true;
        this.active++;
        lane.active++;
        lane.started++;
        const waited = performance.now() - submitted;
        lane.waitMsTotal += waited;
        if (waited > lane.waitMsMax) lane.waitMsMax = waited;
        if (prio === 'low') arm();
        let p: Promise<T>;
        try {
          p = op();
        } catch (err) {
          p = Promise.reject(err);
        }
        // The slot is given back (and counted) before the caller hears of the result.
        const end = (answer: () => void) => {
          this.active--;
          lane.active--;
          lane.completed++;
          try {
            answer();
          } finally {
            this.next();
          }
        };
        p.then(
          (v) =>
            end(() => {
              if (!answered) {
                answered = true;
                clearTimeout(timer);
                resolve(v);
              } else late?.(v);
            }),
          (err: unknown) =>
            end(() => {
              if (!answered) {
                answered = true;
                clearTimeout(timer);
                reject(err);
              } else late?.(undefined);
            }),
        );
      };
      if (prio === 'normal') arm();
      if (this.mayStart(prio)) start();
      else {
        // Bound: started later by another operation's completion, it still runs in its submitter's async context.
        waiter = AsyncResource.bind(start);
        lane.waiting.push(waiter);
      }
    });
  }

  /** Whether an operation of `prio` submitted now may start at once (FIFO within a priority). */
  private mayStart(prio: Priority): boolean {
    if (this.active >= this.maxInflight || this.normal.waiting.length) return false;
    return prio === 'normal' || (!this.low.waiting.length && this.low.active < this.maxLowInflight);
  }

  private next(): void {
    while (this.active < this.maxInflight) {
      const start = this.normal.waiting.shift() ?? (this.low.active < this.maxLowInflight ? this.low.waiting.shift() : undefined);
      if (!start) return;
      start();
    }
  }
}
