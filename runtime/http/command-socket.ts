/**
 * The client side of the daemon's JSON command WebSockets (the media bridge's command channel,
 * the gateway's /control), in one place: `{id, method, params}` out, `{id, result}` or
 * `{id, error: {code, message}}` back (matched by id; a reply with `id: null` answers the
 * oldest unparseable frame), `{event, data}` pushed as an rxjs stream, and — for channels whose
 * server also asks — `{id, method, params}` from the server handed to `onRequest`. Each typed
 * client (actors/media-bridge/client.ts, actors/gateway/client.ts) wraps one and adds its
 * types and its error class.
 */
import WebSocket from 'ws';
import { Subject, filter, firstValueFrom, map, timeout } from 'rxjs';

export interface EventFrame {
  event: string;
  data: Record<string, unknown>;
}

export interface RequestFrame {
  id: string;
  method: string;
  params: Record<string, unknown>;
}

export interface SocketOptions {
  token?: string;
  headers?: Record<string, string>;
}

/** Makes the error a failed command rejects with (each client has its own class and codes). */
export type ErrorFactory = (code: string, message: string, method: string) => Error;

export class CommandSocket {
  private nextId = 1;
  private pending = new Map<string, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void; method: string; timer: NodeJS.Timeout }>();
  /** Every event pushed to this connection. */
  readonly events$ = new Subject<EventFrame>();
  private closed = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly timeoutMs: number,
    private readonly makeError: ErrorFactory,
    private readonly onRequest?: (req: RequestFrame) => void,
  ) {
    ws.on('message', (raw) => this.onMessage(raw.toString()));
    ws.on('close', () => this.fail(new Error(`the ${what(ws)} connection closed`)));
    ws.on('error', (err) => this.fail(err));
  }

  /** Open a WebSocket; a refused upgrade rejects with its HTTP status and body (`name` says to what). */
  static open(url: string, name: string, o: SocketOptions = {}): Promise<WebSocket> {
    const headers = { ...(o.headers ?? {}), ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}) };
    const ws = new WebSocket(url, { headers });
    names.set(ws, name);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (req, res) => {
        // With a listener here, ws leaves the request to us: once the refusal's body is read,
        // close its socket, or the HTTP agent keeps it open (one socket per refused retry).
        let body = '';
        const socket = res.socket; // released from the response once it ends: keep it
        const refused = () => {
          req.destroy();
          socket?.destroy();
          reject(Object.assign(new Error(`the ${name} refused the connection: HTTP ${res.statusCode}${body ? ` ${body}` : ''}`), { status: res.statusCode, body }));
        };
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.once('end', refused);
        res.once('error', refused);
      });
      ws.once('error', reject);
    });
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.send({ id: String(this.nextId++), method, params });
  }

  /** Send any JSON value as a command message (for testing a server's validation). */
  send(message: unknown, method = (message as { method?: string })?.method ?? '?', id = (message as { id?: string })?.id): Promise<Record<string, unknown>> {
    return this.raw(JSON.stringify(message), method, id ?? null);
  }

  /** Send a raw text frame; `id` is what the reply will carry (null for unparseable input). */
  raw(text: string, method = '?', id: string | null = null): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new Error(`the ${what(this.ws)} connection is closed`));
    const key = id ?? `null:${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(key);
        reject(new Error(`${method}: no reply within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(key, { resolve, reject, method, timer });
      this.ws.send(text);
    });
  }

  /** Send a frame that expects no reply (an answer to the server's request); dropped once closed. */
  post(value: unknown): void {
    if (!this.closed) this.ws.send(JSON.stringify(value));
  }

  on(event: string, fn: (data: Record<string, unknown>) => void): () => void {
    const sub = this.events$.pipe(filter((e) => e.event === event)).subscribe((e) => fn(e.data));
    return () => sub.unsubscribe();
  }

  /** The next event of this kind that satisfies `match`, within `ms`. */
  waitFor(event: string, match: (data: Record<string, unknown>) => boolean = () => true, ms = 10_000): Promise<Record<string, unknown>> {
    return firstValueFrom(
      this.events$.pipe(
        filter((e) => e.event === event),
        map((e) => e.data),
        filter(match),
        timeout({ first: ms, with: () => { throw new Error(`no ${event} event within ${ms} ms`); } }),
      ),
    );
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }

  private onMessage(text: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof msg.event === 'string') {
      this.events$.next(msg as unknown as EventFrame);
      return;
    }
    if (typeof msg.method === 'string' && typeof msg.id === 'string') {
      this.onRequest?.({ id: msg.id, method: msg.method, params: (msg.params ?? {}) as Record<string, unknown> });
      return;
    }
    const id = msg.id === null ? [...this.pending.keys()].find((k) => k.startsWith('null:')) : String(msg.id);
    const p = id !== undefined ? this.pending.get(id) : undefined;
    if (!p || id === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    const err = msg.error as { code: string; message: string } | undefined;
    if (err) p.reject(this.makeError(err.code, err.message, p.method));
    else p.resolve(msg.result as Record<string, unknown>);
  }

  private fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
    this.events$.complete();
  }
}

const names = new WeakMap<WebSocket, string>();
const what = (ws: WebSocket) => names.get(ws) ?? 'server';
