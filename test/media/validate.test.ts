/**
 * The parameter validator of the command table (protocols/media/validate.ts) on its own: unknown
 * keys, the order fields are checked in, message cutting, how optional/nullable/required
 * compose, arrays and UUIDs. The table built on it is tested in commands.test.ts.
 */
import test from 'ava';
import { arrayOf, checkParams, nullable, number, oneOf, optional, required, string, uuid } from '../../protocols/media/validate.js';

type Params = Record<string, unknown>;

test('checkParams refuses unknown keys, also those named like Object.prototype members', (t) => {
  const shape = { a: optional(string(), undefined) };
  t.deepEqual(checkParams(shape, { a: 'x' }), { ok: true, value: { a: 'x' } });
  for (const key of ['b', 'toString', 'constructor', 'valueOf', 'isPrototypeOf', '__proto__', '__defineGetter__']) {
    const params = JSON.parse(`{"${key}": 1}`) as Params;
    const r = checkParams(shape, params);
    t.false(r.ok, key);
    if (!r.ok) t.is(r.error, `unknown parameter ${key} (this command takes a)`);
  }
  const none = checkParams({}, { a: 1 });
  t.deepEqual(none, { ok: false, error: 'unknown parameter a (this command takes none)' });
});

test('the first failing field is reported; fields are checked in the shape’s order', (t) => {
  const shape = { first: required(string()), second: required(string()) };
  t.deepEqual(checkParams(shape, {}), { ok: false, error: 'first is required' });
  t.deepEqual(checkParams(shape, { first: 'x' }), { ok: false, error: 'second is required' });
  t.deepEqual(checkParams(shape, { second: 1, first: 2 }), { ok: false, error: 'first must be a string; got number 2' });
});

test('long strings are cut in messages; optional/nullable/required compose', (t) => {
  const r = oneOf(['a', 'b'])('y'.repeat(100), 'f');
  t.deepEqual(r, { ok: false, error: `f must be one of a, b; got "${'y'.repeat(40)}…"` });
  const maybeCount = optional(nullable(number({ min: 1, max: 10, integer: true })), null);
  t.deepEqual(maybeCount(undefined, 'n'), { ok: true, value: null });
  t.deepEqual(maybeCount(null, 'n'), { ok: true, value: null });
  t.deepEqual(maybeCount(10, 'n'), { ok: true, value: 10 });
  t.deepEqual(maybeCount(11, 'n'), { ok: false, error: 'n must be between 1 and 10; got 11' });
  t.deepEqual(required(nullable(string()))(null, 's'), { ok: true, value: null });
  t.deepEqual(required(nullable(string()))(undefined, 's'), { ok: false, error: 's is required' });
  t.deepEqual(number({ min: 0, max: 1 })(Number.NaN, 'x'), { ok: false, error: 'x must be a number; got number NaN' });
  t.deepEqual(number({ min: 0, max: 1 })(Number.POSITIVE_INFINITY, 'x'), { ok: false, error: 'x must be a number; got number Infinity' });
});

test('arrayOf names the index of a bad item and the repeated value; max is enforced', (t) => {
  const list = arrayOf(oneOf(['p', 'q', 'r']), { min: 2, max: 3, unique: true });
  t.deepEqual(list(['p', 'q'], 'l'), { ok: true, value: ['p', 'q'] });
  t.deepEqual(list(['p'], 'l'), { ok: false, error: 'l must have at least 2 items' });
  t.deepEqual(list(['p', 'q', 'r', 'p'], 'l'), { ok: false, error: 'l must have at most 3 items' });
  t.deepEqual(list(['p', 'x'], 'l'), { ok: false, error: 'l[1] must be one of p, q, r; got "x"' });
  t.deepEqual(list(['r', 'r'], 'l'), { ok: false, error: 'l lists "r" twice' });
  t.deepEqual(arrayOf(string())(['r', 'r'], 'l'), { ok: true, value: ['r', 'r'] });
});

test('uuid accepts any-case RFC 4122 text and returns it in lower case', (t) => {
  t.deepEqual(uuid('00000000-0000-0000-0000-000000000000', 'u'), { ok: true, value: '00000000-0000-0000-0000-000000000000' });
  t.deepEqual(uuid('ABCDEF01-2345-6789-ABCD-EF0123456789', 'u'), { ok: true, value: 'abcdef01-2345-6789-abcd-ef0123456789' });
  t.false(uuid('ABCDEF01-2345-6789-ABCD-EF012345678', 'u').ok);
  t.false(uuid('ABCDEF0123-45-6789-ABCD-EF0123456789', 'u').ok);
});
