/**
 * The HTTP/1.1 client of the route lookups over plain http (routing.ts; https stays on
 * node:https): one GET per new call to the same handler, so a pool of kept-alive connections,
 * one request on a connection at a time, and a response reader that does only what a route
 * answer needs — the status, Content-Length or chunked framing, `Connection: close`, a size
 * limit. node:http's client (ClientRequest, the agent, the parser's stream objects) cost the SIP
 * server's thread more than the rest of the lookup (docs/gateway.md "Calls per second").
 *
 * Decisions:
 * - A request on a kept-alive connection that fails before a byte of the answer came (the
 *   handler closed it while idle) is sent once more on a new connection: a GET is idempotent.
 * - Anything this reader does not understand (no status line, a bad length or chunk) is a
 *   failed lookup and the connection is closed; a body over `maxBytes` too.
 * - Idle connections are unref'd (they never keep the thread alive) and closed after IDLE_MS.
 */
import net from 'node:net';

export class RouteHttpError extends Error {
  constructor(
    readonly kind: 'unreachable' | 'cut' | 'oversize' | 'malformed',
    message: string,
  ) {
    super(message);
  }
}

export interface RouteHttpAnswer {
  status: number;
  body: Buffer;
}

interface Pending {
  path: string;
  resolve(a: RouteHttpAnswer): void;
  reject(e: RouteHttpError): void;
  retried: boolean;
  conn?: Conn;
  done: boolean;
}

/** Close an idle connection after this long (below the usual 5–10 s server keep-alive). */
const IDLE_MS = 4000;

interface Head {
  status: number;
  /** Offset of the body in the buffer. */
  bodyAt: number;
  length?: number;
  chunked: boolean;
  close: boolean;
}

/** Read the head of an answer in `buf`; undefined while incomplete. */
function readHead(buf: Buffer, maxBytes: number): Head | undefined {
  const end = buf.indexOf('\r\n\r\n', 0, 'latin1');
  if (end < 0) {
    if (buf.length > maxBytes) throw new RouteHttpError('oversize', `route handler answer head is over ${maxBytes} bytes`);
    return undefined;
  }
  const lines = buf.toString('latin1', 0, end).split('\r\n');
  const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0] ?? '');
  if (!m) throw new RouteHttpError('malformed', 'route handler answer has no HTTP/1.x status line');
  let length: number | undefined;
  let chunked = false;
  let connection = '';
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new RouteHttpError('malformed', 'route handler answer has a bad header line');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') {
      if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== Number(value))) throw new RouteHttpError('malformed', 'route handler answer has a bad Content-Length');
      length = Number(value);
    } else if (name === 'transfer-encoding') chunked = value.toLowerCase().split(',').map((s) => s.trim()).includes('chunked');
    else if (name === 'connection') connection = value.toLowerCase();
  }
  const http10 = m[1] === '0';
  const close = connection.includes('close') || (http10 && !connection.includes('keep-alive'));
  return { status: Number(m[2]), bodyAt: end + 4, ...(chunked ? {} : length !== undefined ? { length } : {}), chunked, close };
}

/** The body of a chunked answer starting at `at`, or undefined while incomplete. */
function readChunked(buf: Buffer, at: number, maxBytes: number): { body: Buffer; end: number } | undefined {
  const parts: Buffer[] = [];
  let size = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at, 'latin1');
    if (eol < 0) return undefined;
    const m = /^([0-9a-fA-F]{1,8})(?:;.*)?$/.exec(buf.toString('latin1', at, eol));
    if (!m) throw new RouteHttpError('malformed', 'route handler answer has a bad chunk size');
    const n = parseInt(m[1]!, 16);
    if (n === 0) {
      // Trailers (if any) end with an empty line.
      const end = buf.indexOf('\r\n\r\n', eol, 'latin1');
      if (buf.indexOf('\r\n', eol + 2, 'latin1') === eol + 2) return { body: Buffer.concat(parts, size), end: eol + 4 };
      if (end < 0) return undefined;
      return { body: Buffer.concat(parts, size), end: end + 4 };
    }
    size += n;
    if (size > maxBytes) throw new RouteHttpError('oversize', `route handler answer is over ${maxBytes} bytes`);
    if (buf.length < eol + 2 + n + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + n));
    at = eol + 2 + n + 2;
  }
}

class Conn {
  buf: Buffer = Buffer.alloc(0);
  head: Head | undefined;
  current: Pending | undefined;
  /** Has answered a request (so it may have gone stale while idle). */
  used = false;
  closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly pool: RouteHttpPool,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => this.onClose(true));
    socket.on('close', () => this.onClose(false));
    socket.on('error', () => undefined);
    socket.on('timeout', () => socket.destroy());
  }

  send(p: Pending, hostHeader: string): void {
    this.current = p;
    p.conn = this;
    this.buf = Buffer.alloc(0);
    this.head = undefined;
    this.socket.ref();
    this.socket.setTimeout(0);
    this.socket.write(`GET ${p.path} HTTP/1.1\r\nHost: ${hostHeader}\r\nAccept: application/json\r\n\r\n`, 'latin1');
  }

  private onData(chunk: Buffer): void {
    const p = this.current;
    if (!p) return void this.socket.destroy(); // bytes nobody asked for
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    try {
      for (;;) {
        this.head ??= readHead(this.buf, this.pool.maxBytes);
        if (!this.head) return;
        if (this.head.status >= 100 && this.head.status < 200) {
          // An interim answer: skip it, the final one follows.
          this.buf = this.buf.subarray(this.head.bodyAt);
          this.head = undefined;
          continue;
        }
        break;
      }
      const h = this.head;
      let body: Buffer;
      let end: number;
      if (h.chunked) {
        const r = readChunked(this.buf, h.bodyAt, this.pool.maxBytes);
        if (!r) return;
        ({ body, end } = r);
      } else if (h.length !== undefined) {
        if (h.length > this.pool.maxBytes) throw new RouteHttpError('oversize', `route handler answer is over ${this.pool.maxBytes} bytes`);
        if (this.buf.length < h.bodyAt + h.length) return;
        body = this.buf.subarray(h.bodyAt, h.bodyAt + h.length);
        end = h.bodyAt + h.length;
      } else {
        // Read until the handler closes the connection.
        if (this.buf.length - h.bodyAt > this.pool.maxBytes) throw new RouteHttpError('oversize', `route handler answer is over ${this.pool.maxBytes} bytes`);
        return;
      }
      this.finish({ status: h.status, body: Buffer.from(body) }, !h.close && end === this.buf.length);
    } catch (err) {
      this.fail(err as RouteHttpError);
    }
  }

  private onClose(ended: boolean): void {
    const p = this.current;
    if (p && this.head && !this.head.chunked && this.head.length === undefined && ended) {
      // The answer ran to the close.
      return this.finish({ status: this.head.status, body: Buffer.from(this.buf.subarray(this.head.bodyAt)) }, false);
    }
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.pool.forget(this);
    if (!p) return;
    this.current = undefined;
    if (this.used && this.buf.length === 0 && !p.retried) {
      p.retried = true;
      this.pool.resend(p);
      return;
    }
    this.pool.settle(p, undefined, new RouteHttpError(this.buf.length ? 'cut' : 'unreachable', this.buf.length ? 'route handler answer cut off' : 'route handler unreachable'));
  }

  private finish(answer: RouteHttpAnswer, keep: boolean): void {
    const p = this.current!;
    this.current = undefined;
    this.used = true;
    this.buf = Buffer.alloc(0);
    this.head = undefined;
    if (keep && !this.closed) {
      this.socket.unref();
      this.socket.setTimeout(IDLE_MS);
      this.pool.idle(this);
    } else this.destroy();
    this.pool.settle(p, answer);
  }

  private fail(err: RouteHttpError): void {
    const p = this.current;
    this.current = undefined;
    this.destroy();
    if (p) this.pool.settle(p, undefined, err);
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.pool.forget(this);
  }
}

/** Connections to one handler (host:port). */
export class RouteHttpPool {
  private readonly free: Conn[] = [];
  private readonly all = new Set<Conn>();
  private readonly queue: Pending[] = [];

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly hostHeader: string,
    readonly maxBytes: number,
    private readonly maxSockets = 64,
  ) {}

  /** GET `path` (with its query); `abort()` gives up on it (the caller's deadline), closing its connection. */
  get(path: string): { answer: Promise<RouteHttpAnswer>; abort(): void } {
    let p!: Pending;
    const answer = new Promise<RouteHttpAnswer>((resolve, reject) => {
      p = { path, resolve, reject, retried: false, done: false };
    });
    this.dispatch(p);
    return {
      answer,
      abort: () => {
        if (p.done) return;
        p.done = true;
        const i = this.queue.indexOf(p);
        if (i >= 0) this.queue.splice(i, 1);
        p.conn?.destroy();
      },
    };
  }

  resend(p: Pending): void {
    if (!p.done) this.dispatch(p);
  }

  private dispatch(p: Pending): void {
    let c: Conn | undefined;
    while ((c = this.free.pop()) && c.closed);
    if (c) return c.send(p, this.hostHeader);
    if (this.all.size >= this.maxSockets) return void this.queue.push(p);
    const conn = new Conn(net.connect({ host: this.host, port: this.port }), this);
    this.all.add(conn);
    conn.send(p, this.hostHeader);
  }

  idle(c: Conn): void {
    const next = this.queue.shift();
    if (next) return c.send(next, this.hostHeader);
    this.free.push(c);
  }

  forget(c: Conn): void {
    this.all.delete(c);
    const i = this.free.indexOf(c);
    if (i >= 0) this.free.splice(i, 1);
    const next = this.queue.shift();
    if (next) this.dispatch(next);
  }

  settle(p: Pending, answer?: RouteHttpAnswer, err?: RouteHttpError): void {
    if (p.done) return;
    p.done = true;
    if (answer) p.resolve(answer);
    else p.reject(err!);
  }

  close(): void {
    for (const c of [...this.all]) c.destroy();
    this.queue.length = 0;
  }
}
