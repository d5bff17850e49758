/**
 * A request body of known length fed from Node's http server to a consumer, with backpressure:
 * when the consumer says "enough" (push returns false), the request is paused until its
 * drained() resolves, and the chunks that came before it was ready are queued and fed in order.
 * One drain loop, one idle timer, one state:
 *
 * - The consumer may come later than the first bytes (ObjectWriter.begin is async): attach() it;
 *   until then the chunks are queued (and the request paused: the kernel holds the rest).
 * - The idle timer watches the client: armed at the start (for a non-empty body), re-armed on
 *   every chunk, cleared on the last one, and suspended while the request is paused (the client
 *   cannot send then). When it fires, `onIdle(received)` tells how many bytes came.
 * - The last chunk is the one that completes `expected` (llhttp ends the body there); an empty
 *   body is one empty last chunk, pushed at attach.
 * - `onEnd()` runs once, after the last chunk was pushed to the consumer.
 * - stop() ends the feed (an answer was given, the client went away): later chunks are
 *   dropped, the timer is cleared, the queue is let go.
 */
import type { Reply } from './respond.js';

export interface BodySink {
  /** Take a chunk; its memory is reused after the call (copy what you keep). False: wait for drained(). */
  push(chunk: Uint8Array): boolean;
  /** Resolves when the sink takes chunks again. */
  drained(): Promise<void>;
}

export interface BodyFeedOptions {
  /** The body's length (Content-Length). */
  expected: number;
  /** How long the client may send nothing before onIdle (ms). */
  idleMs: number;
  /** Every chunk, the last one included, was pushed to the sink. */
  onEnd(): void;
  /** Nothing came for idleMs: `received` bytes of `expected` came before. The feed is stopped. */
  onIdle(received: number): void | Promise<void>;
}

type FeedState = 'open' | 'ended' | 'stopped';

export class BodyFeed {
  private state: FeedState = 'open';
  private sink: BodySink | null = null;
  /** Chunks that came while the sink was not there, or waiting to drain; copies. */
  private readonly queue: Array<{ chunk: Uint8Array; last: boolean }> = [];
  private queuedBytes = 0;
  private pushedBytes = 0;
  /** The sink asked to wait: the socket is paused until it drains. */
  private waiting = false;
  /** The last chunk came from the client (it may still be queued). */
  private complete = false;
  private idle: NodeJS.Timeout | null = null;

  constructor(
    private readonly r: Reply,
    private readonly opts: BodyFeedOptions,
  ) {
    this.armIdle();
    if (opts.expected === 0) {
      this.complete = true;
      this.queue.push({ chunk: new Uint8Array(0), last: true });
    } else r.req.on('data', (chunk: Buffer) => this.onChunk(chunk));
  }

  /** Bytes that came from the client so far. */
  get received(): number {
    return this.pushedBytes + this.queuedBytes;
  }

  /** Bytes held here, not yet pushed to the sink. */
  get buffered(): number {
    return this.queuedBytes;
  }

  get ended(): boolean {
    return this.state !== 'open';
  }

  /** The consumer is ready: what is queued flows to it, then every chunk as it comes. */
  attach(sink: BodySink): void {
    this.sink = sink;
    this.flush();
  }

  stop(): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.clearIdle();
    this.queue.length = 0;
    this.queuedBytes = 0;
  }

  private onChunk(chunk: Buffer): void {
    if (this.state !== 'open') return;
    const last = this.received + chunk.byteLength >= this.opts.expected;
    if (last) this.complete = true;
    this.armIdle();
    if (this.sink && !this.waiting && this.queue.length === 0) return this.take(chunk, last);
    // Node hands each chunk over for good: kept as it is. Paused until the sink takes chunks.
    this.queue.push({ chunk, last });
    this.queuedBytes += chunk.byteLength;
    if (!last) {
      // Held back: the client cannot send, so it is not idle.
      this.r.req.pause();
      this.clearIdle();
    }
  }

  /** Push queued chunks until the queue is empty or the sink asks to wait. */
  private flush(): void {
    while (this.sink && !this.waiting && this.state === 'open' && this.queue.length > 0) {
      const { chunk, last } = this.queue.shift()!;
      this.queuedBytes -= chunk.byteLength;
      this.take(chunk, last);
    }
    if (this.sink && !this.waiting && this.state === 'open' && !this.complete && this.r.req.isPaused()) {
      this.r.req.resume();
      this.armIdle();
    }
  }

  private take(chunk: Uint8Array, last: boolean): void {
    this.pushedBytes += chunk.byteLength;
    const more = this.sink!.push(chunk);
    if (last) {
      this.state = 'ended';
      this.clearIdle();
      this.opts.onEnd();
    } else if (!more) this.wait();
  }

  /** The backpressure loop: pause the client until the sink drains, then go on. */
  private wait(): void {
    this.waiting = true;
    this.clearIdle();
    this.r.req.pause();
    void this.sink!.drained().then(() => {
      this.waiting = false;
      if (this.state !== 'open' || this.r.aborted || this.r.done) return;
      this.armIdle();
      this.flush();
    });
  }

  /** (Re)start the idle timer, unless the client has nothing more to send. */
  private armIdle(): void {
    if (this.complete || this.opts.expected === 0) return this.clearIdle();
    // Re-armed on every chunk of an upload: refresh() restarts the countdown without making a
    // new timer (thousands per second on a fast PUT).
    if (this.idle) {
      this.idle.refresh();
      return;
    }
    this.idle = setTimeout(() => {
      this.idle = null;
      const received = this.received;
      this.stop();
      void this.opts.onIdle(received);
    }, this.opts.idleMs);
  }

  private clearIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
  }
}
