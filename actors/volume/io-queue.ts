/**
 * At most `maxInflight` file operations in flight on one disk, the rest wait in a FIFO; every
 * operation, waiting included, fails with IoTimeout after `timeoutMs`.
 *
 * A timeout frees the caller, not the operation: Node runs file system calls on the libuv thread
 * pool (4 threads per process unless UV_THREADPOOL_SIZE says otherwise, shared by every worker
 * thread of the process), and a syscall stuck on a disk that stopped answering keeps its pool
 * thread busy until the kernel gives up. So a timed-out operation keeps its slot here until it
 * really ends: a dead disk can hold at most `maxInflight` pool threads, and further operations
 * on it time out in the queue instead of taking more threads from the other disks. The process's
 * pool must therefore be larger than the sum of maxInflight over the disks that may hang at once.
 */

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

export class IoQueue {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly maxInflight: number;
  private readonly timeoutMs: number;

  constructor(maxInflight: number, timeoutMs: number) {
    if (!Number.isSafeInteger(maxInflight) || maxInflight < 1) throw new RangeError(`maxInflight must be a positive integer, got ${String(maxInflight)}`);
    if (!(timeoutMs > 0)) throw new RangeError(`ioTimeoutMs must be positive, got ${String(timeoutMs)}`);
    this.maxInflight = maxInflight;
    this.timeoutMs = timeoutMs;
  }

  /** Operations running now (timed-out ones whose syscall has not returned included). */
  get inflight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Run `op` when a slot is free. `late` is called if the operation ends after its caller was
   * answered with a timeout, with its result (undefined if it failed): to close a file that was
   * opened too late, or recycle the buffer the syscall was writing into.
   */
  run<T>(what: string, op: () => Promise<T>, late?: (result: T | undefined) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      let started = false;
      const start = () => {
        started = true;
        this.active++;
        let p: Promise<T>;
        try {
          p = op();
        } catch (err) {
          p = Promise.reject(err);
        }
        p.then(
          (v) => {
            if (!answered) {
              answered = true;
              clearTimeout(timer);
              resolve(v);
            } else late?.(v);
          },
          (err: unknown) => {
            if (!answered) {
              answered = true;
              clearTimeout(timer);
              reject(err);
            } else late?.(undefined);
          },
        ).then(() => {
          this.active--;
          this.next();
        });
      };
      const timer = setTimeout(() => {
        answered = true;
        if (!started) {
          const i = this.waiting.indexOf(start);
          if (i >= 0) this.waiting.splice(i, 1);
        }
        reject(new IoTimeout(what, this.timeoutMs));
      }, this.timeoutMs);
      if (this.active < this.maxInflight) start();
      else this.waiting.push(start);
    });
  }

  private next(): void {
    while (this.active < this.maxInflight && this.waiting.length) this.waiting.shift()!();
  }
}
