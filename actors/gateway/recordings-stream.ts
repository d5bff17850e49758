/**
 * A response body streamed out of uWebSockets.js with backpressure, for the recording routes:
 * `write` resolves once uWS took the piece (at once, or when the socket drained: onWritable),
 * so the reader of the source (the store's GET, the merge) goes only as fast as the client
 * reads. With a known length the body goes by `tryEnd` (uWS writes Content-Length); without,
 * chunked by `write`. The status and headers go out with the first piece.
 *
 * A client that takes nothing for `idleMs` is cut (close: the connection ends without the
 * whole body, so a client never takes a cut body for a complete one); so is every stream at
 * `abort()` (the drain's deadline, a source failing mid-body). `done` resolves when the
 * stream ended either way: the drain counts a stream open until then.
 */
import type { Reply } from '../../runtime/http/reply.js';
import { statusLine } from '../../protocols/objstore/errors.js';

export class BodyStream {
  private headSent = false;
  private ended = false;
  private waiter: ((ok: boolean) => void) | null = null;
  private finish!: () => void;
  /** Resolves when the body is out, the client went, or the stream was cut. */
  readonly done = new Promise<void>((r) => (this.finish = r));

  constructor(
    private readonly r: Reply,
    private readonly status: number,
    private readonly headers: Array<[string, string]>,
    /** The body's length (null: unknown, chunked). */
    private readonly total: number | null,
    private readonly idleMs: number,
  ) {
    r.onAbort(() => this.close());
  }

  /** Whether the status and headers went out (with the first piece). */
  get started(): boolean {
    return this.headSent;
  }

  /** Give the response back unanswered (nothing was sent): the caller answers it otherwise. */
  release(): void {
    this.close();
  }

  /** Whether the client went or the stream was cut. */
  get closed(): boolean {
    return this.ended;
  }

  /** Send `piece`; resolves true once uWS took it, false when the stream is over (client gone, cut). */
  write(piece: Uint8Array): Promise<boolean> {
    if (this.ended || this.r.aborted) return Promise.resolve(false);
    const res = this.r.res;
    const start = res.getWriteOffset();
    let ok = false;
    let complete = false;
    res.cork(() => {
      this.head();
      if (this.total === null) ok = res.write(piece);
      else [ok, complete] = res.tryEnd(piece, this.total);
    });
    if (complete) this.completed();
    if (ok || complete) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const idle = setTimeout(() => this.abort(), this.idleMs);
      this.waiter = (v) => {
        clearTimeout(idle);
        this.waiter = null;
        resolve(v);
      };
      res.onWritable((offset) => {
        if (this.ended) return true;
        if (this.total === null) {
          this.waiter?.(true);
          return true;
        }
        const [ok2, done2] = res.tryEnd(piece.subarray(offset - start), this.total);
        if (done2) this.completed();
        if (ok2 || done2) this.waiter?.(true);
        return ok2;
      });
    });
  }

  /** The end of a body of unknown length (a known length ends with its last byte). */
  end(): void {
    if (this.ended) return;
    if (!this.r.aborted && !this.r.done) {
      const res = this.r.res;
      res.cork(() => {
        this.head();
        if (this.total === null || this.total === 0) res.end();
      });
    }
    this.completed();
  }

  /** uWS has the whole body: the response must not be touched again (uWS throws on a finished one). */
  private completed(): void {
    this.r.done = true;
    this.close();
  }

  /** Cut the stream: the connection is closed without the rest of the body. */
  abort(): void {
    if (this.ended) return;
    if (!this.r.aborted && !this.r.done) {
      this.r.done = true;
      this.r.res.close();
    }
    this.close();
  }

  private head(): void {
    if (this.headSent) return;
    this.headSent = true;
    this.r.res.writeStatus(statusLine(this.status));
    for (const [k, v] of this.headers) this.r.res.writeHeader(k, v);
  }

  private close(): void {
    if (this.ended) return;
    this.ended = true;
    this.waiter?.(false);
    this.finish();
  }
}
