/**
 * A bound on the bytes GETs hold at once in read buffers (per object store thread). A GET asks
 * for a batch's bytes before reading it and gives them back once the batch is sent; past the
 * bound, batches wait. Without it, each large GET holds two batches (32 MiB with 256 KiB chunks,
 * k = 4) and a hundred of them would hold 3 GiB. A request larger than the whole budget is let
 * through when nothing else is held, so it cannot wait forever.
 *
 * Shared fairly between clients (issue 21 item 4): a GET's FIRST batch (it holds nothing yet) is
 * served before any read-ahead (a GET asking for its next batch while it still holds one), and
 * read-ahead may only use the budget up to `limit - reserve`. So slow readers, which hold their
 * batches for as long as their client takes to read them, cannot take the whole budget with
 * read-ahead: another client's GET finds the reserve free and starts at once.
 */
export type ReadKind = 'first' | 'ahead';

export class ReadBudget {
  private used = 0;
  private readonly waiting: Record<ReadKind, Array<{ bytes: number; go: () => void }>> = { first: [], ahead: [] };
  /** bytes read-ahead may never take: kept for GETs that hold nothing yet */
  readonly reserve: number;

  constructor(readonly limit: number, reserve = Math.floor(limit / 4)) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`read budget must be a positive byte count, got ${String(limit)}`);
    if (!Number.isSafeInteger(reserve) || reserve < 0 || reserve >= limit) throw new RangeError(`read budget reserve must be from 0 to below the limit, got ${String(reserve)}`);
    this.reserve = reserve;
  }

  get inUse(): number {
    return this.used;
  }

  get queued(): number {
    return this.waiting.first.length + this.waiting.ahead.length;
  }

  /**
   * Resolves when `bytes` are granted: at once when they fit and nobody of the same or a higher
   * class waits before (a first batch ranks above read-ahead).
   */
  acquire(bytes: number, kind: ReadKind = 'first'): Promise<void> {
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`bytes must be a non-negative integer, got ${String(bytes)}`);
    const ahead = kind === 'ahead';
    const clear = this.waiting.first.length === 0 && (!ahead || this.waiting.ahead.length === 0);
    if (clear && this.fits(bytes, kind)) {
      this.used += bytes;
      return Promise.resolve();
    }
    return new Promise((go) => this.waiting[kind].push({ bytes, go }));
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
    for (const kind of ['first', 'ahead'] as const) {
      const queue = this.waiting[kind];
      while (queue.length && this.fits(queue[0]!.bytes, kind)) {
        const next = queue.shift()!;
        this.used += next.bytes;
        next.go();
      }
      // Read-ahead waits while a first batch does.
      if (queue.length) return;
    }
  }

  private fits(bytes: number, kind: ReadKind): boolean {
    const room = kind === 'first' ? this.limit : this.limit - this.reserve;
    return this.used + bytes <= room || this.used === 0;
  }
}
