import test, { type ExecutionContext } from 'ava';
import {
  acceptAnswer, answerOffer, answerReinvite, createOffer, createRekeyOffer, type LocalMedia, type Negotiated,
} from '../../protocols/media/sdp/index.js';
import type { Direction } from '../../protocols/media/types.js';

const LOCAL: LocalMedia = { address: '192.0.2.10', family: 'IP4', port: 40000, rtcpPort: 40001, sessionId: '99', sessionVersion: 1 };
const L2 = { ...LOCAL, sessionVersion: 2 };
const OUR_KEY = Uint8Array.from({ length: 30 }, (_, i) => 255 - i);
const OUR_B64 = Buffer.from(OUR_KEY).toString('base64');
const NEXT_KEY = Uint8Array.from({ length: 30 }, (_, i) => i + 100);
const PEER1 = Buffer.alloc(30, 0x31).toString('base64');
const PEER2 = Buffer.alloc(30, 0x32).toString('base64');
const sdp = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;
const peer = (addr: string, ...m: string[]) => sdp('v=0', `o=- 5 5 IN IP4 ${addr}`, 's=-', `c=IN IP4 ${addr}`, 't=0 0', ...m);
const mLines = (text: string) => text.split('\r\n').filter((l) => l.startsWith('m='));
const attrs = (text: string) => text.split('\r\n').filter((l) => l.startsWith('a=')).map((l) => l.slice(2));

const SECURE_OFFER = peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 111 0 101', 'a=rtpmap:111 opus/48000/2', 'a=rtpmap:101 telephone-event/48000', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`);

function established(offer = SECURE_OFFER): Negotiated {
  const r = answerOffer(offer, { local: LOCAL, direction: 'sendrecv', newKey: () => OUR_KEY });
  if (!r.ok) throw new Error(r.error);
  return r.value.negotiated;
}
function reinvite(t: ExecutionContext, cur: Negotiated, offer: string, direction: Direction = 'sendrecv') {
  let draws = 0;
  const r = answerReinvite(cur, offer, { local: L2, direction, newKey: () => { draws++; return NEXT_KEY; } });
  t.is(draws, 0, 'a reinvite never draws a new send key');
  if (!r.ok) return t.fail(r.error);
  return r.value;
}
function refusesReinvite(t: ExecutionContext, cur: Negotiated, offer: string, re: RegExp) {
  const before = structuredClone(cur);
  const r = answerReinvite(cur, offer, { local: L2, direction: 'sendrecv', newKey: () => NEXT_KEY });
  t.false(r.ok);
  if (!r.ok) t.regex(r.error, re);
  t.deepEqual(cur, before, 'established state untouched');
}

test('reinvite with the same key and address: nothing changes, the answer re-announces our key', (t) => {
  const cur = established();
  const r = reinvite(t, cur, SECURE_OFFER);
  t.deepEqual(r.changes, { remote: false, recvKeyChanged: false, resetReceiveState: false });
  t.deepEqual(r.negotiated, cur);
  t.deepEqual(attrs(r.sdp).filter((a) => a.startsWith('crypto')), [`crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${OUR_B64}`]);
  t.true(r.sdp.includes('o=- 99 2 IN IP4 192.0.2.10'), 'the caller\'s new session version');
});

test('reinvite: remote address and RTCP change are picked up', (t) => {
  const cur = established();
  const moved = peer('198.51.100.2', 'm=audio 6100 RTP/SAVP 111 0 101', 'a=rtpmap:111 opus/48000/2', 'a=rtpmap:101 telephone-event/48000', 'a=rtcp-mux', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`);
  const r = reinvite(t, cur, moved);
  t.deepEqual(r.changes, { remote: true, recvKeyChanged: false, resetReceiveState: false });
  t.deepEqual(r.negotiated.remote, { address: '198.51.100.2', port: 6100, rtcpAddress: '198.51.100.2', rtcpPort: 6100, rtcpMux: true });
  t.true(attrs(r.sdp).includes('rtcp-mux'));
});

test('reinvite: a new peer key is a receive-key change; our answer keeps our key with the peer\'s tag', (t) => {
  const cur = established();
  const rekeyed = peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 111 0 101', 'a=rtpmap:111 opus/48000/2', 'a=rtpmap:101 telephone-event/48000',
    `a=crypto:4 AES_CM_128_HMAC_SHA1_80 inline:${PEER2}`);
  const r = reinvite(t, cur, rekeyed);
  t.deepEqual(r.changes, { remote: false, recvKeyChanged: true, resetReceiveState: true });
  t.deepEqual(Buffer.from(r.negotiated.recvKey!.keySalt), Buffer.alloc(30, 0x32));
  t.is(r.negotiated.recvKey!.tag, 4);
  t.deepEqual(r.negotiated.sendKey, cur.sendKey, 'outbound key untouched');
  t.deepEqual(attrs(r.sdp).filter((a) => a.startsWith('crypto')), [`crypto:4 AES_CM_128_HMAC_SHA1_80 inline:${OUR_B64}`]);
});

test('reinvite: codecs, send codec and te stay even when the PT mapping and order differ', (t) => {
  const cur = established();
  const remapped = peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 0 96 97 98', 'a=rtpmap:96 opus/48000/2', 'a=rtpmap:97 telephone-event/48000', 'a=rtpmap:98 telephone-event/8000',
    `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`);
  const r = reinvite(t, cur, remapped);
  t.deepEqual(r.negotiated.codecs, cur.codecs);
  t.deepEqual(r.negotiated.sendCodec, { name: 'opus', pt: 111, clockRate: 48000, channels: 2 });
  t.deepEqual(r.negotiated.telephoneEvent, cur.telephoneEvent);
  t.deepEqual(r.negotiated.telephoneEvent, { pt: 101, clockRate: 48000 });
  // The answer itself uses the new offer's PTs in its order, with the te at the established send codec's rate.
  t.deepEqual(mLines(r.sdp), ['m=audio 40000 RTP/SAVP 0 96 97']);
  t.true(attrs(r.sdp).includes('rtpmap:96 opus/48000/2'));
});

test('reinvite hold and unhold: direction follows; a same-key resume keeps SRTP replay state (rule 9)', (t) => {
  const cur = established();
  const held = reinvite(t, cur, SECURE_OFFER.replace('m=audio 6000 RTP/SAVP 111 0 101\r\n', 'm=audio 6000 RTP/SAVP 111 0 101\r\na=sendonly\r\n'));
  t.is(held.negotiated.peerDirection, 'sendonly');
  t.true(attrs(held.sdp).includes('recvonly'));
  const inactive = reinvite(t, cur, SECURE_OFFER.replace('t=0 0\r\n', 't=0 0\r\na=inactive\r\n'));
  t.is(inactive.negotiated.peerDirection, 'inactive');
  const resumed = reinvite(t, inactive.negotiated, SECURE_OFFER);
  t.is(resumed.negotiated.peerDirection, 'sendrecv');
  t.deepEqual(resumed.changes, { remote: false, recvKeyChanged: false, resetReceiveState: false });
});

test('reinvite of a plain endpoint: resume resets receive state; SAVP refused; AVP+crypto answered plain', (t) => {
  const plainOffer = (dir: string) => peer('198.51.100.1', 'm=audio 6000 RTP/AVP 0 8', `a=${dir}`);
  const cur = established(plainOffer('sendrecv'));
  const held = reinvite(t, cur, plainOffer('inactive'));
  t.deepEqual(held.changes, { remote: false, recvKeyChanged: false, resetReceiveState: false });
  const back = reinvite(t, held.negotiated, plainOffer('sendrecv'));
  t.deepEqual(back.changes, { remote: false, recvKeyChanged: false, resetReceiveState: true });
  refusesReinvite(t, cur, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`), /rule 8: RTP\/SAVP on a plain RTP endpoint/);
  const opp = reinvite(t, cur, peer('198.51.100.1', 'm=audio 6000 RTP/AVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`));
  t.like(opp.negotiated, { secure: false, recvKey: null, sendKey: null });
  t.false(attrs(opp.sdp).some((a) => a.startsWith('crypto')));
});

test('rule 8: an SRTP endpoint refuses a plain reinvite, and one without the established suite', (t) => {
  const cur = established();
  refusesReinvite(t, cur, peer('198.51.100.1', 'm=audio 6000 RTP/AVP 111 0', 'a=rtpmap:111 opus/48000/2'), /rule 8: plain RTP offered to an SRTP endpoint/);
  refusesReinvite(t, cur, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_32 inline:${PEER2}`), /not the established AES_CM_128_HMAC_SHA1_80/);
  refusesReinvite(t, cur, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.alloc(10).toString('base64')}`), /rule 4/);
  refusesReinvite(t, cur, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 9', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`), /rule 6: no supported codec/);
  refusesReinvite(t, cur, 'garbage', /not an SDP/);
  // Best-effort double m-line in a reinvite: the secure one is taken.
  const r = reinvite(t, cur, peer('198.51.100.1', 'm=audio 6002 RTP/AVP 0', 'm=audio 6000 RTP/SAVP 0', `a=crypto:2 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`));
  t.is(r.negotiated.mid, 1);
  t.deepEqual(mLines(r.sdp), ['m=audio 0 RTP/AVP 0', 'm=audio 40000 RTP/SAVP 0']);
  t.deepEqual(r.changes, { remote: false, recvKeyChanged: false, resetReceiveState: false }, 'a tag change alone is not a key change');
});

// ---- rekey ------------------------------------------------------------------------------------

test('rekey offer: fresh key, same suite and tag, established codecs and PTs, then the answer', (t) => {
  const cur = established();
  const r = createRekeyOffer(cur, { local: L2, direction: 'sendrecv', newKey: () => NEXT_KEY });
  if (!r.ok) return t.fail(r.error);
  const p = r.value;
  t.deepEqual(mLines(p.sdp), ['m=audio 40000 RTP/SAVP 111 0 101']);
  t.deepEqual(attrs(p.sdp).filter((a) => a.startsWith('crypto')), [`crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.from(NEXT_KEY).toString('base64')}`]);
  t.true(attrs(p.sdp).includes('rtpmap:101 telephone-event/48000'));
  t.deepEqual(p.sendKey, { tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: NEXT_KEY });

  // The peer answers with a new key of its own.
  const ans = peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 0 111', 'a=rtpmap:111 opus/48000/2', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER2}`);
  const n = acceptAnswer(p, ans);
  if (!n.ok) return t.fail(n.error);
  t.deepEqual(Buffer.from(n.value.recvKey!.keySalt), Buffer.alloc(30, 0x32));
  t.deepEqual(n.value.sendKey!.keySalt, NEXT_KEY);
  t.deepEqual([n.value.sendCodec, n.value.codecs, n.value.telephoneEvent], [cur.sendCodec, cur.codecs, cur.telephoneEvent], 'codec state kept');
  // Keeping its old key is fine too; a plain answer or one dropping our send codec is not.
  const same = acceptAnswer(p, ans.replace(PEER2, PEER1));
  t.true(same.ok && Buffer.from(same.value.recvKey!.keySalt).equals(Buffer.from(cur.recvKey!.keySalt)));
  const plain = acceptAnswer(p, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 111', 'a=rtpmap:111 opus/48000/2'));
  t.false(plain.ok);
  const dropped = acceptAnswer(p, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER2}`));
  t.false(dropped.ok);
  if (!dropped.ok) t.regex(dropped.error, /drops our send codec opus/);
});

test('rekey keeps the session\'s other m-lines at port 0, and checks the answer keeps them', (t) => {
  const cur = established(peer('198.51.100.1', 'm=video 7000 RTP/AVP 96', 'a=rtpmap:96 VP8/90000', 'm=audio 6000 RTP/SAVP 0', `a=crypto:3 AES_CM_128_HMAC_SHA1_32 inline:${PEER1}`));
  t.is(cur.mid, 1);
  const r = createRekeyOffer(cur, { local: L2, direction: 'recvonly', newKey: () => NEXT_KEY });
  if (!r.ok) return t.fail(r.error);
  t.deepEqual(mLines(r.value.sdp), ['m=video 0 RTP/AVP 96', 'm=audio 40000 RTP/SAVP 0']);
  t.true(attrs(r.value.sdp).includes('sendonly'), 'mirror of requested recvonly');
  t.true(attrs(r.value.sdp).includes('crypto:3 AES_CM_128_HMAC_SHA1_32 inline:' + Buffer.from(NEXT_KEY).toString('base64')));
  const good = acceptAnswer(r.value, peer('198.51.100.1', 'm=video 0 RTP/AVP 96', 'm=audio 6000 RTP/SAVP 0', `a=crypto:3 AES_CM_128_HMAC_SHA1_32 inline:${PEER2}`));
  t.true(good.ok);
  if (good.ok) t.like(good.value, { mid: 1, peerDirection: 'recvonly' });
  const short = acceptAnswer(r.value, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 0', `a=crypto:3 AES_CM_128_HMAC_SHA1_32 inline:${PEER2}`));
  t.false(short.ok);
  if (!short.ok) t.regex(short.error, /rule 3/);
});

test('rekey of a negotiation we offered re-offers our receive PTs; plain endpoints cannot rekey', (t) => {
  const o = createOffer({ local: LOCAL, direction: 'sendrecv', srtp: true, srtpOptional: false, codecs: ['pcmu', 'pcma'], newKey: () => OUR_KEY });
  if (!o.ok) return t.fail(o.error);
  const n = acceptAnswer(o.value, peer('198.51.100.1', 'm=audio 6000 RTP/SAVP 8 0 126', 'a=rtpmap:126 telephone-event/8000', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${PEER1}`));
  if (!n.ok) return t.fail(n.error);
  t.deepEqual(n.value.telephoneEvent, { pt: 126, clockRate: 8000 });
  t.is(n.value.recvTelephoneEventPt, 101);
  const r = createRekeyOffer(n.value, { local: L2, direction: 'sendrecv', newKey: () => NEXT_KEY });
  t.true(r.ok);
  if (r.ok) t.deepEqual(mLines(r.value.sdp), ['m=audio 40000 RTP/SAVP 0 8 101']);
  const plain = createRekeyOffer(established(peer('198.51.100.1', 'm=audio 6000 RTP/AVP 0')), { local: L2, direction: 'sendrecv', newKey: () => NEXT_KEY });
  t.false(plain.ok);
  if (!plain.ok) t.regex(plain.error, /does not use SRTP/);
  const badKey = createRekeyOffer(n.value, { local: L2, direction: 'sendrecv', newKey: () => new Uint8Array(31) });
  t.false(badKey.ok);
});
