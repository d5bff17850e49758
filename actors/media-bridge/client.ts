/**
 * A typed client for the media bridge's command protocol, for applications and tests:
 *
 *   import { MediaBridgeClient } from 'hostd/media-client';
 *   const bridge = await MediaBridgeClient.connect('ws://127.0.0.1:3002', { token });
 *   const { session_id } = await bridge.call('session.create', {});
 *   const { endpoint_id, sdp_answer } = await bridge.call('endpoint.rtp.create_from_offer', { sdp });
 *   bridge.on('endpoint.state_changed', (e) => console.log(e.state));
 *
 * Failed commands reject with a MediaBridgeError carrying the protocol's error code.
 */
import WebSocket from 'ws';
import { Subject, filter, firstValueFrom, map, timeout } from 'rxjs';
import type { ParamsFor, Method } from '../../protocols/media/commands.js';
import type { ErrorCode, EventMessage } from '../../protocols/media/envelope.js';
import type { Events, Results } from '../../protocols/media/results.js';

export class MediaBridgeError extends Error {
  constructor(readonly code: ErrorCode, message: string, readonly method: string) {
    super(`${method}: ${code}: ${message}`);
    this.name = 'MediaBridgeError';
  }
}

/** Params as the caller writes them: any may be left out here (those with defaults may be; the bridge names a missing required one). */
type Input<M extends Method> = Partial<ParamsFor<M>> & Record<string, unknown>;

export interface ConnectOptions {
  token?: string;
  /** Deadline of each command (default 15 s). */
  timeoutMs?: number;
}

export class MediaBridgeClient {
  private nextId = 1;
  private pending = new Map<string, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void; method: string; timer: NodeJS.Timeout }>();
  /** Every event pushed to this connection. */
  readonly events$ = new Subject<EventMessage>();
  private closed = false;

  private constructor(private readonly ws: WebSocket, private readonly timeoutMs: number) {
    ws.on('message', (raw) => this.onMessage(raw.toString()));
    ws.on('close', () => this.fail(new Error('the bridge connection closed')));
    ws.on('error', (err) => this.fail(err));
  }

  static connect(url: string, o: ConnectOptions = {}): Promise<MediaBridgeClient> {
    const headers = o.token ? { Authorization: `Bearer ${o.token}` } : undefined;
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new MediaBridgeClient(ws, o.timeoutMs ?? 15_000)));
      ws.once('unexpected-response', (req, res) => {
        // With a listener here, ws leaves the request to us: close its socket, or it stays open
        // (kept by the HTTP agent once the refusal's body has been read).
        req.destroy();
        res.socket?.destroy();
        reject(new Error(`the bridge refused the connection: HTTP ${res.statusCode}`));
      });
      ws.once('error', reject);
    });
  }

  /** Send a command; resolves with its result, rejects with MediaBridgeError on an error reply. */
  call<M extends Method>(method: M, params: Input<M>): Promise<Results[M]>;
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.send({ id: String(this.nextId++), method, params });
  }

  /** Send any JSON value as a command message (for testing the bridge's validation). */
  send(message: unknown, method = (message as { method?: string })?.method ?? '?', id = (message as { id?: string })?.id): Promise<Record<string, unknown>> {
    return this.raw(JSON.stringify(message), method, id ?? null);
  }

  /** Send a raw text frame; `id` is what the reply will carry (null for unparseable input). */
  raw(text: string, method = '?', id: string | null = null): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new Error('the bridge connection is closed'));
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

  on<E extends keyof Events>(event: E, fn: (data: Events[E]) => void): () => void {
    const sub = this.events$.pipe(filter((e) => e.event === event)).subscribe((e) => fn(e.data as unknown as Events[E]));
    return () => sub.unsubscribe();
  }

  /** The next event of this kind that satisfies `match`, within `ms`. */
  waitFor<E extends keyof Events>(event: E, match: (data: Events[E]) => boolean = () => true, ms = 10_000): Promise<Events[E]> {
    return firstValueFrom(
      this.events$.pipe(
        filter((e) => e.event === event),
        map((e) => e.data as unknown as Events[E]),
        filter(match),
        timeout({ first: ms, with: () => { throw new Error(`no ${event} event within ${ms} ms`); } }),
      ),
    );
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
      this.events$.next(msg as unknown as EventMessage);
      return;
    }
    const id = msg.id === null ? [...this.pending.keys()].find((k) => k.startsWith('null:')) : String(msg.id);
    const p = id !== undefined ? this.pending.get(id) : undefined;
    if (!p || id === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    const err = msg.error as { code: ErrorCode; message: string } | undefined;
    if (err) p.reject(new MediaBridgeError(err.code, err.message, p.method));
    else p.resolve(msg.result as Record<string, unknown>);
  }

  private fail(err: Error): void {
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
    this.events$.complete();
  }
}
