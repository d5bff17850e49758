/**
 * The session gateway actor: HTTP + the /control WebSocket on one port (3001 by default), the
 * application routes, the calls (calls.ts) and the media link (media-link.ts). It attaches to
 * the SIP server by its tag and checks the attachment every second (a restarted SIP server has
 * forgotten it): `attached` is what /healthz and /readyz report. `accepting` is the switch the
 * drain (drain.ts) turns off; while it is off no new call, route or standalone media session is
 * taken. No plain state: calls and connections do not survive a restart (the spec: calls are
 * not recovered after a crash), and neither does a drain (the daemon is stopping anyway).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineActor } from '../../runtime/index.js';
import { closeApp, listen, loadUws, type TemplatedApp, type us_listen_socket } from '../../runtime/http/uws.js';
import { authorize, isLoopback } from '../../runtime/http/bearer.js';
import { originAllowed } from '../../protocols/objstore/origin.js';
import { errorBody } from '../../protocols/objstore/errors.js';
import { RouteTable } from '../../protocols/gateway/routes.js';
import type { SipServerProtocol } from '../sipserver/messages.js';
import { Calls } from './calls.js';
import { Control, type ControlConn } from './control.js';
import { TurnWriter } from './turn-writer.js';
import { Drain } from './drain.js';
import { handleHttp, hostName, type HttpState } from './http.js';
import { answerRoute } from './route-handler.js';
import type { HttpApi } from './http-calls.js';
import { abortAll, type RecordingsApi } from './recordings.js';
import { RecordingObjects } from './recordings-store.js';
import { OBJSTORE_ID, type ObjstoreProtocol } from '../objstore/messages.js';
import { HTTP_MEDIA_OWNER, HttpOwners } from './http-owners.js';
import type { MediaLink, MediaLinkFactory } from './media-link.js';
import type { GatewayArgs, GatewayProtocol } from './messages.js';
import type { WebSocket } from '@trufflesuite/uws-js-unofficial';

/** How often the attachment to the SIP server is checked (and renewed). */
const ATTACH_CHECK_MS = 1000;
/** Deadline of a follow-up event POSTed to a receiverUrl (RSG's EVENT_HTTP_TIMEOUT_MS). */
const CALLBACK_TIMEOUT_MS = 15_000;

interface Live {
  app: TemplatedApp;
  socket: us_listen_socket;
  port: number;
  routes: RouteTable;
  control: Control;
  calls: Calls;
  media: MediaLink | null;
  drain: Drain;
  /** Attached to the SIP server under our tag, as of the last check. */
  status: { attached: boolean; accepting: boolean };
  http: HttpState;
}

async function loadMediaLink(a: GatewayArgs, ctx: { log: import('pino').Logger }, control: () => Control): Promise<MediaLink | null> {
  if (!a.mediaLinkModule) return null;
  if (a.mediaLinkModule.startsWith('file:') && !existsSync(fileURLToPath(a.mediaLinkModule))) {
    ctx.log.warn({ ns: 'media', module: a.mediaLinkModule }, 'no media link in this build: media commands answer NOT_IMPLEMENTED');
    return null;
  }
  const mod = (await import(a.mediaLinkModule)) as { createMediaLink: MediaLinkFactory };
  return mod.createMediaLink({
    backends: a.mediaBackends,
    ...(a.mediaToken ? { token: a.mediaToken } : {}),
    log: ctx.log.child({ ns: 'media' }),
    events: { event: (owner, name, data) => control().emit(owner, name, data as Record<string, unknown>) },
  });
}

export default defineActor<GatewayProtocol, null, GatewayArgs, Live>({
  kind: 'gateway',
  // The drain's long requests (`drain`, `drain.wait`) must not hold up the SIP server's casts.
  concurrency: 64,
  init: () => null,
  async open(ctx) {
    const a = ctx.args;
    const log = ctx.log;
    const server = ctx.ref<SipServerProtocol>(a.sipserver);
    const status = { attached: false, accepting: true };
    const routes = new RouteTable();
    let calls!: Calls;
    let media: MediaLink | null = null;
    const httpOwners = new HttpOwners({ log, timeoutMs: CALLBACK_TIMEOUT_MS });
    // The SIP server keeps a copy of the routes (protocols/gateway/routes.ts RouteCopy) and
    // routes the INVITEs they select without a route.lookup message: sent on every change, on
    // the drain's start and after each (re)attach (a restarted SIP server has none).
    const sendRouteCopy = () => server.send({ type: 'routeCopy', from: ctx.id, tag: a.tag, routes: routes.all(), accepting: status.accepting }, { handover: true });
    const control = new Control({ routes, calls: () => calls, media: () => media, log, accepting: () => status.accepting, http: httpOwners, routesChanged: sendRouteCopy });
    calls = new Calls({ server, self: ctx.id, routes, owners: control, log, answerTimeoutMs: a.answerTimeoutMs, accepting: () => status.accepting });
    media = await loadMediaLink(a, ctx, () => control);
    ctx.onCleanup(() => media?.close());
    const api: HttpApi = { calls, media: () => media, owners: httpOwners, inFlight: 0 };
    const recordings: RecordingsApi = { objects: new RecordingObjects(a.recordingBucket, ctx.ref<ObjstoreProtocol>(OBJSTORE_ID)), streams: new Set() };
    /** Every owner of media sessions: the connections and the HTTP routes. */
    const mediaOwners = () => [...control.owners(), HTTP_MEDIA_OWNER];

    const check = async () => {
      try {
        const info = await server.request({ type: 'info' }, { timeoutMs: 2000 });
        if (info.tags[a.tag] !== ctx.id) {
          await server.request({ type: 'attach', tag: a.tag, gateway: ctx.id }, { timeoutMs: 2000 });
          sendRouteCopy();
        }
        if (!status.attached) log.info({ tag: a.tag }, 'attached to the SIP server');
        status.attached = true;
      } catch (err) {
        if (status.attached) log.warn({ tag: a.tag, err: (err as Error).message }, 'not attached to the SIP server');
        status.attached = false;
      }
    };
    await check();
    ctx.setInterval(() => void check(), ATTACH_CHECK_MS);
    // The SIP server keeps `acceptingNew` in its checkpoint (it survives its own restarts): a
    // new gateway instance is serving, so a switch left off by a past drain is turned back on.
    if (a.drainsSipServer) await server.request({ type: 'acceptingNew', value: true }, { timeoutMs: 2000 }).catch(() => undefined);

    const mediaSessions = () => (media ? mediaOwners().reduce((n, owner) => n + media!.sessionsOf(owner), 0) : 0);
    const drain = new Drain({
      maxWaitMs: a.maxWaitMs,
      cleanupTimeoutMs: a.cleanupTimeoutMs,
      log,
      work: () => {
        const c = calls.counts();
        return { calls: c.other, reservedCalls: c.offered, mediaSessions: mediaSessions(), commands: control.inFlight + api.inFlight, callbacks: httpOwners.inFlight, recordingStreams: recordings.streams.size };
      },
      onStart: (reason, maxWaitMs) => {
        status.accepting = false;
        sendRouteCopy();
        control.broadcast('gateway.draining', { reason, maxWaitMs });
        if (a.drainsSipServer) void server.request({ type: 'acceptingNew', value: false }, { timeoutMs: 2000 }).catch((err: Error) => log.warn({ err: err.message }, 'the SIP server could not be told to refuse new calls'));
      },
      force: async () => {
        // BYE/CANCEL/503 and the media sessions' destruction all start at once, the owners are
        // closed (1001) at once too; then the answers are awaited (Drain bounds the wait).
        const ending = calls.endAll();
        const releasing = media ? Promise.all(mediaOwners().map((owner) => media!.releaseOwner(owner).catch(() => undefined))) : Promise.resolve();
        control.closeAll(1001, 'the gateway is shutting down');
        abortAll(recordings);
        await Promise.all([ending, releasing]);
      },
      timers: { setTimeout: (fn, ms) => ctx.setTimeout(fn, ms), setInterval: (fn, ms) => ctx.setInterval(fn, ms) },
    });

    // One state for the HTTP side and the route handler (route-handler.ts), asked by GET
    // /sipserver/route or by the local SIP server's `route.lookup` message.
    const http: HttpState = {
      log,
      routes,
      tag: a.tag,
      fallbackUrl: a.fallbackUrl,
      fallbackTimeoutMs: a.fallbackTimeoutMs,
      attached: () => status.attached,
      accepting: () => status.accepting,
      calls: () => calls.size,
      connections: () => control.size,
      token: a.token,
      allowedOrigins: a.allowedOrigins,
      drain,
      api,
      recordings,
    };
    const uws = loadUws();
    const conns = new Map<WebSocket<unknown>, ControlConn>();
    const writers = new Map<WebSocket<unknown>, TurnWriter>();
    const app = uws
      .App()
      .ws('/control', {
        maxPayloadLength: 256 * 1024,
        idleTimeout: 120,
        sendPingsAutomatically: true,
        upgrade: (res, req, context) => {
          const refuse = (status: string, code: string, message: string, headers: Array<[string, string]> = []) => {
            res.cork(() => {
              res.writeStatus(status).writeHeader('Content-Type', 'application/json');
              for (const [k, v] of headers) res.writeHeader(k, v);
              res.end(errorBody(code, message));
            });
          };
          const denied = authorize(a.token, req.getHeader('authorization'), req.getQuery('token') ?? '');
          if (denied) return refuse('401 Unauthorized', 'UNAUTHORIZED', denied, [['WWW-Authenticate', 'Bearer']]);
          const host = req.getHeader('host');
          const origin = req.getHeader('origin') || undefined;
          if (!originAllowed(origin, undefined, a.allowedOrigins)) return refuse('403 Forbidden', 'ORIGIN_NOT_ALLOWED', `origin ${JSON.stringify(origin)} may not open the control channel (GATEWAY_ALLOWED_ORIGINS)`);
          if (a.token === null && !isLoopback(hostName(host))) return refuse('403 Forbidden', 'HOST_NOT_ALLOWED', `without a token the control channel takes only a loopback Host; got ${JSON.stringify(host)}`);
          if (!status.accepting) return refuse('503 Service Unavailable', 'SHUTTING_DOWN', 'the gateway is draining: open a connection to its replacement', [['Retry-After', '1']]);
          res.upgrade({}, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
        },
        open: (ws) => {
          // Sends from outside a uWS callback (actor messages) are gathered for the loop turn and
          // written corked, in order: one write for the turn's frames, not one each (a busy
          // gateway sends several a turn: sip.invite requests and call events).
          const out = new TurnWriter((texts) =>
            ws.cork(() => {
              for (const t of texts) ws.send(t, false);
            }),
          );
          const close = (code?: number, reason?: string) => {
            out.flush();
            ws.cork(() => ws.end(code, reason));
          };
          conns.set(ws, control.opened({ send: (text) => out.push(text), close }));
          writers.set(ws, out);
        },
        message: (ws, message, isBinary) => {
          const conn = conns.get(ws);
          if (!conn) return;
          if (isBinary) return control.binary(conn);
          control.message(conn, Buffer.from(message).toString('utf8'));
        },
        close: (ws) => {
          const conn = conns.get(ws);
          conns.delete(ws);
          writers.get(ws)?.drop();
          writers.delete(ws);
          if (conn) control.closed(conn);
        },
      })
      .any('/*', (res, req) => handleHttp(http, res, req));
    const { socket, port } = await listen(app, a.host, a.port);
    log.info({ host: a.host, port, tag: a.tag, auth: a.token ? 'bearer' : 'none (loopback)', media: media ? a.mediaBackends : 'none' }, 'gateway listening (HTTP and /control)');
    return { app, socket, port, routes, control, calls, media, drain, status, http };
  },
  close: async ({ app, socket, control }, ctx) => {
    closeApp(app, socket);
    control.closeAll();
    await ctx.ref<SipServerProtocol>(ctx.args.sipserver).request({ type: 'detach', tag: ctx.args.tag }, { timeoutMs: 1000 }).catch(() => undefined);
    ctx.log.info('gateway stopped');
  },
  handlers: {
    'sip.request': (msg, _ctx, { calls }) => calls.onEvent(msg),
    'sip.dialog': (msg, _ctx, { calls }) => calls.onEvent(msg),
    'sip.ack': (msg, _ctx, { calls }) => calls.onEvent(msg),
    'sip.cancelled': (msg, _ctx, { calls }) => calls.onEvent(msg),
    'sip.progress': (msg, _ctx, { calls }) => calls.onEvent(msg),
    'sip.dialogEnded': (msg, _ctx, { calls }) => calls.onEvent(msg),
    'route.lookup': async (msg, _ctx, { http }) => ({ answer: await answerRoute(http, msg.query) }),
    'sip.events': (msg, _ctx, { calls }) => {
      for (const ev of msg.events) calls.onEvent(ev);
    },
    drain: async (msg, _ctx, { drain }) => {
      drain.begin(msg.reason);
      return { outcome: await drain.finished };
    },
    'drain.wait': async (msg, _ctx, { drain }) => ({ reason: await drain.waitForStart(msg.waitMs) }),
    info: (_msg, ctx, { port, status, calls, control, routes }) => ({ port, tag: ctx.args.tag, attached: status.attached, accepting: status.accepting, calls: calls.size, connections: control.size, routes: routes.size }),
  },
});
