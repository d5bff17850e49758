/**
 * WebRTC endpoints against headless Chromium (issue 16): a page offers, the bridge answers; the
 * page hears a tone endpoint at its frequency; the page's oscillator reaches an RTP peer (a UDP
 * socket of the test, PCMU decoded and measured); a bridge-made offer answered by the page;
 * states new → connecting → connected → disconnected; direction changes. One browser for the file.
 */
import test from 'ava';
import { bridgeSession, leg, RtpPeer, sleep } from '../helpers/media.js';
import { dominantFrequency } from '../helpers/audio.js';
import type { MediaBridgeClient } from '../../actors/media-bridge/client.js';
import { launchBrowser, peerPage, until, type Browser1 } from './webrtc-browser.js';
import type { Page } from 'playwright-core';

let b: Browser1 & { close(): Promise<void> };
test.before(async () => {
  b = await launchBrowser();
});
test.after.always(async () => {
  await b?.close();
});

type Ev = { event: string; data: Record<string, unknown> };
function collect(c: MediaBridgeClient): Ev[] {
  const events: Ev[] = [];
  c.events$.subscribe((e) => events.push(e as Ev));
  return events;
}

const peak = (page: Page) => page.evaluate(() => (globalThis as any).peer.peak() as { freq: number; db: number });

/** Wait until the page's analyser hears `freq` (±30 Hz) clearly. */
async function hears(page: Page, freq: number, ms = 10_000) {
  return until(async () => {
    const p = await peak(page);
    return Math.abs(p.freq - freq) <= 30 && p.db > -70 ? p : null;
  }, ms, 200);
}

test.serial('the page offers, the bridge answers; the page hears a tone endpoint at its frequency', async (t) => {
  const { bridge, c } = await bridgeSession(t);
  const events = collect(c);
  const page = await peerPage(t, b, 440);
  const offer = await page.evaluate(() => (globalThis as any).peer.offer() as Promise<string>);
  // The alias detects WebRTC from the SDP.
  const r = (await c.call('endpoint.create_from_offer', { sdp: offer })) as { endpoint_id: string; sdp_answer: string };
  t.regex(r.sdp_answer, /^a=ice-lite/m, 'the bridge is ICE lite');
  t.regex(r.sdp_answer, /^a=fingerprint:sha-256 /m);
  t.notRegex(r.sdp_answer, /typ srflx|typ relay/, 'no STUN or TURN candidates');
  const candidates = r.sdp_answer.match(/^a=candidate:.*$/gm) ?? [];
  t.true(candidates.length > 0 && candidates.every((l) => l.split(' ')[4] === '127.0.0.1'), candidates.join('\n'));
  const port = Number(candidates[0]!.split(' ')[5]);
  t.true(port >= bridge.args.rtpPortMin && port <= bridge.args.rtpPortMax, `candidate port ${port} in the RTP range`);
  await page.evaluate((sdp) => (globalThis as any).peer.accept(sdp), r.sdp_answer);
  await c.call('endpoint.create_tone', { tone: 'sine', frequency: 1000 });
  t.truthy(await hears(page, 1000), `the page hears 1000 Hz (last peak ${JSON.stringify(await peak(page))})`);
  const states = events.filter((e) => e.event === 'endpoint.state_changed' && e.data.endpoint_id === r.endpoint_id).map((e) => e.data.state);
  t.deepEqual(states.slice(0, 2), ['connecting', 'connected']);
  const info = (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is(info.type, 'webrtc');
  t.is(info.state, 'connected');
  t.is(info.dtls_state, 'connected');
  t.regex(String(info.remote_fingerprint), /^sha-256 [0-9A-F:]+…$/);
  t.is(info.offer_generation, 0);
  t.is(info.offer_pending, false);
  t.is(info.send_codec, 'opus');
  // The page closes: the endpoint is disconnected (consent freshness / DTLS close) and stays so.
  await page.evaluate(() => (globalThis as any).peer.close());
  const gone = await until(async () => events.some((e) => e.event === 'endpoint.state_changed' && e.data.endpoint_id === r.endpoint_id && e.data.state === 'disconnected'), 45_000, 250);
  t.true(gone, 'disconnected after the page closed');
});

test.serial("the page's oscillator reaches an RTP peer through the bridge (Opus → PCMU)", async (t) => {
  const { c } = await bridgeSession(t);
  const page = await peerPage(t, b, 600);
  const offer = await page.evaluate(() => (globalThis as any).peer.offer() as Promise<string>);
  const r = await c.call('endpoint.webrtc.create_from_offer', { sdp: offer, direction: 'sendonly' });
  await page.evaluate((sdp) => (globalThis as any).peer.accept(sdp), r.sdp_answer);
  const peer = await RtpPeer.open(t);
  await leg(c, peer, { direction: 'recvonly' });
  await peer.waitFor(100, 15_000);
  await sleep(500);
  const pcm = peer.decodedPcmu(peer.received.length - 25);
  t.true(Math.abs(dominantFrequency(pcm, 8000) - 600) < 20, `dominant ${dominantFrequency(pcm, 8000)} Hz`);
  t.is(peer.received.at(-1)!.pt, 0);
});

test.serial('a bridge-made offer answered by the page; direction changes stop and restore its audio', async (t) => {
  const { c } = await bridgeSession(t);
  const page = await peerPage(t, b, 500);
  const r = (await c.call('endpoint.create_offer', { type: 'webrtc' })) as { endpoint_id: string; sdp_offer: string };
  t.regex(r.sdp_offer, /^m=audio \d+ UDP\/TLS\/RTP\/SAVPF 111 0 8 101 126/m);
  const answer = await page.evaluate((sdp) => (globalThis as any).peer.answer(sdp) as Promise<string>, r.sdp_offer);
  t.deepEqual(await c.call('endpoint.accept_answer', { endpoint_id: r.endpoint_id, sdp: answer }), {});
  await c.call('endpoint.create_tone', { tone: 'sine', frequency: 1500 });
  t.truthy(await hears(page, 1500));
  const packets = () => page.evaluate(() => (globalThis as any).peer.inbound() as Promise<number>);
  await c.call('endpoint.update_direction', { endpoint_id: r.endpoint_id, direction: 'sendonly' });
  await sleep(400);
  const before = await packets();
  await sleep(1000);
  t.true((await packets()) - before <= 2, 'sendonly (peer point of view): the bridge sends nothing to the page');
  await c.call('endpoint.update_direction', { endpoint_id: r.endpoint_id, direction: 'auto' });
  const again = await packets();
  t.truthy(await until(async () => (await packets()) - again > 20, 5000), 'auto restores sendrecv');
  // A second answer to no pending offer is refused.
  const err = await t.throwsAsync(c.call('endpoint.webrtc.accept_answer', { endpoint_id: r.endpoint_id, sdp: answer }));
  t.regex(err!.message, /ENDPOINT_ERROR: the endpoint has no offer waiting for an answer/);
});
