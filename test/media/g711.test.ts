import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alawDecode, alawEncode, alawValue, ulawDecode, ulawEncode, ulawValue } from '../../protocols/media/codecs/g711.js';
import { audioTempDir, ffmpeg, fromS16le, sine, snrDb, sweep, toS16le } from '../helpers/audio.js';

const PROTOCOL_FILES = ['g711.ts', 'g722.ts', 'g722-tables.ts', 'resample.ts', 'tone.ts'];

test('the protocols/media/codecs modules are pure: sibling imports only, no I/O, timers, clock or randomness', (t) => {
  for (const f of PROTOCOL_FILES) {
    const src = readFileSync(new URL(`../../../protocols/media/codecs/${f}`, import.meta.url), 'utf8');
    const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\brequire\s*\(/g)].map((m) => m[1] ?? m[2] ?? 'require(');
    for (const i of imports) t.regex(i, /^\.\/[\w-]+\.js$|^\.\.\/types\.js$/, `${f} imports ${i}`);
    t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|performance\.now|Math\.random|process\.|\bfs\b|node:/, f);
  }
});

const enc1 = (f: (p: Int16Array) => Uint8Array, x: number): number => f(Int16Array.of(x))[0] as number;

test('μ-law code words of G.711 / the ITU reference software', (t) => {
  t.is(enc1(ulawEncode, 0), 0xff);
  t.is(enc1(ulawEncode, 1), 0xff, '+1 is below the first decision value');
  t.is(enc1(ulawEncode, -1), 0x7f, '−1 is negative zero (one’s complement input)');
  t.is(enc1(ulawEncode, 32767), 0x80);
  t.is(enc1(ulawEncode, -32768), 0x00);
  t.is(enc1(ulawEncode, 8), 0xfe);
  t.is(enc1(ulawEncode, -9), 0x7e);
  // Reconstruction values of G.711 Table 2a (14-bit values × 4).
  t.is(ulawValue(0xff), 0);
  t.is(ulawValue(0x7f), 0);
  t.is(ulawValue(0xfe), 2 * 4);
  t.is(ulawValue(0xf0), 30 * 4);
  t.is(ulawValue(0xef), 33 * 4);
  t.is(ulawValue(0x80), 8031 * 4);
  t.is(ulawValue(0x00), -8031 * 4);
  // Segment edges: the first value of segment s (14-bit, biased by 33) is 2^(s+5) − 33.
  for (let s = 1; s < 8; s++) {
    const edge = (2 ** (s + 5) - 33) * 4;
    t.is(enc1(ulawEncode, edge) >> 4, 0x0f - s, `segment ${s} starts at ${edge}`);
    t.is(enc1(ulawEncode, edge - 4) >> 4, 0x0f - (s - 1), `segment ${s - 1} ends below ${edge}`);
  }
});

test('A-law code words of G.711 / the ITU reference software', (t) => {
  t.is(enc1(alawEncode, 0), 0xd5);
  t.is(enc1(alawEncode, -1), 0x55);
  t.is(enc1(alawEncode, 15), 0xd5);
  t.is(enc1(alawEncode, 16), 0xd4);
  t.is(enc1(alawEncode, 32767), 0xaa);
  t.is(enc1(alawEncode, -32768), 0x2a);
  // G.711 Table 1a reconstruction values (13-bit × 8).
  t.is(alawValue(0xd5), 1 * 8);
  t.is(alawValue(0x55), -1 * 8);
  t.is(alawValue(0xd4), 3 * 8);
  t.is(alawValue(0xaa), 4032 * 8);
  t.is(alawValue(0x2a), -4032 * 8);
  // Segment edges at 32·2^s (13-bit): 256·2^s in 16-bit.
  for (let s = 1; s < 8; s++) {
    const edge = 256 * 2 ** (s - 1);
    t.is((enc1(alawEncode, edge) ^ 0x55) & 0x70, s << 4, `segment ${s} starts at ${edge}`);
    t.is((enc1(alawEncode, edge - 1) ^ 0x55) & 0x70, (s - 1) << 4);
  }
});

test('every code word decodes and re-encodes to itself (μ-law 0x7F, negative zero, becomes 0xFF)', (t) => {
  const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
  const u = ulawEncode(ulawDecode(codes));
  const a = alawEncode(alawDecode(codes));
  for (let c = 0; c < 256; c++) {
    t.is(u[c], c === 0x7f ? 0xff : c, `μ-law ${c.toString(16)}`);
    t.is(a[c], c, `A-law ${c.toString(16)}`);
  }
  // Decoding is odd-symmetric: the sign bit flips the value.
  for (let c = 0; c < 128; c++) {
    t.is(ulawValue(c) + ulawValue(c | 0x80), 0);
    t.is(alawValue(c) + alawValue(c | 0x80), 0);
  }
});

test('round-trip error stays within half a step of the logarithmic quantiser (1/32 of the level)', (t) => {
  const all = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
  const u = ulawDecode(ulawEncode(all));
  const a = alawDecode(alawEncode(all));
  let badU = 0;
  let badA = 0;
  for (let i = 0; i < all.length; i++) {
    const x = all[i] as number;
    if (Math.abs(x) > 32000) continue; // beyond the top reconstruction value: clipping, checked above
    if (Math.abs((u[i] as number) - x) > (Math.abs(x) + 132) / 32) badU++;
    if (Math.abs((a[i] as number) - x) > Math.max(Math.abs(x), 256) / 32) badA++;
  }
  t.is(badU, 0);
  t.is(badA, 0);
  // Signal-to-quantisation-noise of a 1 kHz sine over 40 dB of level (G.712 asks ~33-35 dB).
  for (const level of [0, -10, -20, -30, -40]) {
    const s = sine(8000, 1013, 8000, 32767 * 10 ** (level / 20));
    t.true(snrDb(s, ulawDecode(ulawEncode(s))) > 33, `μ-law at ${level} dBFS`);
    t.true(snrDb(s, alawDecode(alawEncode(s))) > 33, `A-law at ${level} dBFS`);
  }
});

test('output arrays are reused; bad sizes are refused; empty input gives empty output', (t) => {
  const pcm = sine(8000, 1000, 160);
  const out = new Uint8Array(200);
  const r = ulawEncode(pcm, out);
  t.is(r.length, 160);
  t.is(r.buffer, out.buffer);
  t.deepEqual([...r], [...ulawEncode(pcm)]);
  const back = new Int16Array(160);
  t.is(alawDecode(alawEncode(pcm), back), back);
  t.throws(() => ulawEncode(pcm, new Uint8Array(159)), { instanceOf: RangeError });
  t.throws(() => alawDecode(new Uint8Array(10), new Int16Array(9)), { instanceOf: RangeError });
  t.is(ulawEncode(new Int16Array(0)).length, 0);
  t.is(alawDecode(new Uint8Array(0)).length, 0);
});

/** Sign and magnitude index (0..127, growing with the level) of a code word. */
function linear(c: number, law: 'u' | 'a'): { negative: boolean; index: number } {
  const x = law === 'u' ? c ^ 0xff : c ^ 0xd5;
  return { negative: (x & 0x80) !== 0, index: x & 0x7f };
}

for (const law of ['u', 'a'] as const) {
  const name = law === 'u' ? 'μ-law' : 'A-law';
  const fmt = law === 'u' ? 'mulaw' : 'alaw';
  const encode = law === 'u' ? ulawEncode : alawEncode;
  const decode = law === 'u' ? ulawDecode : alawDecode;

  test(`${name}: ffmpeg decodes our bytes as we do; its encoder differs only by one step where G.711 decides`, async (t) => {
    const dir = audioTempDir(t);
    // A sine sweep over the band at −1 dBFS, a quiet one (−31 dBFS), then every 16-bit value.
    const input = new Int16Array(32000 + 65536);
    input.set(sweep(8000, 50, 3950, 16000, 29000));
    input.set(sweep(8000, 3950, 50, 16000, 900), 16000);
    for (let i = 0; i < 65536; i++) input[32000 + i] = i - 32768;
    writeFileSync(join(dir, 'in.raw'), toS16le(input));
    await ffmpeg(t, ['-f', 's16le', '-ar', '8000', '-ac', '1', '-i', join(dir, 'in.raw'), '-f', fmt, join(dir, 'ff.bin')]);
    const theirs = readFileSync(join(dir, 'ff.bin'));
    const ours = encode(input);
    t.is(theirs.length, ours.length);
    let sweepDiffers = 0;
    let rangeDiffers = 0;
    for (let i = 0; i < ours.length; i++) {
      if (ours[i] === theirs[i]) continue;
      if (i < 32000) sweepDiffers++;
      else rangeDiffers++;
      const x = input[i] as number;
      const a = linear(ours[i] as number, law);
      const b = linear(theirs[i] as number, law);
      // Neighbouring codes of the same sign, and x lies between their two reconstruction values:
      // both are roundings of x, differing only in where the decision value sits.
      t.true(a.negative === b.negative && Math.abs(a.index - b.index) === 1, `sample ${i} (${x}): ${ours[i]} vs ${theirs[i]}`);
      const [lo, hi] = [decode(Uint8Array.of(ours[i] as number))[0]!, decode(Uint8Array.of(theirs[i] as number))[0]!].sort((p, q) => p - q);
      t.true(lo! - 4 <= x && x <= hi! + 4, `sample ${i} (${x}) outside [${lo}, ${hi}]`);
      // For positive samples G.711's decision values differ from midpoints only at segment edges.
      if (x >= 0) t.true(a.index % 16 === 0 && b.index % 16 === 15, `positive sample ${x} off a segment edge`);
    }
    t.true(rangeDiffers <= 1000, `${rangeDiffers} of 65536 16-bit values encode differently`);
    t.log(`${name}: ffmpeg picks the neighbouring code for ${sweepDiffers} of 32000 sweep samples and ${rangeDiffers} of the 65536 16-bit values`);

    writeFileSync(join(dir, 'ours.bin'), ours);
    await ffmpeg(t, ['-f', fmt, '-ar', '8000', '-ac', '1', '-i', join(dir, 'ours.bin'), '-f', 's16le', join(dir, 'dec.raw')]);
    t.deepEqual(fromS16le(readFileSync(join(dir, 'dec.raw'))), decode(ours), 'decoders agree exactly');
  });
}
