/** The command channel on a real bridge: envelope errors, sessions, binding, orphans, auth. */
import test from 'ava';
import WebSocket from 'ws';
import { MediaBridgeError } from '../../actors/media-bridge/client.js';
import dgram from 'node:dgram';
import { leg, RtpPeer, startBridge, sleep, bridgeSession } from '../helpers/media.js';

const code = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof MediaBridgeError ? err.code : `thrown: ${(err as Error).message}`;
  }
};

test('malformed messages get clear errors and the connection keeps working', async (t) => {
  const bridge = await startBridge(t);
  const c = await bridge.connect();
  const bad = await c.raw('{not json').catch((e: MediaBridgeError) => e);
  t.is((bad as MediaBridgeError).code, 'PARSE_ERROR');
  t.regex((bad as MediaBridgeError).message, /not valid JSON/);
  t.is(await code(c.send({ id: 'x1', method: 42 })), 'INVALID_REQUEST');
  t.is(await code(c.send({ id: 'x2', method: 'session.info', params: [1] })), 'INVALID_REQUEST');
  t.is(await code(c.call('no.such.method', {})), 'METHOD_NOT_FOUND');
  t.is(await code(c.call('session.info', {})), 'NO_SESSION');
  const { session_id } = await c.call('session.create', {});
  t.is(await code(c.call('endpoint.webrtc.accept_answer', { endpoint_id: 'nope', sdp: 'v=0' })), 'ENDPOINT_ERROR');
  t.regex(session_id, /^[0-9a-f-]{36}$/);
  const err = (await c.call('endpoint.create_tone', { tone: 'sine', frequency: 25_000 }).catch((e) => e)) as MediaBridgeError;
  t.is(err.code, 'INVALID_PARAMS');
  t.regex(err.message, /frequency must be between 20 and 20000 Hz; got 25000/);
  const info = await c.call('session.info', {});
  t.is(info.session_id, session_id);
  t.deepEqual(info.endpoints, [], 'the refused command created nothing');
});

test('sessions: create binds, info lists endpoints, destroy unbinds; one bad session does not harm another', async (t) => {
  const bridge = await startBridge(t);
  const a = await bridge.connect();
  const b = await bridge.connect();
  const sa = await a.call('session.create', {});
  const sb = await b.call('session.create', {});
  t.not(sa.session_id, sb.session_id);
  const tone = await a.call('endpoint.create_tone', { tone: 'ringback' });
  t.is(tone.tone, 'ringback');
  t.is(await code(a.call('endpoint.remove', { endpoint_id: 'nope' })), 'ENDPOINT_ERROR');
  t.is(await code(b.call('endpoint.remove', { endpoint_id: tone.endpoint_id })), 'ENDPOINT_ERROR', "b cannot touch a's endpoint");
  const info = await a.call('session.info', {});
  t.deepEqual(info.endpoints.map((e) => [e.endpoint_id, e.type, e.state, e.direction]), [[tone.endpoint_id, 'tone', 'playing', 'sendonly']]);
  const removed = await a.call('endpoint.remove', { endpoint_id: tone.endpoint_id });
  t.true(Math.abs(removed.removed_at_epoch_ms - Date.now()) < 5000);
  t.is(await code(a.call('endpoint.remove', { endpoint_id: tone.endpoint_id })), 'ENDPOINT_ERROR', 'removed is gone');
  await a.call('session.destroy', {});
  t.is(await code(a.call('session.info', {})), 'NO_SESSION');
  t.is(await code(a.call('session.attach', { session_id: sa.session_id })), 'SESSION_NOT_FOUND');
  t.is((await b.call('session.info', {})).session_id, sb.session_id, 'the other session is untouched');
});

test('a dropped connection leaves its session orphaned; session.attach takes it back, else it is destroyed', async (t) => {
  const bridge = await startBridge(t, { orphanTimeoutMs: 1500 });
  const a = await bridge.connect();
  const kept = await a.call('session.create', {});
  await a.call('endpoint.create_tone', { tone: 'busy' });
  const lost = await a.call('session.create', {});
  await a.close();
  const b = await bridge.connect();
  const attached = await b.call('session.attach', { session_id: kept.session_id });
  t.true(attached.attached);
  t.is((await b.call('session.info', {})).endpoints.length, 1, 'the endpoint survived the orphan time');
  await sleep(2500);
  t.is(await code(b.call('session.attach', { session_id: lost.session_id })), 'SESSION_NOT_FOUND', 'not re-attached in time: destroyed');
  t.is((await b.call('session.info', {})).session_id, kept.session_id);
});

test('attach from a second connection moves the session and tells the first', async (t) => {
  const bridge = await startBridge(t);
  const a = await bridge.connect();
  const b = await bridge.connect();
  const s = await a.call('session.create', {});
  const detached = a.waitFor('session.detached');
  await b.call('session.attach', { session_id: s.session_id });
  t.is((await detached).session_id, s.session_id);
  t.is(await code(a.call('session.info', {})), 'NO_SESSION');
});

test('with a token, connections without it (or with a wrong one) are refused with 401', async (t) => {
  const bridge = await startBridge(t, { token: 's3cret' });
  const status = (headers: Record<string, string>, url = bridge.url) =>
    new Promise<number>((resolve) => {
      const ws = new WebSocket(url, { headers });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => {
        ws.close();
        resolve(101);
      });
      ws.on('error', () => undefined);
    });
  t.is(await status({}), 401);
  t.is(await status({ Authorization: 'Bearer wrong' }), 401);
  t.is(await status({ Authorization: 'Bearer s3cret' }), 101);
  t.is(await status({}, `${bridge.url}?token=s3cret`), 101);
  const c = await bridge.connect('s3cret');
  t.truthy((await c.call('session.create', {})).session_id);
});

test('a non-loopback command address without a token is refused at start-up', async (t) => {
  const { bridgeArgs, mediaSettings } = await import('../../actors/media/service.js');
  const { resolve } = await import('../../runtime/config/settings.js');
  const defaults = resolve(mediaSettings, {}, {});
  t.throws(() => bridgeArgs({ ...defaults, host: '0.0.0.0' }), { message: /MEDIA_HOST 0\.0\.0\.0 is not a loopback address: set MEDIA_TOKEN/ });
  t.is(bridgeArgs({ ...defaults, host: '0.0.0.0', token: 'x' }).token, 'x');
  t.throws(() => bridgeArgs({ ...defaults, rtpPortMin: 30000, rtpPortMax: 30001 }), { message: /no room/ });
});

test('max_endpoints_per_session and colocate_with', async (t) => {
  const bridge = await startBridge(t, { maxEndpointsPerSession: 2 });
  const c = await bridge.connect();
  const first = await c.call('session.create', {});
  await c.call('endpoint.create_tone', { tone: 'beep' });
  await c.call('endpoint.create_tone', { tone: 'silence' });
  t.is(await code(c.call('endpoint.create_tone', { tone: 'busy' })), 'LIMIT_EXCEEDED');
  const firstThread = (await c.call('session.info', {})).thread_id;
  t.is(await code(c.call('session.create', { colocate_with: '00000000-0000-4000-8000-000000000000' })), 'SESSION_NOT_FOUND');
  await c.call('session.create', { colocate_with: first.session_id });
  t.is((await c.call('session.info', {})).thread_id, firstThread, 'the colocated session runs on the same thread');
});

test('sessions a restarted front does not know end themselves and free their ports', async (t) => {
  const { bridge, c } = await bridgeSession(t);
  const peer = await RtpPeer.open(t);
  const ep = await leg(c, peer);
  const { BRIDGE_ID } = await import('../../actors/media-bridge/messages.js');
  const { BRIDGE_MODULE } = await import('../../actors/media/service.js');
  await bridge.system.stopChild(BRIDGE_ID);
  await bridge.system.start({ id: BRIDGE_ID, module: BRIDGE_MODULE, args: bridge.args }, 'media.supervisor');
  const socket = dgram.createSocket('udp4');
  t.teardown(() => socket.close());
  const bindable = () => new Promise<boolean>((resolve) => {
    socket.once('error', () => resolve(false));
    socket.bind(ep.bridge.port, '0.0.0.0', () => resolve(true));
  });
  t.false(await bindable(), 'the orphaned session still holds its port at first');
  const deadline = Date.now() + 12_000;
  let freed = false;
  while (!freed && Date.now() < deadline) {
    await sleep(500);
    const probe = dgram.createSocket('udp4');
    freed = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.bind(ep.bridge.port, '0.0.0.0', () => resolve(true));
    });
    probe.close();
  }
  t.true(freed, 'within two checks the session ended and closed its sockets');
});
