import test from 'ava';
import { prepareChart, type ChartFileData } from '../../protocols/deploy/chart-files.js';
import { chartName } from '../../protocols/deploy/chart-version.js';
import { attempt } from '../../protocols/deploy/errors.js';
import { refused } from './results.js';

const file = (path: string, text: string): ChartFileData => ({ path, type: 'file', size: Buffer.byteLength(text), data: Buffer.from(text) });
const CHART = 'apiVersion: v2\nname: shop\nversion: 0.1.0\n';

test('a chart is placed under the iacPath with its version set and its values parsed', (t) => {
  const entries: ChartFileData[] = [
    { path: 'shop', type: 'directory', size: 0 },
    file('shop/Chart.yaml', CHART),
    file('shop/values.yaml', 'replicaCount: 2\n'),
    { path: 'shop/templates', type: 'directory', size: 0 },
    file('shop/templates/web.yaml', 'kind: Deployment\n'),
  ];
  const p = prepareChart({ topDir: 'shop', entries }, 'clusters/prod/shop', '0.0.0-g9fceb02');
  t.is(p.name, 'shop');
  t.deepEqual(p.dirs, ['clusters/prod/shop', 'clusters/prod/shop/templates']);
  t.deepEqual(
    p.files.map((f) => [f.repoPath, Buffer.from(f.data).toString()]),
    [
      ['clusters/prod/shop/Chart.yaml', 'apiVersion: v2\nname: shop\nversion: 0.0.0-g9fceb02\n'],
      ['clusters/prod/shop/values.yaml', 'replicaCount: 2\n'],
      ['clusters/prod/shop/templates/web.yaml', 'kind: Deployment\n'],
    ],
  );
  t.deepEqual(p.values, { replicaCount: 2 });
  t.is(prepareChart({ topDir: 'shop', entries: [file('shop/Chart.yaml', CHART)] }, 'x', '1.0.0').values, null, 'no values file: null');
});

test('a malformed values.yaml or Chart.yaml refuses the deploy with 400 before anything is pushed', (t) => {
  const badValues = attempt(() => prepareChart({ topDir: 'shop', entries: [file('shop/Chart.yaml', CHART), file('shop/values.yaml', 'a: [1\n')] }, 'x', '1.0.0'));
  t.is(refused(badValues).status, 400);
  t.is(refused(badValues).code, 'BAD_YAML');
  const badChart = attempt(() => prepareChart({ topDir: 'shop', entries: [file('shop/Chart.yaml', 'name: [\n')] }, 'x', '1.0.0'));
  t.is(refused(badChart).code, 'BAD_CHART');
  t.regex(refused(badChart).message, /^Chart\.yaml is not valid YAML: line \d+/);
  t.is(prepareChart({ topDir: 'shop', entries: [file('shop/Chart.yaml', CHART), file('shop/templates/values.yaml', '- not: a mapping\n')] }, 'x', '1.0.0').values, null, 'only the top values.yaml is the values file');
});

test('the chart name, which names the served archive top directory, is refused when it could be a path', (t) => {
  t.is(chartName(CHART), 'shop');
  for (const bad of ['../x', 'a/b', '.', '-x', 'a b']) {
    const e = refused(attempt(() => chartName(`apiVersion: v2\nname: "${bad}"\n`)));
    t.is(e.message, `Chart.yaml name must be letters, digits, '.', '_' or '-', beginning with a letter or digit; got ${JSON.stringify(bad)}`);
  }
});

test('reading without keepContents, or without the checker, is a programming error', (t) => {
  t.throws(() => prepareChart({ topDir: 'shop', entries: [{ path: 'shop/Chart.yaml', type: 'file', size: 1 }] }, 'x', '1.0.0'), { instanceOf: TypeError });
  t.throws(() => prepareChart({ topDir: 'shop', entries: [file('shop/values.yaml', 'a: 1\n')] }, 'x', '1.0.0'), { instanceOf: TypeError });
});
