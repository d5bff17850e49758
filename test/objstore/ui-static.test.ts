/**
 * The web UI's static handler (actors/objstore/http/ui.ts) on the store's real port-80 server
 * (ephemeral port, no store behind: the UI's files need none), serving the bundle `npm run build`
 * wrote to dist/ui: Content-Type per file, Cache-Control (immutable for the hashed assets,
 * no-cache for index.html), ETag and 304, HEAD, 404 for unknown files, 400 for traversal, and the
 * Origin rule of the management API still applying to it.
 */
import test from 'ava';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileOf, loadBundle, UI_DIR } from '../../actors/objstore/http/ui.js';
import { exchange, startFront, statuses } from './front-server.js';

let front: Awaited<ReturnType<typeof startFront>>;
let base = '';
const files = readdirSync(UI_DIR);
const js = files.find((f) => /^app-[A-Z0-9]{8}\.js$/.test(f))!;
const css = files.find((f) => /^app-[A-Z0-9]{8}\.css$/.test(f))!;

test.before(async () => {
  front = await startFront();
  base = `http://127.0.0.1:${front.port}`;
});
test.after.always(() => front?.close());

test('the build wrote one hashed JS, one hashed CSS and an index.html naming both', (t) => {
  t.truthy(js, `no app-<hash>.js in ${files.join(', ')}`);
  t.truthy(css, `no app-<hash>.css in ${files.join(', ')}`);
  const index = readFileSync(join(UI_DIR, 'index.html'), 'utf8');
  t.true(index.includes(`src="/$/ui/${js}"`));
  t.true(index.includes(`href="/$/ui/${css}"`));
  t.false(/https?:\/\//.test(index), 'index.html loads nothing from another site');
  t.false(/https?:\/\/(?!www\.w3\.org)[a-z]/.test(readFileSync(join(UI_DIR, js), 'utf8').replace(/"http:\/\/www\.w3\.org\/[^"]*"/g, '')), 'the bundle names no other site');
});

test('index.html at /$/ui and /$/ui/ and /$/ui/index.html: HTML, no-cache, an ETag, the CSP', async (t) => {
  const body = readFileSync(join(UI_DIR, 'index.html'));
  for (const path of ['/$/ui', '/$/ui/', '/$/ui/index.html']) {
    const res = await fetch(base + path);
    t.is(res.status, 200, path);
    t.is(res.headers.get('content-type'), 'text/html; charset=utf-8');
    t.is(res.headers.get('cache-control'), 'no-cache');
    t.regex(res.headers.get('etag') ?? '', /^"[A-Za-z0-9_-]{22}"$/);
    t.regex(res.headers.get('content-security-policy') ?? '', /default-src 'self'.*frame-ancestors 'none'/);
    t.is(res.headers.get('x-content-type-options'), 'nosniff');
    t.deepEqual(Buffer.from(await res.arrayBuffer()), body);
  }
});

test('the hashed assets: their types, immutable for a year, exact bytes', async (t) => {
  for (const [name, type] of [
    [js, 'text/javascript; charset=utf-8'],
    [css, 'text/css; charset=utf-8'],
  ] as const) {
    const res = await fetch(`${base}/$/ui/${name}`);
    t.is(res.status, 200);
    t.is(res.headers.get('content-type'), type);
    t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    t.is(res.headers.get('content-security-policy'), null, 'the CSP is the page\'s');
    t.deepEqual(Buffer.from(await res.arrayBuffer()), readFileSync(join(UI_DIR, name)));
  }
});

test('If-None-Match with the ETag gives 304 with no body; another ETag gives 200', async (t) => {
  for (const path of ['/$/ui/', `/$/ui/${js}`]) {
    const first = await fetch(base + path);
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const again = await fetch(base + path, { headers: { 'If-None-Match': etag } });
    t.is(again.status, 304, path);
    t.is(again.headers.get('etag'), etag);
    t.is(again.headers.get('cache-control'), first.headers.get('cache-control'));
    t.is((await again.arrayBuffer()).byteLength, 0);
    for (const inm of [`"other", W/${etag}`, '*']) {
      const r = await fetch(base + path, { headers: { 'If-None-Match': inm } });
      t.is(r.status, 304, `${path} with ${inm}`);
      await r.arrayBuffer();
    }
    const stale = await fetch(base + path, { headers: { 'If-None-Match': '"not-this-one"' } });
    t.is(stale.status, 200);
    await stale.arrayBuffer();
  }
});

test('HEAD: the headers of GET and its Content-Length, no body', async (t) => {
  const res = await fetch(`${base}/$/ui/${js}`, { method: 'HEAD' });
  t.is(res.status, 200);
  t.is(res.headers.get('content-length'), String(readFileSync(join(UI_DIR, js)).byteLength));
  t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is((await res.arrayBuffer()).byteLength, 0);
});

test('a file the bundle does not have is 404 NOT_FOUND naming it, with a JSON error', async (t) => {
  for (const [path, name] of [
    ['/$/ui/app.js', 'app.js'],
    ['/$/ui/volumes', 'volumes'],
    ['/$/ui/assets/app.js', 'assets/app.js'],
    ['/$/ui/INDEX.HTML', 'INDEX.HTML'],
  ]) {
    const res = await fetch(base + path);
    t.is(res.status, 404, path);
    t.is(res.headers.get('content-type'), 'application/json');
    t.deepEqual(await res.json(), { error: { code: 'NOT_FOUND', message: `the web UI has no file ${JSON.stringify(name)}` } });
  }
});

test('paths that leave the bundle are refused with 400 INVALID_PATH (raw requests, no client normalising)', async (t) => {
  for (const target of ['/$/ui/../../etc/passwd', '/$/ui/..', '/$/ui/%2e%2e/%2e%2e/etc/passwd', '/$/ui/..%2f..%2fpackage.json', '/$/ui/%2e%2e%5cpackage.json', '/$/ui/./index.html', '/$/ui/a%00.js', '/$/ui/%zz']) {
    const { text } = await exchange(front.port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    t.deepEqual(statuses(text), ['400 Bad Request'], target);
    t.regex(text, /"code":"INVALID_PATH"/, target);
    t.notRegex(text, /root:|"name": "hostd"/, `${target} read nothing outside`);
  }
  t.throws(() => fileOf('..%2Findex.html'), { message: /leaves the UI bundle/ });
  t.is(fileOf(''), 'index.html');
  t.is(fileOf(js), js);
});

test('the management API rules hold for the UI too: another site\'s Origin is 403, other methods 405', async (t) => {
  const foreign = await fetch(`${base}/$/ui/`, { headers: { Origin: 'https://evil.example' } });
  t.is(foreign.status, 403);
  t.is(((await foreign.json()) as { error: { code: string } }).error.code, 'ORIGIN_NOT_ALLOWED');
  const own = await fetch(`${base}/$/ui/${js}`, { headers: { Origin: base } });
  t.is(own.status, 200, 'the page itself loads its module script with its own Origin');
  await own.arrayBuffer();
  const post = await fetch(`${base}/$/ui/`, { method: 'POST' });
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
});

test('a bundle folder is read once; one without index.html is not a bundle (the route answers 503 UI_NOT_BUILT then)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-ui-bundle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.is(loadBundle(join(dir, 'missing')), null);
  writeFileSync(join(dir, 'app-ABCDEFGH.js'), 'export {};');
  t.is(loadBundle(dir), null, 'no index.html yet');
  writeFileSync(join(dir, 'index.html'), '<!doctype html>');
  writeFileSync(join(dir, 'notes.txt'), 'x');
  const b = loadBundle(dir)!;
  t.deepEqual([...b.keys()].sort(), ['app-ABCDEFGH.js', 'index.html', 'notes.txt']);
  const headers = (name: string) => Object.fromEntries(b.get(name)!.headers);
  t.is(headers('app-ABCDEFGH.js')['Cache-Control'], 'public, max-age=31536000, immutable');
  t.is(headers('notes.txt')['Cache-Control'], 'no-cache', 'a name without a content hash is revalidated');
  t.is(headers('notes.txt')['Content-Type'], 'application/octet-stream');
  writeFileSync(join(dir, 'later.js'), 'x');
  t.is(loadBundle(dir), b, 'read once');
  t.false(b.has('later.js'));
});
