/**
 * endpoint.transfer with a live stream: the endpoint keeps its sockets (same thread: handed
 * over; other thread: relayed from the thread that opened them), and the stream loses at
 * most one packet. The sender writes its own sequence number into each payload, so the test
 * can tell which of its packets reached a leg. Those two tests pin commit b85296e: before it,
 * packets that arrived while the target adopted the endpoint were dropped (two under load with
 * the native path, which failed the relayed case).
 */
import test from 'ava';
import { buildRtp } from '../../protocols/media/rtp.js';
import { MediaBridgeError } from '../../actors/media-bridge/client.js';
import { RtpPeer, startBridge, sleep, leg } from '../helpers/media.js';


/** Send numbered PCMU packets every 20 ms until stopped; returns how many were sent. */
function numbered(peer: RtpPeer, to: { address: string; port: number }) {
  let n = 0;
  const timer = setInterval(() => {
    const payload = Buffer.alloc(160, 0xff);
    payload.writeUInt16BE(n, 0);
    peer.socket.send(buildRtp({ marker: n === 0, payloadType: 0, sequenceNumber: (7000 + n) & 0xffff, timestamp: n * 160, ssrc: 0xabc }, payload), to.port, to.address);
    n++;
  }, 20);
  return () => {
    clearInterval(timer);
    return n;
  };
}

const numbers = (peer: RtpPeer) => peer.received.map((r) => r.payload.readUInt16BE(0));

for (const colocated of [true, false]) {
  test(`a live stream moves to another session ${colocated ? 'on the same thread' : 'on another thread (relayed)'} with at most one packet lost (regression b85296e: packets arriving during the transfer were lost; they are kept for the new owner)`, async (t) => {
    const bridge = await startBridge(t, {}, 2);
    const c1 = await bridge.connect();
    const c2 = await bridge.connect();
    const s1 = await c1.call('session.create', {});
    const s2 = await c2.call('session.create', colocated ? { colocate_with: s1.session_id } : {});
    const [i1, i2] = [await c1.call('session.info', {}), await c2.call('session.info', {})];
    if (colocated) t.is(i1.thread_id, i2.thread_id);
    else t.not(i1.thread_id, i2.thread_id, 'the group spreads sessions over its two threads');
    const a = await RtpPeer.open(t);
    const b = await RtpPeer.open(t);
    const c = await RtpPeer.open(t);
    const legA = await leg(c1, a);
    await leg(c1, b);
    const legC = await leg(c2, c);
    const stop = numbered(a, legA.bridge);
    await b.waitFor(25);
    const outEvent = c1.waitFor('endpoint.transferred_out');
    const inEvent = c2.waitFor('endpoint.transferred_in');
    const moved = await c1.call('endpoint.transfer', { endpoint_id: legA.id, target_session_id: s2.session_id });
    t.deepEqual(moved, { endpoint_id: legA.id, target_session_id: s2.session_id });
    t.is((await outEvent).endpoint_id, legA.id);
    t.is((await inEvent).source_session_id, s1.session_id);
    await c.waitFor(25);
    await sleep(100);
    const sent = stop();
    await sleep(200);
    const heard = new Set([...numbers(b), ...numbers(c)]);
    const missing = [];
    for (let n = 0; n < sent; n++) if (!heard.has(n)) missing.push(n);
    t.true(missing.length <= 1, `missing: ${missing.join(', ')} of ${sent}`);
    t.true(Math.max(...numbers(b)) < Math.min(...numbers(c)), 'B heard the stream before the transfer, C after it');
    const infoAfter = await c2.call('session.info', {});
    const moved2 = infoAfter.endpoints.find((e) => e.endpoint_id === legA.id)!;
    t.is(moved2.relayed, !colocated);
    t.is(moved2.local && (moved2.local as { rtp_port: number }).rtp_port, legA.bridge.port, 'the endpoint keeps its socket');
    t.is((await c1.call('session.info', {})).relays_held, colocated ? 0 : 1);
    // And the reverse direction works through the moved endpoint too.
    const before = a.received.length;
    await c.sendSine(legC.bridge, { freq: 400, ms: 300 });
    await sleep(100);
    t.true(a.received.length - before > 5, "the moved endpoint's peer hears the new session");
  });
}

test('transfer refusals: same session, tone endpoint, unknown target; a full target rolls back', async (t) => {
  const bridge = await startBridge(t, { maxEndpointsPerSession: 1 });
  const c1 = await bridge.connect();
  const c2 = await bridge.connect();
  const s1 = await c1.call('session.create', {});
  const s2 = await c2.call('session.create', {});
  await c2.call('endpoint.create_tone', { tone: 'silence' });
  const a = await RtpPeer.open(t);
  const legA = await leg(c1, a);
  const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: MediaBridgeError) => e.code);
  t.is(await code(c1.call('endpoint.transfer', { endpoint_id: legA.id, target_session_id: s1.session_id })), 'INVALID_PARAMS');
  t.is(await code(c1.call('endpoint.transfer', { endpoint_id: legA.id, target_session_id: '00000000-0000-4000-8000-000000000000' })), 'SESSION_NOT_FOUND');
  const tone = (await c2.call('session.info', {})).endpoints[0]!.endpoint_id;
  t.is(await code(c2.call('endpoint.transfer', { endpoint_id: tone, target_session_id: s1.session_id })), 'INVALID_PARAMS');
  const err = (await c1.call('endpoint.transfer', { endpoint_id: legA.id, target_session_id: s2.session_id }).catch((e) => e)) as MediaBridgeError;
  t.is(err.code, 'TRANSFER_FAILED');
  t.regex(err.message, /max_endpoints_per_session/);
  const info = await c1.call('session.info', {});
  t.deepEqual(info.endpoints.map((e) => e.endpoint_id), [legA.id], 'rolled back into the source session');
  t.is((info.endpoints[0]!.local as { rtp_port: number }).rtp_port, legA.bridge.port);
  // The rolled-back endpoint still works: its peer's packets still count.
  await a.sendSine(legA.bridge, { freq: 400, ms: 200 });
  await sleep(100);
  const after = (await c1.call('session.info', {})).endpoints[0]!;
  t.true(((after.counters as Record<string, number>).packetsIn ?? 0) >= 8);
});
