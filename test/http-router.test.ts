/**
 * runtime/http/router.ts: pure matching of route tables (no server). Parameters, the rest
 * segment, trailing slashes, encoded segments, method mismatch (405 with the allowed methods),
 * table order, and the pattern checks made when a table is built.
 */
import test from 'ava';
import { decodeParam, routeFor, Router, type Match, type Route } from '../runtime/http/router.js';

/** Handlers here name their route, so a match can be checked by what its handler returns. */
const route = routeFor<null, string>();

const table: Route<null, string>[] = [
  route('GET', '/$/volumes', () => 'list'),
  route('POST', '/$/volumes', () => 'provision'),
  route('GET', '/$/volumes/:id', (_c, { id }) => `get ${id}`),
  route('PUT', '/$/volumes/:id', (_c, { id }) => `put ${id}`),
  route('POST', '/$/volumes/:id/drain', (_c, { id }) => `drain ${id}`),
  route('GET', '/$/volumes/:id/drain', (_c, { id }) => `drain? ${id}`),
  route('DELETE', '/$/volumes/:id/drain', (_c, { id }) => `undrain ${id}`),
  route('GET', '/$/buckets/stats', () => 'bucket stats'),
  route('PUT', '/$/buckets/:name/policy', (_c, { name }) => `policy ${name}`),
  route('GET', '/$/fileinfo/*', (_c, params) => `fileinfo [${params['*']}]`),
  route('GET', '/$/a/:x/b/:y', (_c, { x, y }) => `${x}+${y}`),
  route('GET', '/', () => 'root'),
];
const router = new Router(table);

function run(m: Match<null, string>): string {
  if (m.kind !== 'found') return m.kind === 'not-found' ? '404' : `405 ${m.allow.join(',')} on ${m.path}`;
  return m.route.handle(null, m.params);
}
const at = (method: string, path: string) => run(router.match(method, path));

test('literal paths match by method and path', (t) => {
  t.is(at('GET', '/$/volumes'), 'list');
  t.is(at('POST', '/$/volumes'), 'provision');
  t.is(at('GET', '/$/buckets/stats'), 'bucket stats');
  t.is(at('GET', '/'), 'root');
});

test('methods are compared upper-case', (t) => {
  t.is(at('get', '/$/volumes'), 'list');
  t.is(at('Post', '/$/volumes'), 'provision');
});

test('named parameters take one segment each, raw', (t) => {
  t.is(at('GET', '/$/volumes/7'), 'get 7');
  t.is(at('PUT', '/$/volumes/abc'), 'put abc', 'the router does not judge a parameter: the handler does');
  t.is(at('POST', '/$/volumes/12/drain'), 'drain 12');
  t.is(at('GET', '/$/a/1/b/2'), '1+2');
  t.deepEqual((router.match('GET', '/$/a/x/b/y') as { params: object }).params, { x: 'x', y: 'y' });
});

/** Paths no route of the table matches, each with why. */
const unknown: Array<[string, string]> = [
  ['/$/volumes//drain', 'a parameter never matches an empty segment'],
  ['/$/a//b/2', 'a parameter never matches an empty segment'],
  ['/$/volumes/7/drain/x', 'longer than every pattern'],
  ['/$/a/1/b', 'shorter than its pattern'],
  ['/$', 'shorter than every pattern'],
  ['/$/nope', 'no such literal'],
  ['', 'not even a slash'],
  ['volumes', 'a path that does not begin with /'],
  ['/$/volumes/', 'a trailing slash is a segment: not /$/volumes, and not /$/volumes/:id with an empty id'],
  ['/$/volumes/7/', 'a trailing slash is a segment'],
  ['/$/buckets/stats/', 'a trailing slash is a segment'],
  ['//', 'two empty segments'],
];

test('paths that match no pattern: empty segments, other lengths, trailing slashes', (t) => {
  for (const [path, why] of unknown) t.is(at('GET', path), '404', `${JSON.stringify(path)}: ${why}`);
});

test('the rest segment takes what follows, empty, one or several segments, trailing slash kept', (t) => {
  t.is(at('GET', '/$/fileinfo/b/c/o.txt'), 'fileinfo [b/c/o.txt]');
  t.is(at('GET', '/$/fileinfo/$0123'), 'fileinfo [$0123]');
  t.is(at('GET', '/$/fileinfo/'), 'fileinfo []');
  t.is(at('GET', '/$/fileinfo/b/c/'), 'fileinfo [b/c/]');
  t.is(at('GET', '/$/fileinfo'), '404', 'the slash before * is part of the pattern');
});

test('encoded segments: split before decoding, literals as written, parameters raw', (t) => {
  t.is(at('PUT', '/$/buckets/my%20bucket/policy'), 'policy my%20bucket');
  t.is(at('PUT', '/$/buckets/a%2Fb/policy'), 'policy a%2Fb', 'an encoded / stays inside its segment');
  t.is(at('GET', '/$/volumes/%31'), 'get %31');
  t.is(at('GET', '/$/buckets/st%61ts'), '404', 'a literal does not match its encoded form');
  t.is(at('GET', '/%24/volumes'), '404');
  t.is(at('PUT', '/$/buckets/%zz/policy'), 'policy %zz', 'bad encoding is the handler’s to refuse');
});

test('decodeParam decodes a parameter, or says its encoding is bad', (t) => {
  t.is(decodeParam('my%20bucket'), 'my bucket');
  t.is(decodeParam('a%2Fb'), 'a/b');
  t.is(decodeParam('plain'), 'plain');
  t.is(decodeParam('%zz'), null);
  t.is(decodeParam('%E0%A4%A'), null);
});

test('a known path with another method is 405, listing the methods of the path in table order', (t) => {
  t.is(at('DELETE', '/$/volumes'), '405 GET,POST on /$/volumes');
  t.is(at('PATCH', '/$/volumes/3'), '405 GET,PUT on /$/volumes/:id');
  t.is(at('PUT', '/$/volumes/3/drain'), '405 POST,GET,DELETE on /$/volumes/:id/drain');
  t.is(at('HEAD', '/$/buckets/stats'), '405 GET on /$/buckets/stats', 'HEAD is not GET');
  t.is(at('POST', '/$/fileinfo/a/b'), '405 GET on /$/fileinfo/*');
});

test('when patterns overlap, the first route with the method wins and 405 lists every match', (t) => {
  const r = routeFor<null, string>();
  const overlap = new Router([
    r('GET', '/x/fixed', () => 'fixed'),
    r('PUT', '/x/:p', (_c, { p }) => `param ${p}`),
    r('GET', '/x/:p', (_c, { p }) => `param get ${p}`),
    r('POST', '/x/*', () => 'rest'),
  ]);
  const go = (method: string, path: string) => run(overlap.match(method, path));
  t.is(go('GET', '/x/fixed'), 'fixed', 'the earlier literal first');
  t.is(go('PUT', '/x/fixed'), 'param fixed', 'a later pattern with the method');
  t.is(go('GET', '/x/other'), 'param get other');
  t.is(go('POST', '/x/fixed'), 'rest');
  t.is(go('DELETE', '/x/fixed'), '405 GET,PUT,POST on /x/fixed', 'each method once, the first matching pattern named');
  t.is(go('DELETE', '/x/a/b'), '405 POST on /x/*');
});

test('an empty table knows no path', (t) => {
  t.is(run(new Router<null, string>([]).match('GET', '/')), '404');
});

test('tables are checked when the router is built', (t) => {
  t.throws(() => new Router([route('GET', '/a', () => ''), route('GET', '/a', () => '')]), { message: /GET \/a is declared twice/ });
  t.throws(() => new Router([route('GET', 'a', () => '')]), { message: /must begin with \// });
  t.throws(() => new Router([route('GET', '/a/*/b', () => '')]), { message: /\* must be the last segment/ });
  t.throws(() => new Router([route('GET', '/a/:', () => '')]), { message: /needs a name/ });
  t.notThrows(() => new Router([route('GET', '/a', () => ''), route('PUT', '/a', () => '')]), 'one path, two methods');
});

test('handler parameters are typed by the pattern', (t) => {
  // Compile-time checks: a name the pattern does not declare is an error.
  // @ts-expect-error: '/v/:id' has no parameter 'name'
  route('GET', '/v/:id', (_c, { name }) => String(name));
  // @ts-expect-error: a pattern without * has no rest
  route('GET', '/v/:id', (_c, p) => p['*']);
  const ok = route('GET', '/v/:id/s/:slot/*', (_c, p) => `${p.id} ${p.slot} ${p['*']}`);
  t.is(run(new Router([ok]).match('GET', '/v/1/s/2/x/y')), '1 2 x/y');
});
