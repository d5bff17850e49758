/**
 * The gateway's media link against real media bridges: sessions made through it carry real RTP,
 * ownership holds between owners, events reach their owner only, releasing an owner frees its
 * ports, and bad commands are refused before anything reaches a bridge.
 */
import test from 'ava';
import dgram from 'node:dgram';
import { dominantFrequency } from '../helpers/audio.js';
import { RtpPeer, mediaAddress, sleep, startBridge } from '../helpers/media.js';
import { createMediaLink } from '../../actors/gateway/media/link.js';
import { bridgeSessions, refusal, startLink } from './harness.js';
import pino from 'pino';

const A = 'conn-A';
const B = 'conn-B';

test.serial('an RTP endpoint and a tone made through the link carry real RTP both ways', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  const { session_id } = await h.link.command(A, 'session.create', { callId: 'call-rtp' });
  t.regex(String(session_id), /^[0-9a-f-]{36}$/);
  const peer = await RtpPeer.open(t);
  const ep = await h.link.command(A, 'endpoint.rtp.create_from_offer', { session_id, sdp: peer.sdp() });
  t.regex(String(ep.sdp_answer), /^m=audio \d+ RTP\/AVP 0/m);
  const tone = await h.link.command(A, 'endpoint.create_tone', { session_id, tone: 'sine', frequency: 1000, duration_ms: 600 });
  const finished = await h.event(A, 'endpoint.tone.finished', (d) => d.endpoint_id === tone.endpoint_id, 5000);
  t.is(finished.session_id, session_id);
  t.is(finished.played_ms, 600);
  await sleep(100);
  t.true(peer.received.length >= 25, `the peer got ${peer.received.length} RTP packets of the tone`);
  t.true(peer.received.every((p) => p.pt === 0));
  const f = dominantFrequency(peer.decodedPcmu(), 8000);
  t.true(Math.abs(f - 1000) < 15, `the peer decoded ${f} Hz`);

  // And the other way: the peer's packets reach the bridge (its counters, read through the link).
  await peer.sendSine(mediaAddress(String(ep.sdp_answer)), { freq: 700, ms: 300 });
  await sleep(100);
  const info = await h.link.command(A, 'session.info', { session_id });
  const rtp = (info.endpoints as Array<Record<string, any>>).find((e) => e.endpoint_id === ep.endpoint_id)!;
  t.true(rtp.counters.packetsIn >= 14, `the bridge accepted ${rtp.counters.packetsIn} packets from the peer`);
  t.is(h.link.sessionsOf(A), 1);

  // No SDP in the logs; the link's lines carry the media / bridge namespaces.
  const text = JSON.stringify(h.logs);
  t.false(text.includes('m=audio'), 'no SDP is logged');
  t.true(h.logs.some((l) => l.ns === 'media' && l.session === session_id));
  t.true(h.logs.some((l) => l.ns === 'bridge' && typeof l.backend === 'string'));
});

test.serial('sessions of one callId share a backend; others go to the backend with fewest sessions', async (t) => {
  const [b0, b1] = await Promise.all([startBridge(t), startBridge(t)]);
  const h = startLink(t, [b0.url, b1.url]);
  const s1 = await h.link.command(A, 'session.create', { callId: 'call-1' });
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [1, 0], 'the first session goes to the first backend');
  const s2 = await h.link.command(A, 'session.create', {});
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [1, 1], 'no callId: the least loaded backend');
  const more = await Promise.all([1, 2, 3].map(() => h.link.command(B, 'session.create', { callId: 'call-1' })));
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [4, 1], 'every session of call-1 on the backend of its first one, even created at once');
  const s3 = await h.link.command(A, 'session.create', { callId: 'call-2' });
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [4, 2], 'a new call on the least loaded backend');
  const s4 = await h.link.command(A, 'session.create', { colocate_with: s3.session_id });
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [4, 3], 'colocate_with follows its session');
  const e = await refusal(t, h.link.command(A, 'session.create', { callId: 'call-1', colocate_with: s3.session_id }));
  t.is(e.code, 'INVALID_PARAMS');
  t.regex(e.message, /colocate_with: .* another media bridge .* callId call-1/);

  // Transfer: within one backend it works; across backends it is refused by name.
  const peer = await RtpPeer.open(t);
  const ep = await h.link.command(A, 'endpoint.rtp.create_from_offer', { session_id: s1.session_id, sdp: peer.sdp() });
  const across = await refusal(t, h.link.command(A, 'endpoint.transfer', { session_id: s1.session_id, endpoint_id: ep.endpoint_id, target_session_id: s2.session_id }));
  t.is(across.code, 'INVALID_PARAMS');
  t.regex(across.message, /target_session_id: .* another media bridge/);
  const s5 = await h.link.command(A, 'session.create', { callId: 'call-1' });
  const moved = await h.link.command(A, 'endpoint.transfer', { session_id: s1.session_id, endpoint_id: ep.endpoint_id, target_session_id: s5.session_id });
  t.deepEqual(moved, { endpoint_id: ep.endpoint_id, target_session_id: s5.session_id });
  const into = await h.event(A, 'endpoint.transferred_in', (d) => d.endpoint_id === ep.endpoint_id);
  t.is(into.session_id, s5.session_id);

  // Once every session of a call is gone, the call is placed afresh.
  for (const s of [s1, s5]) await h.link.command(A, 'session.destroy', { session_id: s.session_id });
  for (const s of more) await h.link.command(B, 'session.destroy', { session_id: s.session_id });
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [0, 3]);
  await h.link.command(A, 'session.create', { callId: 'call-1' });
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [1, 3]);
  t.is(h.link.sessionsOf(A), 4);
  t.is(h.link.sessionsOf(B), 0);
  void s4;
});

test.serial("an owner cannot see or touch another owner's session: the answer is the unknown session's", async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  const mine = await h.link.command(B, 'session.create', {});
  const tone = await h.link.command(B, 'endpoint.create_tone', { session_id: mine.session_id, tone: 'ringback' });
  const theirs = String(mine.session_id);
  const nobody = '00000000-0000-4000-8000-000000000000';
  const attempts: Array<[string, Record<string, unknown>]> = [
    ['session.info', {}],
    ['endpoint.create_tone', { tone: 'beep' }],
    ['endpoint.remove', { endpoint_id: tone.endpoint_id }],
    ['session.destroy', {}],
  ];
  for (const [method, params] of attempts) {
    const other = await refusal(t, h.link.command(A, method, { session_id: theirs, ...params }));
    const none = await refusal(t, h.link.command(A, method, { session_id: nobody, ...params }));
    t.is(other.code, 'SESSION_NOT_FOUND', method);
    t.is(other.message.replace(theirs, 'X'), none.message.replace(nobody, 'X'), `${method}: worded as for a session that does not exist`);
  }
  // As a transfer target, and as colocate_with.
  const own = await h.link.command(A, 'session.create', {});
  const peer = await RtpPeer.open(t);
  const ep = await h.link.command(A, 'endpoint.rtp.create_from_offer', { session_id: own.session_id, sdp: peer.sdp() });
  const target = await refusal(t, h.link.command(A, 'endpoint.transfer', { session_id: own.session_id, endpoint_id: ep.endpoint_id, target_session_id: theirs }));
  t.is(target.code, 'SESSION_NOT_FOUND');
  const colocate = await refusal(t, h.link.command(A, 'session.create', { colocate_with: theirs }));
  t.is(colocate.code, 'SESSION_NOT_FOUND');
  // B's session is untouched, and B can still run it.
  const info = await h.link.command(B, 'session.info', { session_id: theirs });
  t.is((info.endpoints as unknown[]).length, 1);
  t.is(h.link.sessionsOf(B), 1);
  t.is(h.link.sessionsOf(A), 1);
  t.is(await bridgeSessions(bridge), 2);
});

test.serial('events reach the owner of their session only', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  const sa = await h.link.command(A, 'session.create', {});
  const sb = await h.link.command(B, 'session.create', {});
  const ta = await h.link.command(A, 'endpoint.create_tone', { session_id: sa.session_id, tone: 'beep', duration_ms: 100 });
  const tb = await h.link.command(B, 'endpoint.create_tone', { session_id: sb.session_id, tone: 'beep', duration_ms: 150 });
  await h.event(A, 'endpoint.tone.finished', (d) => d.endpoint_id === ta.endpoint_id);
  await h.event(B, 'endpoint.tone.finished', (d) => d.endpoint_id === tb.endpoint_id);
  await sleep(100);
  t.true(h.events.length >= 2);
  for (const e of h.events) {
    const owner = e.data.session_id === sa.session_id ? A : e.data.session_id === sb.session_id ? B : null;
    t.is<string | null, string | null>(e.owner, owner, `${e.name} of ${String(e.data.session_id)} went to ${e.owner}`);
  }
  // A session destroyed: its record goes, and nothing more reaches its former owner.
  await h.link.command(A, 'session.destroy', { session_id: sa.session_id });
  t.is(h.link.sessionsOf(A), 0);
  const gone = await refusal(t, h.link.command(A, 'session.info', { session_id: sa.session_id }));
  t.is(gone.code, 'SESSION_NOT_FOUND');
});

test.serial('releaseOwner destroys every session of the owner and frees their RTP ports; others keep theirs', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  const ports: number[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await h.link.command(A, 'session.create', { callId: `call-${i % 2}` });
    for (let j = 0; j < 2; j++) {
      const offer = await h.link.command(A, 'endpoint.rtp.create_offer', { session_id: s.session_id });
      ports.push(mediaAddress(String(offer.sdp_offer)).port);
    }
    await h.link.command(A, 'endpoint.create_tone', { session_id: s.session_id, tone: 'silence' });
  }
  const kept = await h.link.command(B, 'session.create', {});
  const keptOffer = await h.link.command(B, 'endpoint.rtp.create_offer', { session_id: kept.session_id });
  t.is(h.link.sessionsOf(A), 3);
  t.is(await bridgeSessions(bridge), 4);
  // Held now: binding one of those ports fails.
  await t.throwsAsync(bindUdp(ports[0]!), { code: 'EADDRINUSE' });

  await h.link.releaseOwner(A);
  t.is(h.link.sessionsOf(A), 0);
  t.is(await bridgeSessions(bridge), 1);
  for (const port of ports) {
    const s = await bindUdp(port);
    s.close();
  }
  t.pass(`all ${ports.length} RTP ports (and their RTCP ports) bind again`);
  const after = await refusal(t, h.link.command(A, 'session.info', { session_id: kept.session_id }));
  t.is(after.code, 'SESSION_NOT_FOUND');
  const info = await h.link.command(B, 'session.info', { session_id: kept.session_id });
  t.is((info.endpoints as Array<{ local: { rtp_port: number } }>)[0]!.local.rtp_port, mediaAddress(String(keptOffer.sdp_offer)).port);
  // Releasing twice, or an owner with nothing, is harmless.
  await h.link.releaseOwner(A);
  await h.link.releaseOwner('never-seen');
  t.is(await bridgeSessions(bridge), 1);
});

test.serial('a session being created when its owner is released is destroyed as it arrives', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  const creating = h.link.command(A, 'session.create', {});
  await h.link.releaseOwner(A);
  const e = await refusal(t, creating);
  t.is(e.code, 'BACKEND_UNAVAILABLE');
  t.regex(e.message, /control connection closed while the session was being created/);
  t.is(h.link.sessionsOf(A), 0);
  t.is(await bridgeSessions(bridge), 0);
});

test.serial('bad commands are refused by name before anything reaches a bridge', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  const s = await h.link.command(A, 'session.create', {});
  const sid = s.session_id;
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['session.list', {}, 'METHOD_NOT_FOUND', /unknown method session.list/],
    ['session.attach', { session_id: sid }, 'METHOD_NOT_FOUND', /session.attach is not offered through the gateway/],
    ['session.info', {}, 'INVALID_PARAMS', /session_id is required/],
    ['session.info', { session_id: 'abc' }, 'INVALID_PARAMS', /session_id must be a session UUID; got "abc"/],
    ['session.create', { callId: 5 }, 'INVALID_PARAMS', /callId must be a string; got number 5/],
    ['session.create', { callId: '' }, 'INVALID_PARAMS', /callId must not be empty/],
    ['session.create', { callid: 'x' }, 'INVALID_PARAMS', /unknown parameter callid \(this command takes callId, colocate_with\)/],
    ['endpoint.create_tone', { session_id: sid, tone: 'sine', frequency: 25_000 }, 'INVALID_PARAMS', /frequency must be between 20 and 20000 Hz; got 25000/],
    ['endpoint.create_tone', { session_id: sid, tone: 'beep', volume: 3 }, 'INVALID_PARAMS', /unknown parameter volume/],
    ['endpoint.rtp.create_from_offer', { session_id: sid }, 'INVALID_PARAMS', /sdp is required/],
    ['endpoint.create_file', { session_id: sid }, 'NOT_IMPLEMENTED', /not available/],
  ];
  for (const [method, params, code, message] of cases) {
    const e = await refusal(t, h.link.command(A, method, params));
    t.is(e.code, code, `${method} ${JSON.stringify(params)}`);
    t.regex(e.message, message);
  }
  // The bridge saw none of them: the session has no endpoint, and is the only one.
  const info = await h.link.command(A, 'session.info', { session_id: sid });
  t.deepEqual(info.endpoints, []);
  t.is(await bridgeSessions(bridge), 1);
  // A refusal the bridge gives is passed through with its code and message (no client prefix).
  const noOffer = await refusal(t, h.link.command(A, 'endpoint.rtp.accept_answer', { session_id: sid, endpoint_id: 'nope', sdp: 'v=0\r\n' }));
  t.is(noOffer.code, 'ENDPOINT_ERROR');
  t.false(noOffer.message.startsWith('endpoint.rtp.accept_answer:'), noOffer.message);
});

test.serial('commands on many sessions sharing connections, sent all at once, each land on their own session', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url], { lanes: 2 });
  const sessions = await Promise.all(Array.from({ length: 6 }, (_, i) => h.link.command(i % 2 ? A : B, 'session.create', {})));
  const owner = (i: number) => (i % 2 ? A : B);
  const made = await Promise.all(
    sessions.flatMap((s, i) => Array.from({ length: 5 }, () => h.link.command(owner(i), 'endpoint.create_tone', { session_id: s.session_id, tone: 'silence' }))),
  );
  for (const [i, s] of sessions.entries()) {
    const info = await h.link.command(owner(i), 'session.info', { session_id: s.session_id });
    const ids = (info.endpoints as Array<{ endpoint_id: string }>).map((e) => e.endpoint_id).sort();
    t.deepEqual(ids, made.slice(i * 5, i * 5 + 5).map((m) => String(m.endpoint_id)).sort(), `session ${i} holds exactly the 5 tones made for it`);
  }
  // Destroy and inspect at once, across owners: each answer is about its own session.
  const results = await Promise.all(sessions.map((s, i) => h.link.command(owner(i), i < 3 ? 'session.destroy' : 'session.info', { session_id: s.session_id })));
  for (const [i, r] of results.entries()) t.is(r.session_id, sessions[i]!.session_id);
  t.is(await bridgeSessions(bridge), 3);
  t.is(h.link.sessionsOf(A) + h.link.sessionsOf(B), 3);
});

test.serial('a session taken over on the bridge by another client is reported to its owner and forgotten', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  const s = await h.link.command(A, 'session.create', {});
  const other = await bridge.connect();
  await other.call('session.attach', { session_id: String(s.session_id) });
  const detached = await h.event(A, 'session.detached', (d) => d.session_id === s.session_id);
  t.is(detached.reason, 'attached by another connection');
  t.is(h.link.sessionsOf(A), 0);
  const e = await refusal(t, h.link.command(A, 'session.info', { session_id: s.session_id }));
  t.is(e.code, 'SESSION_NOT_FOUND');
  // Its events now go to the client that took it, not to the former owner through the link.
  const tone = await other.call('endpoint.create_tone', { tone: 'beep', duration_ms: 60 });
  await other.waitFor('endpoint.tone.finished', (d) => d.endpoint_id === tone.endpoint_id);
  t.false(h.events.some((ev) => ev.data.endpoint_id === tone.endpoint_id));
});

test.serial('close() destroys what is left on the bridges; commands after it are BACKEND_UNAVAILABLE', async (t) => {
  const bridge = await startBridge(t);
  const h = startLink(t, [bridge.url]);
  await h.link.command(A, 'session.create', {});
  await h.link.command(B, 'session.create', { callId: 'x' });
  t.is(await bridgeSessions(bridge), 2);
  await h.link.close();
  t.is(await bridgeSessions(bridge), 0);
  t.is(h.link.sessionsOf(A) + h.link.sessionsOf(B), 0);
  const e = await refusal(t, h.link.command(A, 'session.create', {}));
  t.is(e.code, 'BACKEND_UNAVAILABLE');
  t.regex(e.message, /closing its media link/);
  await h.link.close(); // twice is harmless
});

test.serial('a full backend (LIMIT_EXCEEDED) passes a new session to the next; a pinned call gets the refusal', async (t) => {
  const [b0, b1] = await Promise.all([startBridge(t, { maxSessions: 1 }), startBridge(t)]);
  const h = startLink(t, [b0.url, b1.url]);
  await h.link.command(A, 'session.create', { callId: 'full' });
  await h.link.command(A, 'session.create', {});
  await h.link.command(A, 'session.create', {}); // b0 now has fewer sessions of ours, but is full
  t.deepEqual([await bridgeSessions(b0), await bridgeSessions(b1)], [1, 2]);
  const pinned = await refusal(t, h.link.command(A, 'session.create', { callId: 'full' }));
  t.is(pinned.code, 'LIMIT_EXCEEDED');
  t.regex(pinned.message, /the limit is 1/);
  t.is(h.link.sessionsOf(A), 3);
});

test.serial('a bridge with a token: the link presents it; a wrong one is BACKEND_UNAVAILABLE naming the refusal', async (t) => {
  const bridge = await startBridge(t, { token: 'bridge-secret' });
  const good = startLink(t, [bridge.url], { token: 'bridge-secret' });
  const s = await good.link.command(A, 'session.create', {});
  t.regex(String(s.session_id), /^[0-9a-f-]{36}$/);
  const bad = startLink(t, [bridge.url], { token: 'wrong' });
  const e = await refusal(t, bad.link.command(A, 'session.create', {}));
  t.is(e.code, 'BACKEND_UNAVAILABLE');
  t.regex(e.message, /HTTP 401/);
  t.false(JSON.stringify([good.logs, bad.logs]).includes('bridge-secret'), 'the token is never logged');
  t.is(await bridgeSessions(bridge), 1);
});

test.serial('the link refuses a configuration without backends or with a URL that is not ws:', (t) => {
  const log = pino({ level: 'silent' });
  const events = { event: () => undefined };
  t.throws(() => createMediaLink({ backends: [], log, events }), { message: /at least one media bridge backend URL/ });
  t.throws(() => createMediaLink({ backends: ['http://127.0.0.1:3002'], log, events }), { message: /"http:\/\/127.0.0.1:3002" is not a ws:\/\/ or wss:\/\/ URL/ });
  t.throws(() => createMediaLink({ backends: ['not a url'], log, events }), { message: /"not a url" is not a ws:\/\// });
});

function bindUdp(port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    s.once('error', (err) => {
      s.close();
      reject(err);
    });
    s.bind(port, '0.0.0.0', () => resolve(s));
  });
}
