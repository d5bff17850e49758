/**
 * Read-ahead for one open file of the mount. The kernel asks for 128 KiB at a time; each answer
 * crossing to the store and back would cost a round trip of messages, so the file is fetched in
 * windows of WINDOW bytes (aligned), and while a sequential reader is in one window the next
 * AHEAD windows are already being read: the disks stream as they do for a GET (whose batches are
 * 16 stripes, read one ahead). A random reader fetches only the windows it touches. Windows
 * behind the reader are dropped, so a file holds at most AHEAD + 2 windows (a read spanning two,
 * and those ahead); a failed window is forgotten, so the next read of it tries again.
 */
export const WINDOW = 8 << 20;
export const AHEAD = 2;

export type Fetch = (start: number, length: number) => Promise<Uint8Array>;

export class ReadAhead {
  private readonly windows = new Map<number, Promise<Uint8Array>>();
  private lastEnd = 0;

  constructor(
    private readonly fetch: Fetch,
    readonly size: number,
    private readonly window = WINDOW,
    private readonly ahead = AHEAD,
  ) {}

  /** Read up to `len` bytes at `pos` into `into`; the count read (0 at or past the end). */
  async read(into: Uint8Array, pos: number, len: number): Promise<number> {
    if (pos >= this.size || len <= 0) return 0;
    const end = Math.min(this.size, pos + len);
    // The kernel may send a sequential reader's requests a little out of order.
    const sequential = Math.abs(pos - this.lastEnd) <= this.window;
    this.lastEnd = end;
    const last = this.align(end - 1);
    if (sequential) for (let i = 1; i <= this.ahead; i++) if (last + i * this.window < this.size) void this.get(last + i * this.window).catch(() => undefined);
    let off = pos;
    let n = 0;
    while (off < end) {
      const w = this.align(off);
      const bytes = await this.get(w);
      const from = off - w;
      const to = Math.min(end - w, bytes.byteLength);
      if (to <= from) throw Object.assign(new Error(`short read: window at ${w} has ${bytes.byteLength} bytes`), { errno: 'EIO' });
      into.set(bytes.subarray(from, to), n);
      n += to - from;
      off = w + to;
    }
    for (const w of this.windows.keys()) if (w < this.align(pos) || w > last + this.ahead * this.window) this.windows.delete(w);
    return n;
  }

  /** Windows held (for tests). */
  held(): number[] {
    return [...this.windows.keys()].sort((a, b) => a - b);
  }

  private align(off: number): number {
    return Math.floor(off / this.window) * this.window;
  }

  private get(w: number): Promise<Uint8Array> {
    let p = this.windows.get(w);
    if (!p) {
      p = this.fetch(w, Math.min(this.window, this.size - w));
      const mine = p;
      p.catch(() => this.windows.get(w) === mine && this.windows.delete(w));
      this.windows.set(w, p);
    }
    return p;
  }
}
