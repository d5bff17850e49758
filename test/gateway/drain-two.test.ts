/**
 * Two gateways on one SIP server (a rolling deployment on one host): the SIP server's route
 * handler is the old gateway A's /sipserver/route, whose fallback is the replacement B's. With
 * distinct SIPSERVER_APP_TAGs, draining A while its calls run sends every new INVITE to B, and
 * A's drain ends after its last call. With a shared tag, B cannot attach (the tag is A's), so
 * B's route answer delivers the INVITE to the draining A, which rejects it 503 (the hazard the
 * spec names).
 */
import test, { type ExecutionContext } from 'ava';
import { resolve } from '../../runtime/config/settings.js';
import { SIPSERVER_ID, type SipServerProtocol } from '../../actors/sipserver/messages.js';
import { sipserverChild } from '../../actors/sipserver/service-spec.js';
import { GATEWAY_MODULE, gatewayArgs, gatewaySettings, sipArgs } from '../../actors/gateway/service.js';
import type { GatewayProtocol } from '../../actors/gateway/messages.js';
import { GatewayClient } from '../../actors/gateway/client.js';
import { freePort, scenario, sipp } from '../helpers/sip.js';
import { SDP, gatewaySystem, until } from '../helpers/gateway.js';

async function twoGateways(t: ExecutionContext, tagA: string, tagB: string) {
  const { system, clients } = await gatewaySystem(t, 'hostd-gw2-');
  const [portA, portB] = [await freePort(), await freePort()];
  const base = resolve(gatewaySettings, {}, {});
  const vA = { ...base, port: portA, sipPort: 0, tag: tagA, fallbackUrl: `http://127.0.0.1:${portB}/sipserver/route` };
  const vB = { ...base, port: portB, sipPort: 0, tag: tagB };
  const own = { mediaLinkModule: null, drainsSipServer: false };
  await system.start({
    id: 'gateway.supervisor',
    children: [
      sipserverChild(sipArgs(vA, 'gateway.a')),
      { id: 'gateway.a', module: GATEWAY_MODULE, args: gatewayArgs(vA, own) },
      { id: 'gateway.b', module: GATEWAY_MODULE, args: gatewayArgs(vB, own) },
    ],
  });
  const sipPort = (await system.ref<SipServerProtocol>(SIPSERVER_ID).request({ type: 'info' })).udpPort;
  /** An application on one gateway that owns `alice` and answers every call. */
  const app = async (port: number) => {
    const c = await GatewayClient.connect(`ws://127.0.0.1:${port}/control`);
    clients.push(c);
    const invites: string[] = [];
    c.onRequest('sip.invite', (p) => {
      invites.push(p.callId);
      return { action: 'answer', sdp: SDP };
    });
    await c.call('route.register', { routes: [{ match: 'exact', value: 'alice' }] });
    return { c, invites };
  };
  const health = async (port: number) => (await fetch(`http://127.0.0.1:${port}/healthz`)).json() as Promise<{ calls: number; sipServer: { attached: boolean } }>;
  return { system, sipPort, portA, portB, app, health, a: system.ref<GatewayProtocol>('gateway.a') };
}

test('distinct tags: drain the old gateway with calls running; new INVITEs go to the replacement; the old one is drained after its last call', async (t) => {
  const g = await twoGateways(t, 'gw-old', 'gw-new');
  await until(async () => (await g.health(g.portB)).sipServer.attached, 5000, 'B attached');
  const old = await g.app(g.portA);
  const fresh = await g.app(g.portB);
  const running = sipp(t, g.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '5', '-l', '5', '-r', '20', '-d', '4000']);
  await until(async () => (await g.health(g.portA)).calls === 5, 15_000, '5 calls on the old gateway');
  t.is(fresh.invites.length, 0);

  let drainedAt = 0;
  const drained = g.a.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 30_000 }).then((r) => ((drainedAt = Date.now()), r));
  await old.c.waitFor('gateway.draining');
  const next = await sipp(t, g.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '3', '-d', '200']);
  t.is(next.code, 0, next.stdout + next.errors);
  t.is(next.successful, 3, 'new calls are taken by the replacement');
  t.is(fresh.invites.length, 3);
  t.is(old.invites.length, 5, 'none reached the draining gateway');
  t.is(drainedAt, 0, 'the old gateway still has calls');
  const options = await sipp(t, g.sipPort, ['-sf', scenario(t, 'options.xml.tmpl', { STATUS: '200' }), '-m', '1', '-s', 'alice']);
  t.is(options.code, 0, 'the shared SIP server keeps serving');

  const r = await running;
  const lastBye = Date.now();
  t.is(r.successful, 5, r.stdout + r.errors);
  t.is((await drained).outcome, 'drained');
  t.true(drainedAt - lastBye < 1000, `drained ${drainedAt - lastBye} ms after the last BYE`);
});

test('a shared tag: the replacement cannot attach, and an INVITE it routes is delivered to the draining gateway, which answers 503', async (t) => {
  const g = await twoGateways(t, 'shared', 'shared');
  await until(async () => (await g.health(g.portA)).sipServer.attached, 5000, 'A attached');
  const old = await g.app(g.portA);
  const fresh = await g.app(g.portB);
  t.false((await g.health(g.portB)).sipServer.attached, 'the tag is held by the old gateway');

  const before = await sipp(t, g.sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '1', '-d', '100']);
  t.is(before.successful, 1);
  t.is(old.invites.length, 1);

  const drained = g.a.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 30_000 });
  await old.c.waitFor('gateway.draining');
  const hazard = await sipp(t, g.sipPort, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: '503', MAXFWD: '70', EXTRA: 'Subject: shared tag' }), '-m', '1', '-s', 'alice']);
  t.is(hazard.code, 0, hazard.stdout + hazard.errors);
  t.is(fresh.invites.length, 0, 'the replacement never saw it');
  t.is(old.invites.length, 1, 'the draining gateway refused it without offering it');
  t.is((await drained).outcome, 'drained');
});
