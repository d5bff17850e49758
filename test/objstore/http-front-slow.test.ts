/**
 * Slow clients on the object store's port 80, reading and writing really slowly over raw
 * sockets, against a store whose timeouts are above the ~10 s the old server cut at (issue 21
 * items 3 and 5): a GET read at 128 KiB/s is never cut while it makes progress, a reader that
 * takes nothing is cut at OBJSTORE_SEND_IDLE_TIMEOUT_MS; a PUT body sent slowly is stored, a
 * stalled one is answered 455 at OBJSTORE_BODY_IDLE_TIMEOUT_MS (not dropped silently before).
 * The tests run at once (they mostly wait).
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { FileScope, startStore, type Store } from './harness.js';
import { rawConn, startFront, statuses } from './front-server.js';
import { streamBody } from '../../actors/objstore/http/stream.js';

const test = anyTest as TestFn<{ store: Store; port: number; object: Buffer }>;
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SEND_IDLE_MS = 18_000;
const BODY_IDLE_MS = 12_000;
/** Larger than what the kernel buffers on both ends hold, so the server really waits on the reader. */
const OBJECT_BYTES = 48 * 1024 * 1024;

const scope = new FileScope();
test.before(async (t) => {
  t.context.store = await startStore(scope, { volumes: 6, sizeMiB: 512, values: { sendIdleTimeoutMs: SEND_IDLE_MS, bodyIdleTimeoutMs: BODY_IDLE_MS } });
  t.context.port = Number(new URL(t.context.store.url).port);
  t.context.object = randomBytes(OBJECT_BYTES);
  const res = await fetch(t.context.store.url + '/slow/object', { method: 'PUT', body: t.context.object });
  if (res.status !== 201) throw new Error(`PUT: ${res.status} ${await res.text()}`);
});
test.after.always(() => scope.run());

/** A GET whose body the test reads at `rate` bytes/s (0: not at all). */
function slowGet(port: number, path: string, rate: number): { sock: Socket; received: () => number; closed: Promise<number>; stop(): void; go(): void } {
  const sock = connect(port, '127.0.0.1');
  const opened = Date.now();
  let received = 0;
  let stopped = rate === 0;
  sock.on('error', () => undefined);
  sock.on('data', (d: Buffer) => {
    received += d.byteLength;
    if (stopped) return void sock.pause();
    // Ahead of the rate: wait until it catches up.
    const due = (received / rate) * 1000 - (Date.now() - opened);
    if (due > 0) {
      sock.pause();
      setTimeout(() => !stopped && sock.resume(), due);
    }
  });
  sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  const closed = new Promise<number>((resolve) => sock.once('close', () => resolve(Date.now() - opened)));
  return {
    sock,
    received: () => received,
    closed,
    stop: () => {
      stopped = true;
      sock.pause();
    },
    go: () => {
      rate = Infinity;
      stopped = false;
      sock.resume();
    },
  };
}

test('a GET read at 128 KiB/s is not cut while it makes progress', async (t) => {
  const rate = 128 * 1024;
  const reader = slowGet(t.context.port, '/slow/object', rate);
  t.teardown(() => reader.sock.destroy());
  let cut = false;
  void reader.closed.then(() => (cut = true));
  const seconds = 30;
  await sleep(seconds * 1000);
  t.false(cut, `still open after ${seconds} s (longer than the ${SEND_IDLE_MS} ms idle timeout)`);
  const got = reader.received();
  t.true(got > 0.8 * rate * seconds && got < 1.2 * rate * seconds + 64 * 1024, `read ${got} bytes in ${seconds} s`);
  t.true(got < OBJECT_BYTES / 4, 'far from the end: the server was waiting on the reader');
});

test('a GET whose client takes nothing is cut once the send idle timeout passes with no progress', async (t) => {
  const reader = slowGet(t.context.port, '/slow/object', 0);
  t.teardown(() => reader.sock.destroy());
  // A paused socket does not see its close: read again after the idle timeout, and the rest of
  // what the kernel buffered comes, then the end, far short of the object.
  await sleep(SEND_IDLE_MS + 8000);
  const resumedAt = Date.now();
  reader.go();
  const ms = await Promise.race([reader.closed, sleep(15_000).then(() => -1)]);
  t.true(ms !== -1, `the server had cut the connection (closed ${Date.now() - resumedAt} ms after reading again, ${reader.received()} bytes)`);
  t.true(reader.received() < OBJECT_BYTES / 2, `${reader.received()} bytes of ${OBJECT_BYTES} came`);
});

test('the send idle timer: progress resets it; no progress for idleMs calls onIdle and cuts (http/stream.ts on the front alone)', async (t) => {
  const piece = Buffer.alloc(256 * 1024, 7);
  const total = 400 * piece.byteLength;
  const idleMs = 2000;
  let idleAt = 0;
  let idleSent = -1;
  const front = await startFront((r) => {
    void streamBody(r, 200, [], total, (async function* () {
      for (let i = 0; i < 400; i++) yield piece;
    })(), { idleMs, onError: () => undefined, onIdle: (sent) => ((idleAt = Date.now()), (idleSent = sent)) });
  });
  t.teardown(() => front.close());
  // Read at 4 MiB/s for 4 s (twice the idle time): never idle. Then stop.
  const reader = slowGet(front.port, '/x', 4 * 1024 * 1024);
  t.teardown(() => reader.sock.destroy());
  await sleep(4000);
  t.is(idleSent, -1, 'not idle while reading');
  const stoppedAt = Date.now();
  reader.stop();
  await sleep(idleMs + 12_000);
  t.true(idleSent > 0 && idleSent < total, `onIdle after ${idleSent} bytes`);
  // The last progress may come a little before the stop (the reader paused to keep its rate).
  t.true(idleAt - stoppedAt >= idleMs - 600, `idle ${idleAt - stoppedAt} ms after the reader stopped`);
});

test('a PUT body sent slowly (16 KiB a second, for longer than the body idle timeout) is stored', async (t) => {
  const body = randomBytes(16 * 1024 * 16);
  const c = await rawConn(t.context.port);
  t.teardown(() => c.destroy());
  const started = Date.now();
  await c.write(`PUT /slow/upload HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.byteLength}\r\n\r\n`);
  for (let off = 0; off < body.byteLength; off += 16 * 1024) {
    await c.write(body.subarray(off, off + 16 * 1024));
    await sleep(1000);
  }
  await c.waitFor(/\r\n\r\n/);
  t.deepEqual(statuses(c.text()), ['201 Created']);
  t.true(Date.now() - started > BODY_IDLE_MS, 'the upload lasted longer than the idle timeout');
  const got = Buffer.from(await (await fetch(t.context.store.url + '/slow/upload')).arrayBuffer());
  t.is(md5(got), md5(body));
});

test('a PUT body that stalls is answered 455 at the configured idle timeout (12 s), and nothing is stored', async (t) => {
  const c = await rawConn(t.context.port);
  t.teardown(() => c.destroy());
  await c.write(`PUT /slow/stalled HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n`);
  await c.write(randomBytes(100 * 1024));
  const sentAt = Date.now();
  await c.waitFor(/\r\n\r\n\{.*\}/s, BODY_IDLE_MS + 10_000);
  const ms = Date.now() - sentAt;
  t.deepEqual(statuses(c.text()), ['455 Length Mismatch']);
  t.regex(c.text(), /X-Received-Bytes: 102400\r\n/i);
  t.regex(c.text(), /"code":"LENGTH_MISMATCH"/);
  t.true(ms >= BODY_IDLE_MS - 200 && ms < BODY_IDLE_MS + 3000, `answered after ${ms} ms`);
  await c.closed;
  t.is((await fetch(t.context.store.url + '/slow/stalled', { method: 'HEAD' })).status, 404);
});
