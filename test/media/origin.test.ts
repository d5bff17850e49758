/**
 * The command channel closed to other sites (issue 16): raw WebSocket upgrades with Origin and
 * Host headers against a real bridge, the per-connection session cap, and the pure rules of
 * upgrade-guard.ts.
 */
import test from 'ava';
import http from 'node:http';
import { startBridge } from '../helpers/media.js';
import { MediaBridgeError } from '../../actors/media-bridge/client.js';
import { hostOf, isLoopbackPeer, refuseUpgrade } from '../../actors/media-bridge/upgrade-guard.js';
import { bridgeArgs, mediaSettings } from '../../actors/media/service.js';
import { resolve } from '../../runtime/config/settings.js';

/** One upgrade request with the given headers; resolves with the status and the body (if refused). */
function upgrade(url: string, headers: Record<string, string>, path = '/'): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path,
      setHost: false,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    // uWebSockets hangs up on a request it will not parse (an HTTP/1.1 request without Host).
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve({ status: 0, body: '' }) : reject(err)));
    req.end();
  });
}

test('an upgrade from a web page of another site is refused; an allowed origin and no origin pass', async (t) => {
  const bridge = await startBridge(t, { allowedOrigins: 'https://ops.example:8443' });
  const host = new URL(bridge.url).host;
  const evil = await upgrade(bridge.url, { Host: host, Origin: 'https://evil.example' });
  t.is(evil.status, 403);
  t.deepEqual(JSON.parse(evil.body).error.code, 'FORBIDDEN');
  t.regex(JSON.parse(evil.body).error.message, /Origin https:\/\/evil\.example is not allowed \(MEDIA_ALLOWED_ORIGINS\)/);
  t.is((await upgrade(bridge.url, { Host: host, Origin: 'null' })).status, 403, 'a sandboxed page sends Origin: null');
  t.is((await upgrade(bridge.url, { Host: host, Origin: 'https://ops.example' })).status, 403, 'another port is another origin');
  t.is((await upgrade(bridge.url, { Host: host, Origin: 'https://OPS.example:8443' })).status, 101, 'origins compare case-insensitively');
  t.is((await upgrade(bridge.url, { Host: host })).status, 101, 'a client that is not a browser sends no Origin');
});

test('by default any Origin is refused, even a loopback page', async (t) => {
  const bridge = await startBridge(t);
  const host = new URL(bridge.url).host;
  t.is((await upgrade(bridge.url, { Host: host, Origin: `http://${host}` })).status, 403);
  t.is((await upgrade(bridge.url, { Host: host, Origin: 'http://localhost:8080' })).status, 403);
});

test('DNS rebinding: an unauthenticated loopback client must name a loopback Host', async (t) => {
  const bridge = await startBridge(t);
  const port = new URL(bridge.url).port;
  const rebound = await upgrade(bridge.url, { Host: `attacker.example:${port}` });
  t.is(rebound.status, 403);
  t.regex(JSON.parse(rebound.body).error.message, /Host attacker\.example:\d+ is not a loopback name/);
  t.not((await upgrade(bridge.url, {})).status, 101, 'no Host at all');
  t.is((await upgrade(bridge.url, { Host: '127.0.0.1.evil.example' })).status, 403);
  for (const h of [`127.0.0.1:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`, `127.1.2.3:${port}`]) {
    t.is((await upgrade(bridge.url, { Host: h })).status, 101, h);
  }
  // The audio plane's dial-in path is not a way round it: /audio/<token> keeps its own rule (no Origin).
  t.is((await upgrade(bridge.url, { Host: 'localhost', Origin: 'https://evil.example' }, '/audio/x')).status, 403);
});

test('with a token the client is authenticated: any Host passes, a foreign Origin still does not', async (t) => {
  const bridge = await startBridge(t, { token: 's3cret' });
  t.is((await upgrade(bridge.url, { Host: 'attacker.example' })).status, 401, 'no token');
  t.is((await upgrade(bridge.url, { Host: 'attacker.example', Authorization: 'Bearer s3cret' })).status, 101);
  t.is((await upgrade(bridge.url, { Host: 'localhost', Authorization: 'Bearer s3cret', Origin: 'https://evil.example' })).status, 403);
});

test('the typed client passes the new checks (it sends a loopback Host and no Origin)', async (t) => {
  const bridge = await startBridge(t);
  const c = await bridge.connect();
  t.truthy((await c.call('session.create', {})).session_id);
});

test('sessions per connection are capped; other connections are not held back', async (t) => {
  const bridge = await startBridge(t, { maxSessionsPerConnection: 2 });
  const a = await bridge.connect();
  const s1 = (await a.call('session.create', {})).session_id;
  await a.call('session.create', {});
  const err = await t.throwsAsync(a.call('session.create', {}));
  t.is((err as MediaBridgeError).code, 'LIMIT_EXCEEDED');
  t.regex(err!.message, /this connection holds 2 sessions; the limit per connection is 2 \(MEDIA_MAX_SESSIONS_PER_CONNECTION\)/);
  const b = await bridge.connect();
  const s3 = (await b.call('session.create', {})).session_id;
  await b.call('session.create', {});
  // Attaching a third session to a full connection is refused the same way; re-attaching its own is not.
  t.is(((await t.throwsAsync(b.call('session.attach', { session_id: s1 }))) as MediaBridgeError).code, 'LIMIT_EXCEEDED');
  t.is((await b.call('session.attach', { session_id: s3 })).attached, true);
  // Destroying one frees a place.
  await a.call('session.attach', { session_id: s1 });
  await a.call('session.destroy', {});
  t.truthy((await a.call('session.create', {})).session_id);
});

test('upgrade-guard rules, pure', (t) => {
  t.is(hostOf('[::1]:3002'), '::1');
  t.is(hostOf('LOCALHOST'), 'localhost');
  t.is(hostOf(''), null);
  t.true(isLoopbackPeer('127.0.0.1'));
  t.true(isLoopbackPeer('0000:0000:0000:0000:0000:ffff:127.0.0.1'));
  t.true(isLoopbackPeer('0000:0000:0000:0000:0000:0000:0000:0001'));
  t.false(isLoopbackPeer('192.0.2.1'));
  // A client from another address is not held to the Host rule (it needed a token, or MEDIA_ALLOW_OPEN).
  t.is(refuseUpgrade({ origin: '', host: 'bridge.example', remoteAddress: '192.0.2.1', authenticated: false }, []), null);
  t.regex(refuseUpgrade({ origin: 'https://a.example/', host: 'localhost', remoteAddress: '127.0.0.1', authenticated: true }, ['https://b.example'])!, /not allowed/);
  t.is(refuseUpgrade({ origin: 'https://a.example/', host: 'localhost', remoteAddress: '127.0.0.1', authenticated: true }, ['https://a.example']), null);
});

test('settings: origins are normalised, bad origins and networks stop start-up', (t) => {
  const defaults = resolve(mediaSettings, {}, {});
  t.deepEqual(bridgeArgs({ ...defaults, allowedOrigins: 'https://A.example/, http://b.example:81' }).allowedOrigins, ['https://a.example', 'http://b.example:81']);
  t.deepEqual(bridgeArgs(defaults).allowedOrigins, []);
  t.is(defaults.maxSessionsPerConnection, 500);
  t.throws(() => resolve(mediaSettings, {}, { MEDIA_ALLOWED_ORIGINS: 'evil.example' }), { message: /MEDIA_ALLOWED_ORIGINS/ });
  t.throws(() => resolve(mediaSettings, {}, { MEDIA_ALLOWED_NETWORKS: '169.254.0.0/33' }), { message: /MEDIA_ALLOWED_NETWORKS/ });
  t.deepEqual(bridgeArgs(resolve(mediaSettings, {}, { MEDIA_ALLOWED_NETWORKS: '169.254.0.0/16, ff02::1' })).allowedNetworks, ['169.254.0.0/16', 'ff02::1']);
});
