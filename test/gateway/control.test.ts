/**
 * The /control WebSocket without SIP traffic: the bearer check (header and ?token=, 401
 * otherwise), Origin and Host checks, every error code of bad input, route registration with
 * ROUTE_CONFLICT and routes released when their connection closes, media commands passed to
 * the media link with the connection as owner, and the probes.
 */
import test from 'ava';
import WebSocket from 'ws';
import { GatewayClient, GatewayError } from '../../actors/gateway/client.js';
import { MEDIA_STUB, startGateway, until } from '../helpers/gateway.js';

/** The HTTP status of a refused upgrade (and its JSON body), or 101. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: '' });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

test('bearer: no token, a wrong one (header or ?token=) → 401; the right one either way → connected', async (t) => {
  const h = await startGateway(t, { token: 'tok-3f9a' });
  const none = await upgrade(h.url);
  t.is(none.status, 401);
  t.like(JSON.parse(none.body), { error: { code: 'UNAUTHORIZED' } });
  t.is((await upgrade(h.url, { Authorization: 'Bearer nope' })).status, 401);
  t.is((await upgrade(h.url, { Authorization: 'Bearer tok-3f9a-longer' })).status, 401);
  t.is((await upgrade(`${h.url}?token=wrong`)).status, 401);
  t.is((await upgrade(h.url, { Authorization: 'Bearer tok-3f9a' })).status, 101);
  t.is((await upgrade(`${h.url}?token=tok-3f9a`)).status, 101);
  const c = await h.connect({ token: 'tok-3f9a' });
  t.deepEqual(await c.call('route.list', {}), { routes: [] });
});

test('Origin and Host: a page of another origin is refused; without a token, so is a non-loopback Host', async (t) => {
  const h = await startGateway(t, { allowedOrigins: 'https://ops.example' });
  const evil = await upgrade(h.url, { Origin: 'https://evil.example' });
  t.is(evil.status, 403);
  t.like(JSON.parse(evil.body), { error: { code: 'ORIGIN_NOT_ALLOWED' } });
  t.is((await upgrade(h.url, { Origin: 'https://ops.example' })).status, 101);
  const host = await upgrade(h.url, { Host: 'gateway.example:3001' });
  t.is(host.status, 403);
  t.like(JSON.parse(host.body), { error: { code: 'HOST_NOT_ALLOWED' } });
  t.is((await upgrade(h.url, { Host: 'localhost:3001' })).status, 101);
});

test('bad input: every error code, each naming what was wrong; the connection stays usable', async (t) => {
  const h = await startGateway(t);
  const c = await h.connect();
  const err = async (p: Promise<unknown>) => {
    const e = await t.throwsAsync(p);
    return e instanceof GatewayError ? `${e.code}: ${e.message}` : `not a GatewayError: ${e?.message}`;
  };
  t.regex(await err(c.raw('{nope', 'raw')), /PARSE_ERROR: .*not valid JSON/);
  t.regex(await err(c.raw('[1,2]', 'raw')), /INVALID_REQUEST: .*JSON object/);
  t.regex(await err(c.raw('{"method":"route.list"}', 'raw')), /INVALID_REQUEST: .*`id` must be a non-empty string/);
  t.regex(await err(c.send({ id: 'a', method: 'route.list', params: [] })), /INVALID_REQUEST: .*`params` must be an object/);
  t.regex(await err(c.call('route.dance', {})), /METHOD_NOT_FOUND: .*unknown method route\.dance/);
  t.regex(await err(c.call('route.register', {})), /INVALID_PARAMS: .*routes is required/);
  t.regex(await err(c.call('route.register', { routes: [{ match: 'glob', value: 'a*' }] })), /INVALID_PARAMS: .*routes\[0\]\.match must be one of exact, userPrefix; got "glob"/);
  t.regex(await err(c.call('sip.createOutbound', { requestUri: 'sip:bob@127.0.0.1' })), /INVALID_PARAMS: .*sdp is required/);
  t.regex(await err(c.call('sip.createOutbound', { requestUri: 'mailto:bob@example.com', sdp: 'v=0' })), /INVALID_PARAMS: .*requestUri must be a sip: URI/);
  t.regex(await err(c.call('sip.bye', { callId: 42 })), /INVALID_PARAMS: .*callId must be a string; got number 42/);
  t.regex(await err(c.call('sip.bye', { callId: 'no-such-call' })), /CALL_NOT_FOUND: .*no call no-such-call owned by this connection/);
  t.regex(await err(c.call('sip.cancelOutbound', { callId: 'nope' })), /CALL_NOT_FOUND/);
  t.regex(await err(c.call('sip.reinvite', { callId: 'nope', sdp: 'v=0' })), /CALL_NOT_FOUND/);
  t.regex(await err(c.call('session.create', {})), /NOT_IMPLEMENTED: .*no media link/);
  // a binary frame, and an answer to a request the gateway never sent: the first is refused, the second ignored
  const binary = new Promise<string>((resolve) => {
    const ws = new WebSocket(h.url);
    ws.once('open', () => ws.send(Buffer.from([1, 2, 3]), { binary: true }));
    ws.once('message', (m) => {
      resolve(m.toString());
      ws.close();
    });
  });
  t.like(JSON.parse(await binary), { id: null, error: { code: 'INVALID_REQUEST' } });
  c.answer('g:999', { action: 'answer', sdp: 'v=0' });
  t.regex(await err(c.raw(JSON.stringify({ id: 'g:1', result: [] }), 'raw', 'g:1')), /INVALID_REQUEST: .*`result` must be an object/);
  t.deepEqual(await c.call('route.list', {}), { routes: [] }, 'still usable');
});

test('routes: register replaces the set, ROUTE_CONFLICT across connections, released when the connection closes', async (t) => {
  const h = await startGateway(t);
  const a = await h.connect();
  const b = await h.connect();
  t.deepEqual(await a.call('route.register', { routes: [{ match: 'exact', value: 'support' }, { match: 'userPrefix', value: '+3312' }] }), {
    routes: [{ match: 'exact', value: 'support' }, { match: 'userPrefix', value: '+3312' }],
  });
  const conflict = await t.throwsAsync(b.call('route.register', { routes: [{ match: 'userPrefix', value: '+33' }, { match: 'exact', value: 'support' }] }));
  t.true(conflict instanceof GatewayError);
  t.is((conflict as GatewayError).code, 'ROUTE_CONFLICT');
  t.regex(conflict!.message, /exact "support" is held by another connection/);
  t.deepEqual(await b.call('route.list', {}), { routes: [] }, 'a refused set changes nothing');
  await b.call('route.register', { routes: [{ match: 'userPrefix', value: '+33' }] });
  const lookup = async (user: string) => (await h.get(`/sipserver/route?method=INVITE&uriUser=${encodeURIComponent(user)}`)).body;
  t.deepEqual(await lookup('+33123'), { action: 'route', data: { tag: 'hostd' } });
  t.deepEqual(await lookup('+3399'), { action: 'route', data: { tag: 'hostd' } });
  t.like(await lookup('+44'), { action: 'reject', data: { status: 404 } });
  // a replaces its set: +3312 goes, support stays
  await a.call('route.register', { routes: [{ match: 'exact', value: 'support' }] });
  t.deepEqual(await a.call('route.list', {}), { routes: [{ match: 'exact', value: 'support' }] });
  t.is((await h.gateway.request({ type: 'info' })).routes, 2);
  await a.close();
  await until(async () => (await h.gateway.request({ type: 'info' })).routes === 1, 5000, 'a\'s routes released');
  t.like(await lookup('support'), { action: 'reject', data: { status: 404 } });
  t.deepEqual(await b.call('route.register', { routes: [{ match: 'exact', value: 'support' }] }), { routes: [{ match: 'exact', value: 'support' }] }, 'free once its holder left');
});

test('media commands go to the media link with the connection as owner; its sessions are released when it closes', async (t) => {
  const h = await startGateway(t, {}, { mediaLinkModule: MEDIA_STUB });
  const a = await h.connect();
  const b = await h.connect();
  const created = a.waitFor('session.created');
  const { session_id } = await a.call('session.create', { callId: 'c-1' });
  t.regex(String(session_id), /^[0-9a-f-]{36}$/);
  t.deepEqual(await created, { session_id, callId: 'c-1' }, 'link events reach the owner');
  await a.call('session.create', {});
  t.deepEqual(await b.call('session.count', {}), { total: 2, mine: 0 });
  const refused = await t.throwsAsync(b.call('session.destroy', { session_id }));
  t.is((refused as GatewayError).code, 'SESSION_NOT_FOUND', 'another owner\'s session is not found');
  await a.close();
  await until(async () => (await b.call('session.count', {})).total === 0, 5000, 'a\'s sessions destroyed');
  t.pass();
});

test('probes: /healthz and /readyz 200 while attached to the SIP server, 503 once it is gone', async (t) => {
  const h = await startGateway(t);
  const health = await h.healthz();
  t.is(health.status, 200);
  t.deepEqual(health.body, { status: 'ok', sipServer: { attached: true, tag: 'hostd' }, calls: 0, controlConnections: 0, accepting: true });
  t.deepEqual(await h.get('/readyz'), { status: 200, body: { ready: true, sipServer: { attached: true }, accepting: true } });
  const c = await h.connect();
  t.truthy(c);
  t.is((await h.healthz()).body.controlConnections, 1);
  await h.system.stopChild('sipserver');
  await until(async () => (await h.healthz()).status === 503, 5000, 'healthz 503');
  t.like((await h.healthz()).body, { status: 'sip-server-detached', sipServer: { attached: false } });
  t.like(await h.get('/readyz'), { status: 503, body: { ready: false } });
});
