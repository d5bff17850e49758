/**
 * Teardown as one cascade (mediasoup's "Router emits workerclose if Worker is closed"):
 * closing a session closes every endpoint it holds, whichever way it closes (session.destroy,
 * or its actor stopping), and the proof is on the real ports: every RTP and RTCP port the
 * endpoints held can be bound again. A closed session and a closed endpoint refuse further
 * use with an error that says so.
 */
import dgram from 'node:dgram';
import test, { type ExecutionContext } from 'ava';
import { MediaBridgeError, type MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { sessionActorId } from '../../actors/media-session/messages.js';
import { Session, type SessionEnv } from '../../actors/media-session/session.js';
import type { RtpEndpoint } from '../../actors/media-session/rtp-endpoint.js';
import { leg, RtpPeer, sleep, startBridge, type Bridge } from '../helpers/media.js';

/** Whether a UDP port of this host can be bound right now (no socket holds it). */
function bindable(port: number): Promise<boolean> {
  const s = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    s.once('error', () => {
      s.close();
      resolve(false);
    });
    s.bind({ port, address: '0.0.0.0', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** Whether every port can be bound again within `ms` (a closed socket's port is freed on the next loop turn). */
async function freed(ports: number[], ms = 3000): Promise<number[]> {
  const deadline = Date.now() + ms;
  let held = ports;
  while (held.length > 0 && Date.now() < deadline) {
    const free = await Promise.all(held.map(bindable));
    held = held.filter((_, i) => !free[i]);
    if (held.length > 0) await sleep(50);
  }
  return held;
}

/** Two RTP legs with a stream flowing between them (a native rule carries it when the addon is in use) and a tone. */
async function busySession(t: ExecutionContext, bridge: Bridge): Promise<{ c: MediaBridgeClient; sessionId: string; ports: number[] }> {
  const c = await bridge.connect();
  const { session_id } = await c.call('session.create', {});
  const a = await RtpPeer.open(t);
  const b = await RtpPeer.open(t);
  const legA = await leg(c, a);
  await leg(c, b);
  await c.call('endpoint.create_tone', { tone: 'silence' });
  await a.sendSine(legA.bridge, { freq: 400, ms: 400 });
  await b.waitFor(10);
  const info = await c.call('session.info', {});
  const ports = info.endpoints.filter((e) => e.type === 'rtp').flatMap((e) => {
    const local = e.local as { rtp_port: number; rtcp_port: number };
    return [local.rtp_port, local.rtcp_port];
  });
  t.is(ports.length, 4);
  for (const p of ports) t.false(await bindable(p), `port ${p} is held while the session is open`);
  return { c, sessionId: session_id, ports };
}

test('closing a session by session.destroy closes every endpoint: all their RTP and RTCP ports are free again', async (t) => {
  const bridge = await startBridge(t);
  const { c, sessionId, ports } = await busySession(t, bridge);
  t.deepEqual(await c.call('session.destroy', {}), { session_id: sessionId, destroyed: true });
  t.deepEqual(await freed(ports), [], 'no port is still held');
});

test('closing a session by stopping its actor closes every endpoint: all their ports are free again, and the session is gone', async (t) => {
  const bridge = await startBridge(t);
  const { c, sessionId, ports } = await busySession(t, bridge);
  await bridge.system.stopChild(sessionActorId(sessionId));
  t.deepEqual(await freed(ports), [], 'no port is still held');
  const err = (await c.call('session.info', {}).catch((e: unknown) => e)) as MediaBridgeError;
  t.true(err instanceof MediaBridgeError);
  t.is(err.code, 'SESSION_NOT_FOUND');
  t.regex(err.message, /has ended/);
});

/** A session outside any actor: the env records what it would send and owns its timers. */
function bareSession(t: ExecutionContext): Session {
  const timers = new Set<NodeJS.Timeout>();
  t.teardown(() => timers.forEach((x) => clearTimeout(x)));
  const keep = (x: NodeJS.Timeout) => (timers.add(x), x);
  const env: SessionEnv = {
    actorId: 'media.session.test',
    emit: () => undefined,
    adoptElsewhere: () => Promise.reject(new Error('no other session here')),
    relayIn: () => undefined,
    relayOut: () => undefined,
    relayRetarget: () => undefined,
    relayClose: () => undefined,
    setTimeout: (fn, ms) => keep(setTimeout(fn, ms)),
    setInterval: (fn, ms) => keep(setInterval(fn, ms)),
    countPacket: () => undefined,
    wsSend: () => undefined,
    wsClose: () => undefined,
    bridgeAttach: () => Promise.reject(new Error('no other session here')),
    bridgeAudio: () => undefined,
    bridgeDetach: () => undefined,
    storePort: () => Promise.reject(new Error('no object store here')),
  };
  const base = 20000 + Math.floor(Math.random() * 40) * 1000;
  const session = new Session(
    { sessionId: '7b0c3a52-3c1e-4a57-9f59-0d2b0f1a9e11', bridge: 'media.bridge', advertisedAddress: '127.0.0.1', family: 'IP4', bindAddress: '0.0.0.0', rtpPortMin: base, rtpPortMax: base + 999, mediaTimeoutMs: 30_000, maxEndpoints: 16, peerPolicy: 'address' },
    env,
  );
  t.teardown(() => session.close());
  return session;
}

async function offer(session: Session): Promise<RtpEndpoint> {
  const r = await session.command({ method: 'endpoint.rtp.create_offer', params: { direction: 'sendrecv', srtp: false, srtp_optional: false, codecs: undefined } });
  if (!r.ok) throw new Error(r.message);
  const ep = session.endpoints.get(r.result.endpoint_id);
  if (ep?.type !== 'rtp') throw new Error('no RTP endpoint');
  return ep;
}

const createOffer = { srtp: false, srtpOptional: false };

test('a closed session refuses commands and transfers in; its endpoints are closed and refuse commands, naming why', async (t) => {
  const session = bareSession(t);
  const removed = await offer(session);
  const kept = await offer(session);
  const ports = [removed.local.port, removed.local.rtcpPort, kept.local.port, kept.local.rtcpPort];
  t.true((await session.command({ method: 'endpoint.remove', params: { endpoint_id: removed.id } })).ok);
  t.true(removed.closed);
  t.false(kept.closed);
  t.deepEqual(removed.createOffer(createOffer), { ok: false, message: `endpoint ${removed.id} is closed (removed); it takes no more commands` });

  const snapshot = kept.snapshot();
  session.close();
  t.true(session.closed);
  t.true(kept.closed, 'closing the session closed its endpoint');
  t.is(session.endpoints.size, 0);
  t.deepEqual(await freed(ports), [], 'every port of both endpoints is free');
  t.deepEqual(kept.createOffer(createOffer), { ok: false, message: `endpoint ${kept.id} is closed (session closed); it takes no more commands` });
  t.throws(() => kept.snapshot(), { message: /is closed \(session closed\): it cannot be moved/ });
  const info = await session.command({ method: 'session.info', params: {} });
  t.like(info, { ok: false, code: 'SESSION_NOT_FOUND' });
  t.regex(info.ok ? '' : info.message, /session 7b0c3a52-\S+ is closed/);
  t.like(session.adopt(snapshot, 'media.session.other'), { ok: false, code: 'TRANSFER_FAILED', message: 'the target session is being destroyed' });
  session.close(); // a second close is a no-op
  t.true(session.closed);
});
