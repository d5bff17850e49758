/**
 * The route lookup's HTTP side (actors/sipserver/routing.ts lookupRoute) against raw TCP handlers:
 * a kept-alive connection the handler drops under the next request is retried once on a new
 * one (the GET is idempotent); a fresh connection that fails is not retried and gives 503; an
 * idle connection the handler closed is not reused.
 */
import test, { type ExecutionContext } from 'ava';
import net from 'node:net';
import { lookupRoute } from '../../actors/sipserver/routing.js';

const ANSWER = JSON.stringify({ action: 'route', data: { tag: 'app' } });
const OK = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${ANSWER.length}\r\n\r\n${ANSWER}`;

/** A raw handler: `onRequest(socket, n)` for the n-th request head overall (1-based). */
async function rawHandler(t: ExecutionContext, onRequest: (s: net.Socket, n: number) => void): Promise<{ url: string; connections: () => number }> {
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
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/route`, connections: () => connections };
}

const q = () => ({ method: 'INVITE' });

test('a kept-alive connection dropped under the next lookup: retried once on a new connection, the call routed', async (t) => {
  const h = await rawHandler(t, (s, n) => (n === 2 ? s.destroy() : s.write(OK)));
  t.deepEqual(await lookupRoute(h.url, q(), 2000), { action: 'route', tag: 'app' });
  t.deepEqual(await lookupRoute(h.url, q(), 2000), { action: 'route', tag: 'app' }, 'the second lookup went again on a new connection');
  t.is(h.connections(), 2);
});

test('a fresh connection dropped: not retried, 503 unreachable', async (t) => {
  const h = await rawHandler(t, (s) => s.destroy());
  const d = await lookupRoute(h.url, q(), 2000);
  t.like(d, { action: 'error', status: 503, outcome: 'unreachable' });
  t.is(h.connections(), 1);
});

test('a kept-alive connection dropped twice: one retry only, then 503', async (t) => {
  const h = await rawHandler(t, (s, n) => (n === 1 ? s.write(OK) : s.destroy()));
  t.deepEqual(await lookupRoute(h.url, q(), 2000), { action: 'route', tag: 'app' });
  t.like(await lookupRoute(h.url, q(), 2000), { action: 'error', status: 503, outcome: 'unreachable' });
  t.is(h.connections(), 2, 'the retry went on a new connection and was not retried again');
});

test('an idle connection the handler closed is not reused: the next lookup opens a new one', async (t) => {
  const h = await rawHandler(t, (s) => {
    s.write(OK);
    setTimeout(() => s.end(), 20);
  });
  t.deepEqual(await lookupRoute(h.url, q(), 2000), { action: 'route', tag: 'app' });
  await new Promise((r) => setTimeout(r, 200));
  t.deepEqual(await lookupRoute(h.url, q(), 2000), { action: 'route', tag: 'app' });
  t.is(h.connections(), 2);
});
