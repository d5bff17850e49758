import test from 'ava';
import { readFileSync } from 'node:fs';
import { contentRange, parseRange, unsatisfiedRange, type RangeResult } from '../../../protocols/objstore/range.js';

function reason(r: RangeResult): string {
  if (r.kind !== 'unsatisfiable') throw new Error(`expected unsatisfiable, got ${JSON.stringify(r)}`);
  return r.reason;
}

test('the module is pure: no imports, no timers', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/range.js', import.meta.url), 'utf8');
  t.notRegex(src, /\bfrom\s+['"]|\bimport\s*\(|require\(/);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|Math\.random|process\./);
});

test('no header, or an empty one, is the full object', (t) => {
  t.deepEqual(parseRange(undefined, 100), { kind: 'full' });
  t.deepEqual(parseRange('', 100), { kind: 'full' });
  t.deepEqual(parseRange(undefined, 0), { kind: 'full' });
  t.deepEqual(parseRange('', 0), { kind: 'full' });
  t.deepEqual(parseRange('  ', 10), { kind: 'full' }, 'whitespace only is an empty field value');
});

test('bytes=a-b is the inclusive range a..b', (t) => {
  t.deepEqual(parseRange('bytes=0-0', 100), { kind: 'partial', start: 0, end: 0 });
  t.deepEqual(parseRange('bytes=0-99', 100), { kind: 'partial', start: 0, end: 99 });
  t.deepEqual(parseRange('bytes=10-19', 100), { kind: 'partial', start: 10, end: 19 });
  t.deepEqual(parseRange('bytes=99-99', 100), { kind: 'partial', start: 99, end: 99 });
  t.deepEqual(parseRange('bytes=0-0', 1), { kind: 'partial', start: 0, end: 0 });
});

test('bytes=a- runs to the end', (t) => {
  t.deepEqual(parseRange('bytes=0-', 100), { kind: 'partial', start: 0, end: 99 });
  t.deepEqual(parseRange('bytes=42-', 100), { kind: 'partial', start: 42, end: 99 });
  t.deepEqual(parseRange('bytes=99-', 100), { kind: 'partial', start: 99, end: 99 });
  t.deepEqual(parseRange('bytes=0-', 1), { kind: 'partial', start: 0, end: 0 });
});

test('an end at or past the size is clamped to size - 1', (t) => {
  t.deepEqual(parseRange('bytes=0-100', 100), { kind: 'partial', start: 0, end: 99 });
  t.deepEqual(parseRange('bytes=50-1000000', 100), { kind: 'partial', start: 50, end: 99 });
  t.deepEqual(parseRange('bytes=0-9007199254740991', 10), { kind: 'partial', start: 0, end: 9 });
});

test('the unit is case-insensitive; leading zeros are fine; surrounding whitespace is not part of the value', (t) => {
  for (const unit of ['bytes', 'BYTES', 'Bytes', 'bYtEs']) t.deepEqual(parseRange(`${unit}=1-2`, 10), { kind: 'partial', start: 1, end: 2 }, unit);
  t.deepEqual(parseRange('bytes=007-0009', 100), { kind: 'partial', start: 7, end: 9 });
  t.deepEqual(parseRange('bytes=00000000000000000000000000001-', 100), { kind: 'partial', start: 1, end: 99 });
  t.deepEqual(parseRange(' bytes=1-2\t', 10), { kind: 'partial', start: 1, end: 2 });
});

test('multiple ranges are unsatisfiable: "multiple ranges"', (t) => {
  for (const h of ['bytes=0-1,2-3', 'bytes=0-1, 2-3', 'bytes=0-1,', 'bytes=,0-1', 'bytes=0-0,-1', ',', 'bytes=-1,0-0', 'items=0-1,2-3']) {
    t.regex(reason(parseRange(h, 100)), /multiple ranges/, h);
  }
});

test('suffix ranges are unsatisfiable: "suffix"', (t) => {
  for (const h of ['bytes=-1', 'bytes=-100', 'bytes=-0', 'BYTES=-5', 'bytes=-9999999999999999999999']) {
    t.regex(reason(parseRange(h, 100)), /suffix/, h);
  }
});

test('other units are unsatisfiable, naming the unit', (t) => {
  t.regex(reason(parseRange('items=0-1', 100)), /unit "items"/);
  t.regex(reason(parseRange('bits=0-1', 100)), /unit "bits"/);
  t.regex(reason(parseRange('byte=0-1', 100)), /unit "byte"/);
  t.regex(reason(parseRange('bytess=0-1', 100)), /unit "bytess"/);
  t.regex(reason(parseRange('=0-1', 100)), /unit ""/);
  t.regex(reason(parseRange('bytes =0-1', 100)), /unit "bytes "/, 'no space before =');
});

test('malformed ranges are unsatisfiable: "malformed"', (t) => {
  const bad = [
    'bytes',
    'bytes=',
    'bytes=-',
    'bytes=0',
    'bytes=a-b',
    'bytes=1-b',
    'bytes=0x10-20',
    'bytes=1e3-',
    'bytes=1.5-2',
    'bytes=+1-2',
    'bytes=1--2',
    'bytes=1-2-3',
    'bytes==0-1',
    'bytes= 0-1',
    'bytes=0 -1',
    'bytes=0- 1',
    'bytes=0-1 x',
    'bytes=٠-١', // Arabic-Indic digits
    'bytes=１-２', // fullwidth digits
    'bytes=0-1;x',
    '0-1',
    'bytes:0-1',
  ];
  for (const h of bad) t.regex(reason(parseRange(h, 100)), /malformed/, h);
});

test('a start past 2^53-1 is unsatisfiable; an end of any size is clamped to the last byte (RFC 9110 §14.1.2, issue 21 item 10)', (t) => {
  t.regex(reason(parseRange('bytes=9007199254740992-', 100)), /start "9007199254740992" is too large/);
  t.deepEqual(parseRange('bytes=0-9007199254740992', 100), { kind: 'partial', start: 0, end: 99 });
  t.deepEqual(parseRange('bytes=0-' + '9'.repeat(400), 100), { kind: 'partial', start: 0, end: 99 });
  t.deepEqual(parseRange('bytes=7-' + '9'.repeat(30), 8), { kind: 'partial', start: 7, end: 7 });
  t.regex(reason(parseRange('bytes=' + '1'.repeat(30) + '-', 100)), /start .* too large/);
  // 2^53 - 1 is fine (as an end; as a start it is past the object)
  t.deepEqual(parseRange('bytes=1-9007199254740991', 100), { kind: 'partial', start: 1, end: 99 });
  t.regex(reason(parseRange('bytes=9007199254740991-', 100)), /beyond the end/);
});

test('start after end is unsatisfiable', (t) => {
  t.regex(reason(parseRange('bytes=5-4', 100)), /start 5 is after its end 4/);
  t.regex(reason(parseRange('bytes=1-0', 100)), /after its end/);
  t.regex(reason(parseRange('bytes=200-100', 100)), /after its end/);
});

test('a start at or past the size is unsatisfiable; so is every range of an empty object', (t) => {
  t.regex(reason(parseRange('bytes=100-', 100)), /start 100 is at or beyond the end of the 100-byte object/);
  t.regex(reason(parseRange('bytes=100-200', 100)), /beyond the end/);
  t.regex(reason(parseRange('bytes=101-', 100)), /beyond the end/);
  for (const h of ['bytes=0-', 'bytes=0-0', 'bytes=0-100']) t.regex(reason(parseRange(h, 0)), /0-byte object/, h);
});

test('a long bad header is quoted shortened in the reason', (t) => {
  const r = reason(parseRange('bytes=' + 'x'.repeat(10_000), 100));
  t.true(r.length < 300, r);
});

test('exhaustively for small sizes: every bytes=a-b and bytes=a- agrees with the rules', (t) => {
  for (let size = 0; size <= 12; size++) {
    for (let a = 0; a <= 14; a++) {
      const open = parseRange(`bytes=${a}-`, size);
      if (a < size) t.deepEqual(open, { kind: 'partial', start: a, end: size - 1 });
      else t.is(open.kind, 'unsatisfiable');
      for (let b = 0; b <= 14; b++) {
        const r = parseRange(`bytes=${a}-${b}`, size);
        if (a > b || a >= size) t.is(r.kind, 'unsatisfiable', `${a}-${b}/${size}`);
        else t.deepEqual(r, { kind: 'partial', start: a, end: Math.min(b, size - 1) }, `${a}-${b}/${size}`);
      }
    }
  }
});

test('a size that is not a non-negative safe integer is a programming error', (t) => {
  for (const size of [-1, 1.5, NaN, Infinity, 2 ** 53]) {
    t.throws(() => parseRange('bytes=0-1', size), { instanceOf: RangeError }, String(size));
    t.throws(() => unsatisfiedRange(size), { instanceOf: RangeError }, String(size));
  }
});

test('contentRange and unsatisfiedRange', (t) => {
  t.is(contentRange(0, 0, 1), 'bytes 0-0/1');
  t.is(contentRange(10, 19, 100), 'bytes 10-19/100');
  t.is(contentRange(0, 9007199254740990, 9007199254740991), 'bytes 0-9007199254740990/9007199254740991');
  t.is(unsatisfiedRange(0), 'bytes */0');
  t.is(unsatisfiedRange(100), 'bytes */100');
  const r = parseRange('bytes=5-', 8);
  if (r.kind !== 'partial') return t.fail();
  t.is(contentRange(r.start, r.end, 8), 'bytes 5-7/8');
  for (const [s, e, n] of [[5, 4, 10], [0, 10, 10], [-1, 3, 10], [0, 0, 0], [1.5, 2, 10], [0, NaN, 10]] as const) {
    t.throws(() => contentRange(s, e, n), { instanceOf: RangeError }, `${s}-${e}/${n}`);
  }
});
