import test from 'ava';
import { buildRtp, isRtcpPacket, parseRtp, rtpHeaderLength, writeRtpHeader } from '../../protocols/media/rtp.js';

/** An RTP packet laid out by hand from RFC 3550 §5.1 (independent of the module's writer). */
function handBuilt(o: { cc?: number; ext?: number[]; pad?: number; payload?: number[] } = {}): Buffer {
  const cc = o.cc ?? 0;
  const bytes: number[] = [0x80 | (o.pad ? 0x20 : 0) | (o.ext ? 0x10 : 0) | cc, 0x80 | 96, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04];
  for (let i = 0; i < cc; i++) bytes.push(0xc0, 0, 0, i);
  if (o.ext) bytes.push(0xbe, 0xde, 0, o.ext.length / 4, ...o.ext);
  bytes.push(...(o.payload ?? [1, 2, 3, 4, 5]));
  if (o.pad) {
    for (let i = 1; i < o.pad; i++) bytes.push(0);
    bytes.push(o.pad);
  }
  return Buffer.from(bytes);
}

test('parseRtp reads every field of a hand-built packet', (t) => {
  t.deepEqual(parseRtp(handBuilt()), {
    marker: true,
    payloadType: 96,
    sequenceNumber: 0xbeef,
    timestamp: 0xdeadbeef,
    ssrc: 0x01020304,
    csrcCount: 0,
    hasExtension: false,
    padding: false,
    headerLength: 12,
    payloadLength: 5,
  });
});

test('parseRtp: CSRCs, header extension and padding shape headerLength and payloadLength', (t) => {
  const p = handBuilt({ cc: 2, ext: [1, 2, 3, 4, 5, 6, 7, 8], pad: 3, payload: [9, 9, 9, 9, 9, 9, 9] });
  const h = parseRtp(p);
  t.truthy(h);
  t.is(h?.csrcCount, 2);
  t.true(h?.hasExtension);
  t.true(h?.padding);
  t.is(h?.headerLength, 12 + 8 + 4 + 8);
  t.is(h?.payloadLength, 7);
  t.is(rtpHeaderLength(p), 32);
  t.deepEqual([...p.subarray(h!.headerLength, h!.headerLength + h!.payloadLength)], [9, 9, 9, 9, 9, 9, 9]);
});

test('parseRtp refuses what is not a valid v2 packet', (t) => {
  t.is(parseRtp(new Uint8Array(0)), null);
  t.is(parseRtp(handBuilt().subarray(0, 11)), null, 'shorter than the fixed header');
  const v1 = handBuilt();
  v1[0] = 0x40;
  t.is(parseRtp(v1), null, 'version 1');
  const v0 = handBuilt();
  v0[0] = 0x00;
  t.is(parseRtp(v0), null, 'version 0');
  const cc = handBuilt({ payload: [1, 2, 3] });
  cc[0] = 0x80 | 1;
  t.is(parseRtp(cc), null, 'a CSRC that does not fit');
  const ext = handBuilt({ ext: [1, 2, 3, 4] });
  ext[15] = 9; // extension length of 9 words
  t.is(parseRtp(ext), null, 'an extension that runs past the end');
  t.is(parseRtp(Buffer.from([0x90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xbe])), null, 'X bit with a truncated extension header');
  const pad0 = handBuilt({ payload: [1, 2, 0] });
  pad0[0] = (pad0[0] as number) | 0x20;
  t.is(parseRtp(pad0), null, 'padding count 0');
  const padBig = handBuilt({ payload: [1, 2, 6] });
  padBig[0] = (padBig[0] as number) | 0x20;
  t.is(parseRtp(padBig), null, 'padding longer than the payload');
  const padAll = handBuilt({ payload: [0, 0, 3] });
  padAll[0] = (padAll[0] as number) | 0x20;
  t.is(parseRtp(padAll)?.payloadLength, 0, 'padding may take the whole payload');
});

test('writeRtpHeader writes the 12 bytes of RFC 3550 §5.1 and returns 12', (t) => {
  const out = new Uint8Array(16).fill(0xaa);
  t.is(writeRtpHeader(out, { marker: true, payloadType: 96, sequenceNumber: 0xbeef, timestamp: 0xdeadbeef, ssrc: 0x01020304 }), 12);
  t.deepEqual([...out], [...handBuilt().subarray(0, 12), 0xaa, 0xaa, 0xaa, 0xaa]);
  writeRtpHeader(out, { marker: false, payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0 });
  t.deepEqual([...out.subarray(0, 12)], [0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  t.throws(() => writeRtpHeader(new Uint8Array(11), { marker: false, payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0 }), { instanceOf: RangeError });
});

test('buildRtp → parseRtp round trip at field limits', (t) => {
  for (const h of [
    { marker: false, payloadType: 127, sequenceNumber: 65535, timestamp: 0xffffffff, ssrc: 0xffffffff },
    { marker: true, payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0 },
    { marker: true, payloadType: 8, sequenceNumber: 32768, timestamp: 0x80000000, ssrc: 0x80000000 },
  ]) {
    const payload = Buffer.from([1, 2, 3]);
    const p = buildRtp(h, payload);
    t.is(p.length, 15);
    t.deepEqual([...p.subarray(12)], [1, 2, 3]);
    t.deepEqual(parseRtp(p), { ...h, csrcCount: 0, hasExtension: false, padding: false, headerLength: 12, payloadLength: 3 });
  }
  t.is(parseRtp(buildRtp({ marker: false, payloadType: 0, sequenceNumber: 1, timestamp: 1, ssrc: 1 }, new Uint8Array(0)))?.payloadLength, 0);
});

test('isRtcpPacket: RFC 5761 demux on the second byte (192..223)', (t) => {
  const p = (b1: number) => Uint8Array.of(0x80, b1, 0, 0);
  for (const b of [192, 200, 201, 202, 203, 204, 205, 206, 207, 223]) t.true(isRtcpPacket(p(b)), `byte ${b}`);
  for (const b of [0, 8, 96, 111, 127, 128, 191, 224, 255]) t.false(isRtcpPacket(p(b)), `byte ${b}`);
  t.false(isRtcpPacket(Uint8Array.of(0x80)), 'too short');
  t.false(isRtcpPacket(buildRtp({ marker: true, payloadType: 0, sequenceNumber: 1, timestamp: 2, ssrc: 3 }, new Uint8Array(10))));
});
