/**
 * SRTP and SRTCP authentication failures of a WebRTC endpoint are counted (issue 16): the
 * packets of the endpoint's DTLS transport are unprotected by the bridge's SRTP contexts
 * (webrtc-srtp.ts, in the sessions werift holds), which report each refusal. Forged packets (RTP and RTCP headers, random bodies and
 * tags) are sent from a UDP socket of the test to the endpoint's candidate while headless
 * Chromium holds the real connection: they are counted in the endpoint's `srtpAuthFailures` and
 * in mediabridge_endpoint_events_total{counter="srtpAuthFailures"}, none reaches the media path,
 * and the page's audio goes on.
 */
import test from 'ava';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { bridgeSession, RtpPeer, leg, sleep } from '../helpers/media.js';
import { browserForFile, peerPage, until } from './webrtc-browser.js';

const browser = browserForFile(test);

function metric(text: string): number {
  const m = /^mediabridge_endpoint_events_total\{counter="srtpAuthFailures"\} (\S+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

type Counters = { srtpAuthFailures: number; packetsIn: number; malformed: number };

test.serial('forged SRTP and SRTCP packets are counted as authentication failures and change nothing', async (t) => {
  const { bridge, c } = await bridgeSession(t);
  const page = await peerPage(t, browser(), 700);
  const r = await c.call('endpoint.webrtc.create_from_offer', { sdp: await page.evaluate(() => (globalThis as any).peer.offer() as Promise<string>) });
  await page.evaluate((sdp) => (globalThis as any).peer.accept(sdp), r.sdp_answer);
  // The page is heard by an RTP peer: its media goes through the session.
  const peer = await RtpPeer.open(t);
  await leg(c, peer, { direction: 'recvonly' });
  await peer.waitFor(50, 15_000);
  const info = async () => (await c.call('session.info', {})).endpoints.find((e) => e.endpoint_id === r.endpoint_id)!;
  t.is((await info()).state, 'connected');
  t.is((await info()).srtp_impl, 'bridge', "Chromium's media is protected by the bridge's SRTP code, not werift's");
  const before = (await info()).counters as Counters;
  t.is(before.srtpAuthFailures, 0, 'the real peer fails no check');
  const metricBefore = metric(await bridge.system.metrics());

  const candidate = /^a=candidate:\S+ 1 udp \d+ (\S+) (\d+) typ host/m.exec(r.sdp_answer)!;
  const forger = dgram.createSocket('udp4');
  t.teardown(() => forger.close());
  await new Promise<void>((ok) => forger.bind(0, '127.0.0.1', ok));
  const send = (p: Buffer) => new Promise<void>((ok, no) => forger.send(p, Number(candidate[2]), candidate[1], (e) => (e ? no(e) : ok())));
  for (let i = 0; i < 20; i++) {
    // RTP: V=2, PT 111 (Opus), a sequence, timestamp and SSRC, 40 bytes of "payload" and a 10-byte tag.
    const rtp = Buffer.concat([Buffer.from([0x80, 111, 0, i]), randomBytes(8), randomBytes(50)]);
    await send(rtp);
  }
  for (let i = 0; i < 5; i++) {
    // SRTCP: a sender report header (PT 200), random body, E flag + index and a 10-byte tag.
    const rtcp = Buffer.concat([Buffer.from([0x80, 200, 0, 6]), randomBytes(24), Buffer.from([0x80, 0, 0, i + 1]), randomBytes(10)]);
    await send(rtcp);
  }
  const counted = await until(async () => ((await info()).counters as Counters).srtpAuthFailures >= 25, 5000, 100);
  t.truthy(counted, `25 forgeries counted (got ${((await info()).counters as Counters).srtpAuthFailures})`);
  const after = (await info()).counters as Counters;
  t.is(after.srtpAuthFailures, 25, 'exactly the forged packets: 20 SRTP and 5 SRTCP');
  t.is(after.malformed, before.malformed, 'none reached the media path');
  // Housekeeping adds the endpoint's counts to the thread's metrics once a second.
  t.truthy(await until(async () => metric(await bridge.system.metrics()) >= metricBefore + 25, 5000, 250), 'in mediabridge_endpoint_events_total');
  // The real peer's audio goes on.
  const heard = peer.received.length;
  await sleep(1000);
  t.true(peer.received.length - heard >= 25, 'the page is still heard');
  t.is((await info()).state, 'connected');
});
