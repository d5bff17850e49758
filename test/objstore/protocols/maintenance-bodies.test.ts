/** protocols/objstore/maintenance.ts, part 1: purity, constants and the request bodies of the maintenance endpoints. */
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import {
  BodyError,
  DAY_MS,
  DEFAULT_DEADBAND,
  DEFAULT_REBALANCE_CONCURRENCY,
  DEFAULT_SCRUB_INTERVAL_DAYS,
  MAX_CONCURRENCY,
  MAX_DEADBAND,
  NO_ERRORS,
  ZERO_REBALANCE_COUNTERS,
  parseAcceptLoss,
  parseEmpty,
  parseRebalanceStart,
  parseRebalanceTune,
  parseVerifyStart,
} from '../../../protocols/objstore/maintenance.js';


/** Asserts `fn` throws a BodyError with this code, whose message contains every `mentions`. */
function refuses(t: ExecutionContext, fn: () => unknown, code: string, mentions: string[] = [], what = ''): void {
  const err = t.throws(fn, { instanceOf: BodyError }, what);
  if (!err) return;
  t.is((err as BodyError).code, code, what);
  for (const m of mentions) t.true(err.message.includes(m), `${what}: message ${JSON.stringify(err.message)} names ${m}`);
}

// ------------------------------------------------------------------ purity, constants

test('the module is pure: it imports nothing outside protocols/, and uses no timers, clock, randomness, fs or process', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/maintenance.js', import.meta.url), 'utf8');
  const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\bimport\s+['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2] ?? m[3]);
  // siblings (./x.js) or other protocol families (../family/x.js), nothing else
  for (const i of imports) t.regex(i as string, /^(\.\/|\.\.\/[\w-]+\/)[\w-]+\.js$/);
  t.notRegex(src, /\brequire\s*\(/);
  t.notRegex(src, /['"]node:|['"](fs|fs\/promises|child_process|os|path)['"]/);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|new Date\b|Math\.random|process\./);
});

test('constants: the limits and defaults of the spec and the brief', (t) => {
  t.is(MAX_CONCURRENCY, 64);
  t.is(MAX_DEADBAND, 0.5);
  t.is(DEFAULT_DEADBAND, 0.05);
  t.is(DEFAULT_REBALANCE_CONCURRENCY, 2);
  t.is(DEFAULT_SCRUB_INTERVAL_DAYS, 90, 'spec: a scrub runs every 90 days by default');
  t.is(DAY_MS, 86_400_000);
});

test('NO_ERRORS and ZERO_REBALANCE_COUNTERS: every counter, at zero', (t) => {
  t.deepEqual(NO_ERRORS, { missing: 0, badHeader: 0, checksum: 0, unreadable: 0, timeout: 0, parityMismatch: 0, md5Mismatch: 0 });
  // the spec's counters of GET /$/rebalance
  t.deepEqual(ZERO_REBALANCE_COUNTERS, { moves: 0, copied: 0, reconstructed: 0, noDest: 0, unrecoverable: 0, sourceDeleteFailed: 0, duplicateRefs: 0 });
});

test('BodyError: an Error with a code, a name and the message', (t) => {
  const e = new BodyError('INVALID_FIELD', 'bad thing');
  t.true(e instanceof Error);
  t.is(e.code, 'INVALID_FIELD');
  t.is(e.name, 'BodyError');
  t.is(e.message, 'bad thing');
});

// ------------------------------------------------------------------ parseRebalanceStart

test('parseRebalanceStart: defaults are deadband 0.05, concurrency 2, maxMoves null', (t) => {
  t.deepEqual(parseRebalanceStart({}), { deadband: 0.05, maxMoves: null, concurrency: 2 });
  t.deepEqual(parseRebalanceStart({ maxMoves: null }), { deadband: 0.05, maxMoves: null, concurrency: 2 }, 'maxMoves null: no limit');
  t.deepEqual(parseRebalanceStart({ deadband: 0.1, maxMoves: 7, concurrency: 5 }), { deadband: 0.1, maxMoves: 7, concurrency: 5 });
  t.deepEqual(parseRebalanceStart({ concurrency: 9 }), { deadband: 0.05, maxMoves: null, concurrency: 9 });
  t.deepEqual(parseRebalanceStart({ deadband: 0 }), { deadband: 0, maxMoves: null, concurrency: 2 });
});

test('parseRebalanceStart: deadband is a number from 0 to 0.5 inclusive', (t) => {
  for (const d of [0, 0.0001, 0.05, 0.25, 0.4999, 0.5]) t.is(parseRebalanceStart({ deadband: d }).deadband, d, `${d}`);
  for (const d of [-0.0001, -1, 0.5000001, 0.51, 1, 2, NaN, Infinity, -Infinity, '0.1', '', true, false, null, {}, [], [0.1]]) {
    refuses(t, () => parseRebalanceStart({ deadband: d }), 'INVALID_FIELD', ['deadband'], `deadband ${String(d)}`);
  }
});

test('parseRebalanceStart: concurrency is an integer from 1 to 64', (t) => {
  for (const c of [1, 2, 33, 63, 64]) t.is(parseRebalanceStart({ concurrency: c }).concurrency, c, `${c}`);
  for (const c of [0, -1, 65, 1000, 1.5, 63.9, NaN, Infinity, -Infinity, '2', '', true, false, null, {}, [2]]) {
    refuses(t, () => parseRebalanceStart({ concurrency: c }), 'INVALID_FIELD', ['concurrency'], `concurrency ${String(c)}`);
  }
});

test('parseRebalanceStart: maxMoves is a positive integer, or null for no limit', (t) => {
  for (const m of [1, 2, 1000, Number.MAX_SAFE_INTEGER]) t.is(parseRebalanceStart({ maxMoves: m }).maxMoves, m, `${m}`);
  for (const m of [0, -1, -0.5, 1.5, NaN, Infinity, -Infinity, 2 ** 53, '5', '', true, false, {}, [3]]) {
    refuses(t, () => parseRebalanceStart({ maxMoves: m }), 'INVALID_FIELD', ['maxMoves'], `maxMoves ${String(m)}`);
  }
});

test('parseRebalanceStart: unknown fields are refused and named in the message', (t) => {
  refuses(t, () => parseRebalanceStart({ foo: 1 }), 'UNKNOWN_FIELD', ['foo']);
  refuses(t, () => parseRebalanceStart({ deadBand: 0.1, concurrency: 2, bogus: true }), 'UNKNOWN_FIELD', ['deadBand', 'bogus']);
  // a valid field does not save a body with an unknown one
  refuses(t, () => parseRebalanceStart({ deadband: 0.1, max_moves: 3 }), 'UNKNOWN_FIELD', ['max_moves']);
  // the message does not name known fields as unknown
  const err = t.throws(() => parseRebalanceStart({ deadband: 0.1, x: 1 }));
  t.regex(err?.message ?? '', /unknown field\(s\): x\b/);
});

// ------------------------------------------------------------------ parseRebalanceTune

test('parseRebalanceTune: concurrency is required, an integer from 1 to 64', (t) => {
  for (const c of [1, 8, 64]) t.deepEqual(parseRebalanceTune({ concurrency: c }), { concurrency: c });
  refuses(t, () => parseRebalanceTune({}), 'MISSING_FIELD', ['concurrency']);
  for (const c of [0, 65, -3, 2.5, NaN, Infinity, '8', true, null, []]) {
    refuses(t, () => parseRebalanceTune({ concurrency: c }), 'INVALID_FIELD', ['concurrency'], `concurrency ${String(c)}`);
  }
});

test('parseRebalanceTune: only concurrency can be retuned; other fields are refused by name', (t) => {
  refuses(t, () => parseRebalanceTune({ concurrency: 4, deadband: 0.1 }), 'UNKNOWN_FIELD', ['deadband']);
  refuses(t, () => parseRebalanceTune({ maxMoves: 10 }), 'UNKNOWN_FIELD', ['maxMoves']);
});

// ------------------------------------------------------------------ parseVerifyStart

test('parseVerifyStart: mode defaults to full; the whole fleet when volumeIds is omitted', (t) => {
  t.deepEqual(parseVerifyStart({}), { volumeIds: null, mode: 'full' });
  t.deepEqual(parseVerifyStart({ mode: 'light' }), { volumeIds: null, mode: 'light' });
  t.deepEqual(parseVerifyStart({ mode: 'full' }), { volumeIds: null, mode: 'full' });
  t.deepEqual(parseVerifyStart({ volumeIds: null }), { volumeIds: null, mode: 'full' });
});

test('parseVerifyStart: mode is light or full only', (t) => {
  for (const m of ['LIGHT', 'Full', 'quick', 'deep', '', ' full', 0, 1, true, {}, ['full']]) {
    refuses(t, () => parseVerifyStart({ mode: m }), 'INVALID_FIELD', ['mode'], `mode ${JSON.stringify(m)}`);
  }
});

test('parseVerifyStart: volumeIds are positive integers, deduplicated and sorted numerically', (t) => {
  t.deepEqual(parseVerifyStart({ volumeIds: [3] }), { volumeIds: [3], mode: 'full' });
  t.deepEqual(parseVerifyStart({ volumeIds: [3, 1, 3, 2, 1], mode: 'light' }), { volumeIds: [1, 2, 3], mode: 'light' });
  t.deepEqual(parseVerifyStart({ volumeIds: [100, 9, 10] }).volumeIds, [9, 10, 100], 'numeric order, not string order');
  const input = [5, 4, 5];
  parseVerifyStart({ volumeIds: input });
  t.deepEqual(input, [5, 4, 5], 'the body is not mutated');
});

test('parseVerifyStart: an empty, non-array or non-integer volumeIds is refused', (t) => {
  refuses(t, () => parseVerifyStart({ volumeIds: [] }), 'INVALID_FIELD', ['volumeIds']);
  for (const v of [5, '1,2', {}, true, { 0: 1 }]) refuses(t, () => parseVerifyStart({ volumeIds: v }), 'INVALID_FIELD', ['volumeIds'], `volumeIds ${JSON.stringify(v)}`);
  for (const bad of [0, -1, 1.5, NaN, Infinity, '1', null, true, [1], 2 ** 53]) {
    refuses(t, () => parseVerifyStart({ volumeIds: [1, bad] }), 'INVALID_FIELD', ['volumeIds'], `element ${String(bad)}`);
  }
});

test('parseVerifyStart: unknown fields are refused and named', (t) => {
  refuses(t, () => parseVerifyStart({ volumes: [1] }), 'UNKNOWN_FIELD', ['volumes']);
  refuses(t, () => parseVerifyStart({ mode: 'full', deep: true, volumeId: 3 }), 'UNKNOWN_FIELD', ['deep', 'volumeId']);
});

// ------------------------------------------------------------------ parseEmpty, parseAcceptLoss

test('parseEmpty: {} passes; any field is refused, named, with what the body was for', (t) => {
  t.is(parseEmpty({}, 'drain'), undefined);
  refuses(t, () => parseEmpty({ force: true }, 'drain'), 'UNKNOWN_FIELD', ['force', 'drain']);
  refuses(t, () => parseEmpty({ a: 1, b: 2 }, 'drain cancel'), 'UNKNOWN_FIELD', ['a', 'b', 'drain cancel']);
  refuses(t, () => parseEmpty({ x: undefined }, 'drain'), 'UNKNOWN_FIELD', ['x'], 'a key with an undefined value is still a field');
});

const OID = '$018cc251f400deadbeef0001';

test('parseAcceptLoss: an object id, an optional slice index and an optional comment', (t) => {
  t.deepEqual(parseAcceptLoss({ objectId: OID }), { objectId: OID, sliceIndex: null, comment: '' });
  t.deepEqual(parseAcceptLoss({ objectId: OID, sliceIndex: 0 }), { objectId: OID, sliceIndex: 0, comment: '' });
  t.deepEqual(parseAcceptLoss({ objectId: OID, sliceIndex: 63, comment: 'disk died' }), { objectId: OID, sliceIndex: 63, comment: 'disk died' });
  t.deepEqual(parseAcceptLoss({ objectId: OID, sliceIndex: null }), { objectId: OID, sliceIndex: null, comment: '' });
  t.is(parseAcceptLoss({ objectId: '$018CC251F400DEADBEEF0001' }).objectId, OID, 'upper-case hex is normalised to lower case');
  t.is(parseAcceptLoss({ objectId: OID, comment: 'x'.repeat(1024) }).comment.length, 1024);
});

test('parseAcceptLoss: bad object ids, slice indexes and comments are refused', (t) => {
  for (const id of [undefined, null, 5, '', '018cc251f400deadbeef0001', '$018cc251f400deadbeef000', '$018cc251f400deadbeef00011', '$018cc251f400deadbeef000g', '$$18cc251f400deadbeef0001', ` ${OID}`, `${OID}\n`, [OID]]) {
    refuses(t, () => parseAcceptLoss({ objectId: id }), 'INVALID_FIELD', ['objectId'], `objectId ${JSON.stringify(id)}`);
  }
  for (const i of [-1, 64, 1.5, NaN, Infinity, '1', true, [0]]) {
    refuses(t, () => parseAcceptLoss({ objectId: OID, sliceIndex: i }), 'INVALID_FIELD', ['sliceIndex'], `sliceIndex ${String(i)}`);
  }
  for (const c of ['x'.repeat(1025), 5, null, true, ['a']]) {
    refuses(t, () => parseAcceptLoss({ objectId: OID, comment: c }), 'INVALID_FIELD', ['comment'], `comment ${typeof c}`);
  }
  refuses(t, () => parseAcceptLoss({ objectId: OID, volumeId: 3 }), 'UNKNOWN_FIELD', ['volumeId']);
});
