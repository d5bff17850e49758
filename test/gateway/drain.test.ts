/**
 * The gateway's drain in an ActorSystem (the real SIP server, gateway, sipp, control clients):
 * the authenticated triggers (401 and nothing happens; 202; a repeat keeps the first
 * deadline), what is refused while draining (upgrades 503 after the 401 check, INVITEs and
 * OPTIONS 503, route.register / sip.createOutbound / standalone session.create SHUTTING_DOWN,
 * the route lookup a 503 reject), what still works (an admitted INVITE's setup, media for a
 * call that exists or is reserved), the end when the last call ends (20 calls with sipp -d),
 * and the forced deadline (BYE to every call, owners closed 1001). The process-level exit
 * (signals, exit 0) is test/process/gateway-drain.test.ts.
 */
import test from 'ava';
import http from 'node:http';
import { scenario, sipp } from '../helpers/sip.js';
import { answeringApp, MEDIA_STUB, SDP, sleep, startGateway, until, type GatewayHarness } from '../helpers/gateway.js';
import { GatewayError } from '../../actors/gateway/client.js';

const TOKEN = 'drain-test-token';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

const post = async (h: GatewayHarness, path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(h.base + path, { method: 'POST', headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
};
const drainStatus = async (h: GatewayHarness) => {
  const res = await fetch(h.base + '/drain', { headers: AUTH });
  return (await res.json()) as { draining: boolean; reason?: string; deadline?: string; state?: string; open: Record<string, number> };
};
/** The status of a WebSocket upgrade of /control (the body is the JSON error when refused). */
const upgrade = (h: GatewayHarness, token?: string) =>
  new Promise<number>((resolve, reject) => {
    const req = http.request(h.base + '/control', {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
const refusedCode = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return err instanceof GatewayError ? err.code : `resolved or other: ${String(err)}`;
};

test('drain triggers: 401 and nothing happens without the bearer; 202; readiness fails at once, health does not; owners told; a repeat keeps the first deadline; new work refused', async (t) => {
  const h = await startGateway(t, { token: TOKEN }, { mediaLinkModule: MEDIA_STUB });
  const app = await h.connect({ token: TOKEN });
  const idle = await h.connect({ token: TOKEN });
  await app.call('route.register', { routes: [{ match: 'exact', value: 'alice' }] });

  const bad: Array<Record<string, string>> = [{}, { Authorization: 'Bearer wrong' }, { Authorization: `Basic ${TOKEN}` }];
  for (const headers of bad) {
    for (const path of ['/drain', '/terminate']) {
      const r = await post(h, path, headers);
      t.is(r.status, 401, `${path} ${JSON.stringify(headers)}`);
      t.is((r.body.error as { code: string }).code, 'UNAUTHORIZED');
      t.is(r.headers.get('www-authenticate'), 'Bearer');
    }
  }
  t.is((await fetch(h.base + '/drain')).status, 401, 'GET /drain is protected too');
  t.is((await h.get('/readyz')).status, 200, 'nothing happened');
  t.false((await drainStatus(h)).draining);
  t.is(await upgrade(h, TOKEN), 101);

  const told = [app.waitFor('gateway.draining'), idle.waitFor('gateway.draining')];
  const first = await post(h, '/drain', AUTH);
  t.is(first.status, 202);
  t.deepEqual(first.body, { ok: true, draining: true });
  const ready = await h.get('/readyz');
  t.is(ready.status, 503, 'readiness fails at once');
  t.is(ready.body.accepting, false);
  const health = await h.healthz();
  t.is(health.status, 200, '/healthz is unchanged');
  t.is(health.body.status, 'ok');
  for (const ev of await Promise.all(told)) t.deepEqual(ev, { reason: 'POST /drain', maxWaitMs: 1_800_000 });
  const s1 = await drainStatus(h);
  t.true(s1.draining);
  t.is(s1.reason, 'POST /drain');
  // Nothing is open (idle connections do not count): the drain may be over within its first poll.
  t.true(s1.state === 'draining' || s1.state === 'drained', s1.state);
  t.true(Math.abs(Date.parse(s1.deadline!) - Date.now() - 1_800_000) < 5000, s1.deadline);

  await sleep(50);
  for (const path of ['/terminate', '/drain']) {
    const again = await post(h, path, AUTH);
    t.is(again.status, 202);
    t.deepEqual(again.body, { ok: true, draining: true });
  }
  const s2 = await drainStatus(h);
  t.is(s2.deadline, s1.deadline, 'the first deadline is kept');
  t.is(s2.reason, 'POST /drain');

  // New work is refused: upgrades (401 first for a bad token), routes, calls, standalone media.
  t.is(await upgrade(h, 'wrong'), 401);
  t.is(await upgrade(h, TOKEN), 503);
  t.is(await refusedCode(app.call('route.register', { routes: [{ match: 'exact', value: 'bob' }] })), 'SHUTTING_DOWN');
  t.is(await refusedCode(app.call('sip.createOutbound', { requestUri: 'sip:bob@127.0.0.1:9', sdp: SDP })), 'SHUTTING_DOWN');
  t.is(await refusedCode(app.call('session.create', {})), 'SHUTTING_DOWN');
  t.is(await refusedCode(app.call('session.create', { callId: 'no-such-call@x' })), 'SHUTTING_DOWN', 'a callId of no call is standalone');
  t.deepEqual((await app.call('route.list', {})).routes, [{ match: 'exact', value: 'alice' }], 'existing connections keep working');
  const lookup = await h.get('/sipserver/route?method=INVITE&uriUser=alice&toUser=alice');
  t.deepEqual(lookup.body.action, 'reject');
  t.is((lookup.body.data as { status: number }).status, 503);

  const invite = await sipp(t, h.sipPort, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: '503', MAXFWD: '70', EXTRA: 'Subject: drain' }), '-m', '1', '-s', 'alice']);
  t.is(invite.code, 0, invite.stdout + invite.errors);
  const options = await sipp(t, h.sipPort, ['-sf', scenario(t, 'options.xml.tmpl', { STATUS: '503' }), '-m', '1', '-s', 'alice']);
  t.is(options.code, 0, options.stdout + options.errors);

  // Nothing open but idle connections: the drain is over at once.
  const done = await h.gateway.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 5000 });
  t.is(done.outcome, 'drained');
  t.is((await drainStatus(h)).state, 'drained');
});

test('20 calls in progress (sipp -d): new INVITEs 503, media for a live call allowed, standalone refused; the drain ends right after the last BYE', async (t) => {
  const h = await startGateway(t, {}, { mediaLinkModule: MEDIA_STUB });
  const { app, invites } = await answeringApp(h, 'alice');
  const calls = sipp(t, h.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '20', '-l', '20', '-r', '50', '-d', '4000'], 60_000);
  await until(async () => (await h.healthz()).body.calls === 20, 15_000, '20 calls up');

  let drainedAt = 0;
  const drained = h.gateway.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 60_000 }).then((r) => ((drainedAt = Date.now()), r));
  const ev = await app.waitFor('gateway.draining');
  t.deepEqual(ev, { reason: 'SIGTERM', maxWaitMs: 1_800_000 });

  const late = await sipp(t, h.sipPort, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: '503', MAXFWD: '70', EXTRA: 'Subject: late' }), '-m', '1', '-s', 'alice']);
  t.is(late.code, 0, late.stdout + late.errors);
  t.is(invites.length, 20, 'the refused INVITE never reached the application');

  const media = await app.call('session.create', { callId: invites[3]!.callId });
  t.truthy(media.session_id, 'a media session for a call that is up');
  t.is((await drainStatus(h)).open.mediaSessions, 1);
  t.is(await refusedCode(app.call('session.create', {})), 'SHUTTING_DOWN');
  await app.call('session.destroy', { session_id: media.session_id });
  const open = await drainStatus(h);
  t.is(open.open.calls, 20);
  t.is(drainedAt, 0, 'not drained while calls are up');

  const r = await calls;
  const lastBye = Date.now();
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(r.successful, 20);
  t.is(r.failed, 0);
  t.is((await drained).outcome, 'drained');
  t.true(drainedAt - lastBye < 1000, `drained ${drainedAt - lastBye} ms after sipp's last BYE`);
});

test('an INVITE admitted before the drain finishes its setup; media for the reserved call is allowed', async (t) => {
  const h = await startGateway(t, {}, { mediaLinkModule: MEDIA_STUB });
  const app = await h.connect();
  let offered: { callId: string } | null = null;
  app.onRequest('sip.invite', async (p) => {
    offered = p;
    await sleep(1500);
    return { action: 'answer', sdp: SDP };
  });
  await app.call('route.register', { routes: [{ match: 'exact', value: 'alice' }] });
  const call = sipp(t, h.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '1', '-d', '300']);
  await until(() => offered !== null, 10_000, 'the INVITE offered');
  const drained = h.gateway.request({ type: 'drain', reason: 'POST /drain' }, { timeoutMs: 30_000 });
  await app.waitFor('gateway.draining');
  const during = await drainStatus(h);
  t.is(during.open.reservedCalls, 1, JSON.stringify(during));
  const media = await app.call('session.create', { callId: offered!.callId });
  t.truthy(media.session_id, 'the reserved call may have media');
  await app.call('session.destroy', { session_id: media.session_id });
  const r = await call;
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(r.successful, 1, 'the admitted call was answered 200 and ended normally');
  t.is((await drained).outcome, 'drained');
});

test('the forced deadline: BYE to every call, media sessions destroyed, owners closed 1001, within the deadline + cleanup bound', async (t) => {
  const h = await startGateway(t, { shutdownMaxWaitMs: 1500, shutdownCleanupTimeoutMs: 1000 }, { mediaLinkModule: MEDIA_STUB });
  const { app } = await answeringApp(h, 'alice');
  const calls = sipp(t, h.sipPort, ['-sf', scenario(t, 'uac-bye-in.xml'), '-s', 'alice', '-m', '3', '-l', '3', '-r', '10']);
  await until(async () => (await h.healthz()).body.calls === 3, 15_000, '3 calls up');
  await app.call('session.create', {});
  t.is((await drainStatus(h)).open.mediaSessions, 1);
  const ended: string[] = [];
  app.events$.subscribe((e) => e.event === 'sip.ended' && ended.push((e.data as { by: string }).by));
  const t0 = Date.now();
  const r = await h.gateway.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 30_000 });
  const took = Date.now() - t0;
  t.is(r.outcome, 'forced');
  t.true(took >= 1400 && took < 1500 + 1000 + 500, `forced after ${took} ms`);
  t.is(await app.closeCode, 1001);
  const s = await calls;
  t.is(s.code, 0, s.stdout + s.errors);
  t.is(s.successful, 3, 'every call got the BYE and answered it');
  const after = await drainStatus(h);
  t.is(after.state, 'forced');
  t.is(after.open.mediaSessions, 0);
  t.is(after.open.calls, 0);
});
