/**
 * The control connections: one per application WebSocket on /control. Each has an id (the
 * owner id of its routes, calls and media sessions), sends replies and events, and keeps the
 * gateway's own requests to the application (`g:<n>` ids) until they are answered. Commands
 * run as they arrive, concurrently (a `sip.createOutbound` waiting for the far end must not
 * hold up the `sip.cancelOutbound` behind it). Closing a connection releases what it owns:
 * routes, calls (Calls.releaseOwner), media sessions (MediaLink.releaseOwner).
 */
import type { Logger } from 'pino';
import { GATEWAY_REQUEST_PREFIX, gatewayFailure, parseFrame, type AppAnswer, type GatewayFailure } from '../../protocols/gateway/envelope.js';
import { checkGatewayCommand, isMediaMethod, type GatewayCommand } from '../../protocols/gateway/commands.js';
import type { RouteTable } from '../../protocols/gateway/routes.js';
import type { CommandRequest } from '../../protocols/media/envelope.js';
import { AskError, CommandError, type Calls, type Owners } from './calls.js';
import type { MediaLink } from './media-link.js';
import { isHttpOwner, type HttpOwners } from './http-owners.js';
import { controlCommandsTotal, controlConnections } from './metrics.js';

/** What a connection needs of its socket. */
export interface Socket {
  send(text: string): void;
  /** Close the WebSocket with a code (1001 at the drain's deadline). */
  close?(code: number, reason: string): void;
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(err: AskError): void;
  timer: NodeJS.Timeout;
}

export class ControlConn {
  readonly pending = new Map<string, Pending>();
  open = true;
  constructor(readonly id: string, readonly socket: Socket) {}

  send(value: unknown): void {
    if (!this.open) return;
    try {
      this.socket.send(JSON.stringify(value));
    } catch {
      this.open = false; // closed under us: the close handler does the rest
    }
  }
}

export interface ControlOptions {
  routes: RouteTable;
  calls: () => Calls;
  media: () => MediaLink | null;
  log: Logger;
  accepting: () => boolean;
  /** Owners of HTTP-owned calls (their receiverUrl takes what a connection would). */
  http: HttpOwners;
  /** The route table changed (a registration or a closed connection's release). */
  routesChanged: () => void;
}

export class Control implements Owners {
  private readonly conns = new Map<string, ControlConn>();
  private nextConn = 1;
  private nextRequest = 1;
  /** Commands in flight (the drain waits for them). */
  inFlight = 0;

  constructor(private readonly o: ControlOptions) {}

  get size(): number {
    return this.conns.size;
  }

  opened(socket: Socket): ControlConn {
    const conn = new ControlConn(`c${this.nextConn++}`, socket);
    this.conns.set(conn.id, conn);
    controlConnections.set(this.conns.size);
    this.o.log.info({ ns: 'control', conn: conn.id }, 'control connection opened');
    return conn;
  }

  closed(conn: ControlConn): void {
    if (!this.conns.delete(conn.id)) return;
    conn.open = false;
    controlConnections.set(this.conns.size);
    for (const [id, p] of conn.pending) {
      clearTimeout(p.timer);
      conn.pending.delete(id);
      p.reject(new AskError('gone', 'the control connection closed'));
    }
    this.o.routes.release(conn.id);
    this.o.routesChanged();
    const calls = this.o.calls();
    const n = calls.countOf(conn.id);
    calls.releaseOwner(conn.id);
    const media = this.o.media();
    const sessions = media?.sessionsOf(conn.id) ?? 0;
    if (media) media.releaseOwner(conn.id).catch((err: unknown) => this.o.log.warn({ ns: 'media', conn: conn.id, err: (err as Error).message }, 'releasing the media sessions of a closed connection failed'));
    this.o.log.info({ ns: 'control', conn: conn.id, calls: n, sessions }, 'control connection closed: its routes, calls and media sessions are released');
  }

  /** One text frame from the application. */
  message(conn: ControlConn, text: string): void {
    const frame = parseFrame(text);
    if (frame.kind === 'invalid') {
      controlCommandsTotal.inc({ method: 'invalid', outcome: frame.reply.error.code });
      return conn.send(frame.reply);
    }
    if (frame.kind === 'answer') return this.answer(conn, frame.answer);
    this.inFlight++;
    void this.command(conn, frame.request).then((reply) => {
      this.inFlight--;
      conn.send(reply);
    });
  }

  binary(conn: ControlConn): void {
    conn.send(gatewayFailure(null, 'INVALID_REQUEST', 'commands are JSON text messages, not binary'));
  }

  private async command(conn: ControlConn, req: CommandRequest): Promise<{ id: string; result: Record<string, unknown> } | GatewayFailure> {
    const family = req.method.split('.')[0] ?? '?';
    try {
      const result = await this.run(conn, req);
      controlCommandsTotal.inc({ method: family, outcome: 'ok' });
      return { id: req.id, result };
    } catch (err) {
      const code = err instanceof CommandError ? err.code : typeof (err as { code?: unknown })?.code === 'string' ? ((err as { code: string }).code as GatewayFailure['error']['code']) : 'INTERNAL_ERROR';
      if (code === 'INTERNAL_ERROR') this.o.log.error({ ns: 'control', err, method: req.method }, 'command failed');
      controlCommandsTotal.inc({ method: family, outcome: code });
      return gatewayFailure(req.id, code, (err as Error).message);
    }
  }

  private async run(conn: ControlConn, req: CommandRequest): Promise<Record<string, unknown>> {
    if (isMediaMethod(req.method)) {
      const media = this.o.media();
      if (!media) throw new CommandError('NOT_IMPLEMENTED', `${req.method}: this gateway has no media link`);
      if (req.method === 'session.create' && !this.o.accepting()) {
        // A media session for a call that exists (or is reserved) is still allowed (spec).
        const callId = req.params.callId;
        if (typeof callId !== 'string' || !this.o.calls().has(callId)) throw new CommandError('SHUTTING_DOWN', 'the gateway takes no new standalone media sessions (draining); only ones with the callId of a call it holds');
      }
      return media.command(conn.id, req.method, req.params);
    }
    const checked = checkGatewayCommand(req.method, req.params);
    if (!checked.ok) throw new CommandError(checked.code, checked.message);
    return this.gatewayCommand(conn, checked.command);
  }

  private async gatewayCommand(conn: ControlConn, c: GatewayCommand): Promise<Record<string, unknown>> {
    const calls = this.o.calls();
    switch (c.method) {
      case 'route.register': {
        if (!this.o.accepting()) throw new CommandError('SHUTTING_DOWN', 'the gateway takes no route registrations (draining)');
        const r = this.o.routes.register(conn.id, c.params.routes);
        if (!r.ok) throw new CommandError('ROUTE_CONFLICT', `route ${r.route.match} ${JSON.stringify(r.route.value)} is held by another connection`);
        this.o.routesChanged();
        this.o.log.info({ ns: 'control', conn: conn.id, routes: c.params.routes.length }, 'routes registered');
        return { routes: this.o.routes.routesOf(conn.id) };
      }
      case 'route.list':
        return { routes: this.o.routes.routesOf(conn.id) };
      case 'sip.createOutbound':
        return calls.createOutbound(conn.id, c.params);
      case 'sip.cancelOutbound':
        return calls.cancelOutbound(conn.id, c.params.callId);
      case 'sip.bye':
        return calls.bye(conn.id, c.params.callId);
      case 'sip.reinvite':
        return calls.reinvite(conn.id, c.params.callId, c.params.sdp);
      case 'sip.calls':
        return { calls: calls.list(conn.id) };
    }
  }

  private answer(conn: ControlConn, a: AppAnswer): void {
    const p = conn.pending.get(a.id);
    if (!p) {
      this.o.log.debug({ ns: 'control', conn: conn.id, id: a.id }, 'answer to no pending request: ignored');
      return;
    }
    conn.pending.delete(a.id);
    clearTimeout(p.timer);
    if (a.error) p.reject(new AskError('error', `the application answered an error: ${a.error.code}: ${a.error.message}`));
    else p.resolve(a.result ?? {});
  }

  // ---- Owners ----

  ask(owner: string, method: string, params: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    if (isHttpOwner(owner)) return this.o.http.ask(owner, method, params, timeoutMs);
    const conn = this.conns.get(owner);
    if (!conn) return Promise.reject(new AskError('gone', 'the owner has disconnected'));
    const id = `${GATEWAY_REQUEST_PREFIX}${this.nextRequest++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        conn.pending.delete(id);
        reject(new AskError('timeout', `no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      conn.pending.set(id, { resolve, reject, timer });
      conn.send({ id, method, params });
    });
  }

  emit(owner: string, event: string, data: Record<string, unknown>): void {
    if (isHttpOwner(owner)) return this.o.http.emit(owner, event, data);
    this.conns.get(owner)?.send({ event, data });
  }

  alive(owner: string): boolean {
    if (isHttpOwner(owner)) return this.o.http.has(owner);
    return this.conns.has(owner);
  }

  /** An event to every connection (`gateway.draining`). */
  broadcast(event: string, data: Record<string, unknown>): void {
    for (const conn of this.conns.values()) conn.send({ event, data });
  }

  /** The connections' ids (the owners of media sessions). */
  owners(): string[] {
    return [...this.conns.keys()];
  }

  /**
   * Every connection is released (its pending asks fail); with `code`, its WebSocket is closed
   * with it (1001 at the drain's deadline).
   */
  closeAll(code?: number, reason = ''): void {
    for (const conn of [...this.conns.values()]) {
      this.closed(conn);
      if (code !== undefined) {
        try {
          conn.socket.close?.(code, reason);
        } catch {
          /* closed already */
        }
      }
    }
  }
}
