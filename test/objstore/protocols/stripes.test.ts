import test from 'ava';
import { readFileSync } from 'node:fs';
import { chunkSizeFor } from '../../../protocols/objstore/layout.js';
import {
  dataChunkLength,
  geometry,
  parityChunkLength,
  sliceChunkLengths,
  sliceHeaderFor,
  sliceSize,
  stripeOffset,
  stripeRange,
  type Geometry,
} from '../../../protocols/objstore/stripes.js';

test('the module is pure: no imports, no timers', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/stripes.js', import.meta.url), 'utf8');
  t.notRegex(src, /\bfrom\s+['"]|\bimport\s*\(|require\(/);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|Math\.random|process\./);
});

test('geometry: stripe bytes and stripe count', (t) => {
  t.deepEqual(geometry(0, 4, 2, 16), { size: 0, k: 4, m: 2, chunkSize: 16, stripeBytes: 64, stripes: 0 });
  t.deepEqual(geometry(1, 4, 2, 16), { size: 1, k: 4, m: 2, chunkSize: 16, stripeBytes: 64, stripes: 1 });
  t.deepEqual(geometry(64, 4, 2, 16), { size: 64, k: 4, m: 2, chunkSize: 16, stripeBytes: 64, stripes: 1 });
  t.deepEqual(geometry(65, 4, 2, 16), { size: 65, k: 4, m: 2, chunkSize: 16, stripeBytes: 64, stripes: 2 });
  t.deepEqual(geometry(1000, 1, 0, 8), { size: 1000, k: 1, m: 0, chunkSize: 8, stripeBytes: 8, stripes: 125 });
});

test('a worked example: 100 bytes, 3+2, chunks of 16', (t) => {
  const g = geometry(100, 3, 2, 16);
  t.is(g.stripeBytes, 48);
  t.is(g.stripes, 3); // [0,48) [48,96) [96,100)
  t.deepEqual([0, 1, 2].map((i) => dataChunkLength(g, 0, i)), [16, 16, 16]);
  t.deepEqual([0, 1, 2].map((i) => dataChunkLength(g, 1, i)), [16, 16, 16]);
  t.deepEqual([0, 1, 2].map((i) => dataChunkLength(g, 2, i)), [4, 0, 0]);
  t.deepEqual([0, 1, 2].map((s) => parityChunkLength(g, s)), [16, 16, 8]);
  t.deepEqual(sliceChunkLengths(g, 0), [16, 16, 4]);
  t.deepEqual(sliceChunkLengths(g, 1), [16, 16]);
  t.deepEqual(sliceChunkLengths(g, 2), [16, 16]);
  t.deepEqual(sliceChunkLengths(g, 3), [16, 16, 8]);
  t.deepEqual(sliceChunkLengths(g, 4), [16, 16, 8]);
  t.deepEqual([0, 1, 2, 3, 4].map((i) => sliceSize(g, i)), [36, 32, 32, 40, 40]);
  t.deepEqual([0, 1, 2].map((s) => stripeOffset(g, s)), [0, 48, 96]);
  t.deepEqual(stripeRange(g, 0, 99), { first: 0, last: 2 });
  t.deepEqual(stripeRange(g, 47, 48), { first: 0, last: 1 });
  t.deepEqual(stripeRange(g, 48, 95), { first: 1, last: 1 });
  t.deepEqual(stripeRange(g, 96, 96), { first: 2, last: 2 });
});

test('an empty object has no stripes and empty slices', (t) => {
  const g = geometry(0, 4, 2, 8);
  for (let i = 0; i < 6; i++) {
    t.deepEqual(sliceChunkLengths(g, i), []);
    t.is(sliceSize(g, i), 0);
  }
  t.throws(() => dataChunkLength(g, 0, 0), { instanceOf: RangeError });
  t.throws(() => parityChunkLength(g, 0), { instanceOf: RangeError });
  t.throws(() => stripeOffset(g, 0), { instanceOf: RangeError });
  t.throws(() => stripeRange(g, 0, 0), { instanceOf: RangeError });
});

test('last-stripe parity shard: first data chunk rounded up to 8, even when later chunks are empty', (t) => {
  const g = geometry(64 + 17, 4, 2, 16); // last stripe holds 17 bytes: 16 + 1 + 0 + 0
  t.is(g.stripes, 2);
  t.deepEqual([0, 1, 2, 3].map((i) => dataChunkLength(g, 1, i)), [16, 1, 0, 0]);
  t.is(parityChunkLength(g, 1), 16);
  const h = geometry(64 + 3, 4, 2, 16); // 3 bytes: shard 8
  t.is(parityChunkLength(h, 1), 8);
  const e = geometry(64 + 8, 4, 1, 16);
  t.is(parityChunkLength(e, 1), 8);
  const f = geometry(64 + 9, 4, 1, 16);
  t.is(parityChunkLength(f, 1), 16);
});

/** The property check: everything one (size, k, m, chunkSize) must satisfy. */
function checkGeometry(t: import('ava').ExecutionContext, size: number, k: number, m: number, cs: number): void {
  const label = `size ${size} k ${k} m ${m} cs ${cs}`;
  const g: Geometry = geometry(size, k, m, cs);
  if (g.stripeBytes !== k * cs) t.fail(`${label}: stripeBytes`);
  if (g.stripes !== (size === 0 ? 0 : Math.ceil(size / (k * cs)))) t.fail(`${label}: stripes`);
  if (g.stripes * g.stripeBytes < size || (g.stripes > 0 && (g.stripes - 1) * g.stripeBytes >= size)) t.fail(`${label}: stripes cover the object minimally`);

  // Data chunks tile the object exactly once, in order, each starting where the layout says.
  let next = 0;
  let total = 0;
  for (let s = 0; s < g.stripes; s++) {
    if (stripeOffset(g, s) !== s * g.stripeBytes) t.fail(`${label}: stripeOffset ${s}`);
    for (let i = 0; i < k; i++) {
      const len = dataChunkLength(g, s, i);
      const at = s * g.stripeBytes + i * cs;
      if (len < 0 || len > cs) t.fail(`${label}: chunk ${s}/${i} length ${len} out of bounds`);
      if (len > 0 && at !== next) t.fail(`${label}: chunk ${s}/${i} starts at ${at}, expected ${next}`);
      if (len > 0 && len < cs && at + len !== size) t.fail(`${label}: short chunk ${s}/${i} is not at the end`);
      if (len === 0 && at < size) t.fail(`${label}: empty chunk ${s}/${i} inside the object`);
      next += len;
      total += len;
    }
    if (dataChunkLength(g, s, 0) === 0) t.fail(`${label}: stripe ${s} has an empty first chunk`);
    const p = parityChunkLength(g, s);
    const widest = Math.max(...Array.from({ length: k }, (_, i) => dataChunkLength(g, s, i)));
    if (p % 8 !== 0 || p < widest || p - widest >= 8 || p > cs) t.fail(`${label}: parity ${s} = ${p}, widest ${widest}`);
    if (s < g.stripes - 1 && p !== cs) t.fail(`${label}: a full stripe's shard is the chunk size`);
  }
  if (next !== size || total !== size) t.fail(`${label}: data chunks sum to ${total}, not ${size}`);

  // Slices: data slices hold their non-empty chunks; parity slices one shard per stripe.
  let dataSum = 0;
  for (let i = 0; i < k + m; i++) {
    const lens = sliceChunkLengths(g, i);
    const sum = lens.reduce((a, b) => a + b, 0);
    if (sliceSize(g, i) !== sum) t.fail(`${label}: sliceSize ${i} = ${sliceSize(g, i)}, chunks sum ${sum}`);
    if (lens.some((n) => n <= 0 || n > cs)) t.fail(`${label}: slice ${i} chunk out of bounds`);
    // slice-format.ts: every chunk but the last of a slice is exactly chunkSize
    if (lens.slice(0, -1).some((n) => n !== cs)) t.fail(`${label}: slice ${i} has a short chunk before its last`);
    if (i < k) {
      dataSum += sum;
      const expect = Array.from({ length: g.stripes }, (_, s) => dataChunkLength(g, s, i)).filter((n) => n > 0);
      if (lens.join() !== expect.join()) t.fail(`${label}: data slice ${i} chunks`);
      if (lens.length !== g.stripes && lens.length !== g.stripes - 1) t.fail(`${label}: data slice ${i} misses more than the last stripe`);
    } else {
      if (lens.length !== g.stripes) t.fail(`${label}: parity slice ${i} has ${lens.length} chunks`);
      if (lens.join() !== Array.from({ length: g.stripes }, (_, s) => parityChunkLength(g, s)).join()) t.fail(`${label}: parity slice ${i} chunks`);
      if (sum < sliceSize(g, 0)) t.fail(`${label}: parity slice smaller than data slice 0`);
    }
  }
  if (dataSum !== size) t.fail(`${label}: data slices sum to ${dataSum}`);
  // Slice 0 is the largest data slice; all parity slices are equal.
  for (let i = 1; i < k; i++) if (sliceSize(g, i) > sliceSize(g, 0)) t.fail(`${label}: data slice ${i} larger than slice 0`);

  // stripeRange agrees with stripe offsets for a spread of byte ranges.
  if (size > 0) {
    const points = [...new Set([0, 1, cs - 1, cs, g.stripeBytes - 1, g.stripeBytes, g.stripeBytes + 1, Math.floor(size / 2), size - 2, size - 1])].filter((p) => p >= 0 && p < size);
    for (const a of points) {
      for (const b of points) {
        if (a > b) continue;
        const r = stripeRange(g, a, b);
        const contains = (s: number, byte: number) => stripeOffset(g, s) <= byte && byte < stripeOffset(g, s) + g.stripeBytes;
        if (!contains(r.first, a) || !contains(r.last, b) || r.first > r.last || r.last >= g.stripes) t.fail(`${label}: stripeRange ${a}-${b} = ${r.first}..${r.last}`);
      }
    }
  }
  t.pass();
}

test('property: data chunks tile every object exactly once; slice sums and chunk bounds hold', (t) => {
  let cases = 0;
  for (const cs of [8, 16, 24, 64, 4096]) {
    for (let k = 1; k <= 10; k++) {
      for (const m of [0, 1, 2, 4]) {
        const sb = k * cs;
        const sizes = new Set([0, 1, 2, 7, 8, 9, cs - 1, cs, cs + 1, sb - 1, sb, sb + 1, 2 * sb - 1, 2 * sb, 2 * sb + 1, 3 * sb + cs - 1, 3 * sb + cs + 1, 5 * sb + (k - 1) * cs, 5 * sb + (k - 1) * cs + 1, 7 * sb - 1]);
        for (const size of sizes) {
          if (size < 0) continue;
          checkGeometry(t, size, k, m, cs);
          cases++;
        }
      }
    }
  }
  t.true(cases > 3000, `${cases} cases`);
});

test('property: every size 0..300 for small geometries', (t) => {
  for (let size = 0; size <= 300; size++) for (const k of [1, 2, 3, 5, 8]) for (const cs of [8, 16, 40]) checkGeometry(t, size, k, 2, cs);
});

test('property: chunk sizes chosen by chunkSizeFor give one stripe for small objects', (t) => {
  for (const k of [1, 2, 3, 4, 5, 8]) {
    for (const size of [0, 1, 7, 8, 9, 100, 1000, 65536, 1048576, 1048577, 3_000_000]) {
      const cs = chunkSizeFor(size, k);
      const g = geometry(size, k, 2, cs);
      if (cs < 256 * 1024) t.true(g.stripes <= 1, `size ${size} k ${k}`);
      checkGeometry(t, size, k, 2, cs);
    }
  }
});

test('large objects: numbers stay exact far past 2^32', (t) => {
  const size = 5 * 2 ** 40 + 12345; // 5 TiB and a bit
  const g = geometry(size, 8, 4, 256 * 1024);
  t.is(g.stripes, Math.ceil(size / (8 * 256 * 1024)));
  let total = 0;
  for (let i = 0; i < 8; i++) total += sliceSize(g, i);
  t.is(total, size);
  const last = g.stripes - 1;
  t.deepEqual(stripeRange(g, size - 1, size - 1), { first: last, last });
  t.is(stripeOffset(g, last) + dataChunkLength(g, last, 0), size, '12345 bytes fit in the first chunk of the last stripe');
  t.is(parityChunkLength(g, last), 12352);
});

test('geometry refuses impossible parameters', (t) => {
  for (const [size, k, m, cs] of [
    [-1, 4, 2, 8],
    [1.5, 4, 2, 8],
    [NaN, 4, 2, 8],
    [2 ** 53, 4, 2, 8],
    [10, 0, 2, 8],
    [10, -1, 2, 8],
    [10, 1.5, 2, 8],
    [10, 4, -1, 8],
    [10, 4, 0.5, 8],
    [10, 4, 2, 0],
    [10, 4, 2, 4],
    [10, 4, 2, 12],
    [10, 4, 2, 9],
    [10, 4, 2, -8],
    [10, 4, 2, 8.5],
    [10, 2 ** 40, 2, 2 ** 20],
  ] as const) {
    t.throws(() => geometry(size, k, m, cs), { instanceOf: RangeError }, `${size} ${k} ${m} ${cs}`);
  }
});

test('out-of-range stripes, indexes and byte ranges are RangeErrors', (t) => {
  const g = geometry(100, 3, 2, 16); // 3 stripes, slices 0..4
  for (const s of [-1, 3, 1.5, NaN]) {
    t.throws(() => dataChunkLength(g, s, 0), { instanceOf: RangeError }, `stripe ${s}`);
    t.throws(() => parityChunkLength(g, s), { instanceOf: RangeError }, `stripe ${s}`);
    t.throws(() => stripeOffset(g, s), { instanceOf: RangeError }, `stripe ${s}`);
  }
  for (const i of [-1, 3, 0.5]) t.throws(() => dataChunkLength(g, 0, i), { instanceOf: RangeError }, `data index ${i}`);
  for (const i of [-1, 5, 1.5]) {
    t.throws(() => sliceChunkLengths(g, i), { instanceOf: RangeError }, `slice ${i}`);
    t.throws(() => sliceSize(g, i), { instanceOf: RangeError }, `slice ${i}`);
  }
  for (const [a, b] of [[-1, 5], [5, 4], [0, 100], [100, 100], [0.5, 3], [0, NaN]] as const) {
    t.throws(() => stripeRange(g, a, b), { instanceOf: RangeError }, `${a}-${b}`);
  }
  const noParity = geometry(10, 2, 0, 8);
  t.throws(() => sliceChunkLengths(noParity, 2), { instanceOf: RangeError }, 'no parity slices when m = 0');
});

test('sliceHeaderFor: the object id, the index, the geometry and the slice\'s own payload size', (t) => {
  const g = geometry(1_000_000, 4, 2, 65536);
  const id = '$0123456789abcdef01234567';
  t.deepEqual(sliceHeaderFor(g, id, 1), { objectId: id, index: 1, k: 4, m: 2, chunkSize: 65536, objectSize: 1_000_000, sliceSize: sliceSize(g, 1) });
  t.is(sliceHeaderFor(g, id, 5).sliceSize, sliceSize(g, 5), 'a parity slice');
  t.throws(() => sliceHeaderFor(g, id, 6), { instanceOf: RangeError }, 'no slice 6 in a 4+2 object');
});
