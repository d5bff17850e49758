import test, { type ExecutionContext } from 'ava';
import { answerOffer, type LocalMedia, type Negotiated } from '../../protocols/media/sdp/index.js';
import type { Direction } from '../../protocols/media/types.js';

const LOCAL: LocalMedia = { address: '192.0.2.10', family: 'IP4', port: 40000, rtcpPort: 40001, sessionId: '4242', sessionVersion: 7 };
const LOCAL6: LocalMedia = { address: '2001:db8::10', family: 'IP6', port: 40010, rtcpPort: 40011, sessionId: '4243', sessionVersion: 1 };
const OUR_KEY = Uint8Array.from({ length: 30 }, (_, i) => 200 - i);
const newKey = () => OUR_KEY;
const KEY_A = Buffer.alloc(30, 0x11).toString('base64');
const KEY_B = Buffer.alloc(30, 0x22).toString('base64');
const sdp = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;

/** Independent reading of an SDP we produced: m-lines with their attribute lines. */
function sections(text: string) {
  const out: { type: string; port: number; proto: string; fmts: string[]; attrs: string[]; c: string[] }[] = [];
  const session: string[] = [];
  for (const l of text.split('\r\n').filter((x) => x !== '')) {
    const m = /^m=(\S+) (\d+) (\S+) ?(.*)$/.exec(l);
    if (m) out.push({ type: m[1]!, port: Number(m[2]), proto: m[3]!, fmts: m[4]!.split(' ').filter(Boolean), attrs: [], c: [] });
    else if (out.length === 0) session.push(l);
    else if (l.startsWith('a=')) out[out.length - 1]!.attrs.push(l.slice(2));
    else if (l.startsWith('c=')) out[out.length - 1]!.c.push(l);
  }
  return { session, media: out };
}
function answer(offer: string, opts: Partial<Parameters<typeof answerOffer>[1]> = {}) {
  const r = answerOffer(offer, { local: LOCAL, direction: 'sendrecv', newKey, ...opts });
  if (!r.ok) throw new Error(r.error);
  return { ...r.value, parsed: sections(r.value.sdp) };
}
function refuse(t: ExecutionContext, offer: string, re: RegExp, opts: Partial<Parameters<typeof answerOffer>[1]> = {}) {
  let called = 0;
  const r = answerOffer(offer, { local: LOCAL, direction: 'sendrecv', newKey: () => { called++; return OUR_KEY; }, ...opts });
  t.false(r.ok);
  if (!r.ok) t.regex(r.error, re);
  t.is(called, 0, 'nothing drawn from the key source for a refused offer');
}

// ---- real-world style offers ------------------------------------------------------------

const ASTERISK = sdp(
  'v=0', 'o=- 1681812345 1681812345 IN IP4 198.51.100.7', 's=Asterisk', 'c=IN IP4 198.51.100.7', 't=0 0',
  'm=audio 17534 RTP/AVP 8 0 9 101', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:9 G722/8000',
  'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16', 'a=ptime:20', 'a=maxptime:150', 'a=sendrecv',
);

test('Asterisk plain offer: PCMA first, offerer order and PTs, te 101, RTCP at port+1', (t) => {
  const a = answer(ASTERISK);
  const n = a.negotiated;
  t.deepEqual(a.parsed.session, ['v=0', 'o=- 4242 7 IN IP4 192.0.2.10', 's=-', 'c=IN IP4 192.0.2.10', 't=0 0']);
  t.is(a.parsed.media.length, 1);
  const m = a.parsed.media[0]!;
  t.deepEqual([m.type, m.port, m.proto, m.fmts], ['audio', 40000, 'RTP/AVP', ['8', '0', '9', '101']]);
  for (const x of ['rtpmap:8 PCMA/8000', 'rtpmap:0 PCMU/8000', 'rtpmap:9 G722/8000', 'rtpmap:101 telephone-event/8000', 'ptime:20', 'sendrecv', 'rtcp:40001']) t.true(m.attrs.includes(x), x);
  t.false(m.attrs.some((x) => x.startsWith('crypto') || x === 'rtcp-mux'));
  t.deepEqual(n.sendCodec, { name: 'pcma', pt: 8, clockRate: 8000, channels: 1 });
  t.deepEqual(n.codecs.map((c) => [c.name, c.pt]), [['pcma', 8], ['pcmu', 0], ['g722', 9]]);
  t.deepEqual(n.telephoneEvent, { pt: 101, clockRate: 8000 });
  t.deepEqual(n.remote, { address: '198.51.100.7', port: 17534, rtcpAddress: '198.51.100.7', rtcpPort: 17535, rtcpMux: false });
  t.like(n, { mid: 0, profile: 'RTP/AVP', secure: false, recvKey: null, sendKey: null, peerDirection: 'sendrecv', ptime: 20 });
});

// FreeSWITCH "best-effort SRTP": a SAVP section with several suites, then the same stream as plain AVP.
const FREESWITCH_BEST_EFFORT = sdp(
  'v=0', 'o=FreeSWITCH 1681800000 1681800001 IN IP4 203.0.113.20', 's=FreeSWITCH', 'c=IN IP4 203.0.113.20', 't=0 0',
  'm=audio 25000 RTP/SAVP 102 9 0 8 101 13', 'a=rtpmap:102 opus/48000/2', 'a=fmtp:102 useinbandfec=1; maxaveragebitrate=30000',
  'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-16', 'a=rtpmap:13 CN/8000', 'a=ptime:20',
  `a=crypto:1 AEAD_AES_256_GCM_8 inline:${Buffer.alloc(44, 3).toString('base64')}`,
  `a=crypto:2 AES_256_CM_HMAC_SHA1_80 inline:${Buffer.alloc(46, 4).toString('base64')}`,
  `a=crypto:3 AES_CM_128_HMAC_SHA1_80 inline:${KEY_A}`,
  `a=crypto:4 AES_CM_128_HMAC_SHA1_32 inline:${KEY_B}`,
  'm=audio 25000 RTP/AVP 102 9 0 8 101 13', 'a=rtpmap:102 opus/48000/2', 'a=rtpmap:101 telephone-event/8000', 'a=ptime:20',
);

test('FreeSWITCH best-effort double m-line: SAVP chosen, first usable suite, AVP twin at port 0', (t) => {
  const a = answer(FREESWITCH_BEST_EFFORT);
  const [m0, m1] = a.parsed.media;
  t.is(a.parsed.media.length, 2);
  t.deepEqual([m0!.port, m0!.proto, m0!.fmts], [40000, 'RTP/SAVP', ['102', '9', '0', '8']]);
  t.deepEqual([m1!.type, m1!.port, m1!.proto, m1!.fmts, m1!.attrs], ['audio', 0, 'RTP/AVP', ['102', '9', '0', '8', '101', '13'], []]);
  const crypto = m0!.attrs.filter((x) => x.startsWith('crypto:'));
  t.deepEqual(crypto, [`crypto:3 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.from(OUR_KEY).toString('base64')}`]);
  t.true(m0!.attrs.includes('rtpmap:102 opus/48000/2'));
  const n = a.negotiated;
  t.like(n, { mid: 0, secure: true, profile: 'RTP/SAVP' });
  t.deepEqual(n.sendCodec, { name: 'opus', pt: 102, clockRate: 48000, channels: 2 });
  t.is(n.telephoneEvent, null, 'only te/8000 is offered, the send codec runs at 48 kHz');
  t.deepEqual(Buffer.from(n.recvKey!.keySalt), Buffer.from(KEY_A, 'base64'));
  t.deepEqual(n.recvKey!.tag, 3);
  t.deepEqual(n.sendKey, { tag: 3, suite: 'AES_CM_128_HMAC_SHA1_80', keySalt: OUR_KEY });
  // The te line of the answer is absent (no 48 kHz te offered), so 101 is not listed either.
  t.false(m0!.attrs.some((x) => x.includes('telephone-event')));
});

test('best-effort offer with the plain section first: the secure section still wins (rule 2)', (t) => {
  const swapped = sdp(
    'v=0', 'o=- 1 1 IN IP4 203.0.113.20', 's=-', 'c=IN IP4 203.0.113.20', 't=0 0',
    'm=audio 25002 RTP/AVP 0', 'm=audio 25000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_32 inline:${KEY_A}`,
  );
  const a = answer(swapped);
  t.deepEqual(a.parsed.media.map((m) => [m.port, m.proto]), [[0, 'RTP/AVP'], [40000, 'RTP/SAVP']]);
  t.like(a.negotiated, { mid: 1, secure: true });
  t.is(a.negotiated.remote.port, 25000);
  t.is(a.negotiated.sendKey?.suite, 'AES_CM_128_HMAC_SHA1_32');
});

test('rule 2: among equals the first section wins (secure vs secure, plain vs plain)', (t) => {
  const two = (proto: string, crypto: string[]) => sdp(
    'v=0', 'o=- 1 1 IN IP4 203.0.113.20', 's=-', 'c=IN IP4 203.0.113.20', 't=0 0',
    `m=audio 30000 ${proto} 0`, ...crypto, `m=audio 30002 ${proto} 8`, ...crypto,
  );
  const s = answer(two('RTP/SAVP', [`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_A}`]));
  t.deepEqual(s.parsed.media.map((m) => m.port), [40000, 0]);
  t.is(s.negotiated.sendCodec.name, 'pcmu');
  const p = answer(two('RTP/AVP', []));
  t.deepEqual(p.parsed.media.map((m) => m.port), [40000, 0]);
  t.is(p.negotiated.remote.port, 30000);
});

// Linphone: opus first, te at 48000, 16000 and 8000, AVPF-style feedback attributes, rtcp-mux.
const LINPHONE = sdp(
  'v=0', 'o=alice 3102 1960 IN IP4 192.0.2.55', 's=Talk', 'c=IN IP4 192.0.2.55', 't=0 0',
  'a=rtcp-xr:rcvr-rtt=all:10000 stat-summary=loss,dup,jitt,TTL voip-metrics',
  'm=audio 7078 RTP/AVP 96 97 98 0 8 18 101 99 100', 'a=rtpmap:96 opus/48000/2', 'a=fmtp:96 useinbandfec=1',
  'a=rtpmap:97 speex/16000', 'a=fmtp:97 vbr=on', 'a=rtpmap:98 speex/8000', 'a=fmtp:98 vbr=on', 'a=rtpmap:18 G729/8000',
  'a=rtpmap:101 telephone-event/48000', 'a=rtpmap:99 telephone-event/16000', 'a=rtpmap:100 telephone-event/8000',
  'a=rtcp-mux', 'a=rtcp-fb:* trr-int 1000', 'a=rtcp-fb:* ccm tmmbr',
);

test('Linphone: opus with te/48000; restricted to PCMU the te/8000 line is chosen; rtcp-mux echoed', (t) => {
  const a = answer(LINPHONE);
  const m = a.parsed.media[0]!;
  t.deepEqual(m.fmts, ['96', '0', '8', '101']);
  t.true(m.attrs.includes('rtcp-mux'));
  t.false(m.attrs.some((x) => x.startsWith('rtcp:')));
  t.deepEqual(a.negotiated.telephoneEvent, { pt: 101, clockRate: 48000 });
  t.deepEqual(a.negotiated.remote, { address: '192.0.2.55', port: 7078, rtcpAddress: '192.0.2.55', rtcpPort: 7078, rtcpMux: true });

  const b = answer(LINPHONE, { codecs: ['pcmu'] });
  t.deepEqual(b.parsed.media[0]!.fmts, ['0', '100']);
  t.deepEqual(b.negotiated.sendCodec, { name: 'pcmu', pt: 0, clockRate: 8000, channels: 1 });
  t.deepEqual(b.negotiated.codecs.map((c) => c.pt), [0]);
  t.deepEqual(b.negotiated.telephoneEvent, { pt: 100, clockRate: 8000 });
  t.true(b.parsed.media[0]!.attrs.includes('rtpmap:100 telephone-event/8000'));
});

// A video-first offer (e.g. a desk phone with video) with a=rtcp carrying an address.
const VIDEO_FIRST = sdp(
  'v=0', 'o=- 20518 0 IN IP4 192.0.2.80', 's=-', 't=0 0',
  'm=video 9078 RTP/AVP 96 34', 'c=IN IP4 192.0.2.80', 'a=rtpmap:96 H264/90000', 'a=fmtp:96 profile-level-id=42801F',
  'm=audio 9000 RTP/AVPF 9 101', 'c=IN IP4 192.0.2.81', 'a=rtcp:53021 IN IP4 192.0.2.99', 'a=rtpmap:101 telephone-event/8000', 'a=rtcp-fb:* nack',
  'm=application 9010 TCP/BFCP *', 'c=IN IP4 192.0.2.80', 'a=floorctrl:c-s',
);

test('video first, audio second, BFCP third: only audio answered, others port 0 with formats intact', (t) => {
  const a = answer(VIDEO_FIRST);
  t.deepEqual(a.parsed.media.map((m) => [m.type, m.port, m.proto, m.fmts.join(' ')]), [
    ['video', 0, 'RTP/AVP', '96 34'], ['audio', 40000, 'RTP/AVPF', '9 101'], ['application', 0, 'TCP/BFCP', '*'],
  ]);
  t.like(a.negotiated, { mid: 1, profile: 'RTP/AVPF' });
  t.deepEqual(a.negotiated.remote, { address: '192.0.2.81', port: 9000, rtcpAddress: '192.0.2.99', rtcpPort: 53021, rtcpMux: false });
  t.deepEqual(a.negotiated.mLines.map((m) => m.type), ['video', 'audio', 'application']);
});

const IPV6 = sdp(
  'v=0', 'o=- 1 1 IN IP6 2001:db8::55', 's=-', 'c=IN IP6 2001:db8::55', 't=0 0',
  'm=audio 5004 RTP/SAVP 0', `a=crypto:9 AES_CM_128_HMAC_SHA1_80 inline:${KEY_A}|2^31`,
);

test('IPv6 offer: answered on our IPv6 address; refused on an IPv4-only bridge (rule 6)', (t) => {
  const r = answerOffer(IPV6, { local: LOCAL6, direction: 'sendrecv', newKey });
  t.true(r.ok);
  if (!r.ok) return;
  const p = sections(r.value.sdp);
  t.true(p.session.includes('c=IN IP6 2001:db8::10'));
  t.true(p.session.includes('o=- 4243 1 IN IP6 2001:db8::10'));
  t.deepEqual(r.value.negotiated.remote.address, '2001:db8::55');
  t.true(p.media[0]!.attrs.some((x) => x.startsWith('crypto:9 AES_CM_128_HMAC_SHA1_80 inline:')));
  refuse(t, IPV6, /rule 6: media address is IP6, our media address is IP4/);
});

// ---- rules, broken one by one -----------------------------------------------------------------

const base = (...m: string[]) => sdp('v=0', 'o=- 1 1 IN IP4 198.51.100.1', 's=-', 'c=IN IP4 198.51.100.1', 't=0 0', ...m);

test('not SDP at all is refused', (t) => {
  refuse(t, '', /not an SDP/);
  refuse(t, 'hello world', /not an SDP/);
  refuse(t, '{"type":"offer"}', /not an SDP/);
  refuse(t, 'o=- 1 1 IN IP4 1.2.3.4\r\nm=audio 1 RTP/AVP 0\r\n', /not an SDP/);
  refuse(t, 42 as unknown as string, /must be a string/);
  refuse(t, `v=0\r\n${'a=x\r\n'.repeat(20000)}`, /longer than/);
});

test('rule 1: no m=audio, or every audio port 0, is refused', (t) => {
  refuse(t, base(), /no m=audio/);
  refuse(t, base('m=video 5000 RTP/AVP 96', 'a=rtpmap:96 VP8/90000'), /no m=audio/);
  refuse(t, base('m=audio 0 RTP/AVP 0', 'm=audio 0 RTP/SAVP 0', 'm=video 5000 RTP/AVP 96'), /rule 1/);
});

test('rule 1 decision: a=inactive with a nonzero port is a live section, negotiated inactive', (t) => {
  const a = answer(base('m=audio 5000 RTP/AVP 0', 'a=inactive'));
  t.is(a.negotiated.peerDirection, 'inactive');
  t.true(a.parsed.media[0]!.attrs.includes('inactive'));
  t.is(a.parsed.media[0]!.port, 40000);
});

test('rule 3: same sections in the same order; every unselected one has port 0', (t) => {
  const offer = base(
    'm=audio 5000 RTP/AVP 18', 'a=rtpmap:18 G729/8000',
    'm=audio 0 RTP/AVP 0',
    'm=image 5010 udptl t38',
    'm=audio 5020 RTP/AVP 0',
    'm=audio 5030 RTP/AVP 8',
  );
  const a = answer(offer);
  t.deepEqual(a.parsed.media.map((m) => [m.type, m.port, m.proto, m.fmts.join(' ')]), [
    ['audio', 0, 'RTP/AVP', '18'], ['audio', 0, 'RTP/AVP', '0'], ['image', 0, 'udptl', 't38'], ['audio', 40000, 'RTP/AVP', '0'], ['audio', 0, 'RTP/AVP', '8'],
  ]);
  t.is(a.negotiated.mid, 3);
});

test('rule 4: secure sections without usable keys fail, with no fallback to a plain section', (t) => {
  refuse(t, base('m=audio 5000 RTP/SAVP 0', `a=crypto:1 AES_256_CM_HMAC_SHA1_80 inline:${Buffer.alloc(46).toString('base64')}`, 'm=audio 5002 RTP/AVP 0'),
    /rule 4: .*no fallback.*unsupported crypto suite AES_256_CM_HMAC_SHA1_80/);
  refuse(t, base('m=audio 5000 RTP/SAVP 0'), /rule 4: .*no a=crypto line/);
  refuse(t, base('m=audio 5000 RTP/SAVPF 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_A}|2^20|1:4`), /rule 4: .*MKI/);
  refuse(t, base('m=audio 5000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_A} UNENCRYPTED_SRTP`), /rule 4: .*UNENCRYPTED_SRTP/);
});

test('rule 6: unsupported profile, foreign family, missing c=, no common codec', (t) => {
  refuse(t, base('m=audio 5000 UDP/TLS/RTP/SAVPF 111', 'a=rtpmap:111 opus/48000/2'), /rule 6: unsupported transport profile UDP\/TLS\/RTP\/SAVPF \(DTLS/);
  refuse(t, base('m=audio 5000 RTP/AVP 18', 'a=rtpmap:18 G729/8000'), /rule 6: no supported codec among formats 18/);
  refuse(t, base('m=audio 5000 RTP/AVP 96', 'a=rtpmap:96 PCMU/16000', 'm=audio 5002 RTP/AVP 97'), /rule 6: no supported codec/);
  refuse(t, sdp('v=0', 'o=- 1 1 IN IP4 198.51.100.1', 's=-', 't=0 0', 'm=audio 5000 RTP/AVP 0'), /no c= line/);
  refuse(t, base('m=audio 5000 RTP/AVP 0', 'c=IN IP6 2001:db8::1'), /IP6, our media address is IP4/);
  refuse(t, base('m=audio 5000 RTP/AVP 0', 'c=IN IP4 pbx.example.com'), /not an IP literal/);
  refuse(t, base('m=audio 5000 RTP/AVP 0', 'c=IN IP4 233.252.0.1/127'), /multicast/);
  refuse(t, base('m=audio 5000 RTP/AVP 0', 'a=rtcp:5001 IN IP6 2001:db8::1'), /a=rtcp address is IP6/);
  refuse(t, base('m=audio 5000/2 RTP/AVP 0'), /port count/);
  refuse(t, base('m=audio 5000 RTP/AVP 0'), /rule 6: no supported codec/, { codecs: ['opus'] });
  // One bad section does not spoil a good one.
  const a = answer(base('m=audio 5000 RTP/AVP 0', 'c=IN IP6 2001:db8::1', 'm=audio 5002 RTP/AVP 0'));
  t.deepEqual(a.parsed.media.map((m) => m.port), [0, 40000]);
});

test('rule 7: a supplied a=crypto on RTP/AVP needs a usable line (decision: no silent plain answer)', (t) => {
  refuse(t, base('m=audio 5000 RTP/AVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.alloc(16).toString('base64')}`), /rule 7: .*16 bytes, need 30/);
  refuse(t, base('m=audio 5000 RTP/AVP 0', `a=crypto:1 AES_192_CM_HMAC_SHA1_80 inline:${KEY_A}`), /rule 7: .*unsupported crypto suite/);
  // One usable line among unusable ones is taken, with its tag.
  const a = answer(base('m=audio 5000 RTP/AVP 0', `a=crypto:1 AES_192_CM_HMAC_SHA1_80 inline:${KEY_B}`, `a=crypto:5 AES_CM_128_HMAC_SHA1_32 inline:${KEY_A} KDR=0`));
  t.like(a.negotiated, { secure: true, profile: 'RTP/AVP' });
  t.deepEqual(a.parsed.media[0]!.attrs.filter((x) => x.startsWith('crypto')), [`crypto:5 AES_CM_128_HMAC_SHA1_32 inline:${Buffer.from(OUR_KEY).toString('base64')}`]);
  t.is(a.parsed.media[0]!.proto, 'RTP/AVP');
});

test('RFC 8643 opportunistic offer (RTP/AVP + a=crypto) is answered with SRTP on RTP/AVP', (t) => {
  const a = answer(base('m=audio 5000 RTP/AVP 0 101', 'a=rtpmap:101 telephone-event/8000', `a=crypto:2 AES_CM_128_HMAC_SHA1_80 inline:${KEY_B}`));
  t.like(a.negotiated, { secure: true, profile: 'RTP/AVP' });
  t.deepEqual(Buffer.from(a.negotiated.recvKey!.keySalt), Buffer.alloc(30, 0x22));
  t.deepEqual(Buffer.from(a.negotiated.sendKey!.keySalt), Buffer.from(OUR_KEY));
  t.deepEqual(a.parsed.media[0]!.fmts, ['0', '101']);
});

test('rule 8: a refused offer draws no key and returns no state; bad local/options are refused', (t) => {
  const r = answerOffer(base('m=audio 5000 RTP/SAVP 0', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_A}`), { local: LOCAL, direction: 'sendrecv', newKey: () => new Uint8Array(16) });
  t.false(r.ok);
  if (!r.ok) t.regex(r.error, /newKey\(\) must return 30/);
  refuse(t, ASTERISK, /direction must be/, { direction: 'both' as Direction });
  refuse(t, ASTERISK, /unknown codec "g729"/, { codecs: ['g729' as 'pcmu'] });
  refuse(t, ASTERISK, /local address 2001:db8::1 is not an IP4/, { local: { ...LOCAL, address: '2001:db8::1' } });
  refuse(t, ASTERISK, /session id/, { local: { ...LOCAL, sessionId: '1\r\na=evil' } });
  refuse(t, ASTERISK, /local port/, { local: { ...LOCAL, port: 70000 } });
});

// ---- direction: exhaustive 4×4 -----------------------------------------------------------------

// offered (peer's attribute) × requested (peer's POV) → negotiated peer direction, by hand:
// the peer sends only if it offered to send and we allow it; same for receiving.
const TABLE: Record<Direction, Record<Direction, Direction>> = {
  sendrecv: { sendrecv: 'sendrecv', sendonly: 'sendonly', recvonly: 'recvonly', inactive: 'inactive' },
  sendonly: { sendrecv: 'sendonly', sendonly: 'sendonly', recvonly: 'inactive', inactive: 'inactive' },
  recvonly: { sendrecv: 'recvonly', sendonly: 'inactive', recvonly: 'recvonly', inactive: 'inactive' },
  inactive: { sendrecv: 'inactive', sendonly: 'inactive', recvonly: 'inactive', inactive: 'inactive' },
};
const MIRROR: Record<Direction, Direction> = { sendrecv: 'sendrecv', sendonly: 'recvonly', recvonly: 'sendonly', inactive: 'inactive' };

for (const offered of Object.keys(TABLE) as Direction[]) {
  for (const requested of Object.keys(TABLE) as Direction[]) {
    test(`direction: offered ${offered} × requested ${requested}`, (t) => {
      const a = answer(base('m=audio 5000 RTP/AVP 0', `a=${offered}`), { direction: requested });
      const expected = TABLE[offered][requested];
      t.is(a.negotiated.peerDirection, expected);
      const attrs = a.parsed.media[0]!.attrs.filter((x) => ['sendrecv', 'sendonly', 'recvonly', 'inactive'].includes(x));
      t.deepEqual(attrs, [MIRROR[expected]]);
    });
  }
}

test('direction: session-level attribute applies, media-level overrides; no attribute means sendrecv', (t) => {
  const s = (...l: string[]) => sdp('v=0', 'o=- 1 1 IN IP4 198.51.100.1', 's=-', 'c=IN IP4 198.51.100.1', 't=0 0', ...l);
  t.is(answer(s('a=sendonly', 'm=audio 5000 RTP/AVP 0')).negotiated.peerDirection, 'sendonly');
  t.is(answer(s('a=sendonly', 'm=audio 5000 RTP/AVP 0', 'a=recvonly')).negotiated.peerDirection, 'recvonly');
  t.is(answer(s('m=audio 5000 RTP/AVP 0')).negotiated.peerDirection, 'sendrecv');
});

test('legacy hold c=0.0.0.0: the peer is treated as not receiving', (t) => {
  const a = answer(base('m=audio 5000 RTP/AVP 0', 'c=IN IP4 0.0.0.0'));
  t.is(a.negotiated.peerDirection, 'sendonly');
  t.true(a.parsed.media[0]!.attrs.includes('recvonly'));
});

// ---- codecs ------------------------------------------------------------------------------------

test('codecs: static PTs without rtpmap, case-insensitive names, rtpmap overrides a static number', (t) => {
  const a = answer(base('m=audio 5000 RTP/AVP 9 8 0', 'a=rtpmap:0 pcmu/8000'));
  t.deepEqual(a.negotiated.codecs.map((c) => `${c.name}:${c.pt}`), ['g722:9', 'pcma:8', 'pcmu:0']);
  const b = answer(base('m=audio 5000 RTP/AVP 0 96 97 98', 'a=rtpmap:0 PCMA/8000', 'a=rtpmap:96 OPUS/48000/2', 'a=rtpmap:97 opus/48000/1', 'a=rtpmap:98 PCMU/8000/2'));
  t.deepEqual(b.negotiated.codecs.map((c) => `${c.name}:${c.pt}`), ['pcma:0', 'opus:96']);
  t.deepEqual(b.parsed.media[0]!.fmts, ['0', '96']);
  t.true(b.parsed.media[0]!.attrs.includes('rtpmap:0 PCMA/8000'));
  t.true(b.parsed.media[0]!.attrs.includes('rtpmap:96 opus/48000/2'));
  // Dynamic PT without rtpmap and odd tokens are ignored.
  const c = answer(base('m=audio 5000 RTP/AVP 96 abc 200 8'));
  t.deepEqual(c.negotiated.codecs.map((x) => x.pt), [8]);
});

test('codecs: the allowed list filters but never reorders (offerer order wins)', (t) => {
  const a = answer(ASTERISK, { codecs: ['g722', 'pcmu'] });
  t.deepEqual(a.negotiated.codecs.map((c) => c.name), ['pcmu', 'g722']);
  t.is(a.negotiated.sendCodec.name, 'pcmu');
  t.deepEqual(a.parsed.media[0]!.fmts, ['0', '9', '101']);
});

test('telephone-event: matched by the send codec clock rate; absent when not offered at that rate', (t) => {
  const offer = base('m=audio 5000 RTP/AVP 111 0 126 101', 'a=rtpmap:111 opus/48000/2', 'a=rtpmap:126 telephone-event/8000', 'a=rtpmap:101 telephone-event/48000');
  const a = answer(offer);
  t.deepEqual(a.negotiated.telephoneEvent, { pt: 101, clockRate: 48000 });
  t.deepEqual(a.parsed.media[0]!.fmts, ['111', '0', '101']);
  const b = answer(offer, { codecs: ['pcmu'] });
  t.deepEqual(b.negotiated.telephoneEvent, { pt: 126, clockRate: 8000 });
  t.deepEqual(b.parsed.media[0]!.fmts, ['0', '126']);
  t.true(b.parsed.media[0]!.attrs.includes('fmtp:126 0-16'));
  const c = answer(base('m=audio 5000 RTP/AVP 0 101', 'a=rtpmap:101 telephone-event/16000'));
  t.is(c.negotiated.telephoneEvent, null);
  t.deepEqual(c.parsed.media[0]!.fmts, ['0']);
});

test('the offer is not changed and two answers of one offer agree (pure)', (t) => {
  const a1 = answer(FREESWITCH_BEST_EFFORT);
  const a2 = answer(FREESWITCH_BEST_EFFORT);
  t.is(a1.sdp, a2.sdp);
  t.deepEqual(a1.negotiated, a2.negotiated as Negotiated);
});
