/**
 * Negotiation through the bridge: an SDP that breaks a rule gets ENDPOINT_ERROR and commits
 * nothing (no endpoint, established state untouched); reinvite and SRTP rekey on live media.
 * The rule-by-rule SDP cases are in sdp-*.test.ts; here each rule is seen end to end once.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { MediaBridgeError } from '../../actors/media-bridge/client.js';
import { mediaAddress, RtpPeer, sdpKey, srtpSender, sleep, bridgeSession } from '../helpers/media.js';

const code = (p: Promise<unknown>) => p.then(() => 'ok', (e: MediaBridgeError) => `${e.code}: ${e.message}`);

const sdp = (...media: string[]) => ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', ...media, ''].join('\r\n');
const key = () => randomBytes(30).toString('base64');

const BROKEN: Array<[string, string]> = [
  ['rule 1: no active audio section', sdp('m=audio 0 RTP/AVP 0', 'm=video 5000 RTP/AVP 96')],
  ['rule 4: secure offered, no usable key, no fallback to plain', sdp('m=audio 4000 RTP/SAVP 0', 'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:c2hvcnQ=', 'm=audio 4002 RTP/AVP 0')],
  ['rule 6: unsupported profile', sdp('m=audio 4000 UDP/TLS/RTP/SAVP 0')],
  ['rule 6: no supported codec', sdp('m=audio 4000 RTP/AVP 18', 'a=rtpmap:18 G729/8000')],
  ['rule 6: unreachable address family', ['v=0', 'o=- 1 1 IN IP6 ::1', 's=-', 'c=IN IP6 ::1', 't=0 0', 'm=audio 4000 RTP/AVP 0', ''].join('\r\n')],
  ['rule 7: unsupported suite', sdp('m=audio 4000 RTP/SAVP 0', `a=crypto:1 F8_128_HMAC_SHA1_80 inline:${key()}`)],
  ['not SDP at all', 'hello'],
];

test('offers that break a rule get ENDPOINT_ERROR and create nothing', async (t) => {
  const { c } = await bridgeSession(t);
  for (const [rule, offer] of BROKEN) {
    const r = await code(c.call('endpoint.rtp.create_from_offer', { sdp: offer }));
    t.regex(r, /^ENDPOINT_ERROR: ./, rule);
  }
  t.deepEqual((await c.call('session.info', {})).endpoints, []);
});

test('rule 2 end to end: a secure section with a usable key is chosen over an earlier plain one', async (t) => {
  const { c } = await bridgeSession(t);
  const r = await c.call('endpoint.rtp.create_from_offer', { sdp: sdp('m=audio 4000 RTP/AVP 0', 'm=audio 4002 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key()}`) });
  const sections = r.sdp_answer.split(/\r?\n/).filter((l) => l.startsWith('m='));
  t.is(sections.length, 2, 'rule 3: same sections in the same order');
  t.regex(sections[0]!, /^m=audio 0 RTP\/AVP/, 'the plain section is unselected (port 0)');
  t.regex(sections[1]!, /^m=audio [1-9]\d* RTP\/SAVP/);
});

test('rule 5: an answer to our offer with two active audio sections is refused and the offer stays pending', async (t) => {
  const { c } = await bridgeSession(t);
  const offer = await c.call('endpoint.rtp.create_offer', {});
  t.regex(await code(c.call('endpoint.rtp.accept_answer', { endpoint_id: offer.endpoint_id, sdp: sdp('m=audio 4000 RTP/AVP 0', 'm=audio 4002 RTP/AVP 0') })), /^ENDPOINT_ERROR/);
  const ep = (await c.call('session.info', {})).endpoints[0]!;
  t.true(ep.offer_pending as boolean);
  t.is(await code(c.call('endpoint.rtp.accept_answer', { endpoint_id: offer.endpoint_id, sdp: sdp('m=audio 4000 RTP/AVP 0') })), 'ok', 'a correct answer still applies');
});

test('rule 8: a secure endpoint refuses a plain reinvite and keeps working as before', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const peerKey = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, key: randomBytes(30) };
  const legA = await c.call('endpoint.rtp.create_from_offer', { sdp: a.sdp({ crypto: peerKey }) });
  const b = await RtpPeer.open(t);
  await c.call('endpoint.rtp.create_from_offer', { sdp: b.sdp() });
  t.regex(await code(c.call('endpoint.rtp.reinvite', { endpoint_id: legA.endpoint_id, sdp: a.sdp() })), /^ENDPOINT_ERROR: .*downgrade/i);
  await a.sendSine(mediaAddress(legA.sdp_answer), { freq: 500, ms: 400, srtp: srtpSender(peerKey) });
  await sleep(100);
  t.true(b.received.length > 10, 'the established SRTP state was not replaced');
});

test('reinvite updates the remote address (hold/unhold) and keeps the send codec', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const legA = await c.call('endpoint.rtp.create_from_offer', { sdp: a.sdp({ codecs: ['8 PCMA/8000', '0 PCMU/8000'] }) });
  const moved = await RtpPeer.open(t);
  const r = await c.call('endpoint.rtp.reinvite', { endpoint_id: legA.endpoint_id, sdp: moved.sdp({ codecs: ['0 PCMU/8000', '8 PCMA/8000'] }) });
  t.regex(r.sdp_answer, /^m=audio \d+ RTP\/AVP/m);
  const ep = (await c.call('session.info', {})).endpoints[0]!;
  t.is((ep.remote as { rtp_port: number }).rtp_port, moved.port);
  t.is((ep.send_codec as { name: string }).name, 'pcma', 'reinvite does not change send_codec');
  await c.call('endpoint.create_tone', { tone: 'sine', frequency: 440, duration_ms: 300 });
  await moved.waitFor(5, 3000);
  t.is(a.received.length, 0, 'the old address gets nothing after the reinvite');
  t.true(moved.received.every((p) => p.pt === 8), 'still PCMA');
});

test('srtp_rekey: a new key in a new offer; the old receive key keeps working for 5 s, then not', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const oldKey = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, key: randomBytes(30) };
  const legA = await c.call('endpoint.rtp.create_from_offer', { sdp: a.sdp({ crypto: oldKey }) });
  const b = await RtpPeer.open(t);
  await c.call('endpoint.rtp.create_from_offer', { sdp: b.sdp() });
  const rekey = await c.call('endpoint.rtp.srtp_rekey', { endpoint_id: legA.endpoint_id });
  t.notDeepEqual(sdpKey(rekey.sdp).key, sdpKey(legA.sdp_answer).key, 'we send with a new key');
  const newKey = { suite: 'AES_CM_128_HMAC_SHA1_80' as const, key: randomBytes(30) };
  await c.call('endpoint.rtp.accept_answer', { endpoint_id: legA.endpoint_id, sdp: a.sdp({ crypto: newKey }) });
  const to = mediaAddress(legA.sdp_answer);
  await a.sendSine(to, { freq: 500, ms: 200, srtp: srtpSender(oldKey), seq: 100 });
  await a.sendSine(to, { freq: 500, ms: 200, srtp: srtpSender(newKey), seq: 200 });
  await sleep(100);
  const within = b.received.length;
  t.true(within >= 16, `both keys accepted within the transition (${within})`);
  await sleep(5200);
  await a.sendSine(to, { freq: 500, ms: 200, srtp: srtpSender(oldKey), seq: 300 });
  await sleep(100);
  t.is(b.received.length, within, 'the old key is retired after 5 s');
  await a.sendSine(to, { freq: 500, ms: 200, srtp: srtpSender(newKey), seq: 400 });
  await sleep(100);
  t.true(b.received.length >= within + 8, 'the new key still works');
});

test('telephone-event is passed through with payload-type remapping', async (t) => {
  const { c } = await bridgeSession(t);
  const a = await RtpPeer.open(t);
  const legA = await c.call('endpoint.rtp.create_from_offer', { sdp: a.sdp({ te: true }) });
  const b = await RtpPeer.open(t);
  const offerB = b.sdp({ codecs: ['0 PCMU/8000'] }).replace('m=audio ' + b.port + ' RTP/AVP 0', `m=audio ${b.port} RTP/AVP 0 96`).replace('a=ptime:20', 'a=rtpmap:96 telephone-event/8000\r\na=ptime:20');
  await c.call('endpoint.rtp.create_from_offer', { sdp: offerB });
  const { buildRtp } = await import('../../protocols/media/rtp.js');
  const to = mediaAddress(legA.sdp_answer);
  await a.sendSine(to, { freq: 500, ms: 100 });
  for (let i = 0; i < 3; i++) a.socket.send(buildRtp({ marker: i === 0, payloadType: 101, sequenceNumber: 2000 + i, timestamp: 8000, ssrc: 0x1234abcd }, Buffer.from([5, 10, 0, 160 * (i + 1)])), to.port, to.address);
  await sleep(200);
  const events = b.received.filter((p) => p.pt === 96);
  t.is(events.length, 3, 'every event packet, remapped from PT 101 to the PT B negotiated (96)');
  t.is(events[0]!.payload[0], 5, 'digit 5');
  t.true(events[0]!.marker);
  t.is(new Set(events.map((e) => e.ts)).size, 1, 'one event, one timestamp');
});
