/**
 * The media bridge front: the command WebSocket (port 3002 by default), the registry of
 * sessions and which connection owns each, and the dispatch of commands to session actors.
 * Commands of one connection are handled one after another, in the order they arrive.
 */
import { randomUUID } from 'node:crypto';
import { defineActor, ActorError, type ActorContext } from '../../runtime/index.js';
import { closeApp, listen, loadUws, type TemplatedApp, type us_listen_socket } from '../../runtime/http/uws.js';
import { failure, parseCommand, type CommandReply } from '../../protocols/media/envelope.js';
import { checkCommand, SESSIONLESS, type Command, type Method } from '../../protocols/media/commands.js';
import { isWebRtcSdp } from '../../protocols/media/sdp/index.js';
import { sessionActorId, type CommandOutcome, type SessionCommand, type SessionArgs, type SessionProtocol } from '../media-session/messages.js';
import type { Results } from '../../protocols/media/results.js';
import type { BridgeArgs, BridgeProtocol, SessionEvent, SessionEventData } from './messages.js';
import { authorize } from '../../runtime/http/bearer.js';
import { refuseUpgrade } from './upgrade-guard.js';
import { commandsTotal, sessionsGauge } from './metrics.js';
import { AudioPlane, audioToken, type AudioUserData } from './audio.js';
import type { WebSocket } from '@trufflesuite/uws-js-unofficial';

interface Conn {
  id: number;
  ws: WebSocket<unknown> | null;
  bound: string | null;
  owned: Set<string>;
  queue: Promise<void>;
}

interface SessionEntry {
  id: string;
  actor: string;
  owner: Conn | null;
  orphanTimer: NodeJS.Timeout | null;
}

type Ctx = ActorContext<null, BridgeArgs>;

/** How long the front waits for a session to answer a command (the typed client's default deadline too). */
const COMMAND_TIMEOUT_MS = 15_000;
/** A session actor's time to close its sockets when stopped before it is abandoned. */
const SESSION_SHUTDOWN_MS = 2000;
/** How long session.destroy waits for the session to close its endpoints (it then stops it anyway). */
const DESTROY_TIMEOUT_MS = 5000;

class Front {
  readonly sessions = new Map<string, SessionEntry>();
  /** Destroyed sessions whose actors still relay sockets of endpoints they gave away. */
  readonly lingering = new Set<string>();
  /** Sessions being destroyed → the connection that owned them (their last events still go there). */
  private readonly closing = new Map<string, Conn>();
  private nextConn = 1;

  constructor(
    private readonly ctx: Ctx,
    private readonly audio: AudioPlane,
  ) {}

  private get a(): BridgeArgs {
    return this.ctx.args;
  }

  open(ws: WebSocket<unknown>): Conn {
    return { id: this.nextConn++, ws, bound: null, owned: new Set(), queue: Promise.resolve() };
  }

  message(conn: Conn, text: string): void {
    conn.queue = conn.queue.then(async () => {
      const reply = await this.handle(conn, text);
      this.sendTo(conn, reply);
    });
  }

  /** The connection dropped: its sessions live on as orphans until re-attached or timed out. */
  closed(conn: Conn): void {
    conn.ws = null;
    for (const id of conn.owned) {
      const s = this.sessions.get(id);
      if (!s || s.owner !== conn) continue;
      s.owner = null;
      s.orphanTimer = this.ctx.setTimeout(() => {
        this.ctx.log.info({ session: id }, 'orphaned session timed out: destroying it');
        void this.destroy(s);
      }, this.a.orphanTimeoutMs);
    }
  }

  event<E extends SessionEvent>(sessionId: string, event: E, data: SessionEventData<E>): void {
    const owner = this.sessions.get(sessionId)?.owner ?? this.closing.get(sessionId);
    if (owner) this.sendTo(owner, { event, data: { session_id: sessionId, ...data } });
  }

  private sendTo(conn: Conn, value: unknown): void {
    if (!conn.ws) return;
    try {
      conn.ws.send(JSON.stringify(value), false);
    } catch {
      conn.ws = null; // closed under us: the close handler does the rest
    }
  }

  private async handle(conn: Conn, text: string): Promise<CommandReply<Results[Method]>> {
    const parsed = parseCommand(text);
    if (!parsed.ok) {
      commandsTotal.inc({ method: 'invalid', outcome: parsed.reply.error.code });
      return parsed.reply;
    }
    const { id, method, params } = parsed.request;
    const checked = checkCommand(method, params, isWebRtcSdp);
    if (!checked.ok) {
      commandsTotal.inc({ method: 'invalid', outcome: checked.code });
      return failure(id, checked.code, checked.message);
    }
    const command = checked.command;
    let outcome: CommandOutcome;
    try {
      outcome = await this.run(conn, command);
    } catch (err) {
      this.ctx.log.error({ err, method: command.method }, 'command failed');
      outcome = { ok: false, code: 'INTERNAL_ERROR', message: (err as Error).message };
    }
    commandsTotal.inc({ method: command.method, outcome: outcome.ok ? 'ok' : outcome.code });
    return outcome.ok ? { id, result: outcome.result } : failure(id, outcome.code, outcome.message);
  }

  private async run(conn: Conn, command: Command): Promise<CommandOutcome> {
    switch (command.method) {
      case 'session.create':
        return this.create(conn, command.params.colocate_with);
      case 'session.attach':
        return this.attach(conn, command.params.session_id);
      default:
        break;
    }
    if (SESSIONLESS.has(command.method)) throw new Error(`unhandled ${command.method}`);
    const s = conn.bound ? this.sessions.get(conn.bound) : undefined;
    if (!s || s.owner !== conn) {
      conn.bound = null;
      return { ok: false, code: 'NO_SESSION', message: 'no session is bound to this connection: send session.create or session.attach first' };
    }
    if (command.method === 'session.destroy') {
      await this.destroy(s);
      conn.bound = null;
      return { ok: true, result: { session_id: s.id, destroyed: true } };
    }
    let targetActor: string | undefined;
    if (command.method === 'endpoint.create_bridge') {
      if (command.params.target_session_id === s.id) return { ok: false, code: 'INVALID_PARAMS', message: 'target_session_id is this session; a bridge wires two sessions' };
      const target = this.sessions.get(command.params.target_session_id);
      if (!target) return { ok: false, code: 'SESSION_NOT_FOUND', message: `session ${command.params.target_session_id} does not exist` };
      targetActor = target.actor;
    }
    if (command.method === 'endpoint.transfer') {
      const target = this.sessions.get(command.params.target_session_id);
      if (command.params.target_session_id !== s.id) {
        if (!target) return { ok: false, code: 'SESSION_NOT_FOUND', message: `session ${command.params.target_session_id} does not exist` };
        targetActor = target.actor;
      }
    }
    const outcome = await this.ask(s, command, targetActor);
    if (command.method === 'endpoint.create_websocket' && outcome.ok && 'connect_token' in outcome.result) {
      this.audio.expect(outcome.result.connect_token, { endpointId: outcome.result.endpoint_id, sessionActor: s.actor, sampleRate: command.params.sample_rate });
    }
    return outcome;
  }

  private async ask(s: SessionEntry, command: SessionCommand, targetActor?: string): Promise<CommandOutcome> {
    try {
      return await this.ctx.ref<SessionProtocol>(s.actor).request({ type: 'command', command, targetActor }, { timeoutMs: COMMAND_TIMEOUT_MS });
    } catch (err) {
      if (err instanceof ActorError && (err.code === 'NO_SUCH_ACTOR' || err.code === 'ACTOR_CRASHED')) {
        this.forget(s);
        return { ok: false, code: 'SESSION_NOT_FOUND', message: `session ${s.id} has ended (its actor stopped: ${err.message})` };
      }
      throw err;
    }
  }

  /** MEDIA_MAX_SESSIONS_PER_CONNECTION: one connection may not hold the whole bridge. */
  private connectionFull(conn: Conn): CommandOutcome | null {
    if (conn.owned.size < this.a.maxSessionsPerConnection) return null;
    return { ok: false, code: 'LIMIT_EXCEEDED', message: `this connection holds ${conn.owned.size} sessions; the limit per connection is ${this.a.maxSessionsPerConnection} (MEDIA_MAX_SESSIONS_PER_CONNECTION)` };
  }

  private async create(conn: Conn, colocateWith: string | undefined): Promise<CommandOutcome> {
    if (this.sessions.size >= this.a.maxSessions) {
      return { ok: false, code: 'LIMIT_EXCEEDED', message: `the bridge holds ${this.sessions.size} sessions; the limit is ${this.a.maxSessions}` };
    }
    const full = this.connectionFull(conn);
    if (full) return full;
    let anchor: SessionEntry | undefined;
    if (colocateWith !== undefined) {
      anchor = this.sessions.get(colocateWith);
      if (!anchor) return { ok: false, code: 'SESSION_NOT_FOUND', message: `colocate_with: session ${colocateWith} does not exist` };
    }
    const id = randomUUID();
    const args: SessionArgs = {
      sessionId: id,
      bridge: this.ctx.id,
      advertisedAddress: this.a.advertisedAddress,
      family: this.a.advertisedAddress.includes(':') ? 'IP6' : 'IP4',
      bindAddress: this.a.rtpBindAddress,
      rtpPortMin: this.a.rtpPortMin,
      rtpPortMax: this.a.rtpPortMax,
      mediaTimeoutMs: this.a.mediaTimeoutMs,
      maxEndpoints: this.a.maxEndpointsPerSession,
      peerPolicy: this.a.peerPolicy,
      fileDir: this.a.fileDir,
      fileMaxBytes: this.a.fileMaxBytes,
      urlPolicy: this.a.urlPolicy,
      fileCa: this.a.fileCa,
      wsConnectTimeoutMs: this.a.wsConnectTimeoutMs,
      recordingDir: this.a.recordingDir,
      recordingQueuePackets: this.a.recordingQueuePackets,
      recordingBucket: this.a.recordingBucket,
      allowedNetworks: this.a.allowedNetworks,
    };
    const shared = { mode: 'shared' as const, group: 'media' };
    await this.ctx.spawn({
      id: sessionActorId(id),
      module: this.a.sessionModule,
      args,
      restart: 'temporary',
      shutdownMs: SESSION_SHUTDOWN_MS,
      placement: anchor ? { mode: 'with', actor: anchor.actor, fallback: shared } : shared,
    });
    const entry: SessionEntry = { id, actor: sessionActorId(id), owner: conn, orphanTimer: null };
    this.sessions.set(id, entry);
    sessionsGauge.set(this.sessions.size);
    conn.owned.add(id);
    conn.bound = id;
    return { ok: true, result: { session_id: id } };
  }

  private attach(conn: Conn, sessionId: string): CommandOutcome {
    const s = this.sessions.get(sessionId);
    if (!s) return { ok: false, code: 'SESSION_NOT_FOUND', message: `session ${sessionId} does not exist (destroyed, or orphaned longer than ${this.a.orphanTimeoutMs} ms)` };
    if (s.owner !== conn) {
      const full = this.connectionFull(conn);
      if (full) return full;
    }
    if (s.orphanTimer) clearTimeout(s.orphanTimer);
    s.orphanTimer = null;
    const previous = s.owner;
    if (previous && previous !== conn) {
      previous.owned.delete(sessionId);
      if (previous.bound === sessionId) previous.bound = null;
      this.sendTo(previous, { event: 'session.detached', data: { session_id: sessionId, reason: 'attached by another connection' } });
    }
    s.owner = conn;
    conn.owned.add(sessionId);
    conn.bound = sessionId;
    return { ok: true, result: { session_id: sessionId, attached: true } };
  }

  private async destroy(s: SessionEntry): Promise<void> {
    // Forgotten at once (new commands answer SESSION_NOT_FOUND), but what the session says while
    // it closes (recording.stopped with session_destroyed) still reaches its owner.
    const owner = s.owner;
    this.forget(s);
    if (owner) this.closing.set(s.id, owner);
    let lingering = false;
    try {
      const r = await this.ctx.ref<SessionProtocol>(s.actor).request({ type: 'command', command: { method: 'session.destroy', params: {} } }, { timeoutMs: DESTROY_TIMEOUT_MS });
      lingering = r.ok && 'lingering' in r.result && r.result.lingering;
    } catch {
      // already gone: nothing to destroy
    } finally {
      if (owner && this.closing.get(s.id) === owner) this.closing.delete(s.id);
    }
    if (!lingering) await this.ctx.stop(s.actor).catch(() => undefined);
    else this.lingering.add(s.id);
  }

  private forget(s: SessionEntry): void {
    if (s.orphanTimer) clearTimeout(s.orphanTimer);
    s.orphanTimer = null;
    if (s.owner) {
      s.owner.owned.delete(s.id);
      if (s.owner.bound === s.id) s.owner.bound = null;
    }
    s.owner = null;
    this.sessions.delete(s.id);
    sessionsGauge.set(this.sessions.size);
  }

  idle(sessionId: string): void {
    this.lingering.delete(sessionId);
    void this.ctx.stop(sessionActorId(sessionId)).catch(() => undefined);
  }

  owns(sessionId: string): boolean {
    return this.sessions.has(sessionId) || this.lingering.has(sessionId);
  }
}

/** What the front holds while it runs: the registry, and the command WebSocket's app and listen socket. */
interface Live {
  front: Front;
  audio: AudioPlane;
  app: TemplatedApp;
  socket: us_listen_socket;
  /** The bound port (tests listen on port 0). */
  port: number;
}

export default defineActor<BridgeProtocol, null, BridgeArgs, Live>({
  kind: 'media-bridge',
  init: () => null,
  async open(ctx) {
    const a = ctx.args;
    const uws = loadUws();
    const session = (actor: string) => ctx.ref<SessionProtocol>(actor);
    const audio = new AudioPlane({
      opened: (actor, endpointId) => session(actor).request({ type: 'wsOpen', endpointId }, { timeoutMs: COMMAND_TIMEOUT_MS }),
      audio: (actor, endpointId, data) => session(actor).send({ type: 'wsAudio', endpointId, data }, { transfer: [data] }),
      closed: (actor, endpointId) => session(actor).send({ type: 'wsClosed', endpointId }),
      now: () => Date.now(),
    });
    const front = new Front(ctx, audio);
    const conns = new Map<WebSocket<AudioUserData>, Conn>();
    const app = uws.App().ws<AudioUserData>('/*', {
      maxPayloadLength: 256 * 1024,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => {
        const token = audioToken(req.getUrl());
        if (token !== null) {
          // A WebSocket PCM client: its connect token is its credential (audio.ts).
          if (req.getHeader('origin')) {
            res.writeStatus('403 Forbidden').writeHeader('Content-Type', 'application/json').end(JSON.stringify({ error: { code: 'FORBIDDEN', message: 'audio dial-ins from a web page (with an Origin header) are refused' } }));
            return;
          }
          res.upgrade<AudioUserData>({ audioToken: token }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
          return;
        }
        const denied = authorize(a.token, req.getHeader('authorization'), req.getQuery('token') ?? '');
        if (denied) {
          res.writeStatus('401 Unauthorized').writeHeader('Content-Type', 'application/json').writeHeader('WWW-Authenticate', 'Bearer').end(JSON.stringify({ error: { code: 'UNAUTHORIZED', message: denied } }));
          return;
        }
        const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString();
        const refused = refuseUpgrade({ origin: req.getHeader('origin'), host: req.getHeader('host'), remoteAddress, authenticated: a.token !== null }, a.allowedOrigins);
        if (refused) {
          ctx.log.warn({ remoteAddress, reason: refused }, 'command channel upgrade refused');
          res.writeStatus('403 Forbidden').writeHeader('Content-Type', 'application/json').end(JSON.stringify({ error: { code: 'FORBIDDEN', message: refused } }));
          return;
        }
        res.upgrade({}, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
      },
      open: (ws) => {
        if (ws.getUserData().audioToken !== undefined) void audio.open(ws);
        else conns.set(ws, front.open(ws));
      },
      message: (ws, message, isBinary) => {
        if (ws.getUserData().audioToken !== undefined) return audio.message(ws, message, isBinary);
        const conn = conns.get(ws);
        if (!conn) return;
        if (isBinary) {
          conn.queue = conn.queue.then(() => {
            conn.ws?.send(JSON.stringify(failure(null, 'INVALID_REQUEST', 'commands are JSON text messages, not binary')), false);
          });
          return;
        }
        front.message(conn, Buffer.from(message).toString('utf8'));
      },
      close: (ws) => {
        if (ws.getUserData().audioToken !== undefined) return audio.closed(ws);
        const conn = conns.get(ws);
        conns.delete(ws);
        if (conn) front.closed(conn);
      },
    });
    const { socket, port } = await listen(app, a.host, a.port);
    ctx.log.info({ host: a.host, port, auth: a.token ? 'bearer' : 'none (loopback)' }, 'media bridge command channel listening');
    return { front, audio, app, socket, port };
  },
  /** Stop listening and close every connection (a worker thread must, before it ends). */
  close: ({ app, socket }) => closeApp(app, socket),
  handlers: {
    event: (msg, _ctx, { front }) => front.event(msg.sessionId, msg.event, msg.data),
    sessionIdle: (msg, _ctx, { front }) => front.idle(msg.sessionId),
    info: (_msg, _ctx, { front, port }) => ({ port, sessions: front.sessions.size }),
    owns: (msg, _ctx, { front }) => front.owns(msg.sessionId),
    wsSend: (msg, _ctx, { audio }) => audio.send(msg.endpointId, msg.data),
    wsClose: (msg, _ctx, { audio }) => audio.endpointEnded(msg.endpointId, msg.reason),
  },
});
