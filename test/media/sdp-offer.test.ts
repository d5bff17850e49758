import test, { type ExecutionContext } from 'ava';
import { acceptAnswer, createOffer, type LocalMedia, type PendingOffer } from '../../protocols/media/sdp/index.js';
import type { CodecName, Direction } from '../../protocols/media/types.js';

const LOCAL: LocalMedia = { address: '192.0.2.10', family: 'IP4', port: 40000, rtcpPort: 40001, sessionId: '777', sessionVersion: 3 };
const OUR_KEY = Uint8Array.from({ length: 30 }, (_, i) => i * 3 + 1);
const OUR_B64 = Buffer.from(OUR_KEY).toString('base64');
const PEER_B64 = Buffer.alloc(30, 0x5a).toString('base64');
const sdp = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;

function offer(o: { direction?: Direction; srtp?: boolean; srtpOptional?: boolean; codecs?: CodecName[]; local?: LocalMedia } = {}): PendingOffer {
  const r = createOffer({ local: o.local ?? LOCAL, direction: o.direction ?? 'sendrecv', srtp: o.srtp ?? false, srtpOptional: o.srtpOptional ?? false, codecs: o.codecs, newKey: () => OUR_KEY });
  if (!r.ok) throw new Error(r.error);
  return r.value;
}
function lines(text: string) {
  const all = text.split('\r\n').filter((x) => x !== '');
  const mi = all.findIndex((l) => l.startsWith('m='));
  return { session: all.slice(0, mi), m: all[mi]!, attrs: all.slice(mi + 1).map((l) => l.slice(2)), count: all.filter((l) => l.startsWith('m=')).length };
}
const answerSdp = (m: string, ...attrs: string[]) => sdp('v=0', 'o=- 9 9 IN IP4 198.51.100.9', 's=-', 'c=IN IP4 198.51.100.9', 't=0 0', m, ...attrs);
function accepts(t: ExecutionContext, p: PendingOffer, a: string) {
  const r = acceptAnswer(p, a);
  if (!r.ok) t.fail(r.error);
  return r.ok ? r.value : (null as never);
}
function refuses(t: ExecutionContext, p: PendingOffer, a: string, re: RegExp) {
  const before = structuredClone(p);
  const r = acceptAnswer(p, a);
  t.false(r.ok);
  if (!r.ok) t.regex(r.error, re);
  t.deepEqual(p, before, 'the pending offer is untouched');
}

// ---- offer shapes -------------------------------------------------------------------------------

test('default offer: RTP/AVP, all codecs in CODEC_NAMES order with default PTs, te 101 and 110, no crypto', (t) => {
  const p = offer();
  const l = lines(p.sdp);
  t.deepEqual(l.session, ['v=0', 'o=- 777 3 IN IP4 192.0.2.10', 's=-', 'c=IN IP4 192.0.2.10', 't=0 0']);
  t.is(l.count, 1);
  t.is(l.m, 'm=audio 40000 RTP/AVP 0 8 9 111 101 110');
  for (const a of ['rtpmap:0 PCMU/8000', 'rtpmap:8 PCMA/8000', 'rtpmap:9 G722/8000', 'rtpmap:111 opus/48000/2', 'rtpmap:101 telephone-event/8000',
    'rtpmap:110 telephone-event/48000', 'ptime:20', 'sendrecv', 'rtcp-mux', 'rtcp:40001']) t.true(l.attrs.includes(a), a);
  t.false(l.attrs.some((a) => a.startsWith('crypto')));
  t.like(p, { srtp: 'off', sendKey: null, direction: 'sendrecv', sessionVersion: 3, codecs: ['pcmu', 'pcma', 'g722', 'opus'] });
});

test('srtp: RTP/SAVP with one a=crypto carrying the key from newKey', (t) => {
  const p = offer({ srtp: true });
  const l = lines(p.sdp);
  t.regex(l.m, /^m=audio 40000 RTP\/SAVP /);
  t.deepEqual(l.attrs.filter((a) => a.startsWith('crypto')), [`crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${OUR_B64}`]);
  t.deepEqual(p.sendKey, { tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: OUR_KEY });
  t.is(p.srtp, 'required');
});

test('srtp_optional: RTP/AVP with a=crypto (RFC 8643); srtp && srtp_optional is refused', (t) => {
  const p = offer({ srtpOptional: true });
  const l = lines(p.sdp);
  t.regex(l.m, /^m=audio 40000 RTP\/AVP /);
  t.deepEqual(l.attrs.filter((a) => a.startsWith('crypto')), [`crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${OUR_B64}`]);
  t.is(p.srtp, 'optional');
  const r = createOffer({ local: LOCAL, direction: 'sendrecv', srtp: true, srtpOptional: true, newKey: () => OUR_KEY });
  t.false(r.ok);
  if (!r.ok) t.regex(r.error, /mutually exclusive/);
});

test('codecs order is kept; te 110 only with opus; bad codec lists are refused', (t) => {
  t.is(lines(offer({ codecs: ['opus', 'pcmu'] }).sdp).m, 'm=audio 40000 RTP/AVP 111 0 101 110');
  t.is(lines(offer({ codecs: ['pcma'] }).sdp).m, 'm=audio 40000 RTP/AVP 8 101');
  t.is(lines(offer({ codecs: ['g722', 'pcma', 'g722'] }).sdp).m, 'm=audio 40000 RTP/AVP 9 8 101');
  for (const [codecs, re] of [[[], /at least one/], [['g729'], /unknown codec "g729"/], [['PCMU'], /unknown codec/]] as const) {
    const r = createOffer({ local: LOCAL, direction: 'sendrecv', srtp: false, srtpOptional: false, codecs: codecs as unknown as CodecName[], newKey: () => OUR_KEY });
    t.false(r.ok);
    if (!r.ok) t.regex(r.error, re);
  }
});

test('offer direction is the mirror of the requested one; muxed-only ports write no a=rtcp; IPv6', (t) => {
  const mirror: Record<Direction, string> = { sendrecv: 'sendrecv', sendonly: 'recvonly', recvonly: 'sendonly', inactive: 'inactive' };
  for (const d of Object.keys(mirror) as Direction[]) {
    const attrs = lines(offer({ direction: d }).sdp).attrs.filter((a) => /^(sendrecv|sendonly|recvonly|inactive)$/.test(a));
    t.deepEqual(attrs, [mirror[d]], d);
  }
  const mux = lines(offer({ local: { ...LOCAL, rtcpPort: 40000 } }).sdp).attrs;
  t.true(mux.includes('rtcp-mux'));
  t.false(mux.some((a) => a.startsWith('rtcp:')));
  const v6 = lines(offer({ local: { ...LOCAL, address: '2001:db8::10', family: 'IP6' } }).sdp);
  t.true(v6.session.includes('c=IN IP6 2001:db8::10'));
});

// ---- acceptAnswer -------------------------------------------------------------------------------

test('a plain answer: send codec and PT from the answer, receive map from our offer, te by clock rate', (t) => {
  const p = offer();
  const n = accepts(t, p, answerSdp('m=audio 20000 RTP/AVP 96 0 97', 'a=rtpmap:96 opus/48000/2', 'a=rtpmap:97 telephone-event/48000', 'a=rtcp-mux', 'a=sendrecv'));
  t.deepEqual(n.sendCodec, { name: 'opus', pt: 96, clockRate: 48000, channels: 2 });
  t.deepEqual(n.codecs.map((c) => `${c.name}:${c.pt}`), ['pcmu:0', 'opus:111'], 'our PTs, our order');
  t.deepEqual(n.telephoneEvent, { pt: 97, clockRate: 48000 });
  t.is(n.recvTelephoneEventPt, 110);
  t.deepEqual(n.remote, { address: '198.51.100.9', port: 20000, rtcpAddress: '198.51.100.9', rtcpPort: 20000, rtcpMux: true });
  t.like(n, { mid: 0, secure: false, recvKey: null, sendKey: null, profile: 'RTP/AVP', peerDirection: 'sendrecv', ptime: 20 });
});

test('the first codec of the answer that we offered is the send codec; unknown ones are skipped', (t) => {
  const n = accepts(t, offer(), answerSdp('m=audio 20000 RTP/AVP 18 8 0', 'a=rtpmap:18 G729/8000', 'a=rtcp:20005 IN IP4 198.51.100.10'));
  t.is(n.sendCodec.name, 'pcma');
  t.deepEqual(n.remote, { address: '198.51.100.9', port: 20000, rtcpAddress: '198.51.100.10', rtcpPort: 20005, rtcpMux: false });
  t.is(n.telephoneEvent, null);
  const m = accepts(t, offer(), answerSdp('m=audio 20000 RTP/AVP 0'));
  t.is(m.remote.rtcpPort, 20001, 'RTCP at port + 1 without mux or a=rtcp');
});

test('answers choosing codecs we did not offer are refused', (t) => {
  refuses(t, offer(), answerSdp('m=audio 20000 RTP/AVP 18', 'a=rtpmap:18 G729/8000'), /no codec we offered/);
  refuses(t, offer({ codecs: ['pcmu'] }), answerSdp('m=audio 20000 RTP/AVP 8'), /no codec we offered .*we offered pcmu/);
  refuses(t, offer({ codecs: ['pcmu'] }), answerSdp('m=audio 20000 RTP/AVP 101', 'a=rtpmap:101 telephone-event/8000'), /no codec we offered/);
});

test('rule 5: exactly one active audio section in the answer to our single-section offer', (t) => {
  const p = offer();
  refuses(t, p, answerSdp('m=audio 0 RTP/AVP 0'), /rule 5: .*it has 0/);
  refuses(t, p, answerSdp('m=audio 20000 RTP/AVP 0', 'm=audio 20002 RTP/AVP 0'), /rule 5: .*it has 2/);
  refuses(t, p, answerSdp('m=video 20000 RTP/AVP 96'), /rule 5: .*it has 0/);
  refuses(t, p, answerSdp('m=audio 20000 RTP/AVP 0', 'm=video 0 RTP/AVP 96'), /rule 3: it has 2 m-sections, our offer had 1/);
  refuses(t, p, sdp('v=0', 'o=- 9 9 IN IP4 198.51.100.9', 's=-', 't=0 0'), /rule 5/);
  refuses(t, p, 'SIP/2.0 488 Not Acceptable Here', /not an SDP/);
});

test('profile and key checks against what we offered', (t) => {
  const crypto = (tag = 1, suite = 'AES_CM_128_HMAC_SHA1_80', key = PEER_B64) => `a=crypto:${tag} ${suite} inline:${key}`;
  // Plain-only offer.
  refuses(t, offer(), answerSdp('m=audio 20000 RTP/SAVP 0', crypto()), /profile RTP\/SAVP does not match our offered RTP\/AVP/);
  refuses(t, offer(), answerSdp('m=audio 20000 RTP/AVP 0', crypto()), /a=crypto in the answer to our plain RTP offer/);
  refuses(t, offer(), answerSdp('m=audio 20000 UDP/TLS/RTP/SAVPF 0'), /profile UDP\/TLS\/RTP\/SAVPF does not match/);
  // srtp: true.
  refuses(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/AVP 0'), /profile RTP\/AVP does not match our offered RTP\/SAVP/);
  refuses(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/SAVP 0'), /secure profile without a=crypto/);
  refuses(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/SAVP 0', crypto(2)), /tag 2 is not the tag we offered \(1\)/);
  refuses(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/SAVP 0', crypto(1, 'AES_CM_128_HMAC_SHA1_32')), /suite AES_CM_128_HMAC_SHA1_32 is not the suite we offered/);
  refuses(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/SAVP 0', crypto(1, 'AES_CM_128_HMAC_SHA1_80', Buffer.alloc(20).toString('base64'))), /rule 7: SDES key is 20 bytes, need 30/);
  refuses(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/SAVP 0', crypto(), crypto()), /exactly one a=crypto line, it has 2/);
  refuses(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/SAVP 0', crypto(1, 'AES_256_CM_HMAC_SHA1_80')), /rule 7: unsupported crypto suite/);
  const n = accepts(t, offer({ srtp: true }), answerSdp('m=audio 20000 RTP/SAVPF 0', crypto(), 'a=rtcp-fb:* nack'));
  t.like(n, { secure: true, profile: 'RTP/SAVPF' });
  t.deepEqual(Buffer.from(n.recvKey!.keySalt), Buffer.alloc(30, 0x5a));
  t.deepEqual(n.sendKey, { tag: 1, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: OUR_KEY });
  // srtp_optional: either way.
  const sec = accepts(t, offer({ srtpOptional: true }), answerSdp('m=audio 20000 RTP/AVP 0', crypto()));
  t.like(sec, { secure: true, profile: 'RTP/AVP' });
  t.truthy(sec.sendKey);
  const plain = accepts(t, offer({ srtpOptional: true }), answerSdp('m=audio 20000 RTP/AVP 0'));
  t.like(plain, { secure: false, recvKey: null, sendKey: null });
  refuses(t, offer({ srtpOptional: true }), answerSdp('m=audio 20000 RTP/SAVP 0', crypto()), /profile RTP\/SAVP does not match our offered RTP\/AVP/);
});

test('answer address family and c= are checked (rule 6)', (t) => {
  refuses(t, offer(), sdp('v=0', 'o=- 9 9 IN IP6 2001:db8::9', 's=-', 'c=IN IP6 2001:db8::9', 't=0 0', 'm=audio 20000 RTP/AVP 0'), /IP6, our media address is IP4/);
  refuses(t, offer(), sdp('v=0', 'o=- 9 9 IN IP4 198.51.100.9', 's=-', 't=0 0', 'm=audio 20000 RTP/AVP 0'), /no c= line/);
  refuses(t, offer(), answerSdp('m=audio 70000 RTP/AVP 0'), /out of range/);
});

// offered by us (requested) × answerer's attribute → negotiated peer direction (by hand).
const TABLE: Record<Direction, Record<Direction, Direction>> = {
  sendrecv: { sendrecv: 'sendrecv', sendonly: 'sendonly', recvonly: 'recvonly', inactive: 'inactive' },
  sendonly: { sendrecv: 'sendonly', sendonly: 'sendonly', recvonly: 'inactive', inactive: 'inactive' },
  recvonly: { sendrecv: 'recvonly', sendonly: 'inactive', recvonly: 'recvonly', inactive: 'inactive' },
  inactive: { sendrecv: 'inactive', sendonly: 'inactive', recvonly: 'inactive', inactive: 'inactive' },
};

test('accept_answer direction: the answerer\'s attribute ∩ requested, all 16 pairs', (t) => {
  for (const requested of Object.keys(TABLE) as Direction[]) {
    const p = offer({ direction: requested });
    for (const answered of Object.keys(TABLE) as Direction[]) {
      const n = accepts(t, p, answerSdp('m=audio 20000 RTP/AVP 0', `a=${answered}`));
      t.is(n.peerDirection, TABLE[requested][answered], `${requested} × ${answered}`);
    }
  }
});
