/**
 * Builds the object store's web UI (ui/src) into dist/ui: one JS bundle, one CSS file, both with
 * content-hashed names, and index.html naming them. Nothing is fetched at run time (no CDN):
 * Preact is bundled in. The server (actors/objstore/http/ui.ts) serves dist/ui at /$/ui: the
 * hashed files as immutable, index.html as no-cache. Run by `npm run build` after tsc.
 */
import { build } from 'esbuild';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'ui');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'ui/src/main.tsx') },
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out,
  entryNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});

const files = readdirSync(out);
const js = files.find((f) => /^app-[A-Z0-9]+\.js$/.test(f));
const css = files.find((f) => /^app-[A-Z0-9]+\.css$/.test(f));
if (!js || !css) throw new Error(`ui build: expected app-<hash>.js and app-<hash>.css in ${out}, found ${files.join(', ')}`);

// Absolute paths: index.html is served at /$/ui and at /$/ui/, where relative ones would differ.
writeFileSync(
  join(out, 'index.html'),
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Object store</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/$/ui/${css}">
<script type="module" src="/$/ui/${js}"></script>
</head>
<body><div id="app"></div></body>
</html>
`,
);
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`ui: dist/ui/${js}, dist/ui/${css}, index.html (${(bytes / 1024).toFixed(1)} KiB)`);
