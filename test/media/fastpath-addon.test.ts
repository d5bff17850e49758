/**
 * The native addon (native/rtp-fastpath) on its own, against plain dgram peers: sockets,
 * batched delivery to JS, queued sends, a forwarding rule's rewrite (checked field by field
 * against RFC 3550's header layout, not against the addon's code), its counters and state
 * hand-back, and the refusal of bad arguments and bad packets. Also the IPv6 text form of
 * peer addresses (RFC 5952 examples).
 */
import test from 'ava';
import { F, layoutMismatch, setReceiver, STATE_FIELDS, v6 } from '../../actors/media-session/fastpath.js';
import { addon, nativeSocket, ruleRig, udp, until } from '../helpers/fastpath.js';
import { buildRtp } from '../../protocols/media/rtp.js';

test('the addon loads (npm test builds it)', (t) => {
  t.truthy(addon, 'native/rtp-fastpath/build/Release/rtp_fastpath.node must be built: npm run build:native');
  t.is(addon!.STATE_FIELDS, STATE_FIELDS);
});

test("the addon's state layout is checked index by index, by name, not only by count", (t) => {
  const names = addon!.STATE_FIELD_NAMES;
  t.is(names.length, STATE_FIELDS);
  t.is(names[F.ssrc], 'ssrc');
  t.is(names[F.dReplays], 'dReplays');
  t.deepEqual(names.slice(F.inW0, F.inW0 + 4), ['inW0', 'inW1', 'inW2', 'inW3']);
  t.is(layoutMismatch(names), '');
  const swapped = [...names];
  [swapped[F.seq], swapped[F.lastTs]] = [swapped[F.lastTs]!, swapped[F.seq]!];
  t.is(layoutMismatch(swapped), `addon state field ${F.seq} is lastTs, expected seq`, 'same count, two fields swapped');
  t.regex(layoutMismatch(names.slice(1)), /has 35 fields, expected 36/);
});

test('packets without a rule reach JS in batches; sends are queued and leave', async (t) => {
  const n = await nativeSocket(t);
  const peer = await udp(t);
  const got: Array<{ data: string; address: string; port: number }> = [];
  setReceiver(n.h, (data, address, port) => got.push({ data: data.toString(), address, port }));
  for (let i = 0; i < 20; i++) peer.socket.send(Buffer.from(`p${i}`), n.port, '127.0.0.1');
  await until(() => got.length === 20);
  t.deepEqual(got.map((g) => g.data), Array.from({ length: 20 }, (_, i) => `p${i}`), 'every datagram, in order');
  t.true(got.every((g) => g.address === '127.0.0.1' && g.port === peer.port));
  for (let i = 0; i < 5; i++) t.is(addon!.send(n.h, Buffer.from(`r${i}`), '127.0.0.1', peer.port), 0);
  await until(() => peer.got.length === 5);
  t.deepEqual(peer.got.map((b) => b.toString()), ['r0', 'r1', 'r2', 'r3', 'r4']);
  // A connected socket sends without an address.
  t.is(addon!.connect(n.h, '127.0.0.1', peer.port), 0);
  t.is(addon!.send(n.h, Buffer.from('c'), null, 0), 0);
  await until(() => peer.got.length === 6);
  t.is(peer.got[5]?.toString(), 'c');
  setReceiver(n.h, undefined);
});

test('bad arguments are refused, not crashes', async (t) => {
  const n = await nativeSocket(t);
  t.true(addon!.open(4, 'not an address', 0) < 0);
  t.true(addon!.open(4, '::1', 0) < 0, 'an IPv6 address on an IPv4 socket');
  t.is(addon!.send(999_999, Buffer.from('x'), '127.0.0.1', 9), -9, 'EBADF for an unknown handle');
  t.throws(() => addon!.send(n.h, 'text' as unknown as Uint8Array, '127.0.0.1', 9), { instanceOf: TypeError });
  t.is(addon!.send(n.h, Buffer.from('x'), 'no.such.host', 9), -22, 'EINVAL: only numeric addresses');
  t.is(addon!.send(n.h, Buffer.from('x'), null, 0), -89, 'EDESTADDRREQ: no address and not connected');
  const state = new Float64Array(STATE_FIELDS);
  t.false(addon!.setRule(999_999, 999_998, state, '127.0.0.1', 9, '127.0.0.1', -1, new Int32Array(128)));
  state[F.clock] = 8000;
  state[F.seq] = 70_000;
  t.false(addon!.setRule(n.h, n.h, state, '127.0.0.1', 9, '127.0.0.1', -1, new Int32Array(128)), 'a sequence number beyond 16 bits');
  state[F.seq] = 1;
  t.false(addon!.setRule(n.h, n.h, state, '127.0.0.1', 9, '127.0.0.1', -1, new Int32Array(12)), 'a payload-type map shorter than 128');
  t.false(addon!.setRule(n.h, n.h, state, 'nowhere', 9, '127.0.0.1', -1, new Int32Array(128)), 'a destination that is not an address');
  t.true(addon!.setRule(n.h, n.h, state, '127.0.0.1', 9, '127.0.0.1', -1, new Int32Array(128)), 'the same, well formed');
  t.true(addon!.takeRule(n.h, state));
  t.false(addon!.takeRule(999_999, state));
});

test('a rule rewrites, counts and hands its state back; bad packets are dropped and counted', async (t) => {
  const { src, dst, sender, listener, toJs } = await ruleRig(t);
  const s = new Float64Array(STATE_FIELDS);
  s[F.ssrc] = 0xdeadbeef;
  s[F.seq] = 65534; // wraps
  s[F.lastTs] = 5000;
  s[F.tsOffset] = 0xfffff000; // timestamps wrap too
  s[F.expectSsrc] = 0x01020304;
  s[F.baseSeq] = 10;
  s[F.maxSeq] = 9;
  s[F.badSeq] = 65537;
  s[F.transit] = NaN;
  s[F.clock] = 8000;
  s[F.teIn] = 101;
  s[F.teOut] = 96;
  const map = new Int32Array(128).fill(-1);
  map[8] = 0; // our PT 8 goes out as their PT 0
  t.true(addon!.setRule(src.h, dst.h, s, '127.0.0.1', listener.port, '127.0.0.1', sender.port, map));
  const send = (b: Uint8Array) => sender.socket.send(b, src.port, '127.0.0.1');
  const payload = Buffer.from(Array.from({ length: 160 }, (_, i) => i));
  for (let i = 0; i < 3; i++) send(buildRtp({ marker: i === 0, payloadType: 8, sequenceNumber: 10 + i, timestamp: 0x2000 + 160 * i, ssrc: 0x01020304 }, payload));
  // With 2 CSRCs, an extension and 4 bytes of padding: the payload alone goes on.
  const fancy = Buffer.concat([Buffer.from([0xb2, 8, 0, 13, 0, 0, 0x21, 0xe0, 1, 2, 3, 4]), Buffer.alloc(8, 0xcc), Buffer.from([0xbe, 0xde, 0, 1, 9, 9, 9, 9]), payload, Buffer.from([0, 0, 0, 4])]);
  send(fancy);
  send(buildRtp({ marker: true, payloadType: 101, sequenceNumber: 14, timestamp: 0x2000, ssrc: 0x01020304 }, Buffer.from([1, 10, 0, 160])));
  await until(() => listener.got.length === 5);
  // Not for the rule: to JS.
  send(buildRtp({ marker: false, payloadType: 0, sequenceNumber: 15, timestamp: 0x2280, ssrc: 0x01020304 }, payload)); // PT not mapped
  send(buildRtp({ marker: false, payloadType: 8, sequenceNumber: 16, timestamp: 0x2280, ssrc: 0x0badf00d }, payload)); // another SSRC
  send(Buffer.from([0x80, 200, 0, 1, 0, 0, 0, 0])); // RTCP (RFC 5761 range)
  await until(() => toJs.length === 3);
  // Malformed for the rule's source: dropped and counted.
  send(Buffer.from([0x80, 8, 0])); // short
  send(Buffer.concat([Buffer.from([0x80 | 0x0f, 8]), Buffer.alloc(20)])); // CSRCs beyond the end
  send(Buffer.concat([Buffer.from([0xa0, 8]), Buffer.alloc(10), Buffer.from([0x01, 0x02, 0x03, 0x04]), Buffer.from([0xff])])); // padding past the payload
  send(Buffer.concat([Buffer.from([0x00, 8]), Buffer.alloc(30)])); // version 0
  await new Promise((r) => setTimeout(r, 200));
  t.is(listener.got.length, 5, 'only the rule packets were forwarded');
  t.is(toJs.length, 3, 'unmapped PT, other SSRC and RTCP went to JS');
  const out = listener.got;
  const seq = (b: Buffer) => b.readUInt16BE(2);
  t.deepEqual(out.map(seq), [65534, 65535, 0, 1, 2], 'sequence continues from the state, wrapping');
  t.deepEqual(out.slice(0, 4).map((b) => b.readUInt32BE(4)), [0x2000, 0x20a0, 0x2140, 0x21e0].map((x) => (x + 0xfffff000) >>> 0), 'source timestamp + offset, mod 2^32');
  t.true(out.every((b) => b.readUInt32BE(8) === 0xdeadbeef && b[0] === 0x80), 'our SSRC, a plain 12-byte v2 header');
  t.deepEqual(out.slice(0, 4).map((b) => b[1]! & 0x7f), [0, 0, 0, 0], 'PT 8 mapped to 0');
  t.deepEqual(out.map((b) => b[1]! >> 7), [1, 0, 0, 0, 1], 'markers kept');
  t.true(out.slice(0, 4).every((b) => b.length === 172 && b.subarray(12).equals(payload)), 'payload without CSRCs, extension or padding');
  t.is(out[4]![1]! & 0x7f, 96, 'telephone-event PT remapped');
  t.deepEqual([...out[4]!.subarray(12)], [1, 10, 0, 160]);
  t.is(out[4]!.readUInt32BE(4), (0x2000 + 0xfffff000) >>> 0);
  const back = new Float64Array(STATE_FIELDS);
  t.true(addon!.takeRule(src.h, back));
  t.is(back[F.seq], 3);
  t.is(back[F.lastTs], (0x21e0 + 0xfffff000) >>> 0, 'the event did not move the clock back');
  t.is(back[F.dPacketsIn], 5);
  t.is(back[F.dBytesIn], 3 * 172 + fancy.length + 16);
  t.is(back[F.dPacketsOut], 5);
  t.is(back[F.dBytesOut], 4 * 160 + 4);
  t.is(back[F.dForwarded], 4, 'audio only: events are not counted as forwarded audio');
  t.is(back[F.dMalformed], 4);
  t.is(back[F.outPackets], 5);
  t.is(back[F.maxSeq], 14, 'receive statistics follow the sequence (RFC 3550 A.1)');
  t.is(back[F.received], 5);
  t.false(Number.isNaN(back[F.transit]!));
  t.false(addon!.takeRule(src.h, back), 'cleared: taken once');
  send(buildRtp({ marker: false, payloadType: 8, sequenceNumber: 17, timestamp: 0x2300, ssrc: 0x01020304 }, payload));
  await until(() => toJs.length === 4);
  t.is(toJs.length, 4, 'without its rule, the socket hands everything to JS');
});

test('IPv6 peers are printed as Node prints them (RFC 5952)', (t) => {
  const words = (hex: string) => {
    const b = Buffer.from(hex, 'hex');
    return new Uint32Array(b.buffer.slice(b.byteOffset, b.byteOffset + 16));
  };
  t.is(v6(words('00000000000000000000000000000001'), 0), '::1');
  t.is(v6(words('20010db8000000000000000000000001'), 0), '2001:db8::1');
  t.is(v6(words('20010db8000000010000000000000001'), 0), '2001:db8:0:1::1', 'the longest run of zeros is the one shortened');
  t.is(v6(words('20010db8000000000001000000000001'), 0), '2001:db8::1:0:0:1', 'the first of two equal runs');
  t.is(v6(words('20010db8000100010001000100010001'), 0), '2001:db8:1:1:1:1:1:1', 'one zero group is not shortened');
  t.is(v6(words('00000000000000000000ffffc0000201'), 0), '::ffff:192.0.2.1');
  t.is(v6(words('00000000000000000000000000000000'), 0), '::');
});
