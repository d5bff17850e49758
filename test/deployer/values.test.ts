import test from 'ava';
import { attempt } from '../../protocols/deploy/errors.js';
import { parseValues } from '../../protocols/deploy/values.js';
import { refused } from './results.js';

const values = (text: string | Buffer) => parseValues(text);
const refusal = (text: string | Buffer) => {
  const e = refused(attempt(() => parseValues(text)));
  if (e.status !== 400 || e.code !== 'BAD_YAML') throw new Error(JSON.stringify(e));
  return e.message;
};

test('a values file becomes the JSON object, types kept', (t) => {
  t.deepEqual(values('replicaCount: 2\nimage:\n  repository: nginx\n  tag: "1.25"\nenabled: true\nratio: 0.5\nempty: ~\nlist: [a, 1]\n'), {
    replicaCount: 2,
    image: { repository: 'nginx', tag: '1.25' },
    enabled: true,
    ratio: 0.5,
    empty: null,
    list: ['a', 1],
  });
});

test('read as YAML 1.1, as Helm does: yes/on are booleans, 0755 is octal, merge keys merge; timestamps and binary stay strings', (t) => {
  t.deepEqual(values('a: yes\nb: off\nmode: 0755\n'), { a: true, b: false, mode: 493 });
  t.deepEqual(values('base: &b {x: 1, z: 2}\nderived:\n  <<: *b\n  z: 3\n'), { base: { x: 1, z: 2 }, derived: { x: 1, z: 3 } });
  t.deepEqual(values('when: 2001-12-14\nblob: !!binary aGVsbG8=\n'), { when: '2001-12-14', blob: 'aGVsbG8=' });
  const v = values('__proto__: {polluted: 1}\n');
  t.is(Object.getPrototypeOf(v), Object.prototype);
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

test('an empty file, only comments, or a null document give {}', (t) => {
  for (const text of ['', '\n\n', '# nothing here\n', '---\n', '~\n', 'null\n', '\uFEFF']) t.deepEqual(values(text), {}, JSON.stringify(text));
  t.deepEqual(values(Buffer.alloc(0)), {});
});

test('a list or a scalar at the top level is refused', (t) => {
  t.is(refusal('- a\n- b\n'), 'values file must be a mapping at the top level; got a list');
  t.is(refusal('just text\n'), 'values file must be a mapping at the top level; got a string');
  t.is(refusal('42\n'), 'values file must be a mapping at the top level; got a number');
  t.is(refusal('true\n'), 'values file must be a mapping at the top level; got a boolean');
});

test('malformed YAML is 400 naming the line and column', (t) => {
  t.regex(refusal('a: 1\nb: [1, 2\nc: 3\n'), /^values file is not valid YAML: line [23], column \d+: /, 'the unclosed list of line 2, found by line 3');
  t.regex(refusal('a: 1\nb: 2\nc: d: e\n'), /^values file is not valid YAML: line 3, column \d+: Nested mappings/);
  t.regex(refusal('a: 1\na: 2\n'), /^values file is not valid YAML: line 2, column 1: Map keys must be unique/);
  t.regex(refusal('a: *nowhere\n'), /^values file is not valid YAML: .*alias.*nowhere/);
  t.is(refusal('a: 1\n---\nb: 2\n'), 'values file is not valid YAML: line 2: a second document; the values file must hold one');
  t.is(refusal(Buffer.from([0x61, 0x3a, 0x20, 0xc3, 0x28])), 'values file is not valid UTF-8');
});

test('a billion-laughs alias bomb is refused quickly', (t) => {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 10; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
  const started = performance.now();
  t.is(refusal(`${lines.join('\n')}\n`), 'values file expands more than 100 aliases (a YAML alias bomb is refused)');
  t.true(performance.now() - started < 2000);
  t.deepEqual(values('a: &x 1\nb: *x\n'), { a: 1, b: 1 }, 'a few aliases are fine');
});

test('the size cap: more than 1 MiB refused before parsing', (t) => {
  const big = `a: "${'x'.repeat(1024 * 1024)}"\n`;
  t.is(refusal(big), `values file is ${Buffer.byteLength(big)} bytes; the limit is 1048576`);
  t.deepEqual(parseValues('a: 1\n', { maxBytes: 5, maxAliasCount: 100 }), { a: 1 });
  t.regex(refused(attempt(() => parseValues('a: 10\n', { maxBytes: 5, maxAliasCount: 100 }))).message, /the limit is 5$/);
});

test('nesting deeper than 64 levels (the top mapping included) is refused before composing, naming the line', (t) => {
  t.is(refusal(`a: 1\nb: ${'['.repeat(20000)}${']'.repeat(20000)}\n`), 'values file is not valid YAML: line 2: nested deeper than 64 levels');
  t.is(refusal(`a: ${'{x: '.repeat(65)}1${'}'.repeat(65)}\n`), 'values file is not valid YAML: line 1: nested deeper than 64 levels');
  t.is(refusal(`a: 1\nb:\n${'- '.repeat(20000)}x\n`), 'values file is not valid YAML: line 3: nested deeper than 64 levels', 'compact block sequences');
  t.is(refusal(Array.from({ length: 70 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')), 'values file is not valid YAML: line 65: nested deeper than 64 levels', 'indentation: the 65th mapping begins on line 65');
  t.is(refusal(`a: x"\nb: ${'['.repeat(20000)}\n`), 'values file is not valid YAML: line 2: nested deeper than 64 levels', 'a stray quote does not hide it');
  t.deepEqual(Object.keys(values(`a: ${'['.repeat(63)}${']'.repeat(63)}\n`)), ['a'], '64 levels are fine');
  t.deepEqual(values(`s: "${'['.repeat(100)}"\nq: '${'{'.repeat(100)}'\n# ${'['.repeat(100)}\n`), { s: '['.repeat(100), q: '{'.repeat(100) });
});
