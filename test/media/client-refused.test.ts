/**
 * The typed media client, refused at the upgrade (a wrong token answers 401): the connect
 * rejects naming the status, and the client's socket is closed (it once stayed open, one
 * socket per retry for as long as the caller kept retrying).
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { MediaBridgeClient } from '../../actors/media-bridge/client.js';

test('a refused upgrade rejects with the HTTP status and leaves no socket open', async (t) => {
  const open = new Set<Socket>();
  const server = http.createServer();
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  // Answer the upgrade with 401 and keep the connection (a keep-alive server may).
  // The socket is closed here when the client ends its side.
  server.on('upgrade', (_req, socket) => {
    socket.on('end', () => socket.end());
    socket.write('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of open) s.destroy();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  for (let i = 0; i < 3; i++) {
    const err = await t.throwsAsync(MediaBridgeClient.connect(`ws://127.0.0.1:${port}`, { token: 'wrong' }));
    t.regex(err!.message, /refused the connection: HTTP 401/);
  }
  const until = Date.now() + 3000;
  while (open.size && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  t.is(open.size, 0, `${open.size} sockets still open on the server`);
});
