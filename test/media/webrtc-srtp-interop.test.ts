/**
 * The bridge's SRTP code in werift's place (actors/media-session/webrtc-srtp.ts), against
 * werift's own SRTP: with the same keys, a packet protected by one is unprotected by the other,
 * both ways, for SRTP and SRTCP; what the bridge refuses is reported exactly (forged tags as
 * 'auth', replays as 'replay'/'too-old') and thrown as werift's SrtpAuthenticationError, the
 * one error werift's receive loop drops. Then a real DTLS-SRTP connection: a WebRtcEndpoint and a
 * werift client over loopback negotiate AES_CM_128_HMAC_SHA1_80 (werift alone would pick GCM),
 * and media flows both ways through the bridge's contexts.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import {
  ProtectionProfileAeadAes128Gcm,
  ProtectionProfileAes128CmHmacSha1_80,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RtcpPacketConverter,
  RtcpRrPacket,
  RtpHeader,
  RtpPacket,
  SrtcpSession,
  SrtpAuthenticationError,
  SrtpSession,
  type MediaStreamTrack,
} from 'werift';
import { useBridgeSrtp, type SrtpDrop } from '../../actors/media-session/webrtc-srtp.js';
import { WebRtcEndpoint } from '../../actors/media-session/webrtc-endpoint.js';
import { sleep } from '../helpers/media.js';

type Keys = { localMasterKey: Buffer; localMasterSalt: Buffer; remoteMasterKey: Buffer; remoteMasterSalt: Buffer };

/** Two sides' werift sessions from one pair of master keys (A's local is B's remote). */
function keyPair(saltBytes = 14): { a: Keys; b: Keys } {
  const k1 = randomBytes(16), s1 = randomBytes(saltBytes), k2 = randomBytes(16), s2 = randomBytes(saltBytes);
  return {
    a: { localMasterKey: k1, localMasterSalt: s1, remoteMasterKey: k2, remoteMasterSalt: s2 },
    b: { localMasterKey: k2, localMasterSalt: s2, remoteMasterKey: k1, remoteMasterSalt: s1 },
  };
}

/** A holder shaped as werift's RTCDtlsTransport is where webrtc-srtp.ts looks: srtp, srtcp, srtpProfiles. */
function transport(keys: Keys, profile: number = ProtectionProfileAes128CmHmacSha1_80) {
  const config = { keys, profile };
  return { srtp: new SrtpSession(config) as unknown, srtcp: new SrtcpSession(config) as unknown, srtpProfiles: [ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80] };
}

type Sess = { encrypt(a: Buffer, b?: RtpHeader): Buffer; decrypt(b: Buffer): Buffer };

function rtp(seq: number, payload = randomBytes(80)): RtpPacket {
  return new RtpPacket(new RtpHeader({ payloadType: 111, sequenceNumber: seq, timestamp: seq * 960, ssrc: 0x1234abcd, marker: seq === 0 }), payload);
}

function hooked(keys: Keys, profile?: number) {
  const dtls = transport(keys, profile);
  const drops: SrtpDrop[] = [];
  const mode = useBridgeSrtp(dtls, (d) => drops.push(d));
  return { dtls, drops, mode, srtp: () => dtls.srtp as Sess, srtcp: () => dtls.srtcp as Sess };
}

test('a packet protected by the bridge is unprotected by werift, and the other way, for SRTP and SRTCP', (t) => {
  const { a, b } = keyPair();
  const bridge = hooked(a);
  t.is(bridge.mode?.(), 'bridge');
  t.deepEqual(bridge.dtls.srtpProfiles, [ProtectionProfileAes128CmHmacSha1_80], 'DTLS offers only the profile the bridge implements');
  t.not(bridge.srtp().constructor, SrtpSession, 'werift session replaced');
  const werift = new SrtpSession({ keys: b, profile: ProtectionProfileAes128CmHmacSha1_80 });
  const weriftRtcp = new SrtcpSession({ keys: b, profile: ProtectionProfileAes128CmHmacSha1_80 });
  // Across a sequence wrap (ROC 0 → 1) both ways.
  for (let i = 0; i < 300; i++) {
    const seq = (65400 + i) & 0xffff;
    const p = rtp(seq);
    const wire = bridge.srtp().encrypt(p.payload, p.header);
    t.not(wire.subarray(12, 92).compare(p.payload), 0);
    const back = RtpPacket.deSerialize(werift.decrypt(wire));
    t.is(back.header.sequenceNumber, seq);
    if (!back.payload.equals(p.payload)) return t.fail(`werift read the bridge's packet ${seq} wrong`);
    const q = rtp(seq);
    const wire2 = werift.encrypt(q.payload, q.header);
    const mine = RtpPacket.deSerialize(bridge.srtp().decrypt(wire2));
    if (!mine.payload.equals(q.payload)) return t.fail(`the bridge read werift's packet ${seq} wrong`);
  }
  const rr = new RtcpRrPacket({ ssrc: 0x1234abcd, reports: [] }).serialize();
  t.deepEqual(Buffer.from(weriftRtcp.decrypt(bridge.srtcp().encrypt(rr))), rr, 'SRTCP: bridge → werift');
  const rr2 = new RtcpRrPacket({ ssrc: 0x55, reports: [] }).serialize();
  const parsed = RtcpPacketConverter.deSerialize(bridge.srtcp().decrypt(weriftRtcp.encrypt(rr2)));
  t.is((parsed[0] as RtcpRrPacket).ssrc, 0x55, 'SRTCP: werift → bridge');
  t.deepEqual(bridge.drops, []);
});

test('forged tags, replays and garbage are refused with the error werift drops, each reported once by kind', (t) => {
  const { a, b } = keyPair();
  const bridge = hooked(a);
  const werift = new SrtpSession({ keys: b, profile: ProtectionProfileAes128CmHmacSha1_80 });
  const weriftRtcp = new SrtcpSession({ keys: b, profile: ProtectionProfileAes128CmHmacSha1_80 });
  const good = Array.from({ length: 1100 }, (_, i) => {
    const p = rtp(i);
    return werift.encrypt(p.payload, p.header);
  });
  for (const w of good) bridge.srtp().decrypt(w);
  const refused = (packet: Buffer, s: Sess) => t.throws(() => s.decrypt(packet), { instanceOf: SrtpAuthenticationError });
  // 20 forged SRTP (a real header, random body and tag), 5 forged SRTCP, one bit flipped in a real packet.
  for (let i = 0; i < 20; i++) refused(Buffer.concat([Buffer.from([0x80, 111, 0, i]), randomBytes(8), randomBytes(50)]), bridge.srtp());
  for (let i = 0; i < 5; i++) refused(Buffer.concat([Buffer.from([0x80, 200, 0, 6]), randomBytes(24), Buffer.from([0x80, 0, 0, i + 1]), randomBytes(10)]), bridge.srtcp());
  const flipped = Buffer.from(good[1099]!);
  flipped[20]! ^= 1;
  refused(flipped, bridge.srtp());
  t.deepEqual(bridge.drops.splice(0), Array(26).fill('auth'));
  // Replays: the newest packet again, one 50 back (inside the window), one 1099 back (outside it).
  refused(good[1099]!, bridge.srtp());
  refused(good[1050]!, bridge.srtp());
  refused(good[0]!, bridge.srtp());
  t.deepEqual(bridge.drops.splice(0), ['replay', 'replay', 'too-old']);
  const rr = weriftRtcp.encrypt(new RtcpRrPacket({ ssrc: 9, reports: [] }).serialize());
  bridge.srtcp().decrypt(rr);
  refused(rr, bridge.srtcp());
  t.deepEqual(bridge.drops.splice(0), ['replay'], 'SRTCP replays too');
  // Shorter than a header and a tag.
  refused(Buffer.from([0x80, 111, 0, 1, 0, 0]), bridge.srtp());
  t.deepEqual(bridge.drops, ['malformed']);
});

test('each session werift assigns at a DTLS restart is replaced, with its new keys', (t) => {
  const first = keyPair();
  const bridge = hooked(first.a);
  const next = keyPair();
  const config = { keys: next.a, profile: ProtectionProfileAes128CmHmacSha1_80 };
  bridge.dtls.srtp = new SrtpSession(config);
  bridge.dtls.srtcp = new SrtcpSession(config);
  t.is(bridge.mode?.(), 'bridge');
  const werift = new SrtpSession({ keys: next.b, profile: ProtectionProfileAes128CmHmacSha1_80 });
  const p = rtp(7);
  t.true(RtpPacket.deSerialize(werift.decrypt(bridge.srtp().encrypt(p.payload, p.header))).payload.equals(p.payload));
  const old = new SrtpSession({ keys: first.b, profile: ProtectionProfileAes128CmHmacSha1_80 });
  const q = rtp(8);
  t.throws(() => bridge.srtp().decrypt(old.encrypt(q.payload, q.header)), { instanceOf: SrtpAuthenticationError }, 'the old keys are gone');
  t.deepEqual(bridge.drops, ['auth']);
  t.is(useBridgeSrtp(bridge.dtls, () => undefined), bridge.mode, 'hooked once');
});

test('a session the bridge cannot take (GCM) stays werift\'s, with its failures counted and a replay window', (t) => {
  const { a, b } = keyPair(12);
  const bridge = hooked(a, ProtectionProfileAeadAes128Gcm);
  t.is(bridge.mode?.(), 'werift');
  t.true(bridge.srtp() instanceof SrtpSession);
  const werift = new SrtpSession({ keys: b, profile: ProtectionProfileAeadAes128Gcm });
  const p = rtp(3);
  const wire = werift.encrypt(p.payload, p.header);
  t.true(RtpPacket.deSerialize(bridge.srtp().decrypt(wire)).payload.equals(p.payload));
  t.throws(() => bridge.srtp().decrypt(wire), { instanceOf: SrtpAuthenticationError });
  const forged = Buffer.from(wire);
  forged[forged.length - 1]! ^= 0xff;
  t.throws(() => bridge.srtp().decrypt(forged));
  t.deepEqual(bridge.drops, ['replay', 'auth']);
});

test('a transport of another shape is left alone and said so', (t) => {
  t.is(useBridgeSrtp({ srtp: undefined }, () => undefined), null, 'no srtcp, no srtpProfiles');
  const frozen = Object.freeze({ srtp: undefined, srtcp: undefined, srtpProfiles: [1] });
  t.is(useBridgeSrtp(frozen, () => undefined), null, 'properties that cannot be redefined');
});

test('a WebRtcEndpoint and a werift client over DTLS-SRTP: AES-CM negotiated, media both ways on the bridge\'s contexts', async (t) => {
  const heard: Uint8Array[] = [];
  const states: string[] = [];
  const base = 20000 + Math.floor(Math.random() * 40) * 1000; // as test/helpers/media.ts's bridges
  const ep = new WebRtcEndpoint('ep1', { stateChanged: (e) => states.push(e.state), media: (_e, codec, payload) => void (codec === 'opus' && heard.push(payload)) }, { advertisedAddress: '127.0.0.1', bindAddress: '127.0.0.1', portMin: base, portMax: base + 999 }, 'sendrecv');
  t.teardown(() => ep.close());
  const pc = new RTCPeerConnection({ iceServers: [], iceUseIpv6: false, iceAdditionalHostAddresses: ['127.0.0.1'], codecs: { audio: [new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111 })], video: [] } });
  t.teardown(() => void pc.close().catch(() => undefined));
  const tr = pc.addTransceiver('audio', { direction: 'sendrecv' });
  const got: Buffer[] = [];
  pc.onTrack.subscribe((track: MediaStreamTrack) => track.onReceiveRtp.subscribe((p: RtpPacket) => got.push(p.payload)));
  await pc.setLocalDescription(await pc.createOffer());
  await sleep(300); // host candidates gathered
  const answer = await ep.answer(pc.localDescription!.sdp);
  if (!answer.ok) return t.fail(answer.message);
  await pc.setRemoteDescription({ type: 'answer', sdp: answer.value });
  for (let i = 0; i < 100 && ep.state !== 'connected'; i++) await sleep(100);
  t.is(ep.state, 'connected');
  t.is(ep.info().srtp_impl, 'bridge');
  t.is(pc.dtlsTransports[0]!.dtls?.srtp.srtpProfile, ProtectionProfileAes128CmHmacSha1_80, 'the client agreed to AES-CM');
  const frames = Array.from({ length: 30 }, (_, i) => Buffer.from([0xf8, 0xff, 0xfe, i]));
  for (let i = 0; i < frames.length; i++) {
    await tr.sender.sendRtp(new RtpPacket(new RtpHeader({ sequenceNumber: i, timestamp: i * 960 }), frames[i]!));
    ep.send(frames[i]!);
    await sleep(10);
  }
  for (let i = 0; i < 50 && (heard.length < 30 || got.length < 30); i++) await sleep(50);
  t.deepEqual(heard.map((p) => Buffer.from(p).toString('hex')), frames.map((f) => f.toString('hex')), 'werift → bridge, every payload in order');
  t.deepEqual(got.map((p) => p.toString('hex')), frames.map((f) => f.toString('hex')), 'bridge → werift, every payload in order');
  const c = ep.info().counters as Record<string, number>;
  t.is(c.srtpAuthFailures, 0);
  t.is(c.srtpReplays, 0);
  t.is(c.packetsIn, 30);
});
