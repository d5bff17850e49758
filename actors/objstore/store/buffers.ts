/**
 * A small pool of ArrayBuffers by size. The PUT path moves stripes and chunks between threads;
 * the buffers come back (the encoder returns its input, volumes return written chunks) and are
 * used again, instead of a fresh megabyte per stripe for the garbage collector to chase.
 * Only buffers of at least `minSize` are kept, and at most `maxBytes` in all: when a buffer comes
 * back to a full pool, buffers of the size that was taken least recently make room for it (a size
 * nobody takes any more must not fill the pool and turn every later take into an allocation).
 */
export class BufferPool<B extends ArrayBuffer | SharedArrayBuffer = ArrayBuffer> {
  private readonly free = new Map<number, B[]>();
  /** When each size was last taken (a counter, not a clock). */
  private readonly lastTaken = new Map<number, number>();
  private takes = 0;
  private bytes = 0;
  private readonly minSize: number;
  private readonly maxBytes: number;
  /** takes that had to allocate */
  misses = 0;

  /** Makes a new buffer; buffers of other kinds are not taken back. */
  private readonly make: (size: number) => B;
  private readonly kind: new (size: number) => B;

  constructor(opts: { minSize?: number; maxBytes?: number; shared?: B extends SharedArrayBuffer ? true : false } = {}) {
    this.minSize = opts.minSize ?? 64 * 1024;
    this.maxBytes = opts.maxBytes ?? 128 * 1024 * 1024;
    this.kind = (opts.shared ? SharedArrayBuffer : ArrayBuffer) as unknown as new (size: number) => B;
    this.make = (size) => new this.kind(size);
  }

  take(size: number): B {
    this.lastTaken.set(size, ++this.takes);
    const buf = this.free.get(size)?.pop();
    if (!buf) {
      this.misses++;
      return this.make(size);
    }
    this.bytes -= size;
    return buf;
  }

  /** Hand a buffer back; detached (moved), small or surplus buffers are dropped. */
  give(buf: ArrayBuffer | SharedArrayBuffer | null | undefined): void {
    if (!(buf instanceof this.kind) || buf.byteLength < this.minSize || buf.byteLength > this.maxBytes) return;
    const size = buf.byteLength;
    if (this.bytes + size > this.maxBytes && !this.evictFor(size)) return;
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    list.push(buf);
    this.bytes += size;
  }

  /** Drop buffers of sizes taken less recently than `size` until it fits; false when it cannot. */
  private evictFor(size: number): boolean {
    const mine = this.lastTaken.get(size) ?? 0;
    const victims = [...this.free.entries()].filter(([s, l]) => s !== size && l.length > 0 && (this.lastTaken.get(s) ?? 0) < mine).sort((a, b) => (this.lastTaken.get(a[0]) ?? 0) - (this.lastTaken.get(b[0]) ?? 0));
    for (const [s, list] of victims) {
      while (list.length > 0 && this.bytes + size > this.maxBytes) {
        list.pop();
        this.bytes -= s;
      }
      if (list.length === 0) this.free.delete(s);
      if (this.bytes + size <= this.maxBytes) return true;
    }
    return this.bytes + size <= this.maxBytes;
  }

  get pooledBytes(): number {
    return this.bytes;
  }
}
