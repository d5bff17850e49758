/**
 * endpoint.transfer of a live WebRTC endpoint against headless Chromium (issue 16): the werift
 * peer connection moves, unchanged, to a session of the same thread; the page's audio keeps
 * arriving (packets and the new session's tone at its frequency on the page's analyser) and its
 * oscillator reaches an RTP peer of the new session; a target on another thread refuses it
 * (TRANSFER_FAILED) and the endpoint is rolled back, still sending; signalling goes on in the
 * new session (an ICE restart with audio after it).
 */
import test from 'ava';
import { RtpPeer, leg, sleep, startBridge } from '../helpers/media.js';
import { dominantFrequency } from '../helpers/audio.js';
import type { MediaBridgeError } from '../../actors/media-bridge/client.js';
import { browserForFile, flowing, hears, peerOf, peerPage } from './webrtc-browser.js';

const browser = browserForFile(test);

const peer = peerOf;

function metric(text: string, name: string, labels: string): number {
  const m = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

test.serial('a live WebRTC endpoint moves to a session of its thread with its connection; audio keeps flowing both ways; another thread refuses it and it stays', async (t) => {
  const bridge = await startBridge(t, {}, 2);
  const [c1, c2, c3] = [await bridge.connect(), await bridge.connect(), await bridge.connect()];
  const s1 = await c1.call('session.create', {});
  const s2 = await c2.call('session.create', { colocate_with: s1.session_id });
  const s3 = await c3.call('session.create', {});
  const [i1, i2, i3] = [await c1.call('session.info', {}), await c2.call('session.info', {}), await c3.call('session.info', {})];
  t.is(i1.thread_id, i2.thread_id, 'colocate_with: s2 on s1 thread');
  t.not(i1.thread_id, i3.thread_id, 'the group puts s3 on its other thread');

  const page = await peerPage(t, browser(), 600);
  const p = peer(page);
  const r = await c1.call('endpoint.webrtc.create_from_offer', { sdp: await p.offer() });
  await p.accept(r.sdp_answer);
  await c1.call('endpoint.create_tone', { tone: 'sine', frequency: 1000 });
  t.truthy(await hears(page, 1000), 'the page hears session 1 tone');
  const tone2 = await c2.call('endpoint.create_tone', { tone: 'sine', frequency: 1500 });
  const rtp = await RtpPeer.open(t);
  await leg(c2, rtp, { direction: 'recvonly' });
  await c3.call('endpoint.create_tone', { tone: 'sine', frequency: 300 });

  // Another thread: refused, rolled back, still connected and still sending session 1's tone.
  const failedBefore = metric(await bridge.system.metrics(), 'mediabridge_transfers_total', 'outcome="failed"');
  const refused = (await t.throwsAsync(c1.call('endpoint.transfer', { endpoint_id: r.endpoint_id, target_session_id: s3.session_id }))) as MediaBridgeError;
  t.is(refused.code, 'TRANSFER_FAILED');
  t.regex(refused.message, /cannot leave its thread, so a WebRTC endpoint moves only between sessions of one thread \(create the target with colocate_with\); the endpoint stays in this session/);
  t.is(metric(await bridge.system.metrics(), 'mediabridge_transfers_total', 'outcome="failed"'), failedBefore + 1);
  t.deepEqual((await c3.call('session.info', {})).endpoints.map((e) => e.type), ['tone'], 'nothing arrived in session 3');
  const back = (await c1.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is(back.state, 'connected');
  t.true(await flowing(page), 'audio still flows after the refused transfer');
  t.truthy(await hears(page, 1000, 3000), 'still session 1 tone');

  // The same thread: moved with its connection.
  const out = c1.waitFor('endpoint.transferred_out');
  const into = c2.waitFor('endpoint.transferred_in');
  const sentBefore = (back.counters as { packetsOut: number }).packetsOut;
  t.deepEqual(await c1.call('endpoint.transfer', { endpoint_id: r.endpoint_id, target_session_id: s2.session_id }), { endpoint_id: r.endpoint_id, target_session_id: s2.session_id });
  t.is((await out).endpoint_id, r.endpoint_id);
  t.is((await into).source_session_id, s1.session_id);
  t.false((await c1.call('session.info', {})).endpoints.some((e) => e.endpoint_id === r.endpoint_id), 'gone from session 1');
  t.truthy(await hears(page, 1500), `the page hears session 2 tone (last ${JSON.stringify(await p.peak())})`);
  t.true(await flowing(page, 50), 'packets keep arriving at the page');
  t.is(await p.state(), 'connected', 'the browser saw no renegotiation and no reconnection');
  const moved = (await c2.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is(moved.type, 'webrtc');
  t.is(moved.state, 'connected');
  t.is(moved.remote_fingerprint, back.remote_fingerprint, 'the same DTLS peer');
  t.true((moved.counters as { packetsOut: number }).packetsOut > sentBefore, 'its counters went on');
  // The page's oscillator reaches session 2's RTP peer (the tone goes first: it would drown the page).
  await c2.call('endpoint.remove', { endpoint_id: tone2.endpoint_id });
  await sleep(300);
  const from = rtp.received.length;
  await rtp.waitFor(from + 50, 15_000);
  const heard = dominantFrequency(rtp.decodedPcmu(rtp.received.length - 25), 8000);
  t.true(Math.abs(heard - 600) < 20, `the RTP peer of session 2 hears the page at ${heard} Hz`);
  t.is(metric(await bridge.system.metrics(), 'mediabridge_transfers_total', 'outcome="same-thread"') >= 1, true);

  // Signalling goes on in the new session: an ICE restart from it, audio after.
  await c2.call('endpoint.create_tone', { tone: 'sine', frequency: 1200 });
  t.truthy(await hears(page, 1200));
  const restart = await c2.call('endpoint.webrtc.ice_restart', { endpoint_id: r.endpoint_id });
  t.deepEqual(await c2.call('endpoint.accept_answer', { endpoint_id: r.endpoint_id, sdp: await p.answer(restart.sdp_offer), offer_generation: restart.offer_generation }), {});
  t.true(await flowing(page), 'audio after an ICE restart in the new session');
  t.truthy(await hears(page, 1200, 3000));
  // Session 1 no longer knows it.
  const gone = (await t.throwsAsync(c1.call('endpoint.webrtc.ice_restart', { endpoint_id: r.endpoint_id }))) as MediaBridgeError;
  t.is(gone.code, 'ENDPOINT_ERROR');
});
