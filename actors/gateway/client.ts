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
import type { Observable } from 'rxjs';
import { CommandSocket, type EventFrame, type RequestFrame } from '../../runtime/http/command-socket.js';
import type { GatewayErrorCode } from '../../protocols/gateway/envelope.js';
import type { CallAnswer, GatewayMethod, GatewayParams } from '../../protocols/gateway/commands.js';
import type { Route } from '../../protocols/gateway/routes.js';
import { Subject } from 'rxjs';

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
  'gateway.draining': { reason: string; maxWaitMs: number };
}

export type EventMessage = EventFrame;

type Input<M extends GatewayMethod> = Partial<GatewayParams<M>> & Record<string, unknown>;

export interface ConnectOptions {
  token?: string;
  /** Deadline of each command (default 90 s: an outbound call may ring that long). */
  timeoutMs?: number;
  headers?: Record<string, string>;
}

export class GatewayClient {
  private handlers = new Map<string, (params: Record<string, unknown>) => unknown>();
  /** Every request of the gateway (also those answered by an `onRequest` handler). */
  readonly requests$ = new Subject<RequestFrame>();
  private s!: CommandSocket;
  /** The close code of the connection once it closes (1001: the gateway's drain deadline). */
  closeCode!: Promise<number>;

  private constructor() {}

  /** Every event pushed to this connection. */
  get events$(): Observable<EventMessage> {
    return this.s.events$;
  }

  static async connect(url: string, o: ConnectOptions = {}): Promise<GatewayClient> {
    const ws = await CommandSocket.open(url, 'gateway', { ...(o.token ? { token: o.token } : {}), ...(o.headers ? { headers: o.headers } : {}) });
    const c = new GatewayClient();
    c.closeCode = new Promise((resolve) => ws.once('close', (code: number) => resolve(code)));
    c.s = new CommandSocket(ws, o.timeoutMs ?? 90_000, (code, message, method) => new GatewayError(code as GatewayErrorCode, message, method), (req) => c.request(req));
    c.s.events$.subscribe({ complete: () => c.requests$.complete() });
    return c;
  }

  /** Send a command; resolves with its result, rejects with GatewayError on an error reply. */
  call<M extends GatewayMethod>(method: M, params: Input<M>): Promise<GatewayResults[M]>;
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return this.s.call(method, params);
  }

  /** Send any JSON value as a message (for testing the gateway's validation). */
  send(message: unknown, method?: string, id?: string): Promise<Record<string, unknown>> {
    return this.s.send(message, method, id);
  }

  /** Send a raw text frame; `id` is what the reply will carry (null for unparseable input). */
  raw(text: string, method?: string, id?: string | null): Promise<Record<string, unknown>> {
    return this.s.raw(text, method, id);
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
    this.s.post({ id, result });
  }

  on<E extends keyof GatewayEvents>(event: E, fn: (data: GatewayEvents[E]) => void): () => void;
  on(event: string, fn: (data: Record<string, unknown>) => void): () => void;
  on(event: string, fn: (data: Record<string, unknown>) => void): () => void {
    return this.s.on(event, fn);
  }

  /** The next event of this kind that satisfies `match`, within `ms`. */
  waitFor<E extends keyof GatewayEvents>(event: E, match?: (data: GatewayEvents[E]) => boolean, ms?: number): Promise<GatewayEvents[E]>;
  waitFor(event: string, match?: (data: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
  waitFor(event: string, match?: (data: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>> {
    return this.s.waitFor(event, match, ms);
  }

  get isClosed(): boolean {
    return this.s.isClosed;
  }

  close(): Promise<void> {
    return this.s.close();
  }

  private request(req: RequestFrame): void {
    this.requests$.next(req);
    const handler = this.handlers.get(req.method);
    if (!handler) return;
    Promise.resolve()
      .then(() => handler(req.params))
      .then(
        (result) => this.s.post({ id: req.id, result }),
        (err: Error) => this.s.post({ id: req.id, error: { code: 'APPLICATION_ERROR', message: err.message } }),
      );
  }
}
