import test from 'ava';
import { parse } from 'yaml';
import { chartVersion, SEMVER_RE, setChartVersion } from '../../protocols/deploy/chart-version.js';
import { attempt } from '../../protocols/deploy/errors.js';
import { refused } from './results.js';

test('SemVer 2 tags are used as they are, a leading v dropped', (t) => {
  const cases: [string, string][] = [
    ['1.2.3', '1.2.3'],
    ['v1.2.3', '1.2.3'],
    ['v0.0.1', '0.0.1'],
    ['1.0.0-rc.1', '1.0.0-rc.1'],
    ['v2.0.0-alpha.beta+exp.sha.5114f85', '2.0.0-alpha.beta+exp.sha.5114f85'],
    ['10.20.30', '10.20.30'],
    ['1.0.0-0A.is.legal', '1.0.0-0A.is.legal'],
  ];
  for (const [tag, v] of cases) t.is(refusedOr(tag), v, tag);
});

function refusedOr(v: string): string {
  const r = attempt(() => chartVersion(v));
  return r.ok ? r.value : `refused: ${r.error.message}`;
}

test('a commit id becomes the pre-release 0.0.0-g<hex>, valid SemVer 2 even when the id starts with 0 or is all digits', (t) => {
  t.is(refusedOr('0123456'), '0.0.0-g0123456');
  t.is(refusedOr('9fceb02d0ae598e95dc970b74767f19372d61af8'), '0.0.0-g9fceb02d0ae598e95dc970b74767f19372d61af8');
  t.is(refusedOr('9FCEB02'), '0.0.0-g9fceb02');
  t.is(refusedOr('0'.repeat(64)), `0.0.0-g${'0'.repeat(64)}`);
  for (const v of ['0123456', '1234567', 'abcdef0']) t.regex(refusedOr(v), SEMVER_RE, v);
  t.false(SEMVER_RE.test('0.0.0-0123456'), 'why the g: a numeric identifier with a leading zero is not SemVer');
});

test('other versions are refused naming version', (t) => {
  for (const v of ['latest', 'v1.2', '1.2', '01.2.3', '1.2.3-01', 'V1.2.3', 'vv1.2.3', '123456', 'abcdefg', '1'.repeat(41), 'release-7', ' 1.2.3']) {
    const e = refused(attempt(() => chartVersion(v)));
    t.is(e.status, 400);
    t.regex(e.message, /^version must be a SemVer tag \(1\.2\.3 or v1\.2\.3\) or a commit id \(7 to 40 hex digits\); got /, JSON.stringify(v));
  }
  t.is(refused(attempt(() => chartVersion(''))).message, 'version must not be empty');
  t.is(refused(attempt(() => chartVersion('1.2.3\n'))).message, 'version must not contain control characters');
  t.deepEqual(refused(attempt(() => chartVersion(undefined))), { status: 400, code: 'MISSING_FIELD', message: 'version is required' });
  t.is(refused(attempt(() => chartVersion(3))).message, 'version must be a string; got number 3');
  t.is(refused(attempt(() => chartVersion(`1.2.3-${'a'.repeat(130)}`))).message, 'version is longer than 128 characters');
});

const CHART = `# Chart of the shop
apiVersion: v2
name: shop   # the release name
description: "A shop"
version: 0.1.0 # bumped by CI
appVersion: "1.16.0"
dependencies:
  - name: redis
    version: 17.0.0
`;

test('setChartVersion rewrites only the top-level version value, keeping comments and every other byte', (t) => {
  const out = setChartVersion(CHART, '1.4.0');
  t.is(out, CHART.replace('version: 0.1.0 # bumped', 'version: 1.4.0 # bumped'));
  t.is(parse(out).dependencies[0].version, '17.0.0', 'a nested version is not touched');
  t.is(setChartVersion('apiVersion: v2\r\nname: x\r\nversion: "0.1.0"\r\n', '0.0.0-gabc1234'), 'apiVersion: v2\r\nname: x\r\nversion: 0.0.0-gabc1234\r\n');
  t.is(setChartVersion(Buffer.from('apiVersion: v1\nname: x\nversion:\n'), '2.0.0'), 'apiVersion: v1\nname: x\nversion: 2.0.0\n');
  t.is(setChartVersion('{apiVersion: v2, name: x, version: 0.1.0}', '1.0.0'), '{apiVersion: v2, name: x, version: 1.0.0}');
});

test('a Chart.yaml without version gets one appended', (t) => {
  t.is(setChartVersion('apiVersion: v2\nname: x\n', '1.0.0'), 'apiVersion: v2\nname: x\nversion: 1.0.0\n');
  t.is(setChartVersion('apiVersion: v2\nname: x', '1.0.0'), 'apiVersion: v2\nname: x\nversion: 1.0.0\n');
});

test('a bad Chart.yaml is 400 BAD_CHART naming the problem', (t) => {
  const cases: [string, string | RegExp][] = [
    ['apiVersion: v2\nname: [x\n', /^Chart\.yaml is not valid YAML: line \d+, column \d+: /],
    ['- a\n- b\n', 'Chart.yaml must be a mapping'],
    ['', 'Chart.yaml must be a mapping'],
    ['name: x\nversion: 1.0.0\n', 'Chart.yaml must have apiVersion v1 or v2'],
    ['apiVersion: v3\nname: x\n', 'Chart.yaml must have apiVersion v1 or v2'],
    ['apiVersion: v2\nversion: 1.0.0\n', 'Chart.yaml must have a name'],
    ['apiVersion: v2\nname: x\nversion: [1]\n', 'Chart.yaml version must be a plain value'],
    ['apiVersion: v2\nname: x\nname: y\n', /^Chart\.yaml is not valid YAML: line 3, column 1: Map keys must be unique/],
    ['{apiVersion: v2, name: x}', 'Chart.yaml has no version and is a flow mapping; add a version: line'],
  ];
  for (const [text, expected] of cases) {
    const e = refused(attempt(() => setChartVersion(text, '1.0.0')));
    t.is(e.code, 'BAD_CHART');
    if (typeof expected === 'string') t.is(e.message, expected);
    else t.regex(e.message, expected);
  }
  t.is(refused(attempt(() => setChartVersion(Buffer.from([0xff, 0xfe, 0x00]), '1.0.0'))).message, 'Chart.yaml is not valid UTF-8');
  t.throws(() => setChartVersion(CHART, 'v1.0.0'), { instanceOf: TypeError }, 'the caller passes chartVersion output');
});
