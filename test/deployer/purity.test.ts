import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';

const DIR = new URL('../../protocols/deploy/', import.meta.url);
const ALLOWED = new Set(['node:crypto', 'yaml', '../objstore/errors.js', '../media/validate.js']);

test('every protocols/deploy module is pure: only node:crypto, yaml and its siblings; no timers, clock, randomness or process', (t) => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.js'));
  t.true(files.length >= 12, files.join(' '));
  for (const f of files) {
    const src = readFileSync(new URL(f, DIR), 'utf8');
    const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2] ?? m[3]);
    for (const i of imports) t.true(ALLOWED.has(i as string) || /^\.\/[\w-]+\.js$/.test(i as string), `${f} imports ${i}`);
    t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|new Date\(|Math\.random|process\.|randomBytes|randomUUID/, f);
  }
});

test('every protocols/deploy source opens with a header comment', (t) => {
  const src = new URL('../../../protocols/deploy/', import.meta.url).pathname; // dist/test/deployer → the sources
  for (const f of readdirSync(src).filter((x) => x.endsWith('.ts'))) t.true(readFileSync(`${src}${f}`, 'utf8').startsWith('/**\n'), f);
});
