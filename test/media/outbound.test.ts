/**
 * One outgoing RTP stream's continuity (RFC 3550 §5.1, RFC 3551 §4.1, RFC 4733 §2.3.1): the
 * sequence number goes up by one per packet and wraps at 2^16; the timestamp follows the source
 * and, on a change of source, goes on one frame after the last packet sent, with the marker set;
 * generated frames continue the same clock; 32-bit wrap; telephone events keep the stream's
 * timestamp. Expected values are computed here with BigInt arithmetic, not with the module.
 */
import test from 'ava';
import { countOctets, newOutbound, stampEvent, stampForwarded, stampGenerated, type Stamp } from '../../protocols/media/outbound.js';

const mod32 = (n: bigint | number): number => Number(((BigInt(n) % 2n ** 32n) + 2n ** 32n) % 2n ** 32n);
const mod16 = (n: number): number => ((n % 65536) + 65536) % 65536;
/** Distance from a to b going forward on the 32-bit circle. */
const ahead32 = (a: number, b: number): number => mod32(BigInt(b) - BigInt(a));

test('newOutbound keeps the 32-bit SSRC, 16-bit sequence and 32-bit timestamp it is given, and starts empty', (t) => {
  const s = newOutbound(-1, 70_000, 2 ** 32 + 5);
  t.is(s.ssrc, 0xffffffff);
  t.is(s.seq, 70_000 - 65_536);
  t.is(s.lastTs, null);
  t.is(s.packets, 0);
  t.is(s.octets, 0);
  const first = stampGenerated(s, 160);
  t.deepEqual(first, { seq: 4464, ts: 5, marker: true });
});

test('the first forwarded packet gets our initial sequence number and timestamp, marker set', (t) => {
  const s = newOutbound(0x11223344, 1000, 123_456);
  t.deepEqual(stampForwarded(s, 'a:1', 987_654_321, false, 160), { seq: 1000, ts: 123_456, marker: true });
  t.deepEqual(stampForwarded(s, 'a:1', 987_654_481, false, 160), { seq: 1001, ts: 123_616, marker: false });
  // a marker from the source (a new talkspurt) is kept
  t.deepEqual(stampForwarded(s, 'a:1', 987_654_961, true, 160), { seq: 1002, ts: 124_096, marker: true });
  t.is(s.packets, 3);
  t.is(s.lastTs, 124_096);
});

test('70,000 forwarded packets: the sequence wraps at 65536 and stays consecutive; timestamps follow the source', (t) => {
  const seq0 = 65_000;
  const ts0 = 4_290_000_000;
  const src0 = 4_294_000_000;
  const s = newOutbound(1, seq0, ts0);
  let prev: Stamp | null = null;
  let wraps = 0;
  let tsWraps = 0;
  for (let i = 0; i < 70_000; i++) {
    const srcTs = mod32(BigInt(src0) + BigInt(i) * 160n);
    const st = stampForwarded(s, 'a:42', srcTs, false, 160);
    if (st.seq !== mod16(seq0 + i) || st.ts !== mod32(BigInt(ts0) + BigInt(i) * 160n) || st.marker !== (i === 0)) {
      t.fail(`packet ${i}: ${JSON.stringify(st)}`);
      return;
    }
    if (prev) {
      if (st.seq !== (prev.seq + 1) % 65536) t.fail(`not consecutive at ${i}`);
      if (st.seq < prev.seq) wraps++;
      if (st.ts < prev.ts) tsWraps++;
    }
    prev = st;
  }
  t.is(wraps, 2); // 65000 + 70000 crosses 65536 and 131072
  t.is(tsWraps, 1); // 4.29e9 + 70,000 × 160 = 4.3012e9 crosses 2^32 once
  t.is(s.packets, 70_000);
  t.is(s.seq, mod16(seq0 + 70_000));
});

test('source switch A→B→A: each first packet follows the last sent by one frame, with the marker', (t) => {
  const s = newOutbound(7, 500, 10_000);
  const out: Stamp[] = [];
  // A: 5 packets, its own clock at 1,000,000
  for (let i = 0; i < 5; i++) out.push(stampForwarded(s, 'A:1', 1_000_000 + 160 * i, false, 160));
  // B: 5 packets, an unrelated clock near the top of the 32-bit range
  for (let i = 0; i < 5; i++) out.push(stampForwarded(s, 'B:2', 4_294_967_000 + 160 * i, false, 160));
  // back to A, whose clock went on while B was heard (10 frames later than where we left it)
  for (let i = 0; i < 5; i++) out.push(stampForwarded(s, 'A:1', 1_000_000 + 160 * (15 + i), false, 160));
  t.deepEqual(
    out.map((p) => p.seq),
    Array.from({ length: 15 }, (_, i) => 500 + i),
  );
  // one frame apart all along: the switch hides both sources' own timelines
  for (let i = 1; i < 15; i++) t.is(ahead32(out[i - 1]!.ts, out[i]!.ts), 160, `packet ${i}`);
  t.is(out[0]!.ts, 10_000);
  t.deepEqual(
    out.map((p) => p.marker),
    [true, false, false, false, false, true, false, false, false, false, true, false, false, false, false],
  );
});

test('a source’s gap is kept inside one source; the frame step is the destination codec’s (opus 960)', (t) => {
  const s = newOutbound(7, 0, 0);
  stampForwarded(s, 'A:1', 48_000, false, 960);
  const afterGap = stampForwarded(s, 'A:1', 48_000 + 960 * 50, true, 960); // 1 s of silence suppression
  t.deepEqual(afterGap, { seq: 1, ts: 960 * 50, marker: true });
  const b = stampForwarded(s, 'B:9', 5, false, 960);
  t.deepEqual(b, { seq: 2, ts: 960 * 51, marker: true });
});

test('the same endpoint with a new SSRC is a new source (marker, continuity)', (t) => {
  const s = newOutbound(7, 100, 2000);
  stampForwarded(s, 'A:1', 80_000, false, 160);
  const renewed = stampForwarded(s, 'A:2', 3, false, 160);
  t.deepEqual(renewed, { seq: 101, ts: 2160, marker: true });
  t.deepEqual(stampForwarded(s, 'A:2', 163, false, 160), { seq: 102, ts: 2320, marker: false });
});

test('generated frames continue from forwarded ones (marker on the first), and forwarding resumes one frame on', (t) => {
  const s = newOutbound(9, 65_534, 1_000);
  const f1 = stampForwarded(s, 'A:1', 77_777, false, 160);
  const f2 = stampForwarded(s, 'A:1', 77_937, false, 160);
  const g1 = stampGenerated(s, 160);
  const g2 = stampGenerated(s, 160);
  const g3 = stampGenerated(s, 160);
  const f3 = stampForwarded(s, 'A:1', 99_000, false, 160);
  const f4 = stampForwarded(s, 'A:1', 99_160, false, 160);
  t.deepEqual([f1, f2, g1, g2, g3, f3, f4], [
    { seq: 65_534, ts: 1_000, marker: true },
    { seq: 65_535, ts: 1_160, marker: false },
    { seq: 0, ts: 1_320, marker: true },
    { seq: 1, ts: 1_480, marker: false },
    { seq: 2, ts: 1_640, marker: false },
    { seq: 3, ts: 1_800, marker: true },
    { seq: 4, ts: 1_960, marker: false },
  ]);
});

test('a stream that starts generated starts at the initial timestamp, marker set', (t) => {
  const s = newOutbound(9, 10, 0xfffffff0);
  t.deepEqual(stampGenerated(s, 160), { seq: 10, ts: 0xfffffff0, marker: true });
  t.deepEqual(stampGenerated(s, 160), { seq: 11, ts: 0x90, marker: false }); // wraps: 0xfffffff0 + 160 - 2^32
  t.deepEqual(stampGenerated(s, 160), { seq: 12, ts: 0x130, marker: false });
});

test('32-bit timestamp wrap: across a forwarded run, a source switch and generated frames', (t) => {
  const s = newOutbound(1, 0, 0xffffff00);
  const ts: number[] = [];
  for (let i = 0; i < 4; i++) ts.push(stampForwarded(s, 'A:1', 0xfffffe00 + 160 * i, false, 160).ts);
  ts.push(stampForwarded(s, 'B:1', 0x7fffffff, false, 160).ts); // offset computed across the wrap
  ts.push(stampForwarded(s, 'B:1', 0x7fffffff + 160, false, 160).ts);
  ts.push(stampGenerated(s, 160).ts);
  ts.push(stampForwarded(s, 'A:1', 0x00000010, false, 160).ts); // A's own clock wrapped meanwhile
  const want = Array.from({ length: 8 }, (_, i) => mod32(0xffffff00n + 160n * BigInt(i)));
  t.deepEqual(ts, want);
  t.true(want[2]! < want[1]!);
  for (const v of ts) t.true(Number.isInteger(v) && v >= 0 && v < 2 ** 32);
});

test('events from the forwarded source keep the stream’s timestamp relation; their packets share it', (t) => {
  const s = newOutbound(3, 200, 50_000);
  // audio A at src 8000..8480 → 50000..50480
  for (let i = 0; i < 4; i++) stampForwarded(s, 'A:1', 8_000 + 160 * i, false, 160);
  // a digit that started at src 8320 (two frames ago): three packets, same timestamp
  const e = [stampEvent(s, 'A:1', 8_320, 160), stampEvent(s, 'A:1', 8_320, 160), stampEvent(s, 'A:1', 8_320, 160)];
  t.deepEqual(e.map((p) => p.ts), [50_320, 50_320, 50_320]);
  t.deepEqual(e.map((p) => p.seq), [204, 205, 206]);
  // audio goes on on its own timeline
  t.deepEqual(stampForwarded(s, 'A:1', 8_640, false, 160), { seq: 207, ts: 50_640, marker: false });
});

test('an event behind the last audio does not pull the stream back: the next source follows the audio', (t) => {
  const s = newOutbound(3, 0, 100_000);
  for (let i = 0; i < 10; i++) stampForwarded(s, 'A:1', 160 * i, false, 160); // last audio ts 101,440
  stampEvent(s, 'A:1', 160 * 5, 160); // digit that began at frame 5 (ts 100,800)
  t.is(s.lastTs, 101_440); // the RTCP SR time reference stays on the audio
  const b = stampForwarded(s, 'B:1', 777, false, 160);
  t.deepEqual(b, { seq: 11, ts: 101_600, marker: true });
  const g = newOutbound(3, 0, 100_000);
  for (let i = 0; i < 10; i++) stampForwarded(g, 'A:1', 160 * i, false, 160);
  stampEvent(g, 'A:1', 160 * 5, 160);
  t.is(stampGenerated(g, 160).ts, 101_600);
});

test('an event ahead of the audio (audio suppressed during the digit) moves the stream on', (t) => {
  const s = newOutbound(3, 0, 0);
  for (let i = 0; i < 3; i++) stampForwarded(s, 'A:1', 160 * i, false, 160); // last audio ts 320
  const e = stampEvent(s, 'A:1', 160 * 3, 160); // the digit starts at the next frame
  t.is(e.ts, 480);
  t.is(stampGenerated(s, 160).ts, 640);
});

test('events of a source heard through the mixer: one timestamp per event, the mix clock undisturbed', (t) => {
  const s = newOutbound(3, 0, 1_000);
  const mix: Stamp[] = [stampGenerated(s, 160), stampGenerated(s, 160)]; // 1000, 1160
  const ev: Stamp[] = [];
  // a digit from A (whose audio is mixed here), interleaved with mix frames, as the session sends them
  for (let i = 0; i < 4; i++) {
    ev.push(stampEvent(s, 'A:1', 555_000, 160));
    mix.push(stampGenerated(s, 160));
  }
  t.deepEqual(
    mix.map((p) => p.ts),
    Array.from({ length: 6 }, (_, i) => 1_000 + 160 * i),
  );
  t.deepEqual(
    mix.map((p) => p.marker),
    [true, false, false, false, false, false],
  );
  t.is(new Set(ev.map((p) => p.ts)).size, 1);
  // the digit is placed where the stream is: not before the last frame sent, and at most one frame ahead
  const d = ahead32(1_160, ev[0]!.ts);
  t.true(d >= 0 && d <= 160, `event ts ${ev[0]!.ts}`);
  // every packet got its own sequence number, in sending order
  t.deepEqual(
    [...mix.slice(0, 2), ...ev.flatMap((e, i) => [e, mix[i + 2]!])].map((p) => p.seq),
    Array.from({ length: 10 }, (_, i) => i),
  );
  // a second digit later is placed where the stream then is
  for (let i = 0; i < 10; i++) stampGenerated(s, 160);
  const second = stampEvent(s, 'A:1', 556_600, 160);
  const d2 = ahead32(s.lastTs!, second.ts);
  t.true(d2 >= 0 && d2 <= 160, `second event ts ${second.ts} vs stream ${s.lastTs}`);
  t.deepEqual(stampEvent(s, 'A:1', 556_600, 160).ts, second.ts);
});

test('an event as the first packet of a new source starts the source like audio would (continuity, seq)', (t) => {
  const s = newOutbound(3, 9, 40_000);
  stampForwarded(s, 'A:1', 0, false, 160);
  const e = stampEvent(s, 'B:1', 70_000, 160);
  t.deepEqual({ seq: e.seq, ts: e.ts }, { seq: 10, ts: 40_160 });
  // B's audio that follows keeps B's timeline relation with its event
  t.deepEqual(stampForwarded(s, 'B:1', 70_160, false, 160), { seq: 11, ts: 40_320, marker: false });
});

test('countOctets adds payload bytes; packets counts every stamp', (t) => {
  const s = newOutbound(3, 0, 0);
  stampForwarded(s, 'A:1', 0, false, 160);
  countOctets(s, 160);
  stampGenerated(s, 160);
  countOctets(s, 160);
  stampEvent(s, 'A:1', 0, 160);
  countOctets(s, 4);
  t.is(s.octets, 324);
  t.is(s.packets, 3);
});

test('the state is plain data: it survives structuredClone and JSON and goes on where it was', (t) => {
  const s = newOutbound(0xdeadbeef, 65_535, 0xffffffff);
  stampForwarded(s, 'A:1', 10, false, 160);
  const copy = structuredClone(s);
  const json = JSON.parse(JSON.stringify(s)) as typeof s;
  const next = stampForwarded(s, 'A:1', 170, false, 160);
  t.deepEqual(stampForwarded(copy, 'A:1', 170, false, 160), next);
  t.deepEqual(stampForwarded(json, 'A:1', 170, false, 160), next);
  t.deepEqual(next, { seq: 0, ts: 159, marker: false });
});
