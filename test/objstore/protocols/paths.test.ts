import test from 'ava';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ancestors, containerId, containerOf, isValidBucketName, parseTarget, type ObjectTarget } from '../../../protocols/objstore/paths.js';

const ID = '$0123456789abcdef01234567';

function reason(target: ObjectTarget): string {
  if (target.kind !== 'invalid') throw new Error(`expected invalid, got ${JSON.stringify(target)}`);
  return target.reason;
}

test('the module is pure: it imports only node:crypto and its siblings, and uses no timers', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/paths.js', import.meta.url), 'utf8');
  const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]);
  t.true(imports.length > 0);
  for (const i of imports) t.true(i === 'node:crypto' || /^\.\/[\w-]+\.js$/.test(i as string), i);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|Math\.random|process\./);
});

test('a plain path: bucket, segments, path', (t) => {
  t.deepEqual(parseTarget('/photos/2024/cat.jpg'), {
    kind: 'path',
    path: '/photos/2024/cat.jpg',
    bucket: 'photos',
    segments: ['photos', '2024', 'cat.jpg'],
    trailingSlash: false,
  });
  t.deepEqual(parseTarget('/b'), { kind: 'path', path: '/b', bucket: 'b', segments: ['b'], trailingSlash: false });
  t.deepEqual(parseTarget('/b/o'), { kind: 'path', path: '/b/o', bucket: 'b', segments: ['b', 'o'], trailingSlash: false });
});

test('one trailing slash names a container: reported, and left out of path and segments', (t) => {
  t.deepEqual(parseTarget('/b/dir/'), { kind: 'path', path: '/b/dir', bucket: 'b', segments: ['b', 'dir'], trailingSlash: true });
  t.deepEqual(parseTarget('/b/'), { kind: 'path', path: '/b', bucket: 'b', segments: ['b'], trailingSlash: true });
  t.regex(reason(parseTarget('/b/dir//')), /empty path segment/);
  t.regex(reason(parseTarget('/b//')), /empty path segment/);
});

test('segments are percent-decoded; the path is the decoded form', (t) => {
  t.deepEqual(parseTarget('/my%20bucket/a%2Bb/caf%C3%A9.txt'), {
    kind: 'path',
    path: '/my bucket/a+b/café.txt',
    bucket: 'my bucket',
    segments: ['my bucket', 'a+b', 'café.txt'],
    trailingSlash: false,
  });
  const p = parseTarget('/b/%E2%82%AC%F0%9F%98%80');
  t.is(p.kind === 'path' ? p.path : '', '/b/€😀');
  // '+' is not a space in a path; lowercase hex in escapes is fine; unencoded non-ASCII passes through
  t.is((parseTarget('/b/a+b') as { path: string }).path, '/b/a+b');
  t.is((parseTarget('/b/%c3%a9') as { path: string }).path, '/b/é');
  t.is((parseTarget('/b/é') as { path: string }).path, '/b/é');
  // characters that are legal in names: %, ?, #, \, ;, =, '.' inside names, '...'
  t.deepEqual((parseTarget('/b/100%25/%3Fq%23h/a%5Cb/x;y=z/.hidden/.../a..b') as { segments: string[] }).segments, ['b', '100%', '?q#h', 'a\\b', 'x;y=z', '.hidden', '...', 'a..b']);
});

test('malformed percent-encoding is invalid, naming the segment', (t) => {
  for (const bad of ['/b/%', '/b/%2', '/b/%zz', '/b/a%g0', '/%/x', '/b/%C3', '/b/%C3%28', '/b/%FF', '/b/%ED%A0%80', '/b/%C0%AF']) {
    t.regex(reason(parseTarget(bad)), /malformed percent-encoding in segment \d/, bad);
  }
  t.regex(reason(parseTarget('/b/ok/%')), /segment 3/);
});

test('an id target: exactly /$ and 24 lowercase hex', (t) => {
  t.deepEqual(parseTarget('/' + ID), { kind: 'id', id: ID });
  t.deepEqual(parseTarget('/%24' + ID.slice(1)), { kind: 'id', id: ID }, "an encoded '$' is a '$'");
  t.deepEqual(parseTarget('/$ffffffffffffffffffffffff'), { kind: 'id', id: '$ffffffffffffffffffffffff' });
});

test('a mistyped id is "not an object id"', (t) => {
  for (const bad of ['/$0', '/$0123456789abcdef0123456', '/$0123456789abcdef012345678', '/$0123456789ABCDEF01234567', '/$0123456789abcdeF01234567', '/%240123456789ABCDEF01234567']) {
    t.regex(reason(parseTarget(bad)), /^not an object id/, bad);
  }
  t.regex(reason(parseTarget('/' + ID + '/')), /^not an object id.*trailing slash/, 'an id is not a container');
});

test('any other first segment beginning with $ is refused: "path must not begin with $"', (t) => {
  for (const bad of ['/$', '/$foo', '/$foo/bar', '/' + ID + '/x', '/$/volumes', '/$/', '/%24foo', '/$0123456789abcdef0123456x', '/$ 0123456789abcdef01234567', '/$foo/']) {
    t.is(reason(parseTarget(bad)), 'path must not begin with $', bad);
  }
  // '$' later in the path is fine
  t.is(parseTarget('/b/$x').kind, 'path');
  t.is(parseTarget('/b/' + ID).kind, 'path');
  t.is(parseTarget('/b$').kind, 'path');
});

test('the root alone has no bucket; a path must begin with /', (t) => {
  t.is(reason(parseTarget('/')), 'no bucket in path');
  for (const bad of ['', 'b/o', ' /b', '%2Fb', '*']) t.regex(reason(parseTarget(bad)), /must begin with '\/'/, JSON.stringify(bad));
});

test('empty segments are invalid', (t) => {
  for (const bad of ['//', '//b', '/b//o', '/b/o//x', '///']) t.regex(reason(parseTarget(bad)), /empty path segment/, bad);
});

test('an encoded slash cannot hide a segment boundary', (t) => {
  t.regex(reason(parseTarget('/b/a%2Fb')), /encoded '\/'/);
  t.regex(reason(parseTarget('/b/a%2fb')), /encoded '\/'/);
  t.regex(reason(parseTarget('/%2F')), /encoded '\/'/);
});

test('. and .. segments are invalid, encoded or not', (t) => {
  for (const bad of ['/.', '/..', '/b/.', '/b/..', '/b/./o', '/b/../o', '/b/%2E', '/b/%2e%2E', '/%2e/o', '/b/o/./', '/b/../']) {
    t.regex(reason(parseTarget(bad)), /'\.\.?' segments are not allowed/, bad);
  }
});

test('NUL and control characters are invalid, encoded or raw', (t) => {
  for (let c = 0; c <= 0x1f; c++) {
    const enc = '%' + c.toString(16).padStart(2, '0');
    t.regex(reason(parseTarget(`/b/a${enc}b`)), /control character/, enc);
    t.regex(reason(parseTarget(`/b/a${String.fromCharCode(c)}b`)), /control character/, `raw ${c}`);
  }
  t.regex(reason(parseTarget('/b/%7F')), /control character/);
  t.regex(reason(parseTarget('/b\u007f/o')), /control character/);
  t.regex(reason(parseTarget('/%00')), /control character/);
  t.is(parseTarget('/b/%20').kind, 'path', 'space is not a control character');
  t.is(parseTarget('/b/%C2%80').kind, 'path', 'U+0080 is not in the refused set');
  t.regex(reason(parseTarget('/b/\ud800')), /not valid UTF-8/, 'a raw lone surrogate');
});

test('a segment may have 255 UTF-8 bytes, not 256', (t) => {
  t.is(parseTarget('/b/' + 'a'.repeat(255)).kind, 'path');
  t.regex(reason(parseTarget('/b/' + 'a'.repeat(256))), /256 bytes.*255 UTF-8 bytes per segment/);
  t.is(parseTarget('/' + 'a'.repeat(255)).kind, 'path', 'bucket at the limit');
  t.regex(reason(parseTarget('/' + 'a'.repeat(256))), /255/, 'bucket over the limit');
  // bytes, not characters: é is 2 bytes, 😀 is 4
  t.is(parseTarget('/b/' + '%C3%A9'.repeat(127) + 'a').kind, 'path', '255 bytes of which 254 in é');
  t.regex(reason(parseTarget('/b/' + '%C3%A9'.repeat(128))), /256 bytes/);
  t.regex(reason(parseTarget('/b/' + '😀'.repeat(64))), /256 bytes/);
  t.is(parseTarget('/b/' + '😀'.repeat(63) + 'abc').kind, 'path');
  // the limit applies to the decoded form: 85 encoded é's are 510 characters raw but 170 bytes
  t.is(parseTarget('/b/' + '%C3%A9'.repeat(85)).kind, 'path');
});

test('a decoded path may have 1024 UTF-8 bytes, not 1025', (t) => {
  const seg = 'x'.repeat(200);
  // '/b' + 5 x ('/' + 200) = 2 + 1005 = 1007; add '/' + 16 = 1024
  const at = '/b' + `/${seg}`.repeat(5) + '/' + 'y'.repeat(16);
  t.is(Buffer.byteLength(at), 1024);
  t.is(parseTarget(at).kind, 'path');
  t.is(parseTarget(at + '/').kind, 'path', 'the trailing slash does not count');
  const over = at + 'y';
  t.regex(reason(parseTarget(over)), /1025 bytes.*1024 UTF-8 bytes/);
  // multibyte: the 1024 is bytes of the decoded path
  const multi = '/b' + `/${'é'.repeat(100)}`.repeat(5) + '/' + 'y'.repeat(16);
  t.is(Buffer.byteLength(multi), 1024);
  t.is(parseTarget(multi).kind, 'path');
  t.regex(reason(parseTarget(multi + 'z')), /1024/);
});

test('ancestors: the containers above a path, outermost first', (t) => {
  t.deepEqual(ancestors('/a'), []);
  t.deepEqual(ancestors('/a/b'), ['/a']);
  t.deepEqual(ancestors('/a/b/c'), ['/a', '/a/b']);
  t.deepEqual(ancestors('/a b/c d/é/f'), ['/a b', '/a b/c d', '/a b/c d/é']);
  for (const bad of ['', '/', 'a/b', '/a/', '/a//b']) t.throws(() => ancestors(bad), { instanceOf: TypeError }, bad);
});

test('containerOf: the parent container; the root / for a bucket-level object', (t) => {
  t.is(containerOf('/a/b/c'), '/a/b');
  t.is(containerOf('/a/b'), '/a');
  t.is(containerOf('/a'), '/');
  t.is(containerOf('/bucket/x.y'), '/bucket');
  for (const bad of ['', '/', 'a', '/a/', '//a']) t.throws(() => containerOf(bad), { instanceOf: TypeError }, bad);
});

test('containerOf agrees with parseTarget and ancestors for every depth', (t) => {
  let raw = '/bkt';
  for (let depth = 1; depth <= 8; depth++) {
    const p = parseTarget(raw);
    if (p.kind !== 'path') return t.fail(raw);
    const anc = ancestors(p.path);
    t.is(anc.length, depth - 1);
    t.is(containerOf(p.path), depth === 1 ? '/' : (anc.at(-1) as string));
    for (const [i, a] of anc.entries()) t.is(a, '/' + p.segments.slice(0, i + 1).join('/'));
    raw += `/s${depth}`;
  }
});

test('containerId: first 12 bytes of SHA-256 of the UTF-8 path, lowercase hex', (t) => {
  const expect = (s: string) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex').slice(0, 24);
  // a known vector: SHA-256("/") = 8a5edab282632443219e051e4ade2d1d5bbc671c781051bf1437897cbdfea0f1
  t.is(containerId('/'), '8a5edab282632443219e051e');
  for (const p of ['/', '/a', '/a/b', '/café', '/😀/x', '/' + 'z'.repeat(1023)]) {
    const id = containerId(p);
    t.regex(id, /^[0-9a-f]{24}$/);
    t.is(id, expect(p), p);
    t.is(containerId(p), id, 'stable');
  }
  t.not(containerId('/a'), containerId('/a/'), 'the exact string is hashed');
  t.not(containerId('/a'), containerId('/A'));
});

test('isValidBucketName', (t) => {
  for (const good of ['a', 'photos', 'my bucket', 'café', '😀', 'a$', '.a', 'a.', '...', 'x'.repeat(255), 'é'.repeat(127) + 'a', 'UPPER', '%2F']) {
    t.true(isValidBucketName(good), JSON.stringify(good));
  }
  const bad = ['', '$', '$a', '$0123456789abcdef01234567', 'a/b', '/', '/a', 'a/', '.', '..', 'x'.repeat(256), 'é'.repeat(128), 'a\u0000', 'a\tb', 'a\nb', '\u001f', '\u007f', 'a\ud800'];
  for (const b of bad) t.false(isValidBucketName(b), JSON.stringify(b));
  t.false(isValidBucketName(undefined as unknown as string));
});

test('every bucket parseTarget accepts is a valid bucket name', (t) => {
  for (const raw of ['/a', '/my%20b', '/caf%C3%A9/x', '/a$/x', '/.a', '/' + 'x'.repeat(255)]) {
    const p = parseTarget(raw);
    if (p.kind !== 'path') return t.fail(raw);
    t.true(isValidBucketName(p.bucket), p.bucket);
  }
});

test('a raw U+FFFD (what a server makes of bytes that are not UTF-8) is invalid; percent-encoded it is a character (issue 21 item 9)', (t) => {
  const r = parseTarget('/b/a\uFFFDb');
  t.is(r.kind, 'invalid');
  t.regex((r as { reason: string }).reason, /segment 2 is not valid UTF-8/);
  t.like(parseTarget('/b/a%EF%BF%BDb'), { kind: 'path', path: '/b/a\uFFFDb' });
});
