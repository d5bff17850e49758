import test from 'ava';
import { ChartChecker, CHART_LIMITS, normaliseEntryPath, type EntryHeader } from '../../protocols/deploy/chart-rules.js';
import { attempt, type Result } from '../../protocols/deploy/errors.js';

function message<T>(r: Result<T>): string {
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r.value)}`);
  if (r.error.status !== 400 || r.error.code !== 'BAD_CHART') throw new Error(JSON.stringify(r.error));
  return r.error.message;
}
const file = (name: string, size = 1): EntryHeader => ({ name, type: 'file', size });
const dir = (name: string): EntryHeader => ({ name, type: 'directory', size: 0 });

/** Feed headers to a fresh checker and finish. */
function check(headers: EntryHeader[], limits = CHART_LIMITS) {
  return attempt(() => {
    const c = new ChartChecker(limits);
    for (const h of headers) c.entry(h);
    return c.finish();
  });
}

test('entry paths normalise: ./ and empty components go, a trailing slash goes, the root is empty', (t) => {
  t.is(normaliseEntryPath('./mychart//templates/./a.yaml'), 'mychart/templates/a.yaml');
  t.is(normaliseEntryPath('mychart/templates/'), 'mychart/templates');
  t.is(normaliseEntryPath('./'), '');
  t.is(normaliseEntryPath('.'), '');
  t.is(normaliseEntryPath('mychart/..data'), 'mychart/..data', "'..data' is a name, not '..'");
  t.is(normaliseEntryPath('mychart/caf\u00e9'), 'mychart/caf\u00e9');
});

test('entry paths refused: empty, absolute, drive letters, .., backslash, control characters, too long, too deep', (t) => {
  const cases: [string, RegExp][] = [
    ['', /empty name/],
    ['/etc/passwd', /absolute path/],
    ['//x', /absolute path/],
    ['C:/x', /absolute path/],
    ['c:x', /absolute path/],
    ['../x', /'\.\.' component/],
    ['mychart/../../x', /'\.\.' component/],
    ['mychart/..', /'\.\.' component/],
    ['mychart\\..\\x', /backslash/],
    ['mychart/a\u0000b', /control character/],
    ['mychart/a\nb', /control character/],
    [`mychart/${'a'.repeat(1024)}`, /longer than 1024 bytes/],
    [Array.from({ length: 33 }, () => 'd').join('/'), /deeper than 32 levels/],
  ];
  for (const [name, re] of cases) t.regex(message(attempt(() => normaliseEntryPath(name))), re, JSON.stringify(name));
  t.notThrows(() => normaliseEntryPath(Array.from({ length: 32 }, () => 'd').join('/')));
});

test('a chart: the top directory and Chart.yaml directly inside it; the root entry is skipped', (t) => {
  const r = check([dir('./'), dir('./mychart/'), file('./mychart/Chart.yaml'), dir('mychart/templates/'), file('mychart/templates/a.yaml', 10)]);
  t.true(r.ok);
  if (r.ok) {
    t.is(r.value.topDir, 'mychart');
    t.deepEqual(r.value.entries.map((e) => [e.path, e.type, e.size]), [
      ['mychart', 'directory', 0],
      ['mychart/Chart.yaml', 'file', 1],
      ['mychart/templates', 'directory', 0],
      ['mychart/templates/a.yaml', 'file', 10],
    ]);
  }
  t.true(check([file('c/Chart.yaml')]).ok, 'directory entries are optional');
});

test('only files and directories', (t) => {
  const names: Record<string, string> = {
    symlink: 'a symbolic link',
    link: 'a hard link',
    'character-device': 'a character device',
    'block-device': 'a block device',
    fifo: 'a fifo',
    'contiguous-file': 'a contiguous file',
  };
  for (const [type, what] of Object.entries(names)) {
    t.is(message(check([file('c/Chart.yaml'), { name: 'c/x', type, size: 0 }])), `entry "c/x" is ${what}; only regular files and directories are allowed`);
  }
  t.is(message(check([{ name: 'c/x', type: null, size: 0 }])), 'entry "c/x" is of an unknown type; only regular files and directories are allowed');
  t.is(message(check([{ name: 'c/x', type: 'pax-header', size: 0 }])), 'entry "c/x" is of type pax-header; only regular files and directories are allowed');
});

test('layout: one top-level directory with Chart.yaml directly in it', (t) => {
  t.is(message(check([file('a/Chart.yaml'), file('b/x')])), 'the archive has more than one top-level directory ("a" and "b")');
  t.is(message(check([file('a/Chart.yaml'), dir('A')])), 'the archive has more than one top-level directory ("a" and "A")');
  t.is(message(check([file('Chart.yaml')])), 'file "Chart.yaml" is at the top level; the chart must be inside one directory');
  t.is(message(check([dir('a'), file('a/values.yaml')])), 'the archive has no Chart.yaml directly in its top-level directory "a"');
  t.is(message(check([file('a/sub/Chart.yaml')])), 'the archive has no Chart.yaml directly in its top-level directory "a"');
  t.is(message(check([dir('a/Chart.yaml')])), 'the archive has no Chart.yaml directly in its top-level directory "a"', 'a directory named Chart.yaml is not one');
  t.is(message(check([])), 'the archive has no entries');
  t.is(message(check([dir('./')])), 'the archive has no entries');
});

test('collisions: the same path twice, paths equal up to case or NFC, a file used as a directory', (t) => {
  t.is(message(check([file('c/Chart.yaml'), file('./c/Chart.yaml')])), 'entry "./c/Chart.yaml" appears more than once');
  t.is(message(check([file('c/Chart.yaml'), dir('c/t'), dir('c/t/')])), 'entry "c/t/" appears more than once');
  t.is(message(check([file('c/Chart.yaml'), file('c/chart.yaml')])), 'entries "c/Chart.yaml" and "c/chart.yaml" differ only by case or Unicode normalisation');
  t.is(message(check([file('c/Chart.yaml'), file('c/caf\u00e9'), file('c/cafe\u0301')])), 'entries "c/caf\u00e9" and "c/cafe\u0301" differ only by case or Unicode normalisation');
  t.is(message(check([file('c/Chart.yaml'), file('c/T/a'), file('c/t/b')])), 'entries "c/T" and "c/t" differ only by case or Unicode normalisation');
  t.is(message(check([file('c/Chart.yaml'), dir('c/T'), dir('c/t')])), 'entries "c/T" and "c/t" differ only by case or Unicode normalisation');
  t.is(message(check([file('c/Chart.yaml'), file('c/a'), file('c/a/b')])), 'entry "c/a/b" is inside "c/a", which is a file');
  t.is(message(check([file('c/Chart.yaml'), file('c/a/b'), file('c/a')])), 'entry "c/a" is both a file and a directory');
  t.true(check([file('c/Chart.yaml'), file('c/t/a'), dir('c/t')]).ok, 'a directory entry after its files is fine');
});

test('limits: entries, one file, all files; exactly at each limit passes', (t) => {
  const limits = { ...CHART_LIMITS, maxEntries: 3, maxFileBytes: 100, maxUnpackedBytes: 150 };
  t.true(check([dir('c'), file('c/Chart.yaml', 50), file('c/a', 100)], limits).ok);
  t.is(message(check([dir('c'), file('c/Chart.yaml'), file('c/a'), file('c/b')], limits)), 'the archive has more than 3 entries');
  t.is(message(check([file('c/Chart.yaml', 101)], limits)), 'file "c/Chart.yaml" is 101 bytes; the limit is 100 per file');
  t.is(message(check([file('c/Chart.yaml', 100), file('c/a', 51)], limits)), 'the archive unpacks to more than 150 bytes');
  t.is(message(check([file('c/Chart.yaml', -1)], limits)), 'entry "c/Chart.yaml" has an invalid size');
  t.deepEqual(
    { maxEntries: CHART_LIMITS.maxEntries, maxFileBytes: CHART_LIMITS.maxFileBytes, maxUnpackedBytes: CHART_LIMITS.maxUnpackedBytes },
    { maxEntries: 10_000, maxFileBytes: 5 * 1024 * 1024, maxUnpackedBytes: 32 * 1024 * 1024 },
  );
  t.true(CHART_LIMITS.maxInflatedBytes >= CHART_LIMITS.maxUnpackedBytes + CHART_LIMITS.maxEntries * 1024, 'every legal archive fits the inflate cap');
});

test('a .git component anywhere is refused: a chart must not carry a repository or hooks into the IaC repository', (t) => {
  t.is(message(check([file('c/Chart.yaml'), file('c/.git/hooks/post-checkout')])), `entry "c/.git/hooks/post-checkout" has a '.git' component`);
  t.is(message(check([file('c/Chart.yaml'), dir('c/sub/.GIT')])), `entry "c/sub/.GIT" has a '.git' component`);
  t.is(message(check([file('.git/Chart.yaml')])), `entry ".git/Chart.yaml" has a '.git' component`);
  t.true(check([file('c/Chart.yaml'), file('c/.gitignore'), file('c/.github/x'), file('c/x.git')]).ok);
});
