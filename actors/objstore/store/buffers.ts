/**
 * A small pool of ArrayBuffers by size. The PUT path moves stripes and chunks between threads;
 * the buffers come back (the encoder returns its input, volumes return written chunks) and are
 * used again, instead of a fresh megabyte per stripe for the garbage collector to chase.
 * Only buffers of at least `minSize` are kept, and at most `maxBytes` in all.
 */
export class BufferPool {
  private readonly free = new Map<number, ArrayBuffer[]>();
  private bytes = 0;
  private readonly minSize: number;
  private readonly maxBytes: number;

  constructor(opts: { minSize?: number; maxBytes?: number } = {}) {
    this.minSize = opts.minSize ?? 64 * 1024;
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  }

  take(size: number): ArrayBuffer {
    const buf = this.free.get(size)?.pop();
    if (!buf) return new ArrayBuffer(size);
    this.bytes -= size;
    return buf;
  }

  /** Hand a buffer back; detached (moved), small or surplus buffers are dropped. */
  give(buf: ArrayBuffer | null | undefined): void {
    if (!(buf instanceof ArrayBuffer) || buf.byteLength < this.minSize || this.bytes + buf.byteLength > this.maxBytes) return;
    let list = this.free.get(buf.byteLength);
    if (!list) this.free.set(buf.byteLength, (list = []));
    list.push(buf);
    this.bytes += buf.byteLength;
  }

  get pooledBytes(): number {
    return this.bytes;
  }
}
