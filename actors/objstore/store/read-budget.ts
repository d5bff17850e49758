/**
 * A bound on the bytes GETs hold at once in read buffers (per object store thread). A GET asks
 * for a batch's bytes before reading it and gives them back once the batch is sent; past the
 * bound, batches wait in arrival order. Without it, each large GET holds two batches (32 MiB with
 * 256 KiB chunks, k = 4) and a hundred of them would hold 3 GiB. A request larger than the whole
 * budget is let through when nothing else is held, so it cannot wait forever.
 */
export class ReadBudget {
  private used = 0;
  private readonly waiting: Array<{ bytes: number; go: () => void }> = [];

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`read budget must be a positive byte count, got ${String(limit)}`);
  }

  get inUse(): number {
    return this.used;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves when `bytes` are granted (at once when they fit and nobody waits before). */
  acquire(bytes: number): Promise<void> {
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`bytes must be a non-negative integer, got ${String(bytes)}`);
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return Promise.resolve();
    }
    return new Promise((go) => this.waiting.push({ bytes, go }));
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
    while (this.waiting.length && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.go();
    }
  }

  private fits(bytes: number): boolean {
    return this.used + bytes <= this.limit || this.used === 0;
  }
}
