/**
 * A media bridge backend that dies and comes back: commands on it fail with BACKEND_UNAVAILABLE,
 * new sessions go to the backends that are up (except a call pinned to the dead one), releasing an
 * owner does not hang on it, and when it returns the link reconnects by itself, tells owners which
 * sessions were lost, and places sessions on it again.
 */
import test from 'ava';
import { RtpPeer, startBridge, sleep } from '../helpers/media.js';
import { bridgeSessions, refusal, Relay, startLink } from './harness.js';
import { linkSessions } from '../../actors/gateway/media/metrics.js';

const A = 'conn-A';

test.serial('a backend killed mid-way gives BACKEND_UNAVAILABLE and the link recovers when it returns', async (t) => {
  const [b0, b1] = await Promise.all([startBridge(t), startBridge(t)]);
  const relay = await Relay.open(t, b1);
  const h = startLink(t, [b0.url, relay.url], { backoff: { minMs: 100, maxMs: 400 } });
  await h.link.command(A, 'session.create', { callId: 'call-0' }); // on b0 (first, least loaded)
  const lost = await h.link.command(A, 'session.create', { callId: 'call-1' }); // on b1
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [1, 1]);
  await h.link.command(A, 'endpoint.create_tone', { session_id: lost.session_id, tone: 'silence' });

  await b1.system.shutdown();
  await relay.stop();

  const down = await refusal(t, h.link.command(A, 'session.info', { session_id: lost.session_id }));
  t.is(down.code, 'BACKEND_UNAVAILABLE');
  t.regex(down.message, /^the media bridge backend is unavailable: /);
  t.false(down.message.includes(String(relay.port)), `the message does not reveal the backend address: ${down.message}`);
  const pinned = await refusal(t, h.link.command(A, 'session.create', { callId: 'call-1' }));
  t.is(pinned.code, 'BACKEND_UNAVAILABLE', 'a call pinned to the dead backend is not moved');
  // A new call goes to the backend that is up, though the dead one holds fewer sessions now.
  await h.link.command(A, 'session.create', { callId: 'call-2' });
  await h.link.command(A, 'session.create', {});
  t.is(await bridgeSessions(b0), 3);
  t.true(h.events.every((e) => e.name !== 'session.detached'), 'nothing is declared lost while the backend is away');

  const back = await startBridge(t);
  await relay.start(back);
  // The lane carrying the lost session reconnects in the background and finds it gone.
  const detached = await h.event(A, 'session.detached', (d) => d.session_id === lost.session_id, 10_000);
  t.regex(String(detached.reason), /ended on the media bridge while the gateway was disconnected/);
  const gone = await refusal(t, h.link.command(A, 'session.info', { session_id: lost.session_id }));
  t.is(gone.code, 'SESSION_NOT_FOUND');
  // The call's placement went with its last session: call-1 is placed again, on the least loaded backend.
  const again = await h.link.command(A, 'session.create', { callId: 'call-1' });
  t.is(await bridgeSessions(back), 1);
  const info = await h.link.command(A, 'session.info', { session_id: again.session_id });
  t.is(info.session_id, again.session_id);
  t.is(h.link.sessionsOf(A), 4);
  const gauge = await linkSessions.get();
  const byBackend = Object.fromEntries(gauge.values.map((v) => [v.labels.backend, v.value]));
  t.is(byBackend[b0.url], 3);
  t.is(byBackend[relay.url], 1);
  t.true(h.logs.some((l) => l.ns === 'bridge' && l.msg === 'media bridge backend reachable again'));
});

test.serial('releaseOwner with a backend down forgets its sessions there without waiting on it', async (t) => {
  const [b0, b1] = await Promise.all([startBridge(t), startBridge(t)]);
  const h = startLink(t, [b0.url, b1.url], { backoff: { minMs: 100, maxMs: 400 } });
  await h.link.command(A, 'session.create', {});
  await h.link.command(A, 'session.create', {});
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [1, 1]);
  await b1.system.shutdown();
  const started = Date.now();
  await h.link.releaseOwner(A);
  t.true(Date.now() - started < 3000, `released in ${Date.now() - started} ms`);
  t.is(h.link.sessionsOf(A), 0);
  t.is(await bridgeSessions(b0), 0, 'the session on the live backend is destroyed');
});

test.serial('no backend reachable: session.create is BACKEND_UNAVAILABLE, quickly, and works once one answers', async (t) => {
  const bridge = await startBridge(t);
  const relay = await Relay.open(t, bridge);
  await relay.stop();
  const h = startLink(t, [relay.url], { backoff: { minMs: 100, maxMs: 200 } });
  const first = await refusal(t, h.link.command(A, 'session.create', {}));
  t.is(first.code, 'BACKEND_UNAVAILABLE');
  t.is(first.message, 'the media bridge backend is unavailable: cannot connect (ECONNREFUSED)');
  const started = Date.now();
  const second = await refusal(t, h.link.command(A, 'session.create', {}));
  t.is(second.code, 'BACKEND_UNAVAILABLE');
  t.regex(second.message, /cannot connect \(ECONNREFUSED\); next connection attempt in \d+ ms/, 'inside the backoff it fails at once');
  t.true(Date.now() - started < 50);
  await relay.start(bridge);
  await sleep(250);
  const s = await h.link.command(A, 'session.create', {});
  t.regex(String(s.session_id), /^[0-9a-f-]{36}$/);
  t.is(await bridgeSessions(bridge), 1);
});

test.serial('a connection lost to a bridge that still runs: the link reconnects and its sessions carry on', async (t) => {
  const bridge = await startBridge(t);
  const relay = await Relay.open(t, bridge);
  const h = startLink(t, [relay.url], { backoff: { minMs: 100, maxMs: 400 } });
  const s = await h.link.command(A, 'session.create', {});
  const peer = await RtpPeer.open(t);
  await h.link.command(A, 'endpoint.rtp.create_from_offer', { session_id: s.session_id, sdp: peer.sdp() });
  await relay.stop(); // the bridge keeps the session as an orphan (60 s)
  await sleep(150);
  await relay.start(bridge);
  // Back within the orphan timeout: the session is attached again and works, events included.
  const deadline = Date.now() + 5000;
  let info: Record<string, unknown> | null = null;
  while (!info && Date.now() < deadline) {
    info = await h.link.command(A, 'session.info', { session_id: s.session_id }).catch(() => null);
    if (!info) await sleep(100);
  }
  t.truthy(info, 'session.info answers again');
  const tone = await h.link.command(A, 'endpoint.create_tone', { session_id: s.session_id, tone: 'beep', duration_ms: 100 });
  await h.event(A, 'endpoint.tone.finished', (d) => d.endpoint_id === tone.endpoint_id);
  t.true(peer.received.length > 0, 'the tone reached the peer');
  t.false(h.events.some((e) => e.name === 'session.detached'));
  t.is(await bridgeSessions(bridge), 1);
  t.is(h.link.sessionsOf(A), 1);
});
