import test from 'ava';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { readChart, type ReadChartResult } from '../../actors/deployer/chart-reader.js';
import { CHART_LIMITS } from '../../protocols/deploy/chart-rules.js';
import { tempDir } from '../helpers/util.js';
import { CHART_YAML, gzip, gzipBomb, rawTar, tarGz, writeTree } from './tarballs.js';

const GOOD = {
  'mychart/Chart.yaml': CHART_YAML,
  'mychart/values.yaml': 'replicaCount: 2\n',
  'mychart/templates/deployment.yaml': 'kind: Deployment\n',
};

function refusal(r: ReadChartResult): string {
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r.value.entries.map((e) => e.path))}`);
  if (r.error.status !== 400 || r.error.code !== 'BAD_CHART') throw new Error(`unexpected refusal ${JSON.stringify(r.error)}`);
  return r.error.message;
}

/** The files under dir, so a test can show that reading wrote nothing. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

test('a good chart made by tar: every entry under one directory, Chart.yaml found, contents kept on request', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, GOOD);
  const tgz = tarGz(dir, join(dir, 'c.tgz'), ['mychart']);
  const r = await readChart(tgz, { keepContents: true });
  if (!r.ok) return t.fail(r.error.message);
  t.is(r.value.topDir, 'mychart');
  const files = r.value.entries.filter((e) => e.type === 'file');
  t.deepEqual(files.map((e) => e.path).sort(), ['mychart/Chart.yaml', 'mychart/templates/deployment.yaml', 'mychart/values.yaml']);
  t.is(files.find((e) => e.path === 'mychart/values.yaml')?.data?.toString(), 'replicaCount: 2\n');
  t.deepEqual(r.value.entries.filter((e) => e.type === 'directory').map((e) => e.path).sort(), ['mychart', 'mychart/templates']);
  t.is(r.stats.compressedBytes, statSync(tgz).size);
  const plain = await readChart(readFileSync(tgz));
  t.true(plain.ok);
  t.is(plain.ok ? plain.value.entries.find((e) => e.type === 'file')?.data : 'x', undefined, 'no bytes unless asked');
});

test('tar -C dir . gives ./mychart/… entries and a ./ root entry: accepted, paths normalised', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { 'src/mychart/Chart.yaml': CHART_YAML });
  const r = await readChart(tarGz(join(dir, 'src'), join(dir, 'c.tgz'), ['.']));
  if (!r.ok) return t.fail(r.error.message);
  t.deepEqual(r.value.entries.map((e) => e.path), ['mychart', 'mychart/Chart.yaml']);
});

test('PAX and GNU long names are read whole', async (t) => {
  const dir = tempDir(t);
  const long = `mychart/templates/${'d'.repeat(120)}/${'f'.repeat(120)}.yaml`;
  writeTree(dir, { 'mychart/Chart.yaml': CHART_YAML, [long]: 'x: 1\n' });
  for (const format of ['pax', 'gnu']) {
    const r = await readChart(tarGz(dir, join(dir, `${format}.tgz`), ['mychart'], [`--format=${format}`]));
    if (!r.ok) return t.fail(`${format}: ${r.error.message}`);
    t.true(r.value.entries.some((e) => e.path === long && e.type === 'file' && e.size === 5), format);
  }
});

test('traversal entries made by tar -P are refused: ../x and an absolute /…/x', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { 'in/mychart/Chart.yaml': CHART_YAML, 'x': 'escape\n' });
  const up = await readChart(tarGz(join(dir, 'in'), join(dir, 'up.tgz'), ['mychart', '../x'], ['-P']));
  t.regex(refusal(up), /entry "\.\.\/x" has a '\.\.' component/);
  const abs = await readChart(tarGz(join(dir, 'in'), join(dir, 'abs.tgz'), ['mychart', join(dir, 'x')], ['-P']));
  t.regex(refusal(abs), /has an absolute path/);
  const etc = await readChart(gzip(rawTar([{ name: 'mychart/Chart.yaml', data: CHART_YAML }, { name: '/etc/x', data: 'x' }])));
  t.is(refusal(etc), 'entry "/etc/x" has an absolute path');
  const inner = await readChart(gzip(rawTar([{ name: 'mychart/Chart.yaml', data: CHART_YAML }, { name: 'mychart/a/../../x', data: 'x' }])));
  t.regex(refusal(inner), /'\.\.' component/);
});

test('a symbolic link, a hard link and a fifo made by tar are refused by type', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/values.yaml': 'a: 1\n' });
  symlinkSync('/etc/passwd', join(dir, 'mychart/secret.yaml'));
  t.regex(refusal(await readChart(tarGz(dir, join(dir, 's.tgz'), ['mychart']))), /"mychart\/secret\.yaml" is a symbolic link; only regular files and directories are allowed/);

  const dir2 = tempDir(t);
  writeTree(dir2, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/a.yaml': 'a: 1\n' });
  linkSync(join(dir2, 'mychart/a.yaml'), join(dir2, 'mychart/b.yaml'));
  t.regex(refusal(await readChart(tarGz(dir2, join(dir2, 'h.tgz'), ['mychart/Chart.yaml', 'mychart/a.yaml', 'mychart/b.yaml']))), /is a hard link/);

  const dir3 = tempDir(t);
  writeTree(dir3, { 'mychart/Chart.yaml': CHART_YAML });
  execFileSync('mkfifo', [join(dir3, 'mychart/pipe')]);
  t.regex(refusal(await readChart(tarGz(dir3, join(dir3, 'f.tgz'), ['mychart']))), /"mychart\/pipe" is a fifo/);
});

test('devices, contiguous files and unknown types (hand-made headers) are refused by type', async (t) => {
  const cases: [string, RegExp][] = [
    ['3', /is a character device/],
    ['4', /is a block device/],
    ['7', /is a contiguous file/],
    ['S', /is of an unknown type/],
    ['2', /is a symbolic link/],
    ['1', /is a hard link/],
  ];
  for (const [type, re] of cases) {
    const r = await readChart(gzip(rawTar([{ name: 'mychart/Chart.yaml', data: CHART_YAML }, { name: 'mychart/dev', type, linkname: 'mychart/Chart.yaml' }])));
    t.regex(refusal(r), re, `typeflag ${type}`);
  }
});

test('layout: two top-level directories, a flat archive, no Chart.yaml or one only deeper down', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { 'a/Chart.yaml': CHART_YAML, 'b/Chart.yaml': CHART_YAML, 'flat/Chart.yaml': CHART_YAML, 'flat/values.yaml': '', 'nochart/values.yaml': 'a: 1\n', 'deep/sub/Chart.yaml': CHART_YAML, 'lower/chart.yaml': CHART_YAML });
  t.is(refusal(await readChart(tarGz(dir, join(dir, '1.tgz'), ['a', 'b']))), 'the archive has more than one top-level directory ("a" and "b")');
  t.regex(refusal(await readChart(tarGz(join(dir, 'flat'), join(dir, '2.tgz'), ['Chart.yaml', 'values.yaml']))), /file "Chart\.yaml" is at the top level; the chart must be inside one directory/);
  t.is(refusal(await readChart(tarGz(dir, join(dir, '3.tgz'), ['nochart']))), 'the archive has no Chart.yaml directly in its top-level directory "nochart"');
  t.regex(refusal(await readChart(tarGz(dir, join(dir, '4.tgz'), ['deep']))), /no Chart\.yaml directly/);
  t.regex(refusal(await readChart(tarGz(dir, join(dir, '5.tgz'), ['lower']))), /no Chart\.yaml directly/, 'the name is exactly Chart.yaml');
  t.is(refusal(await readChart(gzip(Buffer.alloc(1024)))), 'the archive has no entries');
});

test('names that differ only by case or by Unicode normalisation, and duplicate entries, are refused', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/values.yaml': 'a: 1\n', 'mychart/Values.yaml': 'a: 2\n' });
  t.regex(refusal(await readChart(tarGz(dir, join(dir, 'case.tgz'), ['mychart']))), /differ only by case or Unicode normalisation/);
  const dir2 = tempDir(t);
  writeTree(dir2, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/caf\u00e9.yaml': 'a: 1\n', 'mychart/cafe\u0301.yaml': 'a: 2\n' });
  t.regex(refusal(await readChart(tarGz(dir2, join(dir2, 'nfc.tgz'), ['mychart']))), /differ only by case or Unicode normalisation/);
  // tar stores a file named twice on the command line twice (the second time as a hard link unless told not to)
  t.is(refusal(await readChart(tarGz(dir2, join(dir2, 'dup.tgz'), ['mychart/Chart.yaml', 'mychart/Chart.yaml'], ['--hard-dereference']))), 'entry "mychart/Chart.yaml" appears more than once');
  const fileThenInside = rawTar([{ name: 'mychart/Chart.yaml', data: CHART_YAML }, { name: 'mychart/a', data: 'x' }, { name: 'mychart/a/b', data: 'y' }]);
  t.is(refusal(await readChart(gzip(fileThenInside))), 'entry "mychart/a/b" is inside "mychart/a", which is a file');
  const dirThenFile = rawTar([{ name: 'mychart/Chart.yaml', data: CHART_YAML }, { name: 'mychart/t/x', data: 'x' }, { name: 'mychart/t', data: 'y' }]);
  t.is(refusal(await readChart(gzip(dirThenFile))), 'entry "mychart/t" is both a file and a directory');
});

test('entry count: the default limit is 10 000, the 10 001st entry is refused', async (t) => {
  t.is(CHART_LIMITS.maxEntries, 10_000);
  const dir = tempDir(t);
  mkdirSync(join(dir, 'mychart/t'), { recursive: true });
  writeFileSync(join(dir, 'mychart/Chart.yaml'), CHART_YAML);
  // mychart, mychart/Chart.yaml, mychart/t and 9 997 files: exactly 10 000 entries
  for (let i = 0; i < 9997; i++) writeFileSync(join(dir, `mychart/t/${i}`), '');
  t.true((await readChart(tarGz(dir, join(dir, 'ok.tgz'), ['mychart']))).ok);
  writeFileSync(join(dir, 'mychart/t/one-more'), '');
  t.is(refusal(await readChart(tarGz(dir, join(dir, 'many.tgz'), ['mychart']))), 'the archive has more than 10000 entries');
});

test('size limits: one file above maxFileBytes, all files above maxUnpackedBytes', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/a': 'x'.repeat(600), 'mychart/b': 'y'.repeat(600) });
  const tgz = tarGz(dir, join(dir, 'c.tgz'), ['mychart']);
  t.regex(refusal(await readChart(tgz, { limits: { maxFileBytes: 500 } })), /file "mychart\/[ab]" is 600 bytes; the limit is 500 per file/);
  t.is(refusal(await readChart(tgz, { limits: { maxUnpackedBytes: 1000 } })), 'the archive unpacks to more than 1000 bytes');
  t.true((await readChart(tgz, { limits: { maxUnpackedBytes: 600 * 2 + CHART_YAML.length } })).ok, 'exactly at the limit is fine');
});

test('a gzip bomb (1 GiB of zeros in one file) is refused at its header, having inflated almost nothing, and writes nothing', async (t) => {
  const dir = tempDir(t);
  const bomb = gzipBomb(dir);
  const before = listing(dir);
  const r = await readChart(bomb.path);
  t.is(refusal(r), `file "mychart/zeros" is 1073741824 bytes; the limit is ${CHART_LIMITS.maxFileBytes} per file`);
  t.true(r.stats.inflatedBytes < 1024 * 1024, `inflated ${r.stats.inflatedBytes}`);
  t.deepEqual(listing(dir), before);
});

test('with per-file limits lifted, the inflate cap stops the bomb early with memory bounded', async (t) => {
  const dir = tempDir(t);
  const bomb = gzipBomb(dir);
  const cap = 16 * 1024 * 1024;
  let peak = 0;
  const base = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - base)), 5);
  const r = await readChart(bomb.path, { limits: { maxFileBytes: 2 ** 31, maxUnpackedBytes: 2 ** 31, maxInflatedBytes: cap } });
  clearInterval(timer);
  t.is(refusal(r), `the chart inflates to more than ${cap} bytes`);
  t.true(r.stats.inflatedBytes > cap && r.stats.inflatedBytes <= cap + 64 * 1024, `inflated ${r.stats.inflatedBytes}`);
  t.true(r.stats.compressedBytes < statSync(bomb.path).size, 'stopped before reading the whole upload');
  t.true(peak < 96 * 1024 * 1024, `rss grew by ${peak} bytes`);
});

test('zeros that never form a header (gzip of raw zeros) stop at the default inflate cap', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'z.gz');
  execFileSync('sh', ['-c', `head -c ${80 * 1024 * 1024} /dev/zero | gzip -1 -n > '${path}'`]);
  const r = await readChart(path);
  t.is(refusal(r), `the chart inflates to more than ${CHART_LIMITS.maxInflatedBytes} bytes`);
  t.true(r.stats.inflatedBytes <= CHART_LIMITS.maxInflatedBytes + 64 * 1024);
});

test('not gzip, truncated gzip, gzip that is not tar, truncated tar', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { 'mychart/Chart.yaml': CHART_YAML, 'mychart/big': 'z'.repeat(20_000) });
  const plainTar = join(dir, 'c.tar');
  execFileSync('tar', ['-cf', plainTar, '-C', dir, 'mychart']);
  t.regex(refusal(await readChart(plainTar)), /^the chart is not a gzip file/);
  t.regex(refusal(await readChart(Buffer.from('hello'))), /^the chart is not a gzip file/);
  const tgz = readFileSync(tarGz(dir, join(dir, 'c.tgz'), ['mychart']));
  t.is(refusal(await readChart(tgz.subarray(0, Math.floor(tgz.byteLength / 2)))), 'the chart is a truncated gzip stream');
  t.regex(refusal(await readChart(gzip(Buffer.from('this is text, not a tar archive\n'.repeat(40))))), /^the chart is not a tar archive/);
  const tarBytes = readFileSync(plainTar);
  t.is(refusal(await readChart(gzip(tarBytes.subarray(0, 512 * 4 + 100)))), 'the chart is a truncated tar archive');
});

test('a stream source (an upload) reads the same; a .git directory inside the chart is refused', async (t) => {
  const dir = tempDir(t);
  writeTree(dir, { ...GOOD, 'mychart/.git/HEAD': 'ref: refs/heads/main\n' });
  const tgz = readFileSync(tarGz(dir, join(dir, 'c.tgz'), ['mychart']));
  const chunks = Array.from({ length: Math.ceil(tgz.byteLength / 100) }, (_, i) => tgz.subarray(i * 100, (i + 1) * 100));
  t.regex(refusal(await readChart(Readable.from(chunks))), /has a '\.git' component/);
  const good = readFileSync(tarGz(dir, join(dir, 'g.tgz'), ['mychart/Chart.yaml', 'mychart/values.yaml']));
  const r = await readChart(Readable.from([good.subarray(0, 10), good.subarray(10)]));
  t.true(r.ok);
});
