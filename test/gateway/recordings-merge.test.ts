/**
 * protocols/media/pcap-merge.ts: the headers that merge and those that do not (link type,
 * precision, foreign and pcapng files, short files), records ordered by time with ties kept in
 * input order, big-endian inputs rewritten little-endian, the largest snaplen kept, files cut
 * mid-record, corrupt records, and the splitter fed in pieces of every size giving the same
 * records. Files from pcap.ts's writer are read back by its reader after a merge.
 */
import test from 'ava';
import { mergePcaps, mergedHeader, parsePcapHeader, pickEarliest, PcapSplitter, PcapFormatError, type PcapFileHeader } from '../../protocols/media/pcap-merge.js';
import { pcapFileHeader, pcapRecord, readPcap } from '../../protocols/media/pcap.js';

const tuple = { srcAddress: '10.0.0.1', srcPort: 4000, dstAddress: '10.0.0.2', dstPort: 5000 };

/** A file of ours (pcap.ts) with one record per time (ms), payload = its index byte and a tag. */
function ours(times: number[], tag: number): Buffer {
  return Buffer.concat([pcapFileHeader(), ...times.map((ms, i) => pcapRecord(ms, tuple, Uint8Array.from([tag, i])))]);
}

/** A hand-made classic pcap: byte order, precision, snaplen, link type; records [sec, frac, bytes]. */
function handmade(o: { le?: boolean; ns?: boolean; snaplen?: number; linktype?: number; major?: number }, records: Array<[number, number, number[]]>): Buffer {
  const le = o.le ?? true;
  const h = Buffer.alloc(24);
  const u32 = (b: Buffer, v: number, at: number) => (le ? b.writeUInt32LE(v, at) : b.writeUInt32BE(v, at));
  const u16 = (b: Buffer, v: number, at: number) => (le ? b.writeUInt16LE(v, at) : b.writeUInt16BE(v, at));
  u32(h, o.ns ? 0xa1b23c4d : 0xa1b2c3d4, 0);
  u16(h, o.major ?? 2, 4);
  u16(h, 4, 6);
  u32(h, o.snaplen ?? 65535, 16);
  u32(h, o.linktype ?? 1, 20);
  const recs = records.map(([sec, frac, bytes]) => {
    const r = Buffer.alloc(16 + bytes.length);
    u32(r, sec, 0);
    u32(r, frac, 4);
    u32(r, bytes.length, 8);
    u32(r, bytes.length, 12);
    Buffer.from(bytes).copy(r, 16);
    return r;
  });
  return Buffer.concat([h, ...recs]);
}

const payloadTags = (file: Uint8Array) => {
  const r = readPcap(file);
  if (!r.ok) throw new Error(r.error);
  return r.packets.map((p) => `${p.payload[0]}:${p.payload[1]}@${p.epochMs}`);
};

test('two recordings of ours merge into one ordered by time, readable by pcap.ts, every record kept', (t) => {
  const a = ours([1000, 1040, 1080, 1200], 0xa);
  const b = ours([1020, 1040, 1100], 0xb);
  const m = mergePcaps([a, b], ['a.pcap', 'b.pcap']);
  if (!m.ok) return t.fail(m.error);
  t.is(m.records, 7);
  t.deepEqual(m.partial, []);
  t.is(m.bytes.length, a.length + b.length - 24, 'one global header, every record unchanged in size');
  t.deepEqual(Buffer.from(m.bytes.subarray(0, 24)), pcapFileHeader(), 'the header of ours: LE, µs, 2.4, snaplen 65535, RAW');
  // 1040 is in both: a's (the first input) goes first.
  t.deepEqual(payloadTags(m.bytes), ['10:0@1000', '11:0@1020', '10:1@1040', '11:1@1040', '10:2@1080', '11:2@1100', '10:3@1200']);
});

test('one file merges to itself; inputs with no records give the header alone', (t) => {
  const a = ours([5, 6, 7], 1);
  const m = mergePcaps([a]);
  if (!m.ok) return t.fail(m.error);
  t.deepEqual(Buffer.from(m.bytes), a);
  const e = mergePcaps([pcapFileHeader(), pcapFileHeader()]);
  if (!e.ok) return t.fail(e.error);
  t.deepEqual(Buffer.from(e.bytes), pcapFileHeader());
  t.is(e.records, 0);
  t.false(mergePcaps([]).ok);
});

test('ordering uses seconds then the fraction, not the bytes; unsorted input files come out sorted per pick', (t) => {
  const a = handmade({}, [[10, 999_999, [1]], [11, 0, [2]]]);
  const b = handmade({}, [[10, 5, [3]], [12, 0, [4]]]);
  const m = mergePcaps([a, b]);
  if (!m.ok) return t.fail(m.error);
  const s = new PcapSplitter('m');
  s.push(m.bytes);
  const got: number[] = [];
  for (let r = s.shift(); r; r = s.shift()) got.push(r.bytes[16]!);
  t.deepEqual(got, [3, 1, 2, 4]);
});

test('big-endian and little-endian inputs of one link type merge, the output little-endian; the largest snaplen wins', (t) => {
  const be = handmade({ le: false, snaplen: 1500 }, [[1, 10, [0xbe, 1, 2]]]);
  const le = handmade({ le: true, snaplen: 9000 }, [[1, 5, [0x1e]]]);
  const m = mergePcaps([be, le], ['be.pcap', 'le.pcap']);
  if (!m.ok) return t.fail(m.error);
  const h = parsePcapHeader(m.bytes) as PcapFileHeader;
  t.true(h.littleEndian);
  t.is(h.snaplen, 9000);
  t.is(h.linktype, 1);
  const s = new PcapSplitter('m');
  s.push(m.bytes);
  const first = s.shift()!;
  const second = s.shift()!;
  t.deepEqual([first.sec, first.frac, [...first.bytes.subarray(16)]], [1, 5, [0x1e]]);
  t.deepEqual([second.sec, second.frac, [...second.bytes.subarray(16)]], [1, 10, [0xbe, 1, 2]]);
  t.is(Buffer.from(second.bytes).readUInt32LE(8), 3, 'the record header rewritten little-endian');
  t.is(s.shift(), null);
  t.deepEqual(be.subarray(24, 28), Buffer.from([0, 0, 0, 1]), 'the input is not changed');
});

test('nanosecond files merge with nanosecond files and keep the nanosecond magic', (t) => {
  const m = mergePcaps([handmade({ ns: true }, [[1, 500_000_000, [1]]]), handmade({ ns: true, le: false }, [[1, 400_000_000, [2]]])]);
  if (!m.ok) return t.fail(m.error);
  t.is(Buffer.from(m.bytes).readUInt32LE(0), 0xa1b23c4d);
});

test('headers that do not merge are refused naming the file: link type, precision', (t) => {
  const raw = ours([1], 1);
  const eth = handmade({ linktype: 1 }, []);
  const r1 = mergePcaps([raw, eth], ['a.pcap', 'eth.pcap']);
  t.false(r1.ok);
  if (!r1.ok) t.is(r1.error, 'eth.pcap has link type 1, a.pcap has 101: files of different link types do not merge');
  const r2 = mergePcaps([handmade({}, []), handmade({ ns: true }, [])], ['us.pcap', 'ns.pcap']);
  t.false(r2.ok);
  if (!r2.ok) t.regex(r2.error, /^ns\.pcap has nanosecond timestamps, us\.pcap has microsecond/);
  t.false(mergedHeader([], []).ok);
});

test('foreign and short files are refused with what is wrong', (t) => {
  const cases: Array<[Buffer, RegExp]> = [
    [Buffer.from('GIF89a not a capture at all....'), /magic 0x47494638 is not a classic pcap magic/],
    [Buffer.from([0x0a, 0x0d, 0x0d, 0x0a, ...Array(28).fill(0)]), /pcapng files are not merged/],
    [Buffer.alloc(10), /10 bytes is shorter than a pcap global header/],
    [Buffer.alloc(0), /0 bytes is shorter/],
    [handmade({ major: 1 }, []), /pcap version 1\.4 is not 2\.x/],
    [handmade({ snaplen: 0 }, []), /snaplen 0/],
  ];
  for (const [file, re] of cases) {
    const r = mergePcaps([ours([1], 1), file], ['good.pcap', 'bad.pcap']);
    t.false(r.ok);
    if (!r.ok) t.regex(r.error, new RegExp('^bad\\.pcap: ' + re.source.replace(/^\^/, '')), r.error);
  }
});

test('a file cut mid-record gives its whole records and is reported; a cut in the record header too', (t) => {
  const a = ours([10, 20, 30], 1);
  const b = ours([15], 2);
  for (const cut of [1, 8, 16, 20]) {
    const m = mergePcaps([a.subarray(0, a.length - cut), b], ['a.pcap', 'b.pcap']);
    if (!m.ok) return t.fail(m.error);
    t.is(m.records, 3, `cut ${cut}`);
    t.deepEqual(m.partial, ['a.pcap']);
  }
});

test('corrupt records are refused: longer than any snaplen, captured longer than original, fraction out of range', (t) => {
  const big = handmade({ snaplen: 100 }, [[1, 0, [1]]]);
  big.writeUInt32LE(300_000, 24 + 8);
  big.writeUInt32LE(300_000, 24 + 12);
  const r1 = mergePcaps([big], ['big.pcap']);
  t.false(r1.ok);
  if (!r1.ok) t.is(r1.error, 'big.pcap: the record at byte 24 claims 300000 bytes, more than the snaplen 100 allows');
  const inv = handmade({}, [[1, 0, [1, 2, 3]]]);
  inv.writeUInt32LE(2, 24 + 12);
  const r2 = mergePcaps([inv], ['inv.pcap']);
  t.false(r2.ok);
  if (!r2.ok) t.regex(r2.error, /3 captured bytes of an original 2/);
  const frac = handmade({}, [[1, 1_000_000, [1]]]);
  const r3 = mergePcaps([frac], ['f.pcap']);
  t.false(r3.ok);
  if (!r3.ok) t.regex(r3.error, /sub-second part 1000000 out of range/);
  t.throws(() => {
    const s = new PcapSplitter('x');
    s.push(Buffer.from('not a pcap header, no no no no'));
    s.shift();
  }, { instanceOf: PcapFormatError, message: /^x: magic/ });
});

test('the splitter gives the same records whatever the pieces (every piece size from 1 to 64)', (t) => {
  const file = ours([1, 2, 3, 4, 5], 7);
  const whole = new PcapSplitter('w');
  whole.push(file);
  const want: string[] = [];
  for (let r = whole.shift(); r; r = whole.shift()) want.push(Buffer.from(r.bytes).toString('hex'));
  t.is(want.length, 5);
  for (let size = 1; size <= 64; size++) {
    const s = new PcapSplitter('p');
    const got: string[] = [];
    for (let at = 0; at < file.length; at += size) {
      s.push(file.subarray(at, at + size));
      for (let r = s.shift(); r; r = s.shift()) got.push(Buffer.from(r.bytes).toString('hex'));
    }
    t.deepEqual(got, want, `pieces of ${size}`);
    t.is(s.finish().partialBytes, 0);
  }
  t.throws(() => new PcapSplitter('s').finish(), { message: /s: 0 bytes is shorter/ });
});

test('pickEarliest: the earliest head, the first on a tie, -1 when every input is done', (t) => {
  const r = (sec: number, frac: number) => ({ sec, frac, bytes: new Uint8Array(0) });
  t.is(pickEarliest([]), -1);
  t.is(pickEarliest([null, null]), -1);
  t.is(pickEarliest([null, r(1, 1), r(1, 0)]), 2);
  t.is(pickEarliest([r(2, 0), r(1, 999), null]), 1);
  t.is(pickEarliest([r(1, 5), r(1, 5)]), 0);
});
