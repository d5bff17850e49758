/**
 * Bridge endpoints on a real bridge: two sessions (of two connections, on their threads)
 * bridged carry a tone each way; directions; removing either side removes both; a destroyed
 * session removes its peer's side; refusals create nothing; a ring of three bridged sessions
 * carries a tone once, with no feedback. And the routing rule behind the loop guard.
 */
import test from 'ava';
import { routingPlan } from '../../protocols/media/routing.js';
import { dbfs, dominantFrequency, goertzelPower } from '../helpers/audio.js';
import { leg, outcome, RtpPeer, sleep, startBridge } from '../helpers/media.js';

test('routing: a bridge destination hears every source but bridges; PCM endpoints are mixed, never forwarded', (t) => {
  const plan = routingPlan([
    { id: 'rtp', direction: 'sendrecv', codec: 'pcmu' },
    { id: 'toB', direction: 'sendrecv', codec: null, pcm: true, bridge: true },
    { id: 'toC', direction: 'sendrecv', codec: null, pcm: true, bridge: true },
    { id: 'ws', direction: 'sendrecv', codec: null, pcm: true },
  ]);
  t.deepEqual(plan.get('toB'), { destination: 'toB', sources: ['rtp', 'ws'], mode: 'mix' });
  t.deepEqual(plan.get('toC'), { destination: 'toC', sources: ['rtp', 'ws'], mode: 'mix' });
  t.deepEqual(plan.get('ws'), { destination: 'ws', sources: ['rtp', 'toB', 'toC'], mode: 'mix' });
  t.deepEqual(plan.get('rtp'), { destination: 'rtp', sources: ['toB', 'toC', 'ws'], mode: 'mix' });
  const two = routingPlan([
    { id: 'ws1', direction: 'sendrecv', codec: null, pcm: true },
    { id: 'ws2', direction: 'sendrecv', codec: null, pcm: true },
  ]);
  t.is(two.get('ws1')!.mode, 'mix', 'two codec-less endpoints are not "the same codec"');
  const lone = routingPlan([{ id: 'b', direction: 'sendrecv', codec: null, pcm: true, bridge: true }, { id: 'b2', direction: 'sendrecv', codec: null, pcm: true, bridge: true }]);
  t.is(lone.get('b')!.mode, 'silent');
});

/** A bridge with two connections, each owning a session with one RTP peer. */
async function twoSessions(t: Parameters<typeof startBridge>[0], values: Parameters<typeof startBridge>[1] = {}) {
  const bridge = await startBridge(t, values);
  const sides = [];
  for (let i = 0; i < 2; i++) {
    const c = await bridge.connect();
    const { session_id } = await c.call('session.create', {});
    const peer = await RtpPeer.open(t);
    const l = await leg(c, peer);
    sides.push({ c, sessionId: session_id, peer, leg: l });
  }
  return { bridge, a: sides[0]!, b: sides[1]! };
}

test.serial('two bridged sessions carry a tone each way; the target owner learns of its side', async (t) => {
  const { a, b } = await twoSessions(t);
  const bridged = b.c.waitFor('endpoint.bridged');
  const made = await a.c.call('endpoint.create_bridge', { target_session_id: b.sessionId });
  const e = await bridged;
  t.deepEqual(e, { session_id: b.sessionId, endpoint_id: made.target_endpoint_id, peer_session_id: a.sessionId, peer_endpoint_id: made.endpoint_id });
  await Promise.all([a.peer.sendSine(a.leg.bridge, { freq: 500, ms: 1200 }), b.peer.sendSine(b.leg.bridge, { freq: 1300, ms: 1200 })]);
  await sleep(200);
  const atA = a.peer.decodedPcmu();
  const atB = b.peer.decodedPcmu();
  // 60 packets (1.2 s) were sent each way: the bridge loses none of them, but for a frame at the ends.
  t.true(a.peer.received.length >= 57 && b.peer.received.length >= 57, `received ${a.peer.received.length} / ${b.peer.received.length} of 60 each way`);
  t.true(atA.length >= 8000 * 0.8 && atB.length >= 8000 * 0.8, `${atA.length} / ${atB.length} samples`);
  t.true(Math.abs(dominantFrequency(atB.subarray(800), 8000) - 500) < 5, `A → B: ${dominantFrequency(atB, 8000)} Hz`);
  t.true(Math.abs(dominantFrequency(atA.subarray(800), 8000) - 1300) < 5, `B → A: ${dominantFrequency(atA, 8000)} Hz`);
  const infoA = (await a.c.call('session.info', {})).endpoints.find((x) => x.endpoint_id === made.endpoint_id)!;
  const infoB = (await b.c.call('session.info', {})).endpoints.find((x) => x.endpoint_id === made.target_endpoint_id)!;
  t.like(infoA, { type: 'bridge', state: 'connected', direction: 'sendrecv', peer_session_id: b.sessionId, peer_endpoint_id: made.target_endpoint_id });
  t.like(infoB, { type: 'bridge', state: 'connected', direction: 'sendrecv', peer_session_id: a.sessionId });
  t.true((infoA.counters as { framesOut: number }).framesOut >= 50 && (infoB.counters as { framesIn: number }).framesIn >= 50);
});

test.serial('direction: a sendonly side (its peer session only sends) carries audio one way; the other side is recvonly', async (t) => {
  const { a, b } = await twoSessions(t);
  const made = await a.c.call('session.bridge', { target_session_id: b.sessionId, direction: 'sendonly' });
  const infoB = (await b.c.call('session.info', {})).endpoints.find((x) => x.endpoint_id === made.target_endpoint_id)!;
  t.is(infoB.direction, 'recvonly');
  await Promise.all([a.peer.sendSine(a.leg.bridge, { freq: 500, ms: 800 }), b.peer.sendSine(b.leg.bridge, { freq: 1300, ms: 800 })]);
  await sleep(200);
  t.true(Math.abs(dominantFrequency(a.peer.decodedPcmu(), 8000) - 1300) < 5, 'B → A flows');
  t.is(b.peer.received.length, 0, 'A → B does not');
});

test.serial('removing either side removes both; a destroyed session removes its peer side; with events', async (t) => {
  const { a, b } = await twoSessions(t);
  const first = await a.c.call('endpoint.create_bridge', { target_session_id: b.sessionId });
  const gone = b.c.waitFor('endpoint.bridge.removed');
  const r = await a.c.call('endpoint.remove', { endpoint_id: first.endpoint_id });
  const e = await gone;
  t.like(e, { session_id: b.sessionId, endpoint_id: first.target_endpoint_id, peer_session_id: a.sessionId, reason: 'peer removed' });
  t.true(e.removed_at_epoch_ms >= r.removed_at_epoch_ms);
  t.deepEqual((await b.c.call('session.info', {})).endpoints.map((x) => x.type), ['rtp']);
  // The other way round, from the target's side.
  const second = await a.c.call('endpoint.create_bridge', { target_session_id: b.sessionId });
  const back = a.c.waitFor('endpoint.bridge.removed');
  await b.c.call('endpoint.remove', { endpoint_id: second.target_endpoint_id });
  t.is((await back).endpoint_id, second.endpoint_id);
  t.deepEqual((await a.c.call('session.info', {})).endpoints.map((x) => x.type), ['rtp']);
  // A destroyed session takes its peer's side with it.
  const third = await a.c.call('endpoint.create_bridge', { target_session_id: b.sessionId });
  const closed = a.c.waitFor('endpoint.bridge.removed');
  await b.c.call('session.destroy', {});
  t.like(await closed, { endpoint_id: third.endpoint_id, reason: 'peer session closed' });
  t.deepEqual((await a.c.call('session.info', {})).endpoints.map((x) => x.type), ['rtp']);
});

test.serial('refused, creating nothing: self-bridge, unknown session, a full target; a bridge endpoint is not transferred', async (t) => {
  const { a, b } = await twoSessions(t, { maxEndpointsPerSession: 2 });
  t.regex(await outcome(a.c.call('endpoint.create_bridge', { target_session_id: a.sessionId })), /^INVALID_PARAMS: .*a bridge wires two sessions/);
  t.regex(await outcome(a.c.call('endpoint.create_bridge', { target_session_id: '0f8fad5b-d9cb-469f-a165-70867728950e' })), /^SESSION_NOT_FOUND: /);
  await b.c.call('endpoint.create_tone', { tone: 'silence' });
  t.regex(await outcome(a.c.call('endpoint.create_bridge', { target_session_id: b.sessionId })), /^LIMIT_EXCEEDED: .*target session has 2 endpoints/);
  t.deepEqual((await a.c.call('session.info', {})).endpoints.map((x) => x.type), ['rtp'], 'nothing left in the source');
  t.deepEqual((await b.c.call('session.info', {})).endpoints.map((x) => x.type), ['rtp', 'tone'], 'nothing in the target');
  const tone = (await b.c.call('session.info', {})).endpoints[1]!.endpoint_id;
  await b.c.call('endpoint.remove', { endpoint_id: tone });
  const made = await a.c.call('endpoint.create_bridge', { target_session_id: b.sessionId });
  const third = await a.c.call('session.create', {});
  t.regex(await outcome(a.c.call('session.attach', { session_id: a.sessionId }).then(() => a.c.call('endpoint.transfer', { endpoint_id: made.endpoint_id, target_session_id: third.session_id }))), /^INVALID_PARAMS: .*a bridge endpoint cannot be transferred/);
});

test.serial('a ring of three bridged sessions carries a tone once: every session hears it at the level of a tone, and it does not grow', async (t) => {
  const bridge = await startBridge(t);
  const c = await bridge.connect();
  const ids: string[] = [];
  const peers: RtpPeer[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push((await c.call('session.create', {})).session_id);
    const p = await RtpPeer.open(t);
    await leg(c, p);
    peers.push(p);
  }
  // The tone is in A (ids[0]); A's own peer hears it directly.
  await c.call('session.attach', { session_id: ids[0]! });
  await c.call('endpoint.create_tone', { tone: 'sine', frequency: 800 });
  await c.call('endpoint.create_bridge', { target_session_id: ids[1]! });
  await c.call('session.attach', { session_id: ids[1]! });
  await c.call('endpoint.create_bridge', { target_session_id: ids[2]! });
  await c.call('session.attach', { session_id: ids[2]! });
  await c.call('endpoint.create_bridge', { target_session_id: ids[0]! });
  const from = peers.map((p) => p.received.length);
  await sleep(2000);
  // A tone is −10 dBFS (docs/media-bridge.md, Tones). Each session's peer must hear it at that
  // level, from start to end: audio carried round the ring would add up and grow until it clips.
  for (const i of [0, 1, 2]) {
    const pcm = peers[i]!.decodedPcmu(from[i]! + 10);
    t.true(pcm.length >= 8000, `session ${i}: ${pcm.length} samples`);
    const early = dbfs(pcm.subarray(0, 4000));
    const late = dbfs(pcm.subarray(pcm.length - 4000));
    t.true(Math.abs(early + 10) < 1, `session ${i} hears the tone at ${early.toFixed(1)} dBFS: once, not again round the ring`);
    t.true(Math.abs(late - early) < 0.5, `session ${i}: no growth (${early.toFixed(1)} → ${late.toFixed(1)} dBFS)`);
    t.true(goertzelPower(pcm, 8000, 800) > 0.9 * (pcm.reduce((s, v) => s + v * v, 0) / pcm.length), 'it is the tone');
  }
});
