/**
 * The session actor: one per media session, many per thread (placement group `media`). It
 * owns the session's endpoints and the UDP sockets they opened on this thread; events go to
 * the bridge front, which pushes them to the connection that owns the session. A crash or a
 * stop closes every socket; sessions are not restored after a restart (sockets and peers
 * cannot be), so the actor is `temporary` and keeps no checkpoint.
 */
import { defineActor } from '../../runtime/index.js';
import type { BridgeEventMsg, BridgeProtocol, SessionEvent, SessionEventData } from '../media-bridge/messages.js';
import type { SessionArgs, SessionProtocol } from './messages.js';
import { Session } from './session.js';
import { packetsCounter } from './metrics.js';
import { OBJSTORE_ID, type ObjstoreProtocol } from '../objstore/messages.js';

/** How long a transfer waits for the target session to adopt the endpoint (then it rolls back). */
const ADOPT_TIMEOUT_MS = 5000;
/** How long the session waits for the front to say whether it still knows it (no answer: ask again later). */
const OWNS_TIMEOUT_MS = 2000;
/** How often the session asks, unless the args say otherwise. */
const OWNER_CHECK_MS = 5000;
/** How long a finished recording waits for the object store to say its port (no answer: it stays local). */
const STORE_INFO_TIMEOUT_MS = 2000;

function copy(data: Uint8Array): ArrayBuffer {
  const ab = new ArrayBuffer(data.byteLength);
  new Uint8Array(ab).set(data);
  return ab;
}

export default defineActor<SessionProtocol, null, SessionArgs, Session>({
  kind: 'media-session',
  init: () => null,
  /** The session is the live value: the runtime closes it (and every socket it holds) when the actor ends. */
  open(ctx) {
    const bridge = ctx.ref<BridgeProtocol>(ctx.args.bridge);
    const sessionId = ctx.args.sessionId;
    const session = new Session(ctx.args, {
      actorId: ctx.id,
      emit<E extends SessionEvent>(event: E, data: SessionEventData<E>) {
        const msg: BridgeEventMsg<E> = { type: 'event', sessionId, event, data };
        // BridgeEventMsg<E> is one member of BridgeEventMsg; TS cannot see that for a generic E.
        bridge.send(msg as BridgeEventMsg);
      },
      adoptElsewhere: (target, snapshot) => ctx.ref<SessionProtocol>(target).request({ type: 'adopt', snapshot, from: ctx.id }, { timeoutMs: ADOPT_TIMEOUT_MS }),
      relayIn: (target, endpointId, data, address, port, rtcp) => {
        const ab = copy(data);
        ctx.ref<SessionProtocol>(target).send({ type: 'relayIn', endpointId, data: ab, address, port, rtcp }, { transfer: [ab] });
      },
      relayOut: (home, endpointId, data, address, port, rtcp) => {
        const ab = copy(data);
        ctx.ref<SessionProtocol>(home).send({ type: 'relayOut', endpointId, data: ab, address, port, rtcp }, { transfer: [ab] });
      },
      relayRetarget: (home, endpointId, to) => ctx.ref<SessionProtocol>(home).send({ type: 'relayRetarget', endpointId, to }),
      relayClose: (home, endpointId, closeSockets) => ctx.ref<SessionProtocol>(home).send({ type: 'relayClose', endpointId, closeSockets }),
      setTimeout: (fn, ms) => ctx.setTimeout(fn, ms),
      setInterval: (fn, ms) => ctx.setInterval(fn, ms),
      countPacket: (kind, n) => packetsCounter.inc({ kind }, n),
      wsSend: (endpointId, data) => bridge.send({ type: 'wsSend', endpointId, data }, { transfer: [data] }),
      wsClose: (endpointId, reason) => bridge.send({ type: 'wsClose', endpointId, reason }),
      bridgeAttach: (target, attach) => ctx.ref<SessionProtocol>(target).request({ type: 'bridgeAttach', attach }, { timeoutMs: ADOPT_TIMEOUT_MS }),
      bridgeAudio: (peer, endpointId, data) => ctx.ref<SessionProtocol>(peer).send({ type: 'bridgeAudio', endpointId, data }, { transfer: [data] }),
      bridgeDetach: (peer, endpointId, reason) => ctx.ref<SessionProtocol>(peer).send({ type: 'bridgeDetach', endpointId, reason }),
      storePort: () => ctx.ref<ObjstoreProtocol>(OBJSTORE_ID).request({ type: 'info' }, { timeoutMs: STORE_INFO_TIMEOUT_MS }).then((i) => i.port),
    });
    // A front that restarted has an empty registry: a session it does not know is unreachable,
    // so it ends itself (closing its sockets) rather than hold ports for nobody.
    const check = () =>
      bridge.request({ type: 'owns', sessionId }, { timeoutMs: OWNS_TIMEOUT_MS }).then(
        (owned) => {
          if (!owned) {
            ctx.log.warn({ session: sessionId }, 'the bridge front no longer knows this session: ending it');
            void ctx.stop(ctx.id).catch(() => undefined);
          }
        },
        () => undefined, // the front is restarting: ask again later
      );
    const every = ctx.args.ownerCheckMs ?? OWNER_CHECK_MS;
    ctx.setTimeout(() => ctx.setInterval(check, every), Math.floor(Math.random() * every));
    return session;
  },
  handlers: {
    command: (msg, _ctx, session) => session.command(msg.command, msg.targetActor),
    adopt: (msg, _ctx, session) => session.adopt(msg.snapshot, msg.from),
    relayIn: (msg, _ctx, session) => session.relayedIn(msg.endpointId, new Uint8Array(msg.data), msg.address, msg.port, msg.rtcp),
    relayOut: (msg, _ctx, session) => session.sendRelayed(msg.endpointId, new Uint8Array(msg.data), msg.address, msg.port, msg.rtcp),
    relayRetarget: (msg, _ctx, session) => session.retargetRelay(msg.endpointId, msg.to),
    wsOpen: (msg, _ctx, session) => session.wsOpened(msg.endpointId),
    wsAudio: (msg, _ctx, session) => session.wsAudio(msg.endpointId, new Uint8Array(msg.data)),
    wsClosed: (msg, _ctx, session) => session.wsClosed(msg.endpointId),
    bridgeAttach: (msg, _ctx, session) => session.bridgeAttach(msg.attach),
    bridgeAudio: (msg, _ctx, session) => session.bridgeAudio(msg.endpointId, msg.data),
    bridgeDetach: (msg, _ctx, session) => session.bridgeDetach(msg.endpointId, msg.reason),
    relayClose: (msg, ctx, session) => {
      if (session.closeRelay(msg.endpointId, msg.closeSockets)) {
        ctx.ref<BridgeProtocol>(ctx.args.bridge).send({ type: 'sessionIdle', sessionId: ctx.args.sessionId });
      }
    },
  },
});
