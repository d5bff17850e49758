/**
 * WebSocket PCM endpoints on a real bridge: a `ws` client dials `/audio/<token>` on the command
 * port, sends a sine that an RTP peer receives and receives what the RTP peer sends, at each
 * sample rate; single-use and bad tokens, the dial-in timeout, a client faster than real time.
 */
import test, { type ExecutionContext } from 'ava';
import WebSocket from 'ws';
import type { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { dominantFrequency, fromS16le, sine, toS16le } from '../helpers/audio.js';
import { bridgeSession, leg, outcome, RtpPeer, sleep, type Bridge } from '../helpers/media.js';

interface Dialled {
  ws: WebSocket;
  frames: Buffer[];
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
}

/** A client dialling the audio path; closed at teardown. */
function dial(t: ExecutionContext, bridge: Bridge, path: string, headers: Record<string, string> = {}): Dialled {
  const ws = new WebSocket(new URL(path, bridge.url), { headers });
  const frames: Buffer[] = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) frames.push(data as Buffer);
  });
  ws.on('error', () => undefined);
  t.teardown(() => ws.terminate());
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  opened.catch(() => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (c, r) => resolve({ code: c, reason: r.toString() })));
  return { ws, frames, opened, closed };
}

/** Send `pcm` in 20 ms of audio per 20 ms, each chunk cut in pieces of `piece` bytes (odd: samples split across messages). */
async function stream(ws: WebSocket, pcm: Int16Array, rate: number, piece: number): Promise<void> {
  const bytes = toS16le(pcm);
  const per = (rate / 50) * 2;
  for (let at = 0; at < bytes.length; at += per) {
    const frame = bytes.subarray(at, at + per);
    for (let p = 0; p < frame.length; p += piece) ws.send(frame.subarray(p, p + piece));
    await sleep(20);
  }
}

async function wsEndpoint(c: MediaBridgeClient, params: { sample_rate?: 8000 | 16000 | 48000; direction?: 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive' } = {}) {
  return c.call('endpoint.create_websocket', params);
}

test.serial('at each rate a client sends a sine an RTP peer hears, and hears the sine the RTP peer sends; 20 ms frames', async (t) => {
  const { bridge, c } = await bridgeSession(t);
  for (const rate of [8000, 16000, 48000] as const) {
    if (rate !== 8000) await c.call('session.create', {});
    const peer = await RtpPeer.open(t);
    const rtp = await leg(c, peer);
    const made = await wsEndpoint(c, { sample_rate: rate });
    t.regex(made.audio_path, /^\/audio\/[0-9a-f-]{36}$/);
    t.is(made.audio_path, `/audio/${made.connect_token}`);
    const connected = c.waitFor('endpoint.state_changed', (e) => e.endpoint_id === made.endpoint_id && e.state === 'connected');
    const client = dial(t, bridge, made.audio_path);
    await client.opened;
    t.is((await connected).previous_state, 'connecting');
    await Promise.all([stream(client.ws, sine(rate, 1000, rate), rate, 333), peer.sendSine(rtp.bridge, { freq: 700, ms: 1000 })]);
    await sleep(200);
    const heard = peer.decodedPcmu();
    t.true(heard.length >= 8000 * 0.8, `${rate}: the RTP peer got ${heard.length} samples`);
    const f = dominantFrequency(heard, 8000);
    t.true(Math.abs(f - 1000) < 5, `${rate} Hz client → RTP peer: ${f} Hz`);
    t.true(client.frames.length >= 40, `${rate}: ${client.frames.length} frames to the client`);
    t.true(client.frames.every((b) => b.length === (rate / 50) * 2), `${rate}: every frame is 20 ms (${(rate / 50) * 2} bytes)`);
    const got = fromS16le(Buffer.concat(client.frames));
    const g = dominantFrequency(got.subarray(rate / 10), rate);
    t.true(Math.abs(g - 700) < 5, `RTP peer → ${rate} Hz client: ${g} Hz`);
    const info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === made.endpoint_id)!;
    t.like(info, { type: 'websocket', state: 'connected', direction: 'sendrecv', sample_rate: rate });
    const gone = c.waitFor('endpoint.state_changed', (e) => e.endpoint_id === made.endpoint_id && e.state === 'disconnected');
    client.ws.close(1000);
    t.is((await gone).previous_state, 'connected');
  }
});

test.serial('a token works once: reused, unknown or malformed it is closed with 1008; a web page (Origin) is refused; remove closes the client', async (t) => {
  const { bridge, c, sessionId } = await bridgeSession(t);
  const made = await wsEndpoint(c, { direction: 'recvonly' });
  const first = dial(t, bridge, made.audio_path);
  await first.opened;
  const again = dial(t, bridge, made.audio_path);
  t.deepEqual(await again.closed, { code: 1008, reason: 'unknown or already used connect token' });
  for (const path of ['/audio/0f8fad5b-d9cb-469f-a165-70867728950e', '/audio/not-a-token', '/audio/']) {
    t.deepEqual(await dial(t, bridge, path).closed, { code: 1008, reason: 'unknown or already used connect token' }, path);
  }
  const other = await c.call('session.create', {});
  await c.call('session.attach', { session_id: sessionId });
  const second = await wsEndpoint(c);
  await t.throwsAsync(dial(t, bridge, second.audio_path, { Origin: 'https://evil.example' }).opened, { message: 'HTTP 403' });
  const ok = dial(t, bridge, second.audio_path);
  await ok.opened;
  t.regex(await outcome(c.call('endpoint.transfer', { endpoint_id: second.endpoint_id, target_session_id: other.session_id })), /^INVALID_PARAMS: .*a websocket endpoint cannot be transferred/);
  t.regex(await outcome(c.call('endpoint.create_websocket', { sample_rate: 12_345 as 8000 })), /^INVALID_PARAMS: .*sample_rate must be one of 8000, 16000, 48000/);
  const r = await c.call('endpoint.remove', { endpoint_id: second.endpoint_id });
  t.true(r.removed_at_epoch_ms <= Date.now());
  t.deepEqual(await ok.closed, { code: 1000, reason: 'endpoint removed' });
  // The first client still works and its endpoint is connected; session.destroy closes it.
  t.is((await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === made.endpoint_id)!.state, 'connected');
  await c.call('session.destroy', {});
  t.deepEqual(await first.closed, { code: 1000, reason: 'endpoint session closed' });
});

test.serial('an endpoint nobody dials in time is removed with endpoint.ws.connect_timeout; its token is dead', async (t) => {
  const { bridge, c } = await bridgeSession(t, { wsConnectTimeoutMs: 500 });
  const started = Date.now();
  const made = await wsEndpoint(c);
  const states: string[] = [];
  c.on('endpoint.state_changed', (e) => states.push(`${e.previous_state}→${e.state}`));
  const timedOut = await c.waitFor('endpoint.ws.connect_timeout', (e) => e.endpoint_id === made.endpoint_id, 5000);
  t.true(Date.now() - started >= 450, `after ${Date.now() - started} ms`);
  t.is(timedOut.timeout_ms, 500);
  t.true(timedOut.removed_at_epoch_ms >= started);
  t.deepEqual(states, ['connecting→disconnected']);
  t.deepEqual((await c.call('session.info', {})).endpoints, []);
  t.deepEqual(await dial(t, bridge, made.audio_path).closed, { code: 1008, reason: 'unknown or already used connect token' });
  // One that is dialled in time stays.
  const kept = await wsEndpoint(c);
  const client = dial(t, bridge, kept.audio_path);
  await client.opened;
  await sleep(800);
  t.is((await c.call('session.info', {})).endpoints[0]!.state, 'connected');
});

test.serial('a client sending faster than real time is closed (1008), not buffered without end', async (t) => {
  const { bridge, c } = await bridgeSession(t);
  const peer = await RtpPeer.open(t);
  await leg(c, peer);
  const made = await wsEndpoint(c, { direction: 'sendonly' });
  const client = dial(t, bridge, made.audio_path);
  await client.opened;
  // Within the budget: 0.5 s at once is accepted.
  client.ws.send(toS16le(sine(8000, 440, 4000)));
  await sleep(300);
  t.is(client.ws.readyState, WebSocket.OPEN);
  const gone = c.waitFor('endpoint.state_changed', (e) => e.endpoint_id === made.endpoint_id && e.state === 'disconnected');
  // 3 s at once: over real time plus 1 s.
  for (let i = 0; i < 10; i++) client.ws.send(toS16le(sine(8000, 440, 2400)));
  t.deepEqual(await client.closed, { code: 1008, reason: 'inbound audio faster than real time' });
  await gone;
  await sleep(200);
  const n = peer.received.length;
  // Some of what was accepted reached the peer (fewer on a loaded machine: what is queued when
  // the endpoint goes is dropped with it), and never the 175 packets of 3.5 s.
  t.true(n >= 5 && n <= 40, `the peer got what was accepted, not 3.5 s: ${n} packets`);
});
