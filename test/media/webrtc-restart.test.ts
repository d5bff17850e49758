/**
 * WebRTC renegotiation against headless Chromium (issue 16): ICE restart from the bridge with
 * offer_generation (a stale generation rejected before the SDP is read, the pending offer kept,
 * the right one accepted, audio again), the second restart refused and counted in
 * mediabridge_webrtc_ice_restart_conflicts, a remote ICE restart through accept_offer, a changed
 * fingerprint refused (answer and offer) and its page's ICE checks refused, audio after a remote
 * restart followed by one from the bridge, and a removed endpoint's ENDPOINT_ERROR.
 */
import test from 'ava';
import { bridgeSession } from '../helpers/media.js';
import type { MediaBridgeError } from '../../actors/media-bridge/client.js';
import { browserForFile, flowing, hears, peerOf, peerPage } from './webrtc-browser.js';

const browser = browserForFile(test);

const peer = peerOf;

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

const ufrag = (sdp: string) => /^a=ice-ufrag:(\S+)/m.exec(sdp)?.[1];

test.serial('ICE restart from the bridge: stale generation refused, pending kept, second restart refused and counted, the right answer accepted', async (t) => {
  const { bridge, c } = await bridgeSession(t);
  const page = await peerPage(t, browser(), 440);
  const p = peer(page);
  const r = await c.call('endpoint.webrtc.create_from_offer', { sdp: await p.offer() });
  await p.accept(r.sdp_answer);
  await c.call('endpoint.create_tone', { tone: 'sine', frequency: 1000 });
  t.true(await flowing(page));

  const restart = await c.call('endpoint.webrtc.ice_restart', { endpoint_id: r.endpoint_id });
  t.is(restart.offer_generation, 1);
  t.not(ufrag(restart.sdp_offer), ufrag(r.sdp_answer), 'new ICE credentials');
  const before = metric(await bridge.system.metrics(), 'mediabridge_webrtc_ice_restart_conflicts');
  const second = (await t.throwsAsync(c.call('endpoint.ice_restart', { endpoint_id: r.endpoint_id }))) as MediaBridgeError;
  t.is(second.code, 'OFFER_PENDING');
  t.regex(second.message, /offer of generation 1 is still unanswered/);
  t.is(metric(await bridge.system.metrics(), 'mediabridge_webrtc_ice_restart_conflicts'), before + 1);
  let info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is(info.offer_pending, true);
  t.is(info.offer_generation, 1);

  const answer = await p.answer(restart.sdp_offer);
  // A stale generation is refused before the SDP is read: even garbage SDP gets the generation error.
  const stale = (await t.throwsAsync(c.call('endpoint.webrtc.accept_answer', { endpoint_id: r.endpoint_id, sdp: 'not an sdp', offer_generation: 0 }))) as MediaBridgeError;
  t.is(stale.code, 'OFFER_GENERATION_MISMATCH');
  t.regex(stale.message, /offer_generation 0 is not the pending offer's \(1\); the pending offer is kept/);
  info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is(info.offer_pending, true, 'the pending offer stays');
  t.deepEqual(await c.call('endpoint.accept_answer', { endpoint_id: r.endpoint_id, sdp: answer, offer_generation: 1 }), {});
  info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is(info.offer_pending, false);
  t.true(await flowing(page), 'audio flows again after the restart');
  t.is(info.state, 'connected');

  // A removed endpoint: ENDPOINT_ERROR (spec, ice_restart rule 4).
  await c.call('endpoint.remove', { endpoint_id: r.endpoint_id });
  const removed = (await t.throwsAsync(c.call('endpoint.webrtc.ice_restart', { endpoint_id: r.endpoint_id }))) as MediaBridgeError;
  t.is(removed.code, 'ENDPOINT_ERROR');
});

test.serial('a remote ICE restart through accept_offer; a changed fingerprint is refused and changes nothing', async (t) => {
  const { c } = await bridgeSession(t);
  const page = await peerPage(t, browser(), 440);
  const p = peer(page);
  const r = await c.call('endpoint.webrtc.create_from_offer', { sdp: await p.offer() });
  await p.accept(r.sdp_answer);
  await c.call('endpoint.create_tone', { tone: 'sine', frequency: 800 });
  t.true(await flowing(page));
  const fingerprint = (await c.call('session.info', {})).endpoints[0]!.remote_fingerprint;

  const restartOffer = await p.offer(true);
  const re = await c.call('endpoint.webrtc.accept_offer', { endpoint_id: r.endpoint_id, sdp: restartOffer });
  t.not(ufrag(re.sdp_answer), ufrag(r.sdp_answer), 'our answer to a restart has new ICE credentials');
  await p.accept(re.sdp_answer);
  t.true(await flowing(page), 'audio after the remote restart');

  // Another page's identity: refused as an offer and as an answer, nothing changes.
  const other = await peerPage(t, browser(), 300);
  const foreign = await peer(other).offer();
  const e1 = (await t.throwsAsync(c.call('endpoint.webrtc.accept_offer', { endpoint_id: r.endpoint_id, sdp: foreign as string }))) as MediaBridgeError;
  t.is(e1.code, 'ENDPOINT_ERROR');
  t.regex(e1.message, /the DTLS fingerprint changed \(pinned sha-256 .*, got sha-256 .*\): a different peer needs a new endpoint/);
  const restart = await c.call('endpoint.webrtc.ice_restart', { endpoint_id: r.endpoint_id });
  const foreignAnswer = await peer(other).answer(restart.sdp_offer);
  const e2 = (await t.throwsAsync(c.call('endpoint.webrtc.accept_answer', { endpoint_id: r.endpoint_id, sdp: foreignAnswer, offer_generation: restart.offer_generation }))) as MediaBridgeError;
  t.regex(e2.message, /the DTLS fingerprint changed/);
  const info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is(info.remote_fingerprint, fingerprint, 'the pinned fingerprint is unchanged');
  t.is(info.offer_pending, true, 'the refused answer left the offer pending');
  // The right peer's answer still applies, and audio comes back after this second restart of the
  // endpoint, while the other page, which holds our offer, keeps sending ICE checks with our
  // credentials. Regression: werift's lite agent answered those checks and nominated the other
  // page's pair (USE-CANDIDATE), so our audio went there; now only the ufrags of SDPs we
  // accepted may check, and the others are counted.
  t.deepEqual(await c.call('endpoint.webrtc.accept_answer', { endpoint_id: r.endpoint_id, sdp: await p.answer(restart.sdp_offer), offer_generation: restart.offer_generation }), {});
  t.is((await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!.offer_pending, false);
  t.true(await flowing(page), 'audio after the second restart (remote, then from the bridge)');
  t.truthy(await hears(page, 800, 5000), 'the page hears the 800 Hz tone again');
  t.not(await other.evaluate(() => (globalThis as any).peer.state() as string), 'connected', 'the other page never connected');
  const after = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.true((after.counters as { iceChecksRefused: number }).iceChecksRefused > 0, 'the other page\'s checks were refused and counted');
});

test.serial('bad WebRTC input is refused with ENDPOINT_ERROR and creates nothing', async (t) => {
  const { c } = await bridgeSession(t);
  const page = await peerPage(t, browser(), 440);
  const offer = await peer(page).offer();
  const noFp = offer.replace(/^a=fingerprint:.*\r\n/gm, '');
  const e1 = (await t.throwsAsync(c.call('endpoint.webrtc.create_from_offer', { sdp: noFp }))) as MediaBridgeError;
  t.is(e1.code, 'ENDPOINT_ERROR');
  t.regex(e1.message, /no a=fingerprint line/);
  const two = offer.replace(/^(a=fingerprint:sha-256 )([0-9A-F]{2})/m, (_m, a: string, x: string) => `${a}${x === '00' ? '11' : '00'}`) + 'a=fingerprint:sha-256 ' + /^a=fingerprint:sha-256 (\S+)/m.exec(offer)![1] + '\r\n';
  const e2 = (await t.throwsAsync(c.call('endpoint.webrtc.create_from_offer', { sdp: two }))) as MediaBridgeError;
  t.regex(e2.message, /2 different DTLS fingerprints/);
  const video = offer.replace(/^m=audio /m, 'm=video ');
  t.is(((await t.throwsAsync(c.call('endpoint.webrtc.create_from_offer', { sdp: video }))) as MediaBridgeError).code, 'ENDPOINT_ERROR');
  const g722 = offer.replace(/^(m=audio \d+ UDP\/TLS\/RTP\/SAVPF) .*$/m, '$1 9').replace(/^a=rtpmap:(?!9 ).*\r\n/gm, '');
  const e4 = (await t.throwsAsync(c.call('endpoint.webrtc.create_from_offer', { sdp: g722 }))) as MediaBridgeError;
  t.is(e4.code, 'ENDPOINT_ERROR');
  t.deepEqual((await c.call('session.info', {})).endpoints, []);
  const rtp = await c.call('endpoint.rtp.create_offer', {});
  const e5 = (await t.throwsAsync(c.call('endpoint.webrtc.ice_restart', { endpoint_id: rtp.endpoint_id }))) as MediaBridgeError;
  t.regex(e5.message, /is a rtp endpoint, not a WebRTC endpoint/);
});
