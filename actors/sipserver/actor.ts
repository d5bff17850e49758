/**
 * The SIP server actor: opens the UDP/TCP listeners (transport.ts), runs the core (core.ts)
 * and answers the messages of messages.ts. Gateways attach by tag and get the casts of
 * gateway-messages.ts. Plain state: only `acceptingNew` (the drain switch survives a restart).
 */
import { defineActor, ReplyError } from '../../runtime/index.js';
import { serializeMessage } from '../../protocols/sip/index.js';
import type { Protocol } from '../../runtime/index.js';
import type { SipServerCast } from './gateway-messages.js';
import type { SipServerArgs, SipServerProtocol } from './messages.js';
import { CoreError, SipCore } from './core.js';
import { Transport } from './transport.js';
import { CastBatcher } from './casts.js';
import { askRouteActor, lookupLocally, type RouteHandlerProtocol } from './routing.js';
import { CopiedRoutes } from '../../protocols/gateway/routes.js';
import { checkRouteCopy } from '../../protocols/gateway/commands.js';

type GatewayProtocol = Protocol<SipServerCast>;

interface Live {
  core: SipCore;
  transport: Transport;
  casts: CastBatcher;
  /** The local route handler's routes (`routeCopy`). */
  copied: CopiedRoutes;
}

function refusing<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof CoreError) throw new ReplyError(err.code, err.message);
    throw err;
  }
}

export default defineActor<SipServerProtocol, { acceptingNew: boolean }, SipServerArgs, Live>({
  kind: 'sipserver',
  init: (_ctx, restored) => ({ acceptingNew: restored?.acceptingNew ?? true }),
  // invite/request wait for a final response (up to 64·T1): the other messages must not queue
  // behind them. Handlers share the one event loop (no data races); the core
  // re-checks its state after each await (route lookups, final responses).
  concurrency: 10_000,
  async open(ctx) {
    const a = ctx.args;
    const log = ctx.log;
    const casts = new CastBatcher((gateway, cast) => ctx.ref<GatewayProtocol>(gateway).send(cast, { handover: true }));
    // What the core's timer casts (408 → sip.cancelled, no-ACK BYEs) goes out with the timer's sends, as before batching.
    const timer = (fn: () => void, ms: number) =>
      ctx.setTimeout(() => {
        try {
          fn();
        } finally {
          casts.flush();
        }
      }, ms);
    const core = new SipCore(a, log, (gateway, event) => casts.cast(gateway, event), timer);
    core.acceptingNew = ctx.state.acceptingNew;
    const copied = new CopiedRoutes();
    if (a.routeActor) {
      const handler = ctx.ref<RouteHandlerProtocol>(a.routeActor);
      core.lookup = (query) => lookupLocally(copied, query) ?? askRouteActor(handler, query, a.routeTimeoutMs);
    }
    const transport = await Transport.open(
      { host: a.host, port: a.port, maxMessageBytes: a.maxMessageBytes, maxConnections: a.maxConnections, tcpIdleMs: a.tcpIdleMs },
      {
        message: (bytes, source) => {
          try {
            core.onMessage(bytes, source);
          } catch (err) {
            log.error({ err, source }, 'SIP message handling failed');
          }
        },
        framingError: (bytes, source, reason) => {
          try {
            core.onFramingError(bytes, source, reason);
          } catch (err) {
            log.error({ err, source }, 'SIP framing error handling failed');
          }
        },
      },
    );
    core.transport = transport;
    log.info({ host: a.host, port: transport.port, routeUrl: a.routeUrl, ...(a.routeActor ? { routeActor: a.routeActor } : {}) }, 'SIP server listening (UDP and TCP)');
    return { core, transport, casts, copied };
  },
  close: async ({ core, transport, casts }) => {
    core.close();
    casts.flush();
    await transport.close();
  },
  handlers: {
    attach: (msg, _ctx, { core }) => refusing(() => {
      core.attach(msg.tag, msg.gateway);
      return { tag: msg.tag };
    }),
    detach: (msg, _ctx, { core }) => ({ tag: msg.tag, detached: core.detach(msg.tag) }),
    // Handlers that answer a gateway flush the casts first (casts.ts: a reply never overtakes an event).
    respond: (msg, _ctx, { core, casts }) => refusing(() => {
      try {
        core.respond(msg);
      } finally {
        casts.flush();
      }
      return { sent: true as const };
    }),
    // `respond` as a cast: a refusal has no one to go back to, so it is logged; and with no
    // reply to keep behind them, the casts it makes (sip.dialog) go with the turn's others.
    answer: (msg, ctx, { core }) => {
      try {
        core.respond(msg);
      } catch (err) {
        if (!(err instanceof CoreError)) throw err;
        if (err.code === 'NO_TRANSACTION') ctx.log.info({ key: msg.key, status: msg.status }, `answer dropped: ${err.message}`);
        else ctx.log.warn({ key: msg.key, status: msg.status, code: err.code }, `answer refused: ${err.message}`);
      }
      return { sent: true as const };
    },
    routeCopy: (msg, ctx, { copied }) => {
      if (msg.from !== ctx.args.routeActor) return { routes: copied.size };
      const checked = checkRouteCopy({ tag: msg.tag, routes: msg.routes, accepting: msg.accepting });
      if (!checked.ok) throw new ReplyError('INVALID', `routeCopy refused, the copy kept is unchanged: ${checked.error}`);
      copied.set(checked.value);
      return { routes: copied.size };
    },
    request: async (msg, _ctx, { core, casts }) => {
      try {
        const res = await core.request(msg);
        return { status: res.status, reason: res.reason, raw: serializeMessage(res).toString('latin1') };
      } catch (err) {
        if (err instanceof CoreError) throw new ReplyError(err.code, err.message);
        throw err;
      } finally {
        casts.flush();
      }
    },
    invite: async (msg, _ctx, { core, casts }) => {
      try {
        const res = await core.invite(msg);
        return { status: res.status, reason: res.reason, raw: serializeMessage(res).toString('latin1'), ...(res.dialogKey ? { dialog: res.dialogKey } : {}) };
      } catch (err) {
        if (err instanceof CoreError) throw new ReplyError(err.code, err.message);
        throw err;
      } finally {
        casts.flush();
      }
    },
    cancel: (msg, _ctx, { core }) => ({ cancelling: core.cancel(msg.id) }),
    // The one piece of plain state: saved when it changes (not after every SIP message).
    acceptingNew: async (msg, ctx, { core }) => {
      core.acceptingNew = msg.value;
      ctx.state.acceptingNew = msg.value;
      await ctx.checkpoint();
      return { acceptingNew: msg.value };
    },
    info: (_msg, _ctx, { core }) => core.info(),
  },
});
