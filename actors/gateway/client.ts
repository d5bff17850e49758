/**
 * A typed client of the gateway's control WebSocket, for applications and tests:
 *
 *   import { GatewayClient } from 'hostd/gateway-client';
 *   const gw = await GatewayClient.connect('ws://127.0.0.1:3001/control', { token });
 *   gw.onRequest('sip.invite', async (inv) => ({ action: 'answer', sdp: mySdp(inv.sdp) }));
 *   await gw.call('route.register', { routes: [{ match: 'exact', value: 'support' }] });
 *   gw.on('sip.ended', (e) => console.log(e.callId, e.reason, e.by));
 *   const { callId, sdp } = await gw.call('sip.createOutbound', { requestUri: 'sip:bob@10.0.0.2', sdp: offer });
 *
 * Failed commands reject with a GatewayError carrying the protocol's error code. Media
 * commands (`session.*`, `endpoint.*`) go through `call` with the media bridge's parameters.
 */
import WebSocket from 'ws';
import { Subject, filter, firstValueFrom, map, timeout } from 'rxjs';
import type { GatewayErrorCode } from '../../protocols/gateway/envelope.js';
import type { CallAnswer, GatewayMethod, GatewayParams } from '../../protocols/gateway/commands.js';
import type { Route } from '../../protocols/gateway/routes.js';

export class GatewayError extends Error {
  constructor(readonly code: GatewayErrorCode, message: string, readonly method: string) {
    super(`${method}: ${code}: ${message}`);
    this.name = 'GatewayError';
  }
}

/** The results of the gateway's own commands. */
export interface GatewayResults {
  'route.register': { routes: Route[] };
  'route.list': { routes: Route[] };
  'sip.createOutbound': { callId: string; status: number; sdp: string };
  'sip.cancelOutbound': { callId: string; cancelling: boolean };
  'sip.bye': { callId: string; status: number };
  'sip.reinvite': { callId: string; status: number; reason: string; sdp?: string };
  'sip.calls': { calls: Array<{ callId: string; direction: 'inbound' | 'outbound'; state: string }> };
}

/** What the gateway asks of the application, and what it answers. */
export interface GatewayRequests {
  'sip.invite': { params: { callId: string; from: string; to: string; requestUri: string; headers: Record<string, string>; sdp: string }; result: CallAnswer };
  'sip.reinvite': { params: { callId: string; sdp: string; headers: Record<string, string> }; result: CallAnswer };
}

/** The gateway's own events (media events come with the bridge's names and data). */
export interface GatewayEvents {
  'sip.confirmed': { callId: string };
  'sip.cancelled': { callId: string; reason: 'cancel' | 'timeout' };
  'sip.progress': { callId: string; status: number; reason: string };
  'sip.ended': { callId: string; reason: 'bye' | 'no-ack'; by: 'local' | 'remote' };
  'sip.info': { callId: string; method: string; contentType?: string; body: string };
  'sip.error': { callId: string; message: string };
}

export interface EventMessage {
  event: string;
  data: Record<string, unknown>;
}

type Input<M extends GatewayMethod> = Partial<GatewayParams<M>> & Record<string, unknown>;

export interface ConnectOptions {
  token?: string;
  /** Deadline of each command (default 90 s: an outbound call may ring that long). */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

export class GatewayClient {
  private nextId = 1;
  private pending = new Map<string, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void; method: string; timer: NodeJS.Timeout }>();
  private handlers = new Map<string, (params: Record<string, unknown>) => unknown>();
  /** Every event pushed to this connection. */
  readonly events$ = new Subject<EventMessage>();
  /** Every request of the gateway (also those answered by an `onRequest` handler). */
  readonly requests$ = new Subject<{ id: string; method: string; params: Record<string, unknown> }>();
  private closed = false;

  private constructor(private readonly ws: WebSocket, private readonly timeoutMs: number) {
    ws.on('message', (raw) => this.onMessage(raw.toString()));
    ws.on('close', () => this.fail(new Error('the gateway connection closed')));
    ws.on('error', (err) => this.fail(err));
  }

  static connect(url: string, o: ConnectOptions = {}): Promise<GatewayClient> {
    const headers = { ...(o.headers ?? {}), ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}) };
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new GatewayClient(ws, o.timeoutMs ?? 90_000)));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => reject(Object.assign(new Error(`the gateway refused the connection: HTTP ${res.statusCode} ${body}`), { status: res.statusCode, body })));
      });
      ws.once('error', reject);
    });
  }

  /** Send a command; resolves with its result, rejects with GatewayError on an error reply. */
  call<M extends GatewayMethod>(method: M, params: Input<M>): Promise<GatewayResults[M]>;
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.send({ id: String(this.nextId++), method, params });
  }

  /** Send any JSON value as a message (for testing the gateway's validation). */
  send(message: unknown, method = (message as { method?: string })?.method ?? '?', id = (message as { id?: string })?.id): Promise<Record<string, unknown>> {
    return this.raw(JSON.stringify(message), method, id ?? null);
  }

  /** Send a raw text frame; `id` is what the reply will carry (null for unparseable input). */
  raw(text: string, method = '?', id: string | null = null): Promise<Record<string, unknown>> {
    if (this.closed) return Promise.reject(new Error('the gateway connection is closed'));
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

  /**
   * Answer the gateway's requests of one kind: the handler's value is the result; a throw
   * answers an error (the gateway then fails the call: 502). Without a handler a request is
   * left unanswered (504 at the gateway's deadline).
   */
  onRequest<R extends keyof GatewayRequests>(method: R, handler: (params: GatewayRequests[R]['params']) => GatewayRequests[R]['result'] | Promise<GatewayRequests[R]['result']>): void {
    this.handlers.set(method, handler as (params: Record<string, unknown>) => unknown);
  }

  /** Answer one request by its id (for applications that answer outside a handler). */
  answer(id: string, result: Record<string, unknown>): void {
    this.ws.send(JSON.stringify({ id, result }));
  }

  on<E extends keyof GatewayEvents>(event: E, fn: (data: GatewayEvents[E]) => void): () => void;
  on(event: string, fn: (data: Record<string, unknown>) => void): () => void;
  on(event: string, fn: (data: Record<string, unknown>) => void): () => void {
    const sub = this.events$.pipe(filter((e) => e.event === event)).subscribe((e) => fn(e.data));
    return () => sub.unsubscribe();
  }

  /** The next event of this kind that satisfies `match`, within `ms`. */
  waitFor<E extends keyof GatewayEvents>(event: E, match?: (data: GatewayEvents[E]) => boolean, ms?: number): Promise<GatewayEvents[E]>;
  waitFor(event: string, match?: (data: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
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
      this.events$.next(msg as unknown as EventMessage);
      return;
    }
    if (typeof msg.method === 'string' && typeof msg.id === 'string') {
      const req = { id: msg.id, method: msg.method, params: (msg.params ?? {}) as Record<string, unknown> };
      this.requests$.next(req);
      const handler = this.handlers.get(req.method);
      if (handler) {
        Promise.resolve()
          .then(() => handler(req.params))
          .then(
            (result) => !this.closed && this.ws.send(JSON.stringify({ id: req.id, result })),
            (err: Error) => !this.closed && this.ws.send(JSON.stringify({ id: req.id, error: { code: 'APPLICATION_ERROR', message: err.message } })),
          );
      }
      return;
    }
    const id = msg.id === null ? [...this.pending.keys()].find((k) => k.startsWith('null:')) : String(msg.id);
    const p = id !== undefined ? this.pending.get(id) : undefined;
    if (!p || id === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    const err = msg.error as { code: GatewayErrorCode; message: string } | undefined;
    if (err) p.reject(new GatewayError(err.code, err.message, p.method));
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
    this.requests$.complete();
  }
}
