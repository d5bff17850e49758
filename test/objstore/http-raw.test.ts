/**
 * The object store's port-80 server fed exact bytes over a raw TCP socket (node:net), for what
 * fetch and curl cannot send (issue 21): raw bytes that are not UTF-8 in a path (item 9),
 * pipelined requests (6), HTTP/1.0 and a missing Host (7), conflicting or malformed framing and
 * bad header bytes, too many or too large headers (8). The store's real server on an ephemeral
 * port with its handlers, no store behind (these answers need none): every bad request gets a
 * JSON error naming what was wrong, at once (no hang), and its connection is closed.
 */
import test from 'ava';
import { exchange, startFront, statuses } from './front-server.js';

let front: Awaited<ReturnType<typeof startFront>>;

test.before(async () => {
  front = await startFront();
});

test.after.always(() => front?.close());

const send = (bytes: Buffer | string | Array<Buffer | string>, opts?: Parameters<typeof exchange>[2]) => exchange(front.port, bytes, opts);

test('raw bytes that are not UTF-8 in an object path: 400 INVALID_TARGET, for every method', async (t) => {
  for (const method of ['GET', 'HEAD', 'DELETE', 'PUT', 'OPTIONS']) {
    const head = Buffer.concat([Buffer.from(`${method} /b/a`), Buffer.from([0xff, 0xfe]), Buffer.from(`b HTTP/1.1\r\nHost: x\r\n${method === 'PUT' ? 'Content-Length: 0\r\n' : ''}\r\n`)]);
    const { text, closed } = await send(head);
    t.regex(text, /^HTTP\/1\.1 400 Bad Request\r\n/, method);
    t.regex(text, /"code":"INVALID_TARGET".*percent-encode a path's UTF-8 bytes/, method);
    t.true(closed, method);
  }
});

test('pipelined requests in one write are all answered, in order, on a connection kept open', async (t) => {
  const { text, closed } = await send(
    'GET /$/nope HTTP/1.1\r\nHost: x\r\n\r\n' + 'PATCH /b/o HTTP/1.1\r\nHost: x\r\n\r\n' + 'POST /b/o HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc' + 'DELETE /$/status HTTP/1.1\r\nHost: x\r\n\r\n',
  );
  t.deepEqual(statuses(text), ['404 Not Found', '405 Method Not Allowed', '400 Bad Request', '405 Method Not Allowed']);
  const codes = [...text.matchAll(/"code":"(\w+)"/g)].map((m) => m[1]);
  t.deepEqual(codes, ['NO_SUCH_ENDPOINT', 'METHOD_NOT_ALLOWED', 'POST_NOT_SUPPORTED', 'METHOD_NOT_ALLOWED']);
  t.false(closed, 'keep-alive: the server did not close');
});

test('a bad request pipelined after good ones: the good ones are answered first, then the 400, then the close', async (t) => {
  const { text, closed } = await send('GET /$/nope HTTP/1.1\r\nHost: x\r\n\r\n' + 'GET /$/nope2 HTTP/1.1\r\nHost: x\r\n\r\n' + 'GET /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n');
  t.deepEqual(statuses(text), ['404 Not Found', '404 Not Found', '400 Bad Request']);
  t.regex(text, /nope2.*"code":"INVALID_CONTENT_LENGTH"/s);
  t.true(closed);
});

test('HTTP/1.0 is answered, and the connection closed unless the client asks for keep-alive', async (t) => {
  const plain = await send('GET /$/nope HTTP/1.0\r\n\r\n');
  t.deepEqual(statuses(plain.text), ['404 Not Found']);
  t.regex(plain.text, /"code":"NO_SUCH_ENDPOINT"/);
  t.regex(plain.text, /\r\nConnection: close\r\n/i);
  t.true(plain.closed, 'closed after the answer');

  const kept = await send('GET /$/nope HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
  t.deepEqual(statuses(kept.text), ['404 Not Found']);
  t.regex(kept.text, /\r\nConnection: keep-alive\r\n/i);
  t.regex(kept.text, /\r\nContent-Length: \d+\r\n/i, 'a length, never chunked, for HTTP/1.0');
  t.false(kept.closed, 'kept open as asked');
});

test('HTTP/1.1 without Host: 400 MISSING_HOST; HTTP/1.0 needs none', async (t) => {
  const { text, closed } = await send('GET /$/nope HTTP/1.1\r\n\r\n');
  t.deepEqual(statuses(text), ['400 Bad Request']);
  t.regex(text, /"code":"MISSING_HOST"/);
  t.true(closed);
});

/** Requests whose framing or bytes are bad, each with the error code it must get. */
const BAD: Array<[string, string | Buffer, string]> = [
  ['conflicting duplicate Content-Length', 'PUT /b/o HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', 'INVALID_CONTENT_LENGTH'],
  ['identical duplicate Content-Length', 'PUT /b/o HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab', 'INVALID_CONTENT_LENGTH'],
  ['Content-Length with Transfer-Encoding', 'PUT /b/o HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n', 'INVALID_CONTENT_LENGTH'],
  ['non-numeric Content-Length', 'PUT /b/o HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 'INVALID_CONTENT_LENGTH'],
  ['negative Content-Length', 'PUT /b/o HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n', 'INVALID_CONTENT_LENGTH'],
  ['Content-Length with a sign', 'PUT /b/o HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nabcde', 'INVALID_CONTENT_LENGTH'],
  ['a control character in a header value', 'GET /b/o HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n', 'INVALID_HEADER'],
  ['DEL in a header value', 'GET /b/o HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n', 'INVALID_HEADER'],
  ['a NUL in a header value', 'GET /b/o HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n', 'INVALID_HEADER'],
  ['a raw space in the target', 'GET /b/o p HTTP/1.1\r\nHost: x\r\n\r\n', 'INVALID_REQUEST_LINE'],
  ['an unknown HTTP version', 'GET /b/o HTTP/1.7\r\nHost: x\r\n\r\n', 'INVALID_REQUEST_LINE'],
  ['a NUL in the target', 'GET /b/o\x00p HTTP/1.1\r\nHost: x\r\n\r\n', 'INVALID_TARGET'],
  ['a control character in the target', 'GET /b/o\x01p HTTP/1.1\r\nHost: x\r\n\r\n', 'INVALID_TARGET'],
  ['a bare LF header line ending mixed with CR', 'GET /b/o HTTP/1.1\r\nHost: x\rX: y\r\n\r\n', 'BAD_REQUEST'],
  ['a target that is not a path', 'GET b/o HTTP/1.1\r\nHost: x\r\n\r\n', 'INVALID_TARGET'],
];

for (const [what, bytes, code] of BAD) {
  test(`400 ${code} at once, and the connection closed: ${what}`, async (t) => {
    const { text, closed, ms } = await send(bytes, { quietMs: 3000 });
    t.deepEqual(statuses(text), ['400 Bad Request'], JSON.stringify(text.slice(0, 120)));
    t.regex(text, new RegExp(`"code":"${code}"`));
    t.regex(text, /\r\nContent-Type: application\/json\r\n/);
    t.true(closed, 'closed by the server');
    t.true(ms < 1500, `answered in ${ms} ms`);
  });
}

test('CONNECT is answered 405, not dropped', async (t) => {
  const { text, closed } = await send('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  t.deepEqual(statuses(text), ['405 Method Not Allowed']);
  t.regex(text, /"code":"METHOD_NOT_ALLOWED".*CONNECT is not supported/);
  t.true(closed);
});

test('431 for headers over the size limit and for too many headers, at once', async (t) => {
  const big = await send(`GET /b/o HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, { quietMs: 3000 });
  t.deepEqual(statuses(big.text), ['431 Request Header Fields Too Large']);
  t.regex(big.text, /"code":"HEADERS_TOO_LARGE".*16384 bytes/);
  t.true(big.closed);
  t.true(big.ms < 1500);

  const many = Array.from({ length: 150 }, (_, i) => `X-H${i}: v\r\n`).join('');
  const lots = await send(`GET /b/o HTTP/1.1\r\nHost: x\r\n${many}\r\n`, { quietMs: 3000 });
  t.deepEqual(statuses(lots.text), ['431 Request Header Fields Too Large']);
  t.regex(lots.text, /"code":"TOO_MANY_HEADERS".*at most 100 headers/);
  t.true(lots.closed);

  // 100 headers exactly are fine.
  const fine = Array.from({ length: 99 }, (_, i) => `X-H${i}: v\r\n`).join('');
  const ok = await send(`GET /$/nope HTTP/1.1\r\nHost: x\r\n${fine}\r\n`);
  t.deepEqual(statuses(ok.text), ['404 Not Found']);
});

test('headers that trickle in too slowly: 408 REQUEST_TIMEOUT at the headers timeout, then closed', async (t) => {
  const { text, closed, ms } = await send(['GET /b/o HTTP/1.1\r\n', 'Host: x\r\n'], { gapMs: 100, quietMs: 6000 });
  t.deepEqual(statuses(text), ['408 Request Timeout']);
  t.regex(text, /"code":"REQUEST_TIMEOUT".*2000 ms/);
  t.true(closed);
  t.true(ms >= 1900 && ms < 4500, `${ms} ms`);
});
