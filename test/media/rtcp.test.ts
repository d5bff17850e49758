import test from 'ava';
import {
  buildReceiverReport,
  buildSenderReport,
  newReceiveStats,
  parseRtcp,
  reportBlockFor,
  updateReceiveStats,
  type ReportBlock,
} from '../../protocols/media/rtcp.js';

const blockA: ReportBlock = { ssrc: 0x11223344, fractionLost: 25, cumulativeLost: 1000, highestSeq: 0x0001fffe, jitter: 123, lsr: 0xaabbccdd, dlsr: 65536 };
const blockB: ReportBlock = { ssrc: 0xfedcba98, fractionLost: 255, cumulativeLost: -3, highestSeq: 7, jitter: 0, lsr: 0, dlsr: 0 };

/** RFC 3550 §6.4.1 layout written with DataView, independently of the module. */
function handSr(ssrc: number, info: number[], blocks: ReportBlock[]): Buffer {
  const b = Buffer.alloc(28 + 24 * blocks.length);
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  v.setUint8(0, 0x80 | blocks.length);
  v.setUint8(1, 200);
  v.setUint16(2, b.length / 4 - 1);
  v.setUint32(4, ssrc);
  info.forEach((x, i) => v.setUint32(8 + 4 * i, x));
  blocks.forEach((r, i) => {
    const o = 28 + 24 * i;
    v.setUint32(o, r.ssrc);
    v.setUint8(o + 4, r.fractionLost);
    v.setInt8(o + 5, r.cumulativeLost >> 16); // signed 24-bit, big-endian
    v.setUint16(o + 6, r.cumulativeLost & 0xffff);
    v.setUint32(o + 8, r.highestSeq);
    v.setUint32(o + 12, r.jitter);
    v.setUint32(o + 16, r.lsr);
    v.setUint32(o + 20, r.dlsr);
  });
  return b;
}

const sr = { ssrc: 0xcafebabe, ntpMsw: 0xe8a1b2c3, ntpLsw: 0x80000000, rtpTimestamp: 0xfffffff0, packetCount: 4242, octetCount: 678720 };

test('buildSenderReport writes the RFC 3550 layout; parseRtcp reads it back', (t) => {
  const p = buildSenderReport({ ...sr, reports: [blockA, blockB] });
  t.deepEqual(p, handSr(sr.ssrc, [sr.ntpMsw, sr.ntpLsw, sr.rtpTimestamp, sr.packetCount, sr.octetCount], [blockA, blockB]));
  t.deepEqual(parseRtcp(p), [{ type: 'sr', ...sr, reports: [blockA, blockB] }]);
  const empty = buildSenderReport({ ...sr, reports: [] });
  t.is(empty.length, 28);
  t.deepEqual(parseRtcp(empty), [{ type: 'sr', ...sr, reports: [] }]);
});

test('buildReceiverReport round trip, with 0, 1 and 31 blocks; 32 blocks is a RangeError', (t) => {
  for (const reports of [[], [blockB], Array.from({ length: 31 }, (_, i) => ({ ...blockA, ssrc: i }))]) {
    const p = buildReceiverReport({ ssrc: 0x01020304, reports });
    t.is(p.length, 8 + 24 * reports.length);
    t.is(p[0], 0x80 | reports.length);
    t.is(p[1], 201);
    t.is(p.readUInt16BE(2), p.length / 4 - 1);
    t.deepEqual(parseRtcp(p), [{ type: 'rr', ssrc: 0x01020304, reports }]);
  }
  t.throws(() => buildReceiverReport({ ssrc: 1, reports: Array.from({ length: 32 }, () => blockA) }), { instanceOf: RangeError });
});

test('cumulativeLost is clamped to the signed 24-bit range', (t) => {
  const p = buildReceiverReport({ ssrc: 1, reports: [{ ...blockA, cumulativeLost: 1e9 }, { ...blockA, cumulativeLost: -1e9 }] });
  const r = parseRtcp(p);
  t.deepEqual(r?.[0]?.type === 'rr' ? r[0].reports.map((x) => x.cumulativeLost) : null, [0x7fffff, -0x800000]);
});

test('parseRtcp: a compound SR + SDES + BYE, and padding on the last packet', (t) => {
  const sdes = Buffer.from([0x81, 202, 0, 3, 0xca, 0xfe, 0xba, 0xbe, 1, 3, 0x61, 0x62, 0x63, 0, 0, 0]);
  const bye = Buffer.from([0x81, 203, 0, 1, 0xca, 0xfe, 0xba, 0xbe]);
  const srPkt = handSr(sr.ssrc, [sr.ntpMsw, sr.ntpLsw, sr.rtpTimestamp, sr.packetCount, sr.octetCount], [blockA]);
  t.deepEqual(parseRtcp(Buffer.concat([srPkt, sdes, bye])), [
    { type: 'sr', ...sr, reports: [blockA] },
    { type: 'other', pt: 202 },
    { type: 'other', pt: 203 },
  ]);
  const rr = buildReceiverReport({ ssrc: 5, reports: [] });
  const paddedBye = Buffer.from([0xa1, 203, 0, 2, 0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 4]);
  t.deepEqual(parseRtcp(Buffer.concat([rr, paddedBye])), [{ type: 'rr', ssrc: 5, reports: [] }, { type: 'other', pt: 203 }]);
});

test('parseRtcp: malformed input is null', (t) => {
  const rr = buildReceiverReport({ ssrc: 5, reports: [blockA] });
  t.is(parseRtcp(new Uint8Array(0)), null, 'empty');
  t.is(parseRtcp(rr.subarray(0, rr.length - 4)), null, 'truncated: the length word runs past the end');
  t.is(parseRtcp(Buffer.concat([rr, rr.subarray(0, 3)])), null, 'a trailing partial header');
  const longer = Buffer.from(rr);
  longer.writeUInt16BE(rr.length / 4, 2);
  t.is(parseRtcp(longer), null, 'length one word too long');
  const v1 = Buffer.from(rr);
  v1[0] = 0x41;
  t.is(parseRtcp(v1), null, 'version 1');
  const notRtcp = Buffer.from(rr);
  notRtcp[1] = 96;
  t.is(parseRtcp(notRtcp), null, 'an RTP payload type');
  const rcTooBig = Buffer.from(rr);
  rcTooBig[0] = 0x82;
  t.is(parseRtcp(rcTooBig), null, 'two report blocks announced, one present');
  const srShort = Buffer.from([0x80, 200, 0, 1, 0, 0, 0, 1]);
  t.is(parseRtcp(srShort), null, 'SR without sender info');
  const paddedFirst = Buffer.from(rr);
  paddedFirst[0] = (paddedFirst[0] as number) | 0x20;
  t.is(parseRtcp(Buffer.concat([paddedFirst, rr])), null, 'padding on a packet that is not the last');
  const pad0 = Buffer.from([0xa0, 201, 0, 2, 0, 0, 0, 5, 0, 0, 0, 0]);
  t.is(parseRtcp(pad0), null, 'padding count 0');
  const padHuge = Buffer.from([0xa0, 201, 0, 2, 0, 0, 0, 5, 0, 0, 0, 12]);
  t.is(parseRtcp(padHuge), null, 'padding longer than the packet body');
  const padEatsBlock = Buffer.concat([rr.subarray(0, 4), rr.subarray(4)]);
  padEatsBlock[0] = 0xa1;
  padEatsBlock[padEatsBlock.length - 1] = 8;
  t.is(parseRtcp(padEatsBlock), null, 'padding that overlaps the report block');
});

// ---- receive statistics ----

/** RFC 3550 §6.4.1 jitter, written from the RFC text: J += (|D(i-1,i)| - J)/16. */
function referenceJitter(arrivals: { ts: number; arrival: number }[]): number {
  let j = 0;
  for (let i = 1; i < arrivals.length; i++) {
    const a = arrivals[i - 1]!;
    const b = arrivals[i]!;
    const d = b.arrival - a.arrival - (b.ts - a.ts);
    j += (Math.abs(d) - j) / 16;
  }
  return j;
}

test('receive stats: loss, fraction and jitter on a synthetic stream across a sequence wrap', (t) => {
  const first = 65500;
  const total = 200; // extended sequence numbers first .. first+199, crossing 65535 → 0
  const dropped = new Set([3, 4, 5, 40, 41, 99, 150, 151, 152, 153]);
  // A deterministic jitter pattern: network delay in RTP units per packet.
  const delay = (i: number) => 400 + ((i * 37) % 11) * 13 - ((i * 7) % 5) * 9;
  const s = newReceiveStats(first);
  const arrivals: { ts: number; arrival: number }[] = [];
  for (let i = 0; i < total; i++) {
    if (dropped.has(i)) continue;
    const ts = (1_000_000 + i * 160) >>> 0;
    const arrival = 5_000_000 + i * 160 + delay(i);
    updateReceiveStats(s, (first + i) & 0xffff, ts, arrival);
    arrivals.push({ ts, arrival });
  }
  const r = reportBlockFor(s, 0xabcdef01, 0x11112222, 3000);
  t.is(r.ssrc, 0xabcdef01);
  t.is(r.lsr, 0x11112222);
  t.is(r.dlsr, 3000);
  t.is(r.highestSeq, 65536 + ((first + total - 1) & 0xffff), 'one wrap in the extended highest sequence number');
  t.is(r.cumulativeLost, dropped.size);
  t.is(r.fractionLost, Math.floor((dropped.size * 256) / total));
  t.is(r.jitter, Math.floor(referenceJitter(arrivals)));
  t.true(r.jitter > 0);

  // Second interval: 50 more packets, 5 lost, one duplicate and one reordered pair.
  const order: number[] = [];
  for (let i = total; i < total + 50; i++) order.push(i);
  const lost2 = new Set([210, 211, 220, 230, 249]);
  [order[20], order[21]] = [order[21]!, order[20]!]; // reorder 220/221 (220 lost anyway) and duplicate 240
  order.splice(41, 0, 240);
  for (const i of order) {
    if (lost2.has(i)) continue;
    updateReceiveStats(s, (first + i) & 0xffff, (1_000_000 + i * 160) >>> 0, 5_000_000 + i * 160 + 400);
  }
  const r2 = reportBlockFor(s, 1, 0, 0);
  t.is(r2.highestSeq, 65536 + ((first + 248) & 0xffff), '249 was lost: 248 is the highest');
  // Expected in interval: 49 (first+200 .. first+248); received 49 - 4 lost + 1 duplicate = 46.
  t.is(r2.cumulativeLost, dropped.size + 4 - 1);
  t.is(r2.fractionLost, Math.floor((3 * 256) / 49));
  // Third report with nothing new: fraction 0, cumulative unchanged.
  const r3 = reportBlockFor(s, 1, 0, 0);
  t.is(r3.fractionLost, 0);
  t.is(r3.cumulativeLost, r2.cumulativeLost);
});

test('receive stats: a large jump is ignored until the next packet confirms a restart', (t) => {
  const s = newReceiveStats(100);
  for (let q = 100; q < 110; q++) updateReceiveStats(s, q, q * 160, q * 160);
  updateReceiveStats(s, 20000, 0, 0); // a stray packet far ahead: not counted
  let r = reportBlockFor(s, 1, 0, 0);
  t.is(r.highestSeq, 109);
  t.is(r.cumulativeLost, 0);
  updateReceiveStats(s, 30000, 0, 0);
  updateReceiveStats(s, 30001, 160, 160); // sequential after a jump: the source restarted
  updateReceiveStats(s, 30002, 320, 320);
  r = reportBlockFor(s, 1, 0, 0);
  t.is(r.highestSeq, 30002);
  t.is(r.cumulativeLost, 0);
  // A late packet (within MAX_MISORDER) is counted but does not move the highest.
  updateReceiveStats(s, 29990, 0, 0);
  t.is(reportBlockFor(s, 1, 0, 0).highestSeq, 30002);
});

test('receive stats are plain data (survive JSON)', (t) => {
  const s = newReceiveStats(7);
  updateReceiveStats(s, 7, 0, 10);
  updateReceiveStats(s, 9, 320, 350);
  const copy = JSON.parse(JSON.stringify(s));
  updateReceiveStats(s, 10, 480, 500);
  updateReceiveStats(copy, 10, 480, 500);
  t.deepEqual(reportBlockFor(copy, 1, 0, 0), reportBlockFor(s, 1, 0, 0));
  t.is(reportBlockFor(newReceiveStats(3), 1, 0, 0).fractionLost, 0);
});

test('receive stats: a first sequence number of 0 or 65535 makes no spurious wrap', (t) => {
  for (const first of [0, 65535]) {
    const s = newReceiveStats(first);
    t.is(reportBlockFor(s, 1, 0, 0).cumulativeLost, 0, 'nothing expected before the first packet');
    updateReceiveStats(s, first, 0, 0);
    updateReceiveStats(s, (first + 2) & 0xffff, 320, 320);
    const r = reportBlockFor(s, 1, 0, 0);
    t.is(r.highestSeq, first + 2, `first ${first}`);
    t.is(r.cumulativeLost, 1);
    t.is(r.fractionLost, Math.floor(256 / 3));
  }
});
