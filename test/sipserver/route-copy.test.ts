/**
 * The SIP server's copy of the local route handler's routes (`routeCopy`, sent by the gateway
 * on every change): a new INVITE the copy selects goes to the handler's tag without a
 * `route.lookup`; everything else is still asked. The route actor here is the fixture gateway
 * `gw1`, which does not answer `route.lookup` at all: a request that is asked gets 503, one
 * taken from the copy reaches gw1 and is answered 200.
 */
import test from 'ava';
import { metric, startSip, udpExchange, type SipHarness } from '../helpers/sip.js';
import type { Route } from '../../protocols/gateway/routes.js';

let seq = 0;
function invite(port: number, user: string, method = 'INVITE'): string {
  const n = ++seq;
  return [
    `${method} sip:${user}@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-copy-${n}-${Date.now()};rport`,
    `From: <sip:peer@127.0.0.1>;tag=c${n}`,
    `To: <sip:${user}@127.0.0.1:${port}>`,
    `Call-ID: copy-${n}-${Date.now()}@test`,
    `CSeq: 1 ${method}`,
    'Max-Forwards: 70',
    'Contact: <sip:peer@127.0.0.1:9>',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/** The final status a new request to `user` gets. */
async function finalFor(h: SipHarness, user: string, method = 'INVITE'): Promise<number | undefined> {
  const got = await udpExchange(h.port, invite(h.port, user, method), 5000, 1, (g) => g.some((m) => !/^SIP\/2\.0 1\d\d/.test(m)));
  const final = got.find((m) => !/^SIP\/2\.0 1\d\d/.test(m));
  return final ? Number(/^SIP\/2\.0 (\d{3})/.exec(final)?.[1]) : undefined;
}

const copy = (h: SipHarness, from: string, routes: Route[], accepting = true) => h.server.request({ type: 'routeCopy', from, tag: 'gw1', routes, accepting });

test('INVITEs the copied routes select go to the tag without asking; the rest, and every other method, are asked', async (t) => {
  const h = await startSip(t, {}, true, 'gw1');
  t.is(await finalFor(h, 'alice'), 503, 'no copy yet: asked, and gw1 does not answer route.lookup');
  t.deepEqual(await copy(h, 'gw1', [{ match: 'exact', value: 'alice' }, { match: 'userPrefix', value: '49' }]), { routes: 2 });
  t.is(await finalFor(h, 'alice'), 200, 'exact route from the copy');
  t.is(await finalFor(h, '4930123'), 200, 'prefix route from the copy');
  t.is(await finalFor(h, 'bob'), 503, 'no route in the copy: asked');
  t.is(await finalFor(h, 'alice', 'MESSAGE'), 503, 'only INVITEs are routed by the handler\'s rules: asked');
  const stats = await h.gw.request({ type: 'stats' });
  t.is(Object.keys(stats.invites).length, 2);
  const metrics = await h.system.metrics();
  t.is(metric(metrics, 'gateway_route_lookups_total{outcome="route"}'), 2, 'counted as the handler counts the routes it answers');
  t.is(metric(metrics, 'sipserver_route_lookups_total{outcome="route"}'), 2);
  t.is(h.routes.queries.length, 0, 'never the HTTP handler');
});

test('a newer copy replaces the older; not accepting (draining) routes nothing; a copy from another actor is ignored', async (t) => {
  const h = await startSip(t, {}, true, 'gw1');
  await copy(h, 'gw1', [{ match: 'exact', value: 'alice' }]);
  t.is(await finalFor(h, 'alice'), 200);
  t.deepEqual(await copy(h, 'gw1', [{ match: 'exact', value: 'carol' }]), { routes: 1 });
  t.is(await finalFor(h, 'alice'), 503, 'released in the newer copy: asked');
  t.is(await finalFor(h, 'carol'), 200);
  await copy(h, 'gw1', [{ match: 'exact', value: 'carol' }], false);
  t.is(await finalFor(h, 'carol'), 503, 'draining: asked (the handler answers 503 or its fallback)');
  await copy(h, 'gw1', [{ match: 'exact', value: 'carol' }]);
  t.deepEqual(await copy(h, 'intruder', [{ match: 'userPrefix', value: 'd' }]), { routes: 1 }, 'unchanged');
  t.is(await finalFor(h, 'dave'), 503, 'not the route actor\'s: ignored');
  t.is(await finalFor(h, 'carol'), 200);
});

test('without a route actor (an HTTP route handler) a copy is ignored: every INVITE is a GET', async (t) => {
  const h = await startSip(t);
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'reject', data: { status: 404 } }) });
  t.deepEqual(await copy(h, 'gw1', [{ match: 'exact', value: 'alice' }]), { routes: 0 });
  t.is(await finalFor(h, 'alice'), 404);
  t.is(h.routes.queries.length, 1);
});

test('answer (respond as a cast): a refusal is not thrown back; the server keeps serving', async (t) => {
  const h = await startSip(t, {}, true, 'gw1');
  h.server.send({ type: 'answer', key: 'nope', status: 200 });
  h.server.send({ type: 'answer', key: 'nope', status: 99 });
  await copy(h, 'gw1', [{ match: 'exact', value: 'alice' }]);
  t.is(await finalFor(h, 'alice'), 200);
  const metrics = await h.system.metrics();
  t.false(/^hostd_actor_crashes_total\{kind="sipserver"[^\n]* [1-9]/m.test(metrics), 'no crash');
  t.is(metric(metrics, 'hostd_actor_restarts_total{kind="sipserver"}') || 0, 0, 'no restart');
});

test('a malformed copy is refused INVALID, naming the field, and the copy kept is unchanged', async (t) => {
  const h = await startSip(t, {}, true, 'gw1');
  await copy(h, 'gw1', [{ match: 'exact', value: 'alice' }]);
  const { refusalOf } = await import('../../runtime/index.js');
  const refused = async (bad: Record<string, unknown>) => {
    try {
      await h.server.request({ type: 'routeCopy', from: 'gw1', tag: 'gw1', routes: [], accepting: true, ...bad } as never);
      return 'accepted';
    } catch (err) {
      return `${refusalOf(err)}: ${(err as Error).message}`;
    }
  };
  t.regex(await refused({ routes: [{ match: 'regex', value: 'a.*' }] }), /^INVALID: .*routes\[0\]\.match/);
  t.regex(await refused({ routes: [{ match: 'exact', value: '' }] }), /^INVALID: .*routes\[0\]\.value/);
  t.regex(await refused({ routes: 'alice' }), /^INVALID: .*routes/);
  t.regex(await refused({ tag: '' }), /^INVALID: .*tag/);
  t.regex(await refused({ accepting: 'yes' }), /^INVALID: .*accepting/);
  t.is(await finalFor(h, 'alice'), 200, 'the last good copy still routes');
});
