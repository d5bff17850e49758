/**
 * Inbound calls through the gateway with sipp as the caller, over UDP and TCP: answered by an
 * application on /control (it sees sip.invite with the SDP; /healthz counts the call 1 → 0),
 * rejected, no route (404) and the fallback route handler, an application that never answers
 * (504), a remote CANCEL, and UDP loss (`-lost 10`: one sip.invite per call).
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scenario, sipp } from '../helpers/sip.js';
import { answeringApp, sleep, startGateway, until } from '../helpers/gateway.js';
import { freePort } from '../helpers/sip.js';
import { gatewaySettings, sipArgs } from '../../actors/gateway/service.js';
import { resolve } from '../../runtime/config/settings.js';

/** sipp sends one INVITE to `service` and expects the final response `status` (then ACKs it). */
const refusedCall = (t: ExecutionContext, port: number, status: string, service: string, transport: 'u1' | 't1' = 'u1') =>
  sipp(t, port, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: status, MAXFWD: '70', EXTRA: 'Subject: gateway test' }), '-t', transport, '-m', '1', '-s', service]);

for (const transport of ['u1', 't1'] as const) {
  const name = transport === 'u1' ? 'UDP' : 'TCP';

  test(`${name}: an inbound call answered by the application: sipp uac completes, the app saw sip.invite with the SDP, calls 1 → 0`, async (t) => {
    const h = await startGateway(t);
    const { app, invites } = await answeringApp(h, 'alice');
    const confirmed = app.waitFor('sip.confirmed', undefined, 20_000);
    const ended = app.waitFor('sip.ended', undefined, 20_000);
    const counts: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        counts.push(Number((await h.healthz()).body.calls));
        await sleep(100);
      }
    })();
    const r = await sipp(t, h.sipPort, ['-sn', 'uac', '-s', 'alice', '-t', transport, '-m', '1', '-d', '1500']);
    polling = false;
    await poll;
    t.is(r.code, 0, r.stdout + r.errors);
    t.is(r.successful, 1);
    t.is(invites.length, 1);
    t.regex(invites[0]!.sdp, /^v=0\r\n/);
    t.regex(invites[0]!.sdp, /m=audio \d+ RTP\/AVP 0/);
    t.regex(invites[0]!.requestUri, /^sip:alice@127\.0\.0\.1:\d+$/);
    t.regex(invites[0]!.from, /sip:sipp@127\.0\.0\.1/);
    t.true(counts.includes(1), `calls seen during the call: ${counts.join(',')}`);
    t.is((await confirmed).callId, invites[0]!.callId);
    t.deepEqual(await ended, { callId: invites[0]!.callId, reason: 'bye', by: 'remote' });
    const health = await h.healthz();
    t.is(health.status, 200);
    t.is(health.body.calls, 0);
    t.deepEqual(health.body.sipServer, { attached: true, tag: 'hostd' });
  });

  const refused = (t: ExecutionContext, port: number, status: string, service: string) => refusedCall(t, port, status, service, transport);

  test(`${name}: the application rejects (486 with its reason); a route nobody holds is 404`, async (t) => {
    const h = await startGateway(t);
    const { invites } = await answeringApp(h, 'busy', () => ({ action: 'reject', status: 486, reason: 'Busy Here Today' }));
    const r = await refused(t, h.sipPort, '486', 'busy');
    t.is(r.code, 0, r.stdout + r.errors);
    t.is(r.successful, 1);
    t.is(invites.length, 1);
    const n = await refused(t, h.sipPort, '404', 'nobody');
    t.is(n.code, 0, n.stdout + n.errors);
    t.is((await h.healthz()).body.calls, 0);
  });

  test(`${name}: an application that never answers gets the call 504 at its deadline; one that answers nonsense, 502`, async (t) => {
    const h = await startGateway(t, { answerTimeoutMs: 800 });
    await answeringApp(h, 'silent', () => null);
    const r = await refused(t, h.sipPort, '504', 'silent');
    t.is(r.code, 0, r.stdout + r.errors);
    const { app } = await answeringApp(h, 'confused', () => ({ action: 'answer' }));
    const error = app.waitFor('sip.error');
    const b = await refused(t, h.sipPort, '502', 'confused');
    t.is(b.code, 0, b.stdout + b.errors);
    t.regex((await error).message, /sdp is required/);
    t.is((await h.healthz()).body.calls, 0);
  });

  test(`${name}: a remote CANCEL before the answer: 200 + 487, the owner gets sip.cancelled, its late answer is dropped`, async (t) => {
    const h = await startGateway(t);
    const { app, invites } = await answeringApp(h, 'silent', () => null);
    const cancelled = app.waitFor('sip.cancelled', undefined, 20_000);
    const late: string[] = [];
    app.requests$.subscribe((req) => late.push(req.id));
    const r = await sipp(t, h.sipPort, ['-sf', scenario(t, 'cancel.xml'), '-t', transport, '-m', '1', '-s', 'silent']);
    t.is(r.code, 0, r.stdout + r.errors);
    t.is(r.successful, 1);
    t.deepEqual(await cancelled, { callId: invites[0]!.callId, reason: 'cancel' });
    app.answer(late[0]!, { action: 'answer', sdp: 'v=0\r\n' });
    await sleep(200);
    t.is((await h.healthz()).body.calls, 0);
    t.is((await h.server.request({ type: 'info' })).dialogs, 0, 'the late answer made no dialog');
  });
}

test('the fallback route handler: its answer passed through for routes that are not ours; a failing one gives 502', async (t) => {
  const queries: Array<Record<string, string>> = [];
  const fallback = http.createServer((req, res) => {
    queries.push(Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ action: 'reject', data: { status: 486, reason: 'Busy Elsewhere' } }));
  });
  await new Promise<void>((r) => fallback.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { fallback.closeAllConnections(); fallback.close(() => r()); }));
  const fallbackUrl = `http://127.0.0.1:${(fallback.address() as AddressInfo).port}/sipserver/route`;
  const h = await startGateway(t, { fallbackUrl });
  await answeringApp(h, 'alice');
  const r = await refusedCall(t, h.sipPort, '486', 'bob');
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(queries.length, 1);
  t.like(queries[0], { method: 'INVITE', uriUser: 'bob', toUser: 'bob', protocol: 'udp', fromUser: 'sipp' });
  // a registered route never reaches the fallback
  const ours = await h.get('/sipserver/route?method=INVITE&uriUser=alice');
  t.deepEqual(ours, { status: 200, body: { action: 'route', data: { tag: 'hostd' } } });
  t.is(queries.length, 1);
  // the fallback down: 502
  await new Promise<void>((res) => { fallback.closeAllConnections(); fallback.close(() => res()); });
  const down = await refusedCall(t, h.sipPort, '502', 'bob');
  t.is(down.code, 0, down.stdout + down.errors);
  const q = await h.get('/sipserver/route?method=INVITE&uriUser=bob');
  t.is(q.body.action, 'reject');
  t.like(q.body.data as object, { status: 502 });
});

test('the route handler asked both ways: by message for the default route URL, over HTTP for an operator-set one (even naming this gateway); a call answered, 404 for no route', async (t) => {
  const defaults = resolve(gatewaySettings, {}, {});
  const port = await freePort();
  const own = `http://127.0.0.1:${port}/sipserver/route`;
  t.is(sipArgs({ ...defaults, port }).routeActor, 'gateway', 'the default URL: the local gateway actor');
  t.is(sipArgs({ ...defaults, port }).routeUrl, own, 'the default URL follows GATEWAY_PORT');
  t.is(sipArgs({ ...defaults, port, sipRouteUrl: own }).routeActor, null, 'an operator-set URL: HTTP');
  t.is(sipArgs({ ...defaults, port, sipRouteUrl: 'http://10.1.1.1:9/route' }).routeActor, null);
  for (const values of [{}, { port, sipRouteUrl: own }]) {
    const way = values.sipRouteUrl ? 'HTTP' : 'message';
    const h = await startGateway(t, values);
    const { invites } = await answeringApp(h, 'alice');
    const r = await sipp(t, h.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '2', '-d', '100']);
    t.is(r.successful, 2, `${way}: ${r.stdout}${r.errors}`);
    t.is(invites.length, 2, way);
    const missing = await refusedCall(t, h.sipPort, '404', 'bob');
    t.is(missing.code, 0, `${way}: ${missing.stdout}${missing.errors}`);
  }
});

test('the route handler without a fallback: 404 for everything that is not a registered route, never 500', async (t) => {
  const h = await startGateway(t);
  await answeringApp(h, 'alice');
  for (const path of ['/sipserver/route', '/sipserver/route?method=INVITE', '/sipserver/route?method=OPTIONS&uriUser=alice', '/sipserver/route?method=INVITE&uriUser=alice2', '/sipserver/route?%zz=1']) {
    const r = await h.get(path);
    t.is(r.status, 200, path);
    t.like(r.body, { action: 'reject', data: { status: 404 } }, path);
  }
  t.deepEqual((await h.get('/sipserver/route?method=INVITE&toUser=alice')).body, { action: 'route', data: { tag: 'hostd' } }, 'toUser when the URI has no user');
  const missing = await h.get('/nope');
  t.is(missing.status, 404);
  t.like(missing.body, { error: { code: 'NOT_FOUND' } });
  const post = await fetch(h.base + '/healthz', { method: 'POST' });
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET');
});

test('UDP with -lost 10: ten calls complete and the application sees exactly one sip.invite per call', async (t) => {
  t.timeout(120_000);
  const h = await startGateway(t);
  const { app, invites } = await answeringApp(h, 'alice');
  // uac-lossy.xml, not the built-in uac: that one takes the INVITE's retransmitted 200 as the
  // BYE's answer when its ACK and BYE are both lost, and leaves a call up here (64·T1 + Timer F).
  const r = await sipp(t, h.sipPort, ['-sf', scenario(t, 'uac-lossy.xml'), '-s', 'alice', '-t', 'u1', '-m', '10', '-r', '5', '-lost', '10', '-d', '100'], 110_000);
  t.is(r.failed, 0, r.stdout + r.errors);
  t.is(r.successful, 10);
  const perCall = new Map<string, number>();
  for (const i of invites) perCall.set(i.callId, (perCall.get(i.callId) ?? 0) + 1);
  t.is(perCall.size, 10);
  t.true([...perCall.values()].every((n) => n === 1));
  // every BYE reached the gateway: nothing is left up
  await until(async () => (await h.healthz()).body.calls === 0, 10_000, 'calls back to 0').catch(async (err: Error) => {
    t.log('calls left:', JSON.stringify(await app.call('sip.calls', {})), 'sipp:', r.stdout.slice(-2000), r.errors);
    throw err;
  });
});

test('the SIP server\'s copy of the routes follows the gateway: a route released with its connection is 404 at once (not 480), registered again it is routed', async (t) => {
  const h = await startGateway(t);
  const first = await answeringApp(h, 'alice');
  const r = await sipp(t, h.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '1', '-d', '10']);
  t.is(r.successful, 1, r.stdout + r.errors);
  await first.app.close();
  await until(async () => (await h.healthz()).body.controlConnections === 0, 5000, 'the connection closed');
  // the copy still naming alice would route the INVITE to the gateway, which finds no owner: 480
  const gone = await refusedCall(t, h.sipPort, '404', 'alice');
  t.is(gone.code, 0, gone.stdout + gone.errors);
  const second = await answeringApp(h, 'alice');
  const again = await sipp(t, h.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '1', '-d', '10']);
  t.is(again.successful, 1, again.stdout + again.errors);
  t.is(second.invites.length, 1);
  t.is(first.invites.length, 1);
});
