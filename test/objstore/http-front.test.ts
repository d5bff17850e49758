/**
 * The object store's port-80 server with a real store behind it (six loop-device volumes),
 * for what needs the store (issue 21): `100 Continue` only once a PUT is accepted (item 2, and
 * the "two concurrent PUTs" race), Content-Lengths of 1e9 and more accepted, 413 and 507 answered
 * before any body is read (2), pipelined requests that take effect each answered, in order (6),
 * HTTP/1.0 PUT and GET as a proxy speaks them (7). Raw sockets, where fetch cannot send the bytes.
 */
import { createHash } from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { FileScope, startStore, type Store } from './harness.js';
import { exchange, rawConn, statuses } from './front-server.js';

const test = anyTest as TestFn<{ store: Store; port: number }>;
const md5 = (b: Uint8Array | string) => createHash('md5').update(b).digest('hex');

const scope = new FileScope();
test.before(async (t) => {
  t.context.store = await startStore(scope, { volumes: 6, sizeMiB: 512 });
  t.context.port = Number(new URL(t.context.store.url).port);
});
test.after.always(() => scope.run());

const putHead = (path: string, length: number | null, extra = '') =>
  `PUT ${path} HTTP/1.1\r\nHost: x\r\n${length === null ? '' : `Content-Length: ${length}\r\n`}Expect: 100-continue\r\n${extra}\r\n`;

test.serial('100 Continue only once a PUT is accepted: a second PUT to the path gets 409 without it, no Content-Length 411 without it', async (t) => {
  const { port, store } = t.context;
  const first = await rawConn(port);
  t.teardown(() => first.destroy());
  await first.write(putHead('/cont/one', 5));
  await first.waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n/);

  const second = await rawConn(port);
  t.teardown(() => second.destroy());
  await second.write(putHead('/cont/one', 5));
  await second.waitFor(/\r\n\r\n\{.*\}/s);
  t.deepEqual(statuses(second.text()), ['409 Conflict'], 'no 100 Continue before the refusal');
  t.regex(second.text(), /"code":"PATH_BUSY"/);
  await second.closed;

  const none = await rawConn(port);
  t.teardown(() => none.destroy());
  await none.write(putHead('/cont/two', null));
  await none.waitFor(/\r\n\r\n\{.*\}/s);
  t.deepEqual(statuses(none.text()), ['411 Length Required']);

  // The accepted one sends its body now and is stored.
  await first.write('hello');
  await first.waitFor(/HTTP\/1\.1 201 Created\r\n/);
  t.deepEqual(statuses(first.text()), ['100 Continue', '201 Created']);
  const got = await fetch(store.url + '/cont/one');
  t.is(await got.text(), 'hello');
});

test.serial('a Content-Length of 1e9 and more is accepted; 507 and 413 are answered before any body is read', async (t) => {
  const { port, store } = t.context;
  for (const length of [1_000_000_000, 999_999_999]) {
    const c = await rawConn(port);
    await c.write(putHead(`/big/a${length}`, length));
    await c.waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    t.pass(`${length}: accepted (100 Continue)`);
    c.destroy();
    await c.closed;
  }
  // More than the volumes hold (1e12 < the tests' 1 TiB limit): 507, no 100, the connection closed.
  const full = await rawConn(port);
  await full.write(putHead('/big/b', 1e12));
  const ms = await full.closed;
  t.deepEqual(statuses(full.text()), ['507 Insufficient Storage']);
  t.regex(full.text(), /"code":"INSUFFICIENT_STORAGE"/);
  t.true(ms < 3000, `answered and closed in ${ms} ms`);
  // Over the limit: 413, even for a client that sends its body without waiting.
  const over = await rawConn(port);
  await over.write(`PUT /big/c HTTP/1.1\r\nHost: x\r\nContent-Length: ${1024 ** 4 + 1}\r\n\r\n`);
  await over.write(Buffer.alloc(1024 * 1024, 1));
  await over.waitFor(/\r\n\r\n\{.*\}/s);
  t.deepEqual(statuses(over.text()), ['413 Content Too Large']);
  t.regex(over.text(), /"code":"TOO_LARGE"/);
  t.regex(over.text(), /\r\nConnection: close\r\n/);
  await over.closed;
  // Nothing of the abandoned uploads is left.
  await new Promise((r) => setTimeout(r, 300));
  for (const p of ['/big/a1000000000', '/big/a999999999', '/big/b', '/big/c']) t.is((await fetch(store.url + p, { method: 'HEAD' })).status, 404, p);
});

test.serial('pipelined requests that take effect: each is answered, in order, on one connection', async (t) => {
  const { port, store } = t.context;
  const a = 'a'.repeat(3000);
  const b = 'b'.repeat(70_000);
  const { text } = await exchange(port, [
    `PUT /pipe/a HTTP/1.1\r\nHost: x\r\nContent-Length: ${a.length}\r\n\r\n${a}` +
      `PUT /pipe/b HTTP/1.1\r\nHost: x\r\nContent-Length: ${b.length}\r\n\r\n${b}` +
      `GET /pipe/a HTTP/1.1\r\nHost: x\r\n\r\n` +
      `PUT /pipe/a HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx` +
      `DELETE /pipe/b HTTP/1.1\r\nHost: x\r\n\r\n` +
      `PUT /$/maintenance-freeze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"frozen":true}` +
      `PUT /$/maintenance-freeze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{"frozen":false}`,
  ]);
  const got = statuses(text);
  t.is(got.length, 7, got.join(' | '));
  t.deepEqual(got.slice(0, 5), ['201 Created', '201 Created', '200 OK', '409 Conflict', '204 No Content']);
  t.regex(got[5]!, /^200 /, 'the freeze answered');
  t.regex(got[6]!, /^200 /, 'the thaw answered');
  t.regex(text, /"frozen":true.*"frozen":false/s, 'in order');
  t.true(text.includes(`\r\n\r\n${a}HTTP/1.1 409`), 'the GET body, then the next answer');
  t.regex(text, new RegExp(`Content-MD5: ${md5(a)}`, 'i'));
  t.is((await fetch(store.url + '/pipe/b')).status, 404, 'the pipelined DELETE took effect, and was answered');
  t.is(await (await fetch(store.url + '/pipe/a')).text(), a);
});

test.serial('HTTP/1.0, as a proxy speaks it: PUT and GET answered, each connection closed after its answer', async (t) => {
  const { port } = t.context;
  const put = await exchange(port, `PUT /old/one HTTP/1.0\r\nContent-Length: 4\r\n\r\nold!`);
  t.deepEqual(statuses(put.text), ['201 Created']);
  t.true(put.closed);
  const get = await exchange(port, `GET /old/one HTTP/1.0\r\n\r\n`);
  t.deepEqual(statuses(get.text), ['200 OK']);
  t.regex(get.text, /\r\nContent-Length: 4\r\n/i);
  t.true(get.text.endsWith('\r\n\r\nold!'));
  t.true(get.closed);
});
