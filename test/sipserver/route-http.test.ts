/**
 * The route lookups' HTTP client (actors/sipserver/route-http.ts) against real servers: node's
 * http server for the framings a handler may use (Content-Length, chunked, to the close,
 * Connection: close, idle connections closed by the server) and raw TCP servers for what a
 * broken handler does (a kept-alive connection dropped under the next request, an answer cut
 * short, no status line, too big, nobody listening).
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import net from 'node:net';
import { RouteHttpError, RouteHttpPool } from '../../actors/sipserver/route-http.js';

const MAX = 64 * 1024;

async function httpServer(t: ExecutionContext, handler: http.RequestListener): Promise<{ port: number; connections: () => number }> {
  const server = http.createServer(handler);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

async function rawServer(t: ExecutionContext, onRequest: (s: net.Socket, n: number) => void): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString('latin1');
      while (buf.includes('\r\n\r\n')) {
        buf = buf.slice(buf.indexOf('\r\n\r\n') + 4);
        onRequest(s, ++requests);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

function pool(t: ExecutionContext, port: number): RouteHttpPool {
  const p = new RouteHttpPool('127.0.0.1', port, `127.0.0.1:${port}`, MAX);
  t.teardown(() => p.close());
  return p;
}

const failure = async (t: ExecutionContext, answer: Promise<unknown>): Promise<RouteHttpError> => {
  const err = await t.throwsAsync(answer);
  t.true(err instanceof RouteHttpError, String(err));
  return err as RouteHttpError;
};

test('kept alive: sequential lookups share one connection; the path and query arrive whole; status and body come back', async (t) => {
  const seen: string[] = [];
  const srv = await httpServer(t, (req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(req.url?.includes('n=3') ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: req.url }));
  });
  const p = pool(t, srv.port);
  for (let n = 1; n <= 5; n++) {
    const a = await p.get(`/sipserver/route?method=INVITE&n=${n}&uri=sip%3Aa%40b`).answer;
    t.is(a.status, n === 3 ? 404 : 200);
    t.deepEqual(JSON.parse(a.body.toString('utf8')), { url: `/sipserver/route?method=INVITE&n=${n}&uri=sip%3Aa%40b` });
  }
  t.is(seen.length, 5);
  t.is(srv.connections(), 1);
});

test('many at once: up to maxSockets connections, the rest queued; every answer reaches its own request', async (t) => {
  const srv = await httpServer(t, (req, res) => setTimeout(() => res.end(req.url), 5));
  const p = new RouteHttpPool('127.0.0.1', srv.port, 'x', MAX, 4);
  t.teardown(() => p.close());
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => p.get(`/q?i=${i}`).answer));
  t.deepEqual(answers.map((a) => a.body.toString()), Array.from({ length: 40 }, (_, i) => `/q?i=${i}`));
  t.true(srv.connections() <= 4, `${srv.connections()} connections`);
});

test('framings: chunked, to the close (HTTP/1.0), Connection: close (next lookup on a new connection), an interim 100 skipped', async (t) => {
  const chunked = await httpServer(t, (_req, res) => {
    res.write('{"action":"route",');
    setTimeout(() => res.end('"data":{"tag":"gw1"}}'), 10);
  });
  const a = await pool(t, chunked.port).get('/').answer;
  t.deepEqual(JSON.parse(a.body.toString()), { action: 'route', data: { tag: 'gw1' } });

  const toClose = await rawServer(t, (s) => s.end('HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"to":"the close"}'));
  t.is((await pool(t, toClose.port).get('/').answer).body.toString(), '{"to":"the close"}');

  const closing = await httpServer(t, (_req, res) => {
    res.setHeader('connection', 'close');
    res.end('bye');
  });
  const p = pool(t, closing.port);
  t.is((await p.get('/').answer).body.toString(), 'bye');
  t.is((await p.get('/').answer).body.toString(), 'bye');
  t.is(closing.connections(), 2);

  const interim = await rawServer(t, (s) => s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
  const i = await pool(t, interim.port).get('/').answer;
  t.is(i.status, 200);
  t.is(i.body.toString(), 'ok');
});

test('a kept-alive connection the handler closed: the next lookup opens a new one; one dropped under a request is retried once', async (t) => {
  // The handler closes each connection 20 ms after its answer (its idle limit).
  const srv = await rawServer(t, (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfine');
    setTimeout(() => s.end(), 20);
  });
  const p = pool(t, srv.port);
  t.is((await p.get('/').answer).body.toString(), 'fine');
  await new Promise((r) => setTimeout(r, 150));
  t.is((await p.get('/').answer).body.toString(), 'fine');
  t.is(srv.connections(), 2);
  // A raw handler that answers the first request, then drops the connection when the second comes.
  const flaky = await rawServer(t, (s, n) => {
    if (n === 2) s.destroy();
    else s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
  });
  const f = pool(t, flaky.port);
  t.is((await f.get('/').answer).body.toString(), 'ok');
  t.is((await f.get('/').answer).body.toString(), 'ok', 'retried on a new connection');
  t.is(flaky.connections(), 2);
  // A fresh connection that fails is not retried.
  const dropper = await rawServer(t, (s) => s.destroy());
  t.is((await failure(t, pool(t, dropper.port).get('/').answer)).kind, 'unreachable');
});

test('bad answers: cut short, no status line, a bad Content-Length, too big (by length, by chunks, to the close), nobody listening', async (t) => {
  const cut = await rawServer(t, (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"short":'));
  t.is((await failure(t, pool(t, cut.port).get('/').answer)).kind, 'cut');
  const garbage = await rawServer(t, (s) => s.write('HELLO THERE\r\n\r\n'));
  t.is((await failure(t, pool(t, garbage.port).get('/').answer)).kind, 'malformed');
  const badLength = await rawServer(t, (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'));
  t.is((await failure(t, pool(t, badLength.port).get('/').answer)).kind, 'malformed');
  const big = await httpServer(t, (_req, res) => res.end('x'.repeat(MAX + 1)));
  t.is((await failure(t, pool(t, big.port).get('/').answer)).kind, 'oversize');
  const bigChunks = await httpServer(t, (_req, res) => {
    for (let i = 0; i < 70; i++) res.write('y'.repeat(1024));
    res.end();
  });
  t.is((await failure(t, pool(t, bigChunks.port).get('/').answer)).kind, 'oversize');
  const endless = await rawServer(t, (s) => {
    s.write('HTTP/1.0 200 OK\r\n\r\n');
    for (let i = 0; i < 70; i++) s.write('z'.repeat(1024));
  });
  t.is((await failure(t, pool(t, endless.port).get('/').answer)).kind, 'oversize');
  const refused = await new Promise<number>((r) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => r(port));
    });
  });
  t.is((await failure(t, pool(t, refused).get('/').answer)).kind, 'unreachable');
});

test('abort: a lookup given up on settles nothing later and its connection is closed; a queued one never goes out', async (t) => {
  let requests = 0;
  const srv = await rawServer(t, () => requests++);
  const p = new RouteHttpPool('127.0.0.1', srv.port, 'x', MAX, 1);
  t.teardown(() => p.close());
  const first = p.get('/slow');
  const second = p.get('/queued');
  let settled = 0;
  first.answer.then(() => settled++, () => settled++);
  second.answer.then(() => settled++, () => settled++);
  await new Promise((r) => setTimeout(r, 100));
  second.abort();
  first.abort();
  await new Promise((r) => setTimeout(r, 100));
  t.is(settled, 0);
  t.is(requests, 1);
});
