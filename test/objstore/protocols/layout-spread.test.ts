/**
 * The write-layout rules a PUT follows (protocols/objstore/layout.ts): writeLayout (the scheme for
 * the writable volumes, and the refusal below two on a fleet of several), spreadVolumes (small
 * objects drawn at random weighted by free space) and placeSlices (which objects spread).
 */
import test from 'ava';
import { placeSlices, schemeFor, spreadVolumes, writeLayout } from '../../../protocols/objstore/layout.js';
import { prng as seeded } from '../../helpers/prng.js';

const six = [1, 2, 3, 4, 5, 6].map((id) => ({ id, bytesFree: 1000 }));

test('writeLayout: the scheme of the writable volumes; never without parity on a fleet of several', (t) => {
  t.deepEqual(writeLayout(1 << 20, 6, 6), { k: 4, m: 2 });
  t.deepEqual(writeLayout(1 << 20, 4, 6), schemeFor(1 << 20, 4), 'two volumes lost: the layout of the four left');
  t.deepEqual(writeLayout(100, 2, 6), { k: 1, m: 1 }, 'two left: one data, one parity');
  t.deepEqual(writeLayout(1 << 20, 1, 1), { k: 1, m: 0 }, 'a fleet of one volume writes without parity (its operator chose it)');
  const one = writeLayout(1 << 20, 1, 6);
  t.true('refuse' in one);
  if ('refuse' in one) t.regex(one.refuse, /only 1 of the 6 volumes takes new slices.*never stored without a parity slice/);
  const none = writeLayout(10, 0, 3);
  t.deepEqual(none, { refuse: 'no volume takes new slices' });
});

test('writeLayout: for any fleet, the layout has parity whenever two or more volumes take slices', (t) => {
  for (let registered = 1; registered <= 14; registered++) {
    for (let writable = 0; writable <= registered; writable++) {
      for (const size of [0, 1, 4096, 8193, 5 << 20]) {
        const l = writeLayout(size, writable, registered);
        if (writable >= 2) {
          if ('refuse' in l) return t.fail(`${size} B, ${writable}/${registered}: refused`);
          t.true(l.m >= 1 && l.k + l.m <= writable, `${size} B, ${writable}/${registered}: ${l.k}+${l.m}`);
        } else if (writable === 1 && registered === 1) t.deepEqual(l, { k: 1, m: 0 });
        else t.true('refuse' in l, `${size} B, ${writable}/${registered}`);
      }
    }
  }
});

test('writeLayout: bad counts are RangeErrors', (t) => {
  for (const bad of [-1, 1.5, NaN]) {
    t.throws(() => writeLayout(10, 2, bad), { instanceOf: RangeError });
    t.throws(() => writeLayout(10, bad, 3), { instanceOf: RangeError });
  }
  t.throws(() => writeLayout(-5, 2, 3), { instanceOf: RangeError });
});

test('spreadVolumes: distinct volumes, the count asked; null when too few', (t) => {
  const rand = seeded(1);
  for (let n = 0; n <= 6; n++) {
    const got = spreadVolumes(six, n, rand)!;
    t.is(got.length, n);
    t.is(new Set(got).size, n);
    for (const id of got) t.true(id >= 1 && id <= 6);
  }
  t.is(spreadVolumes(six, 7, rand), null);
  t.deepEqual(spreadVolumes([{ id: 3, bytesFree: 5 }, { id: 3, bytesFree: 9 }], 1, rand), [3], 'a volume listed twice counts once');
  t.is(spreadVolumes([{ id: 3, bytesFree: 5 }, { id: 3, bytesFree: 9 }], 2, rand), null);
});

test('spreadVolumes: equal free space spreads evenly over every volume', (t) => {
  const rand = seeded(42);
  const hits = new Map<number, number>();
  const N = 6000;
  for (let i = 0; i < N; i++) for (const id of spreadVolumes(six, 3, rand)!) hits.set(id, (hits.get(id) ?? 0) + 1);
  // each volume is in half the triples: 3000 expected
  for (const id of [1, 2, 3, 4, 5, 6]) t.true(Math.abs(hits.get(id)! - N / 2) < N * 0.05, `volume ${id}: ${hits.get(id)}`);
});

test('spreadVolumes: weighted by free space; a full volume is never drawn while others have room', (t) => {
  const rand = seeded(7);
  const vols = [
    { id: 1, bytesFree: 3000 },
    { id: 2, bytesFree: 1000 },
    { id: 3, bytesFree: 0 },
  ];
  const first = new Map<number, number>();
  const N = 8000;
  for (let i = 0; i < N; i++) {
    const [a] = spreadVolumes(vols, 1, rand)!;
    first.set(a!, (first.get(a!) ?? 0) + 1);
  }
  t.true(Math.abs(first.get(1)! / N - 0.75) < 0.03, `three times the room, three times as often: ${first.get(1)}`);
  t.is(first.get(3), undefined, 'no room, never drawn');
  // all without room: equally likely, still distinct
  const empty = [1, 2, 3].map((id) => ({ id, bytesFree: 0 }));
  t.deepEqual(spreadVolumes(empty, 3, rand)!.sort(), [1, 2, 3]);
  // a negative free figure counts as none
  t.deepEqual(spreadVolumes([{ id: 1, bytesFree: -50 }, { id: 2, bytesFree: 10 }], 1, () => 0.99), [2]);
});

test('spreadVolumes: the same draws give the same volumes (pure), the input is not modified', (t) => {
  const input = six.map((v) => ({ ...v }));
  const a = spreadVolumes(input, 3, seeded(9));
  const b = spreadVolumes(input, 3, seeded(9));
  t.deepEqual(a, b);
  t.deepEqual(input, six);
});

test('spreadVolumes: bad input is refused with what was wrong', (t) => {
  t.throws(() => spreadVolumes(six, -1, Math.random), { instanceOf: RangeError, message: /volume count/ });
  t.throws(() => spreadVolumes([{ id: 1.5, bytesFree: 1 }], 1, Math.random), { instanceOf: TypeError, message: /volume id/ });
  t.throws(() => spreadVolumes([{ id: 1, bytesFree: NaN }], 1, Math.random), { instanceOf: TypeError, message: /bytesFree/ });
  t.throws(() => spreadVolumes(six, 2, () => 1), { instanceOf: RangeError, message: /rand must return/ });
  t.throws(() => spreadVolumes(six, 2, () => -0.1), { instanceOf: RangeError });
});

test('placeSlices: small objects spread over the fleet, larger ones take the most free volumes', (t) => {
  const vols = [
    { id: 1, bytesFree: 900 },
    { id: 2, bytesFree: 1000 },
    { id: 3, bytesFree: 950 },
    { id: 4, bytesFree: 980 },
    { id: 5, bytesFree: 990 },
    { id: 6, bytesFree: 970 },
    { id: 7, bytesFree: 960 },
  ];
  const rand = seeded(3);
  const seen = new Set<string>();
  const used = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const got = placeSlices(vols, { k: 1, m: 2 }, rand)!;
    seen.add(got.join(','));
    for (const v of got) used.add(v);
  }
  t.is(used.size, 7, 'every volume takes small objects');
  t.true(seen.size > 20, `not always the same three (${seen.size} placements)`);
  t.deepEqual(placeSlices(vols, { k: 4, m: 2 }, rand), [2, 5, 4, 6, 7, 3], 'a larger object: the most free first');
  t.deepEqual(placeSlices(vols, { k: 1, m: 0 }, rand), [2], 'one slice without parity: the most free');
  t.is(placeSlices(vols.slice(0, 2), { k: 1, m: 2 }, rand), null);
});
