import test from 'ava';
import { readFileSync } from 'node:fs';
import { ALLOWED_METHODS, contentDisposition, corsHeaders, objectHeaders, type ObjectRecord } from '../../../protocols/objstore/headers.js';
import { containerId } from '../../../protocols/objstore/paths.js';

const rec: ObjectRecord = {
  id: '$018cc251f400deadbeef0001',
  path: '/photos/2024/cat.jpg',
  size: 123456,
  mime: 'image/jpeg',
  md5: '0cc175b9c0f1b6a831c399e269772661',
  k: 4,
  m: 2,
  chunkSize: 30864,
  dataVolumes: [3, 1, 7, 12],
  parityVolumes: [5, 2],
  createdAt: Date.UTC(2024, 0, 1, 13, 5, 9, 999),
};

test('the module is pure: it imports only its siblings, and uses no timers', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/headers.js', import.meta.url), 'utf8');
  const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]);
  for (const i of imports) t.regex(i as string, /^\.\/[\w-]+\.js$/);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|Math\.random|process\./);
});

test('objectHeaders: exactly these headers, in this order', (t) => {
  t.deepEqual(objectHeaders(rec), [
    ['X-Object-Id', '$018cc251f400deadbeef0001'],
    ['X-Container-Id', containerId('/photos/2024')],
    ['Content-MD5', '0cc175b9c0f1b6a831c399e269772661'],
    ['Content-Type', 'image/jpeg'],
    ['X-Data-Slice-Count', '4'],
    ['X-Data-Slice-Volumes', '3,1,7,12'],
    ['X-Parity-Slice-Count', '2'],
    ['X-Parity-Slice-Volumes', '5,2'],
    ['X-Chunk-Size', '30864'],
    ['Accept-Ranges', 'bytes'],
    ['Last-Modified', 'Mon, 01 Jan 2024 13:05:09 GMT'],
    ['ETag', '"0cc175b9c0f1b6a831c399e269772661"'],
  ]);
});

test('objectHeaders: empty mime is application/octet-stream; other mimes are kept as given', (t) => {
  const ct = (mime: string) => objectHeaders({ ...rec, mime }).find(([k]) => k === 'Content-Type')?.[1];
  t.is(ct(''), 'application/octet-stream');
  t.is(ct('text/plain; charset=utf-8'), 'text/plain; charset=utf-8');
  t.is(ct('application/octet-stream'), 'application/octet-stream');
});

test('objectHeaders: a bucket-level object lives in the root container; containers differ by path', (t) => {
  const cid = (path: string) => new Map(objectHeaders({ ...rec, path })).get('X-Container-Id');
  t.is(cid('/photos'), containerId('/'));
  t.is(cid('/photos/a'), containerId('/photos'));
  t.is(cid('/photos/a'), cid('/photos/b'), 'siblings share a container');
  t.not(cid('/photos/a'), cid('/videos/a'));
  t.not(cid('/photos'), cid('/photos/a'));
  t.regex(cid('/x/y/z') as string, /^[0-9a-f]{24}$/);
});

test('objectHeaders: no parity (k=1, m=0) gives an empty parity volume list; one volume, no comma', (t) => {
  const h = new Map(objectHeaders({ ...rec, k: 1, m: 0, dataVolumes: [9], parityVolumes: [] }));
  t.is(h.get('X-Data-Slice-Count'), '1');
  t.is(h.get('X-Data-Slice-Volumes'), '9');
  t.is(h.get('X-Parity-Slice-Count'), '0');
  t.is(h.get('X-Parity-Slice-Volumes'), '');
  t.is(objectHeaders(rec).length, 12);
});

test('objectHeaders: Last-Modified is an IMF-fixdate of createdAt (seconds, GMT)', (t) => {
  const lm = (createdAt: number) => new Map(objectHeaders({ ...rec, createdAt })).get('Last-Modified');
  t.is(lm(0), 'Thu, 01 Jan 1970 00:00:00 GMT');
  t.is(lm(Date.UTC(2038, 0, 19, 3, 14, 7)), 'Tue, 19 Jan 2038 03:14:07 GMT');
  t.is(lm(Date.UTC(2024, 1, 29, 23, 59, 59, 500)), 'Thu, 29 Feb 2024 23:59:59 GMT');
  for (const v of [0, 1e12, Date.UTC(2099, 11, 31)]) t.regex(lm(v) as string, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  t.throws(() => objectHeaders({ ...rec, createdAt: NaN }), { instanceOf: RangeError });
  t.throws(() => objectHeaders({ ...rec, createdAt: 1e20 }), { instanceOf: RangeError });
});

test('contentDisposition: plain ASCII names', (t) => {
  t.is(contentDisposition('report.pdf'), `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`);
  t.is(contentDisposition('a b.txt'), `attachment; filename="a b.txt"; filename*=UTF-8''a%20b.txt`);
  t.is(contentDisposition('x'), `attachment; filename="x"; filename*=UTF-8''x`);
});

test('contentDisposition: quotes and non-ASCII become _ in the fallback, percent-encoded in filename*', (t) => {
  t.is(contentDisposition('say "hi".txt'), `attachment; filename="say _hi_.txt"; filename*=UTF-8''say%20%22hi%22.txt`);
  t.is(contentDisposition('café.txt'), `attachment; filename="caf_.txt"; filename*=UTF-8''caf%C3%A9.txt`);
  t.is(contentDisposition('€ 😀.bin'), `attachment; filename="_ _.bin"; filename*=UTF-8''%E2%82%AC%20%F0%9F%98%80.bin`, 'one _ per character');
  t.is(contentDisposition('日本語'), `attachment; filename="___"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E`);
  t.is(contentDisposition('\u0080x'), `attachment; filename="_x"; filename*=UTF-8''%C2%80x`);
});

test("contentDisposition: filename* uses only RFC 5987 attr-chars (so * ' ( ) are encoded)", (t) => {
  const d = contentDisposition("it's (final)*.txt; 100% & more=yes,ok");
  t.is(d, `attachment; filename="it's (final)*.txt; 100% & more=yes,ok"; filename*=UTF-8''it%27s%20%28final%29%2A.txt%3B%20100%25%20%26%20more%3Dyes%2Cok`);
  // every printable ASCII character but / and \ round-trips through the extended form
  let all = '';
  for (let c = 0x20; c < 0x7f; c++) if (c !== 0x2f && c !== 0x5c) all += String.fromCharCode(c);
  const ext = contentDisposition(all).split("filename*=UTF-8''")[1] as string;
  t.regex(ext, /^[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
  t.is(decodeURIComponent(ext), all);
  const fallback = /filename="([^"]*)"/.exec(contentDisposition(all))?.[1];
  t.is(fallback, all.replace('"', '_'));
});

test('contentDisposition: empty names, slashes, backslashes and control characters are refused', (t) => {
  const bad = ['', '/', 'a/b', '../x', 'a\\b', '\\', 'a\u0000b', 'a\nb', 'a\rb', 'a\tb', '\u001f', 'x\u007f', 'a\ud800b', '\udc00'];
  for (const name of bad) t.throws(() => contentDisposition(name), { instanceOf: TypeError }, JSON.stringify(name));
  t.throws(() => contentDisposition(undefined as unknown as string), { instanceOf: TypeError });
});

test('ALLOWED_METHODS', (t) => {
  t.is(ALLOWED_METHODS, 'GET, HEAD, PUT, DELETE, OPTIONS');
});

test('corsHeaders with an origin: echoes it and varies on it', (t) => {
  const h = corsHeaders('https://app.example');
  t.deepEqual(h.map(([k]) => k), [
    'Access-Control-Allow-Origin',
    'Access-Control-Allow-Methods',
    'Access-Control-Allow-Headers',
    'Access-Control-Expose-Headers',
    'Access-Control-Max-Age',
    'Vary',
  ]);
  const m = new Map(h);
  t.is(m.get('Access-Control-Allow-Origin'), 'https://app.example');
  t.is(m.get('Access-Control-Allow-Methods'), ALLOWED_METHODS);
  t.is(m.get('Access-Control-Allow-Headers'), 'Content-Type, Content-MD5, Range');
  t.is(m.get('Access-Control-Max-Age'), '86400');
  t.is(m.get('Vary'), 'Origin');
});

test('corsHeaders without an origin (absent or empty): * and no Vary', (t) => {
  for (const origin of [undefined, '']) {
    const h = corsHeaders(origin);
    const m = new Map(h);
    t.is(m.get('Access-Control-Allow-Origin'), '*');
    t.false(m.has('Vary'));
    t.is(h.length, 5);
    t.is(m.get('Access-Control-Max-Age'), '86400');
  }
});

test('corsHeaders expose every X- header of objectHeaders plus Content-MD5, Content-Range, Accept-Ranges, ETag', (t) => {
  const exposed = (new Map(corsHeaders(undefined)).get('Access-Control-Expose-Headers') as string).split(', ');
  const xs = objectHeaders(rec).map(([k]) => k).filter((k) => k.startsWith('X-'));
  t.is(xs.length, 7);
  t.deepEqual(exposed, [...xs, 'Content-MD5', 'Content-Range', 'Accept-Ranges', 'ETag']);
  t.is(new Set(exposed).size, exposed.length, 'no duplicates');
});
