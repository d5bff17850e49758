/**
 * SDP media addresses the bridge will not send to (issue 16): broadcast, multicast, unspecified
 * and link-local (169.254.169.254 included) are refused with ENDPOINT_ERROR unless
 * MEDIA_ALLOWED_NETWORKS contains them. The pure rule (address-policy.ts) and the bridge's answer
 * to offers and answers naming them.
 */
import test from 'ava';
import { isHoldAddress, parseIPv6, parseNetworks, refusedAddress, specialKind } from '../../protocols/media/sdp/address-policy.js';
import { bridgeSession, RtpPeer } from '../helpers/media.js';
import type { MediaBridgeError } from '../../actors/media-bridge/client.js';

test('special addresses, pure', (t) => {
  t.is(specialKind('255.255.255.255'), 'broadcast');
  t.is(specialKind('224.0.0.1'), 'multicast');
  t.is(specialKind('239.255.255.250'), 'multicast');
  t.is(specialKind('0.1.2.3'), 'unspecified');
  t.is(specialKind('169.254.169.254'), 'link-local');
  t.is(specialKind('fe80::1'), 'link-local');
  t.is(specialKind('febf::1'), 'link-local');
  t.is(specialKind('fec0::1'), null);
  t.is(specialKind('ff02::1'), 'multicast');
  t.is(specialKind('::ffff:169.254.169.254'), 'link-local', 'IPv4-mapped');
  t.is(specialKind('::'), 'unspecified');
  for (const a of ['127.0.0.1', '10.0.0.1', '192.0.2.255', '2001:db8::1', '::1']) t.is(specialKind(a), null, a);
  t.true(isHoldAddress('0.0.0.0'));
  t.is(refusedAddress('0.0.0.0', []), null, 'legacy hold is not a target: the bridge never sends there');
  t.regex(refusedAddress('169.254.169.254', [])!, /169\.254\.169\.254 is a link-local address; the bridge sends media there only if MEDIA_ALLOWED_NETWORKS contains it/);
  const allowed = parseNetworks('169.254.0.0/16, ff02::/16');
  t.true(allowed.ok);
  if (!allowed.ok) return;
  t.is(refusedAddress('169.254.169.254', allowed.value), null);
  t.is(refusedAddress('ff02::1', allowed.value), null);
  t.truthy(refusedAddress('224.0.0.1', allowed.value));
  t.deepEqual(parseNetworks('10.0.0.0/8,nonsense'), { ok: false, error: '"nonsense" is not a network (address/prefix, e.g. 10.1.0.0/16 or fd00::/8)' });
  t.false(parseNetworks('::1/129').ok);
  t.false(parseNetworks('1.2.3.4/8/1').ok);
  t.is(parseIPv6('1::2::3'), null);
  t.is(parseIPv6('fe80::1%eth0'), null);
  t.deepEqual([...parseIPv6('::ffff:1.2.3.4')!.slice(10)], [0xff, 0xff, 1, 2, 3, 4]);
});

const offer = (port: number, c: string, extra: string[] = []) =>
  ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', `c=IN IP4 ${c}`, 't=0 0', `m=audio ${port} RTP/AVP 0`, 'a=rtpmap:0 PCMU/8000', ...extra, 'a=sendrecv'].join('\r\n') + '\r\n';

test('offers naming broadcast, multicast, unspecified or link-local addresses are refused and create nothing', async (t) => {
  const { c } = await bridgeSession(t);
  for (const [addr, kind] of [['169.254.169.254', 'link-local'], ['224.0.0.251', 'multicast'], ['255.255.255.255', 'broadcast'], ['0.0.0.1', 'unspecified']] as const) {
    const err = (await t.throwsAsync(c.call('endpoint.rtp.create_from_offer', { sdp: offer(5004, addr) }))) as MediaBridgeError;
    t.is(err.code, 'ENDPOINT_ERROR', addr);
    t.regex(err.message, new RegExp(`${addr.replace(/\./g, '\\.')} is a ${kind} address`));
  }
  // The a=rtcp address is a target too.
  const rtcp = (await t.throwsAsync(c.call('endpoint.rtp.create_from_offer', { sdp: offer(5004, '127.0.0.1', ['a=rtcp:5005 IN IP4 169.254.169.254']) }))) as MediaBridgeError;
  t.regex(rtcp.message, /a=rtcp address: 169\.254\.169\.254 is a link-local address/);
  t.is((await c.call('session.info', {})).endpoints.length, 0);
  // Legacy hold and ordinary addresses still work.
  t.truthy((await c.call('endpoint.rtp.create_from_offer', { sdp: offer(5004, '0.0.0.0') })).sdp_answer);
  t.truthy((await c.call('endpoint.rtp.create_from_offer', { sdp: offer(5004, '127.0.0.1') })).sdp_answer);
});

test('an answer naming a link-local address is refused and the offer stays pending', async (t) => {
  const { c } = await bridgeSession(t);
  const peer = await RtpPeer.open(t);
  const { endpoint_id } = await c.call('endpoint.rtp.create_offer', {});
  const bad = peer.sdp().replace(/127\.0\.0\.1/g, '169.254.169.254');
  const err = (await t.throwsAsync(c.call('endpoint.rtp.accept_answer', { endpoint_id, sdp: bad }))) as MediaBridgeError;
  t.is(err.code, 'ENDPOINT_ERROR');
  t.regex(err.message, /169\.254\.169\.254 is a link-local address/);
  t.deepEqual(await c.call('endpoint.rtp.accept_answer', { endpoint_id, sdp: peer.sdp() }), {});
});

test('MEDIA_ALLOWED_NETWORKS lets a listed network through', async (t) => {
  const { c } = await bridgeSession(t, { allowedNetworks: '169.254.0.0/16' });
  t.truthy((await c.call('endpoint.rtp.create_from_offer', { sdp: offer(5004, '169.254.169.254') })).sdp_answer);
  t.is(((await t.throwsAsync(c.call('endpoint.rtp.create_from_offer', { sdp: offer(5004, '224.0.0.251') }))) as MediaBridgeError).code, 'ENDPOINT_ERROR');
});

test('WebRTC SDP rules, pure: fingerprint, generation check, candidate filter', async (t) => {
  const { remoteFingerprint, checkOfferGeneration, keepCandidates, withoutCandidateGeneration, sameFingerprint, iceUfrags, checkSender } = await import('../../protocols/media/sdp/webrtc.js');
  const fp = remoteFingerprint('v=0\r\na=fingerprint:SHA-256 ab:cd:ef\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=fingerprint:sha-256 AB:CD:EF\r\n');
  t.deepEqual(fp, { ok: true, value: { algorithm: 'sha-256', value: 'AB:CD:EF' } }, 'session and media level agreeing are one identity');
  t.false(remoteFingerprint('v=0\r\n').ok);
  t.false(remoteFingerprint('a=fingerprint:sha-256 AB:CD\r\na=fingerprint:sha-256 AB:CE\r\n').ok);
  t.false(sameFingerprint({ algorithm: 'sha-256', value: 'AB' }, { algorithm: 'sha-1', value: 'AB' }));
  t.is(checkOfferGeneration(null, undefined)?.code, 'ENDPOINT_ERROR');
  t.is(checkOfferGeneration(2, 1)?.code, 'OFFER_GENERATION_MISMATCH');
  t.is(checkOfferGeneration(2, 2), null);
  t.is(checkOfferGeneration(0, undefined), null, 'omitted: the initial answer');
  const sdp = 'v=0\r\na=candidate:1 1 udp 1 127.0.0.1 5000 typ host generation 0\r\na=candidate:2 1 udp 1 10.0.0.5 5002 typ host generation 0\r\na=end-of-candidates\r\n';
  t.is(keepCandidates(sdp, '127.0.0.1'), 'v=0\r\na=candidate:1 1 udp 1 127.0.0.1 5000 typ host generation 0\r\na=end-of-candidates\r\n');
  t.is(keepCandidates(sdp, '192.0.2.1'), sdp, 'no candidate on the address: unchanged');
  t.deepEqual(iceUfrags('v=0\r\na=ice-ufrag:Ab+/\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\na=ice-ufrag:Ab+/\r\na=ice-ufrag:x9\r\n'), ['Ab+/', 'x9']);
  t.deepEqual(iceUfrags('v=0\r\n'), []);
  t.is(checkSender('ours:theirs'), 'theirs', 'USERNAME is recipient:sender');
  t.is(checkSender(Buffer.from('a:b')), 'b');
  for (const bad of ['nocolon', ':x', 'x:', '', undefined, 7]) t.is(checkSender(bad), null, String(bad));
  t.is(withoutCandidateGeneration(sdp), 'v=0\r\na=candidate:1 1 udp 1 127.0.0.1 5000 typ host\r\na=candidate:2 1 udp 1 10.0.0.5 5002 typ host\r\na=end-of-candidates\r\n');
});
