/**
 * The layout rules of design.md, checked on the source: who may import whom, and protocols/ pure.
 * A new import that breaks the table fails here, with the file and the import named.
 *
 *   runtime/   imports nothing of protocols/, actors/, workers/ (it knows no service)
 *   protocols/ imports no actors/ or workers/ code, runtime/ types only, and no I/O module
 *   actors/    imports runtime/ and protocols/ (and other actors' messages), never workers/
 */
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Tests run from dist/test/: the sources are two levels up.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

interface Import {
  file: string;
  spec: string;
  typeOnly: boolean;
  /** the imported file, relative to the repository, or null for a package / node: module */
  target: string | null;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  const out: Import[] = [];
  const re = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const spec = m[3] ?? m[4]!;
    const typeOnly = m[2] !== undefined;
    const target = spec.startsWith('.') ? relative(root, resolve(root, dirname(file), spec)) : null;
    out.push({ file, spec, typeOnly, target });
  }
  return out;
}

const all = ['runtime', 'protocols', 'actors', 'workers'].flatMap(sources).flatMap(importsOf);
const top = (path: string) => path.split('/')[0]!;
const show = (list: Import[]) => list.map((i) => `${i.file}: ${i.spec}`).join('\n');

test('the scan sees the tree (a broken scan would pass every rule)', (t) => {
  t.true(all.length > 500, `only ${all.length} imports found`);
  t.true(all.some((i) => i.file.startsWith('actors/volume/') && i.target?.startsWith('runtime/')));
});

test('runtime/ imports nothing of protocols/, actors/ or workers/', (t) => {
  const bad = all.filter((i) => top(i.file) === 'runtime' && i.target && ['protocols', 'actors', 'workers'].includes(top(i.target)));
  t.is(show(bad), '');
});

test('protocols/ imports no actors/ or workers/ code, runtime/ types only', (t) => {
  const bad = all.filter((i) => top(i.file) === 'protocols' && i.target && (['actors', 'workers'].includes(top(i.target)) || (top(i.target) === 'runtime' && !i.typeOnly)));
  t.is(show(bad), '');
});

test('protocols/ is pure: no I/O, thread or process module', (t) => {
  const io = /^(node:)?(fs|fs\/promises|net|dgram|child_process|os|worker_threads|http|https|tls|cluster|process|timers|timers\/promises)$/;
  const bad = all.filter((i) => top(i.file) === 'protocols' && io.test(i.spec));
  t.is(show(bad), '');
});

test('actors/ never imports workers/', (t) => {
  const bad = all.filter((i) => top(i.file) === 'actors' && i.target && top(i.target) === 'workers');
  t.is(show(bad), '');
});
