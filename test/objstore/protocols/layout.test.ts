import test from 'ava';
import { readFileSync } from 'node:fs';
import { DEFAULT_CHUNK_SIZE, SMALL_OBJECT_BYTES, chunkSizeFor, defaultScheme, pickVolumes, schemeFor, takesNewSlices, volumeOf, type VolumeFlags } from '../../../protocols/objstore/layout.js';

test('the module is pure: no imports, no timers', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/layout.js', import.meta.url), 'utf8');
  t.notRegex(src, /\bfrom\s+['"]|\bimport\s*\(|require\(/);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|Math\.random|process\./);
});

test('DEFAULT_CHUNK_SIZE is 256 KiB', (t) => {
  t.is(DEFAULT_CHUNK_SIZE, 262144);
});

test('defaultScheme: the table', (t) => {
  const expected: Array<[number, { k: number; m: number } | null]> = [
    [0, null],
    [1, { k: 1, m: 0 }],
    [2, { k: 1, m: 1 }],
    [3, { k: 2, m: 1 }],
    [4, { k: 3, m: 1 }],
    [5, { k: 3, m: 2 }],
    [6, { k: 4, m: 2 }],
    [7, { k: 5, m: 2 }],
    [8, { k: 5, m: 3 }],
    [9, { k: 6, m: 3 }],
    [10, { k: 7, m: 3 }],
    [11, { k: 7, m: 4 }],
    [12, { k: 8, m: 4 }],
    [13, { k: 8, m: 4 }],
    [20, { k: 8, m: 4 }],
    [1000, { k: 8, m: 4 }],
  ];
  for (const [w, s] of expected) t.deepEqual(defaultScheme(w), s, `${w} writable`);
});

test('defaultScheme: properties for 2..200 writable volumes', (t) => {
  for (let w = 2; w <= 200; w++) {
    const s = defaultScheme(w);
    if (!s) return t.fail(`${w}`);
    t.true(s.k + s.m <= w, `${w}: k+m fits`);
    t.true(s.k >= 1 && s.k <= 8, `${w}: 1 <= k <= 8`);
    t.true(s.m >= 1 && s.m <= 4, `${w}: 1 <= m <= 4`);
    t.is(s.m, Math.min(4, Math.max(1, Math.round(w / 3))));
    if (w <= 12) t.is(s.k + s.m, w, `${w}: every volume used up to 12`);
  }
});

test('defaultScheme: a negative or fractional count is a RangeError', (t) => {
  for (const bad of [-1, 1.5, NaN, Infinity]) t.throws(() => defaultScheme(bad), { instanceOf: RangeError }, String(bad));
});

test('schemeFor: objects up to 8 KiB are 1 + m, larger ones the default scheme', (t) => {
  t.is(SMALL_OBJECT_BYTES, 8192);
  for (const size of [0, 1, 4096, 8191, 8192]) t.deepEqual(schemeFor(size, 6), { k: 1, m: 2 }, `${size} bytes over 6 volumes`);
  for (const size of [8193, 65536, 64 << 20]) t.deepEqual(schemeFor(size, 6), { k: 4, m: 2 }, `${size} bytes over 6 volumes`);
  for (let w = 1; w <= 20; w++) {
    const d = defaultScheme(w)!;
    t.deepEqual(schemeFor(100, w), { k: 1, m: d.m }, `100 bytes over ${w}: one data slice, the default's parity`);
    t.deepEqual(schemeFor(1 << 20, w), d, `1 MiB over ${w}: the default`);
    // Never more 4 KiB blocks than the default scheme would take (each slice at least one block).
    const blocks = (size: number, s: { k: number; m: number }) => (s.k + s.m) * Math.max(1, Math.ceil(size / s.k / 4096));
    for (const size of [1, 4096, 8192]) t.true(blocks(size, schemeFor(size, w)!) <= blocks(size, d), `${size} bytes over ${w}: no more blocks`);
  }
  t.deepEqual(schemeFor(8192, 3), { k: 2, m: 1 }, '8 KiB over 3 volumes: 1+1 would take 4 blocks, 2+1 takes 3');
  t.deepEqual(schemeFor(4096, 3), { k: 1, m: 1 }, '4 KiB over 3 volumes: 2 blocks against 3');
  t.is(schemeFor(10, 0), null, 'no writable volume: nothing');
  for (const bad of [-1, 1.5, NaN]) t.throws(() => schemeFor(bad, 6), { instanceOf: RangeError }, String(bad));
});

test('chunkSizeFor: small objects are one stripe, rounded up to a multiple of 8', (t) => {
  t.is(chunkSizeFor(0, 4), 8);
  t.is(chunkSizeFor(1, 4), 8);
  t.is(chunkSizeFor(1, 1), 8);
  t.is(chunkSizeFor(8, 1), 8);
  t.is(chunkSizeFor(9, 1), 16);
  t.is(chunkSizeFor(32, 4), 8);
  t.is(chunkSizeFor(33, 4), 16);
  t.is(chunkSizeFor(100, 3), 40); // ceil(100/3) = 34 -> 40
  t.is(chunkSizeFor(123456, 4), 30864);
  t.is(chunkSizeFor(4 * DEFAULT_CHUNK_SIZE, 4), DEFAULT_CHUNK_SIZE);
});

test('chunkSizeFor: large objects get the maximum chunk', (t) => {
  t.is(chunkSizeFor(4 * DEFAULT_CHUNK_SIZE + 1, 4), DEFAULT_CHUNK_SIZE);
  t.is(chunkSizeFor(10 * 2 ** 30, 8), DEFAULT_CHUNK_SIZE);
  t.is(chunkSizeFor(Number.MAX_SAFE_INTEGER, 1), DEFAULT_CHUNK_SIZE);
  t.is(chunkSizeFor(1000, 2, 64), 64);
  t.is(chunkSizeFor(100, 2, 64), 56);
  t.is(chunkSizeFor(0, 2, 8), 8);
});

test('chunkSizeFor: properties over many sizes and k', (t) => {
  const sizes = [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4095, 4096, 4097, 65535, 65536, 262143, 262144, 262145, 1048575, 1048576, 1048577, 2097151, 2097152, 2097153, 10 ** 9];
  for (const max of [8, 64, 4096, DEFAULT_CHUNK_SIZE]) {
    for (let k = 1; k <= 10; k++) {
      for (const size of sizes) {
        const cs = chunkSizeFor(size, k, max);
        const label = `size ${size} k ${k} max ${max}`;
        t.is(cs % 8, 0, label);
        t.true(cs >= 8 && cs <= max, label);
        if (Math.ceil(size / k) <= max) {
          t.true(cs * k >= size, `${label}: one stripe`);
          t.true(cs - 8 < Math.max(8, Math.ceil(size / k)), `${label}: the smallest such multiple of 8`);
        } else {
          t.is(cs, max, label);
        }
      }
    }
  }
});

test('chunkSizeFor: bad arguments are RangeErrors', (t) => {
  for (const size of [-1, 0.5, NaN, Infinity, 2 ** 53]) t.throws(() => chunkSizeFor(size, 4), { instanceOf: RangeError }, `size ${size}`);
  for (const k of [0, -1, 1.5, NaN]) t.throws(() => chunkSizeFor(100, k), { instanceOf: RangeError }, `k ${k}`);
  for (const max of [0, 4, 7, 12, 100, -8, 8.5, NaN]) t.throws(() => chunkSizeFor(100, 2, max), { instanceOf: RangeError }, `max ${max}`);
});

test('pickVolumes: most free space first, ties by lowest id', (t) => {
  const vols = [
    { id: 1, bytesFree: 100 },
    { id: 2, bytesFree: 500 },
    { id: 3, bytesFree: 300 },
    { id: 4, bytesFree: 500 },
    { id: 5, bytesFree: 0 },
  ];
  t.deepEqual(pickVolumes(vols, 1), [2]);
  t.deepEqual(pickVolumes(vols, 2), [2, 4]);
  t.deepEqual(pickVolumes(vols, 3), [2, 4, 3]);
  t.deepEqual(pickVolumes(vols, 5), [2, 4, 3, 1, 5]);
  t.deepEqual(pickVolumes(vols, 0), []);
  t.deepEqual(pickVolumes([...vols].reverse(), 5), [2, 4, 3, 1, 5], 'input order does not matter');
  t.deepEqual(pickVolumes([{ id: 10, bytesFree: 1 }, { id: 2, bytesFree: 1 }, { id: 7, bytesFree: 1 }], 3), [2, 7, 10]);
});

test('pickVolumes: null when too few candidates', (t) => {
  t.is(pickVolumes([], 1), null);
  t.deepEqual(pickVolumes([], 0), []);
  t.is(pickVolumes([{ id: 1, bytesFree: 10 }, { id: 2, bytesFree: 20 }], 3), null);
});

test('pickVolumes: a volume listed twice is picked once, ranked by its larger free space', (t) => {
  const dup = [
    { id: 1, bytesFree: 10 },
    { id: 2, bytesFree: 50 },
    { id: 1, bytesFree: 90 },
  ];
  t.deepEqual(pickVolumes(dup, 2), [1, 2]);
  t.is(pickVolumes(dup, 3), null, 'only two distinct ids');
});

test('pickVolumes: the input is not modified', (t) => {
  const vols = [{ id: 3, bytesFree: 1 }, { id: 1, bytesFree: 2 }];
  const copy = structuredClone(vols);
  pickVolumes(vols, 2);
  t.deepEqual(vols, copy);
});

test('pickVolumes: bad arguments', (t) => {
  for (const c of [-1, 1.5, NaN]) t.throws(() => pickVolumes([{ id: 1, bytesFree: 1 }], c), { instanceOf: RangeError }, String(c));
  t.throws(() => pickVolumes([{ id: 1, bytesFree: NaN }], 1), { instanceOf: TypeError });
  t.throws(() => pickVolumes([{ id: 1.5, bytesFree: 1 }], 1), { instanceOf: TypeError });
});

test('pickVolumes: a pseudo-random property check against a reference sort', (t) => {
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 300; round++) {
    const n = rnd(12);
    const ids = new Set<number>();
    const vols: Array<{ id: number; bytesFree: number }> = [];
    while (vols.length < n) {
      const id = rnd(1000);
      if (ids.has(id)) continue;
      ids.add(id);
      vols.push({ id, bytesFree: rnd(4) * 1000 });
    }
    const count = rnd(14);
    const got = pickVolumes(vols, count);
    if (count > n) {
      t.is(got, null);
      continue;
    }
    const ref = [...vols].sort((a, b) => (a.bytesFree !== b.bytesFree ? b.bytesFree - a.bytesFree : a.id - b.id)).slice(0, count).map((v) => v.id);
    t.deepEqual(got, ref);
  }
});

test('volumeOf: data slices 0..k-1 are on dataVolumes, parity slices k..k+m-1 on parityVolumes', (t) => {
  const rec = { k: 3, dataVolumes: [7, 2, 9], parityVolumes: [4, 11] };
  t.deepEqual([0, 1, 2, 3, 4].map((i) => volumeOf(rec, i)), [7, 2, 9, 4, 11]);
  t.is(volumeOf({ k: 1, dataVolumes: [5], parityVolumes: [] }, 0), 5, 'k = 1, m = 0');
});

test('takesNewSlices: only an enabled, writable, healthy volume that is neither draining nor deleted', (t) => {
  const live: VolumeFlags = { isEnabled: true, isReadOnly: false, isHealthy: true, isDraining: false, isDeleted: false };
  t.true(takesNewSlices(live));
  t.false(takesNewSlices({ ...live, isEnabled: false }), 'disabled');
  t.false(takesNewSlices({ ...live, isReadOnly: true }), 'read-only');
  t.false(takesNewSlices({ ...live, isHealthy: false }), 'unhealthy');
  t.false(takesNewSlices({ ...live, isDraining: true }), 'draining');
  // object-store.md: "A deleted volume is a tombstone". PUT /$/volumes/{id} may set isDeleted
  // alone, leaving the other flags as they were: the tombstone still takes nothing.
  t.false(takesNewSlices({ ...live, isDeleted: true }), 'a deleted volume (a tombstone) with every other flag live');
});
