/**
 * protocols/media/pcap.ts: the classic pcap bytes (header fields, record timestamps, IPv4 and
 * IPv6 UDP framing with correct checksums) and the reader's answers to bad and cut files.
 */
import test from 'ava';
import { addressBytes, ipUdpFrame, LINKTYPE_RAW, parseIpUdp, pcapFileHeader, pcapRecord, readPcap } from '../../protocols/media/pcap.js';

/** The one's-complement sum of 16-bit words folded: 0xffff when a checksummed region is intact. */
function onesSum(b: Uint8Array): number {
  let acc = 0;
  for (let i = 0; i < b.length; i += 2) acc += (b[i]! << 8) | (i + 1 < b.length ? b[i + 1]! : 0);
  while (acc > 0xffff) acc = (acc & 0xffff) + (acc >>> 16);
  return acc;
}

test('the global header is little-endian pcap 2.4, µs, snaplen 65535, LINKTYPE_RAW', (t) => {
  const h = pcapFileHeader();
  t.is(h.length, 24);
  t.is(h.toString('hex'), 'd4c3b2a1' + '0200' + '0400' + '00000000' + '00000000' + 'ffff0000' + '65000000');
});

test('a record stores epoch ms as seconds and microseconds, and reads back exactly', (t) => {
  const payload = Buffer.from('80000001000000a012345678', 'hex');
  const tuple = { srcAddress: '192.0.2.7', srcPort: 40000, dstAddress: '127.0.0.1', dstPort: 30002 };
  const rec = pcapRecord(1_764_180_000_123, tuple, payload);
  t.is(rec.readUInt32LE(0), 1_764_180_000);
  t.is(rec.readUInt32LE(4), 123_000);
  t.is(rec.readUInt32LE(8), 20 + 8 + payload.length);
  t.is(rec.readUInt32LE(12), rec.readUInt32LE(8));
  const read = readPcap(Buffer.concat([pcapFileHeader(), rec, pcapRecord(1_764_180_000_999.5, tuple, payload)]));
  if (!read.ok) return t.fail(read.error);
  t.is(read.linktype, LINKTYPE_RAW);
  t.false(read.truncated);
  t.is(read.packets.length, 2);
  t.deepEqual({ ...read.packets[0]!, payload: read.packets[0]!.payload.toString('hex') }, { epochMs: 1_764_180_000_123, ...tuple, payload: payload.toString('hex') });
  t.is(read.packets[1]!.epochMs, 1_764_180_000_999.5);
});

test('IPv4 framing: header and UDP checksums verify, lengths are right', (t) => {
  const payload = Buffer.alloc(161, 0x5a); // odd length: the checksum pads
  const f = ipUdpFrame({ srcAddress: '10.1.2.3', srcPort: 5004, dstAddress: '10.9.8.7', dstPort: 6000 }, payload);
  t.is(f.length, 20 + 8 + 161);
  t.is(f[0], 0x45);
  t.is(f.readUInt16BE(2), f.length);
  t.is(onesSum(f.subarray(0, 20)), 0xffff, 'IPv4 header checksum');
  const pseudo = Buffer.concat([f.subarray(12, 20), Buffer.from([0, 17]), f.subarray(24, 26)]);
  t.is(onesSum(Buffer.concat([pseudo, f.subarray(20), ...(f.length % 2 ? [Buffer.alloc(1)] : [])])), 0xffff, 'UDP checksum');
  t.deepEqual(parseIpUdp(f), { srcAddress: '10.1.2.3', srcPort: 5004, dstAddress: '10.9.8.7', dstPort: 6000, payload });
});

test('IPv6 framing, IPv4-mapped addresses as IPv4, mixed families and bad addresses as unspecified', (t) => {
  const payload = Buffer.from([1, 2, 3, 4]);
  const f = ipUdpFrame({ srcAddress: '2001:db8::1', srcPort: 1, dstAddress: 'fe80::1%eth0', dstPort: 2 }, payload);
  t.is(f.length, 40 + 8 + 4);
  t.is(f[0]! >> 4, 6);
  const udp = parseIpUdp(f)!;
  t.is(udp.srcAddress, '2001:db8:0:0:0:0:0:1');
  t.is(udp.dstAddress, 'fe80:0:0:0:0:0:0:1');
  const pseudo = Buffer.concat([f.subarray(8, 40), Buffer.from([0, 0, 0, 12, 0, 0, 0, 17])]);
  t.is(onesSum(Buffer.concat([pseudo, f.subarray(40)])), 0xffff, 'UDP checksum over the IPv6 pseudo-header');
  t.is(parseIpUdp(ipUdpFrame({ srcAddress: '::ffff:127.0.0.1', srcPort: 1, dstAddress: '127.0.0.1', dstPort: 2 }, payload))!.srcAddress, '127.0.0.1');
  t.is(parseIpUdp(ipUdpFrame({ srcAddress: '127.0.0.1', srcPort: 1, dstAddress: '::1', dstPort: 2 }, payload))!.dstAddress, '0.0.0.0');
  t.is(parseIpUdp(ipUdpFrame({ srcAddress: 'not-an-ip', srcPort: 1, dstAddress: '127.0.0.1', dstPort: 2 }, payload))!.srcAddress, '0.0.0.0');
  for (const bad of ['256.1.1.1', '1.2.3', '1::2::3', '12345::1', '1:2:3:4:5:6:7', 'g::1', '']) t.is(addressBytes(bad), null, bad);
  t.deepEqual([...addressBytes('::')!], Array(16).fill(0));
  t.deepEqual([...addressBytes('1:2:3:4:5:6:7:8')!].filter((_, i) => i % 2 === 1), [1, 2, 3, 4, 5, 6, 7, 8]);
});

test('the reader refuses what is not ours with the reason, and reads a cut file up to its last whole record', (t) => {
  const rec = pcapRecord(1000, { srcAddress: '127.0.0.1', srcPort: 1, dstAddress: '127.0.0.1', dstPort: 2 }, Buffer.alloc(10));
  const short = readPcap(Buffer.alloc(10));
  t.false(short.ok);
  t.regex(!short.ok ? short.error : '', /shorter than a pcap header/);
  const swapped = Buffer.from(pcapFileHeader());
  swapped.writeUInt32BE(0xa1b2c3d4, 0);
  t.regex((readPcap(swapped) as { error: string }).error, /magic 0xd4c3b2a1/);
  const eth = Buffer.from(pcapFileHeader(1));
  t.regex((readPcap(eth) as { error: string }).error, /linktype 1 is not LINKTYPE_RAW/);
  const notUdp = Buffer.from(rec);
  notUdp[16 + 9] = 6; // TCP
  t.regex((readPcap(Buffer.concat([pcapFileHeader(), rec, notUdp])) as { error: string }).error, /record 1 .* not an IPv4 or IPv6 UDP/);
  const cut = readPcap(Buffer.concat([pcapFileHeader(), rec, rec.subarray(0, 30)]));
  t.true(cut.ok && cut.truncated && cut.packets.length === 1);
  const empty = readPcap(pcapFileHeader());
  t.true(empty.ok && empty.packets.length === 0 && !empty.truncated);
});
