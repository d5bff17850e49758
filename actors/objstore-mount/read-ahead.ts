/**
 * Read-ahead for one open file of the mount. The kernel asks for 128 KiB at a time; each answer
 * crossing to the store and back would cost a round trip of messages, so the file is fetched in
 * windows of WINDOW bytes (aligned), and while a sequential reader is in one window the next
 * AHEAD windows are already being read: the disks stream as they do for a GET (a window of 16 MiB
 * is one of a GET's batches with 256 KiB chunks and k = 4: 4 MiB per slice read), as far as the
 * source's read-ahead budget allows (a fetch ahead may be declined). A random reader
 * fetches only the windows it touches. Windows more than one behind the reader are dropped (the
 * kernel sends a sequential reader's requests a few at a time, not quite in order: one waiting
 * for the end of a window must not see it dropped by the next one, which starts the next
 * window), so a file holds at most AHEAD + 3 windows (one behind, a read spanning two, and those
 * ahead); a failed window is forgotten, so the next read of it tries again.
 *
 * A request whose windows are all here is answered synchronously (`readNow`): no promise, no turn
 * of the event loop, one copy into the kernel's buffer. A window is held where its fetch put it
 * (a slot of the windows file, window-file.ts) and released when dropped: never while a copy from
 * it may still run, since a reader re-checks its windows after every wait and copies only
 * synchronously, and a window dropped while its fetch runs is released when the fetch ends.
 */
export const WINDOW = 16 << 20;
export const AHEAD = 2;

/** A fetched window: its bytes, copied out on demand, and given back once dropped. */
export interface Window {
  readonly byteLength: number;
  /** copy the window's bytes [from, to) into `into` at `at` (synchronously) */
  copy(into: Uint8Array, at: number, from: number, to: number): void;
  /** the window is no longer needed (called once) */
  release(): void;
}

/** Fetch a window; a fetch ahead of the reader may be declined (null: the source's read-ahead budget is spent). */
export type Fetch = (start: number, length: number, ahead: boolean) => Promise<Window> | null;

interface Held {
  fetching: Promise<Window>;
  /** set once fetched */
  win: Window | null;
}

export class ReadAhead {
  private readonly windows = new Map<number, Held>();
  private lastEnd = 0;
  private closed = false;

  constructor(
    private readonly fetch: Fetch,
    readonly size: number,
    private readonly window = WINDOW,
    private readonly ahead = AHEAD,
  ) {}

  /** Read up to `len` bytes at `pos` into `into` now, if every window it needs is here; else undefined (use `read`). */
  readNow(into: Uint8Array, pos: number, len: number): number | undefined {
    if (pos >= this.size || len <= 0) return 0;
    const end = Math.min(this.size, pos + len);
    for (let w = this.align(pos); w < end; w += this.window) if (!this.windows.get(w)?.win) return undefined;
    this.advance(pos, end);
    return this.copy(into, pos, end);
  }

  /** Read up to `len` bytes at `pos` into `into`; the count read (0 at or past the end). */
  async read(into: Uint8Array, pos: number, len: number): Promise<number> {
    if (pos >= this.size || len <= 0) return 0;
    const end = Math.min(this.size, pos + len);
    this.advance(pos, end);
    for (;;) {
      if (this.closed) throw Object.assign(new Error('read of a closed file'), { errno: 'EBADF' });
      // Another read may have dropped a window while this one waited: ask again until all are here.
      const waits: Array<Promise<Window>> = [];
      for (let w = this.align(pos); w < end; w += this.window) if (!this.windows.get(w)?.win) waits.push(this.get(w)!);
      if (!waits.length) return this.copy(into, pos, end);
      await Promise.all(waits);
    }
  }

  /** The file is closed: every window is released (those still being fetched, when they arrive). */
  close(): void {
    this.closed = true;
    for (const w of [...this.windows.keys()]) this.drop(w);
  }

  /** Windows held (for tests). */
  held(): number[] {
    return [...this.windows.keys()].sort((a, b) => a - b);
  }

  /** A reader at [pos, end): fetch ahead of a sequential one, drop what is behind it (but one) or far ahead. */
  private advance(pos: number, end: number): void {
    // The kernel may send a sequential reader's requests a little out of order.
    const sequential = Math.abs(pos - this.lastEnd) <= this.window;
    this.lastEnd = end;
    const last = this.align(end - 1);
    if (sequential) for (let i = 1; i <= this.ahead; i++) if (last + i * this.window < this.size) void this.get(last + i * this.window, true)?.catch(() => undefined);
    for (const w of [...this.windows.keys()]) if (w < this.align(pos) - this.window || w > last + this.ahead * this.window) this.drop(w);
  }

  /** Copy [pos, end) from windows that are all here. */
  private copy(into: Uint8Array, pos: number, end: number): number {
    let off = pos;
    let n = 0;
    while (off < end) {
      const w = this.align(off);
      const win = this.windows.get(w)!.win!;
      const from = off - w;
      const to = Math.min(end - w, win.byteLength);
      if (to <= from) throw Object.assign(new Error(`short read: window at ${w} has ${win.byteLength} bytes`), { errno: 'EIO' });
      win.copy(into, n, from, to);
      n += to - from;
      off = w + to;
    }
    return n;
  }

  private align(off: number): number {
    return Math.floor(off / this.window) * this.window;
  }

  private drop(w: number): void {
    const held = this.windows.get(w);
    this.windows.delete(w);
    held?.win?.release();
  }

  /** The window at `w`, fetched if it is not held; a fetch ahead may be declined (null). */
  private get(w: number, ahead = false): Promise<Window> | null {
    const had = this.windows.get(w);
    if (had) return had.fetching;
    const fetching = this.fetch(w, Math.min(this.window, this.size - w), ahead);
    if (!fetching) return null;
    const held: Held = { fetching: null as unknown as Promise<Window>, win: null };
    held.fetching = fetching.then(
      (win) => {
        // Dropped (or the file closed) while it was fetched: nobody will read it.
        if (this.windows.get(w) !== held || this.closed) win.release();
        else held.win = win;
        return win;
      },
      (err: unknown) => {
        if (this.windows.get(w) === held) this.windows.delete(w);
        throw err;
      },
    );
    this.windows.set(w, held);
    return held.fetching;
  }
}
