/**
 * http/body-feed.ts on the store's real port-80 server (node:http, ephemeral port) with a real client (a raw
 * TCP socket, so the test decides how the body is sent): fast, slow, stopping short, going
 * away, a consumer that comes late and one that is slower than the client. Each test checks
 * what the consumer received, byte for byte, and how the feed ended; the slow consumer tests
 * that backpressure held (nothing pushed while the consumer said wait, the feed's own buffer
 * bounded, the idle timer quiet while the client is held back).
 */
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { startFront } from './front-server.js';
import { BodyFeed, type BodySink } from '../../actors/objstore/http/body-feed.js';
import { send, sendError } from '../../actors/objstore/http/respond.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A consumer that takes `limit` bytes, then asks to wait `drainMs` before it takes more. */
class TestSink implements BodySink {
  readonly chunks: Buffer[] = [];
  pushes = 0;
  pushesWhileFull = 0;
  waits = 0;
  /** The most the feed held back, seen at each push. */
  maxFeedBuffered = 0;
  feed: BodyFeed | null = null;
  private pending = 0;
  private full = false;
  constructor(
    private readonly limit = Infinity,
    private readonly drainMs = 0,
  ) {}
  get body(): Buffer {
    return Buffer.concat(this.chunks);
  }
  push(chunk: Uint8Array): boolean {
    this.pushes++;
    if (this.full) this.pushesWhileFull++;
    this.maxFeedBuffered = Math.max(this.maxFeedBuffered, this.feed?.buffered ?? 0);
    this.chunks.push(Buffer.from(chunk)); // a copy, as the sink contract asks
    this.pending += chunk.byteLength;
    if (this.pending >= this.limit) this.full = true;
    return !this.full;
  }
  drained(): Promise<void> {
    if (!this.full) return Promise.resolve();
    this.waits++;
    return sleep(this.drainMs).then(() => {
      this.pending = 0;
      this.full = false;
    });
  }
}

/** What the server saw of one request. */
interface Scenario {
  sink: TestSink;
  idleMs: number;
  /** attach the sink this long after the request came (the writer's begin takes time) */
  attachAfterMs: number;
  ended: number;
  /** what the feed held for the sink when it came */
  bufferedAtAttach: number;
  idle: number | null;
  aborted: boolean;
  feed: BodyFeed | null;
  /** resolves when the feed ended, idled or the client went away */
  settled: Promise<void>;
  settle: () => void;
}

const scenarios = new Map<string, Scenario>();
let front: Awaited<ReturnType<typeof startFront>>;
let port = 0;

test.before(async () => {
  front = await startFront((r, url) => {
    const sc = scenarios.get(url)!;
    const expected = Number(r.req.headers['content-length']);
    const feed = new BodyFeed(r, {
      expected,
      idleMs: sc.idleMs,
      onEnd: () => {
        sc.ended++;
        send(r, 201, '');
        sc.settle();
      },
      onIdle: (got) => {
        sc.idle = got;
        sendError(r, 455, 'LENGTH_MISMATCH', `received ${got} of ${expected}`, [['X-Received-Bytes', String(got)]], true);
        sc.settle();
      },
    });
    sc.feed = feed;
    sc.sink.feed = feed;
    r.onAbort(() => {
      sc.aborted = true;
      feed.stop();
      sc.settle();
    });
    if (sc.attachAfterMs === 0) feed.attach(sc.sink);
    else
      setTimeout(() => {
        if (r.aborted) return;
        sc.bufferedAtAttach = feed.buffered;
        feed.attach(sc.sink);
      }, sc.attachAfterMs);
  });
  port = front.port;
});

test.after.always(() => front?.close());

function scenario(path: string, sink: TestSink, opts: { idleMs?: number; attachAfterMs?: number } = {}): Scenario {
  let settle!: () => void;
  const settled = new Promise<void>((r) => (settle = r));
  const sc: Scenario = { sink, idleMs: opts.idleMs ?? 2000, attachAfterMs: opts.attachAfterMs ?? 0, ended: 0, bufferedAtAttach: 0, idle: null, aborted: false, feed: null, settled, settle };
  scenarios.set(path, sc);
  return sc;
}

/** A PUT of `total` bytes whose body `write` sends; resolves with the response's status line (or null: no answer). */
async function put(path: string, total: number, write: (sock: net.Socket) => Promise<void>): Promise<{ status: string | null; head: string }> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
  let got = '';
  const answered = new Promise<{ status: string | null; head: string }>((resolve) => {
    const done = () => {
      const head = got.split('\r\n\r\n')[0] ?? '';
      resolve({ status: head ? head.split('\r\n')[0]!.slice('HTTP/1.1 '.length) : null, head });
    };
    sock.on('data', (d) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        sock.destroy();
        done();
      }
    });
    sock.on('close', done);
    sock.on('error', () => undefined);
  });
  sock.write(`PUT ${path} HTTP/1.1\r\nHost: test\r\nContent-Length: ${total}\r\n\r\n`);
  await write(sock);
  return answered;
}

const writeAll = (sock: net.Socket, b: Uint8Array) => new Promise<void>((resolve) => (sock.write(b) ? resolve() : sock.once('drain', resolve)));

test.serial('a fast client: every byte reaches the consumer in order, and the feed ends once', async (t) => {
  const body = randomBytes(8 * 1024 * 1024);
  const sc = scenario('/fast', new TestSink());
  const res = await put('/fast', body.byteLength, (s) => writeAll(s, body));
  await sc.settled;
  t.is(res.status, '201 Created');
  t.is(sc.ended, 1);
  t.is(sc.idle, null);
  t.is(sha(sc.sink.body), sha(body));
  t.true(sc.feed!.ended);
  t.is(sc.feed!.received, body.byteLength);
});

test.serial('a slow client (small pieces, pauses shorter than the idle time) is waited for', async (t) => {
  const body = randomBytes(40 * 1024);
  const sc = scenario('/slow', new TestSink(), { idleMs: 400 });
  const res = await put('/slow', body.byteLength, async (s) => {
    for (let off = 0; off < body.byteLength; off += 2048) {
      await writeAll(s, body.subarray(off, off + 2048));
      await sleep(15);
    }
  });
  await sc.settled;
  t.is(res.status, '201 Created');
  t.is(sc.ended, 1);
  t.is(sc.idle, null);
  t.is(sha(sc.sink.body), sha(body));
  t.true(sc.sink.pushes >= 10, `pieces arrive as they are sent (${sc.sink.pushes} pushes)`);
});

test.serial('a client that stops short: onIdle with the bytes received, which the consumer has', async (t) => {
  const body = randomBytes(300 * 1024);
  const sent = 100 * 1024;
  const sc = scenario('/short', new TestSink(), { idleMs: 300 });
  const started = Date.now();
  const res = await put('/short', body.byteLength, (s) => writeAll(s, body.subarray(0, sent)));
  await sc.settled;
  t.is(res.status, '455 Length Mismatch');
  t.regex(res.head, /X-Received-Bytes: 102400/i);
  t.true(Date.now() - started >= 290, 'only after the idle time');
  t.is(sc.idle, sent);
  t.is(sc.ended, 0);
  t.is(sha(sc.sink.body), sha(body.subarray(0, sent)));
  t.true(sc.feed!.ended, 'the feed is stopped');
});

test.serial('a client that goes away mid-body: the abort hook runs, the feed stops, the consumer has a prefix', async (t) => {
  const body = randomBytes(2 * 1024 * 1024);
  const sc = scenario('/abort', new TestSink());
  const res = await put('/abort', body.byteLength, async (s) => {
    await writeAll(s, body.subarray(0, 512 * 1024));
    await sleep(100);
    s.destroy();
  });
  await sc.settled;
  t.is(res.status, null, 'no answer');
  t.true(sc.aborted);
  t.is(sc.ended, 0);
  t.is(sc.idle, null);
  t.true(sc.feed!.ended);
  const got = sc.sink.body;
  t.true(got.byteLength > 0 && got.byteLength <= 512 * 1024, `${got.byteLength} bytes`);
  t.is(sha(got), sha(body.subarray(0, got.byteLength)), 'a prefix of what was sent');
});

test.serial('a consumer that comes late gets what was queued, in order, then the rest', async (t) => {
  const body = randomBytes(3 * 1024 * 1024);
  const sc = scenario('/late', new TestSink(), { attachAfterMs: 150 });
  const res = await put('/late', body.byteLength, async (s) => {
    await writeAll(s, body.subarray(0, 1024 * 1024));
    await sleep(300);
    await writeAll(s, body.subarray(1024 * 1024));
  });
  await sc.settled;
  t.is(res.status, '201 Created');
  t.is(sc.ended, 1);
  t.is(sha(sc.sink.body), sha(body));
  t.true(sc.bufferedAtAttach > 0, `the early bytes were held for it (${sc.bufferedAtAttach})`);
  t.is(sc.feed!.buffered, 0);
});

test.serial('a consumer that comes late after the whole body came: it all flows at attach, and the feed ends', async (t) => {
  const body = randomBytes(64 * 1024);
  const sc = scenario('/late-all', new TestSink(), { attachAfterMs: 200, idleMs: 100 });
  const res = await put('/late-all', body.byteLength, (s) => writeAll(s, body));
  await sc.settled;
  t.is(res.status, '201 Created');
  t.is(sc.idle, null, 'a client that sent everything is not idle');
  t.is(sha(sc.sink.body), sha(body));
});

test.serial('a consumer slower than the client: backpressure holds the client, nothing is pushed while it waits', async (t) => {
  const body = randomBytes(48 * 1024 * 1024);
  const limit = 1024 * 1024;
  // Each wait is longer than the idle time: the client is held back, not idle.
  const sc = scenario('/slow-sink', new TestSink(limit, 150), { idleMs: 100 });
  const res = await put('/slow-sink', body.byteLength, (s) => writeAll(s, body));
  await sc.settled;
  t.is(res.status, '201 Created');
  t.is(sc.idle, null, 'the idle timer is quiet while the socket is paused');
  t.is(sha(sc.sink.body), sha(body));
  t.is(sc.sink.pushesWhileFull, 0, 'no push between a false and drained()');
  t.true(sc.sink.waits >= 10, `the consumer asked to wait (${sc.sink.waits} times)`);
  // While paused, Node hands over at most what it had read already: the feed holds about one receive buffer, not the body.
  t.true(sc.sink.maxFeedBuffered <= 1024 * 1024, `the feed held at most ${sc.sink.maxFeedBuffered} bytes`);
});

test.serial('an empty body: one empty last chunk at attach, the feed ends at once, no idle timer', async (t) => {
  const sc = scenario('/empty', new TestSink(), { idleMs: 50 });
  const res = await put('/empty', 0, async () => undefined);
  await sc.settled;
  await sleep(100);
  t.is(res.status, '201 Created');
  t.is(sc.ended, 1);
  t.is(sc.idle, null);
  t.is(sc.sink.body.byteLength, 0);
});
