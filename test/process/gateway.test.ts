/**
 * The real `hostd` process with the session gateway: `hostd daemon --services media,gateway`
 * starts the SIP server and the gateway (on free ports here; 5060 and 3001 by default), a sipp
 * call answered by an application on /control completes, SIGTERM stops the gateway first and
 * exits 0; bad gateway settings stop start-up with a message naming them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { runCli, startDaemon } from '../helpers/daemon.js';
import { freePort, sipp } from '../helpers/sip.js';
import { GatewayClient } from '../../actors/gateway/client.js';
import { SDP, until } from '../helpers/gateway.js';

function stateDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-gwd-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test.serial('hostd daemon --services media,gateway: a sipp call through the gateway, then a clean SIGTERM', async (t) => {
  const [gwPort, sipPort, mediaPort] = [await freePort(), await freePort(), await freePort()];
  const d = startDaemon(t, [
    '--state-dir', stateDir(t), '--services', 'media,gateway', '--metrics-port', '0', '--metrics-host', '127.0.0.1',
    '--gateway-port', String(gwPort), '--sipserver-port', String(sipPort), '--media-port', String(mediaPort),
    '--gateway-media-backends', `ws://127.0.0.1:${mediaPort}`, '--media-rtp-port-min', '42000', '--media-rtp-port-max', '42999',
  ]);
  const listening = await d.waitFor((l) => l.msg === 'gateway listening (HTTP and /control)');
  t.is(listening.port, gwPort);
  await d.waitFor((l) => l.msg === 'daemon ready');
  await d.waitFor((l) => l.msg === 'attached to the SIP server');
  const ready = await fetch(`http://127.0.0.1:${gwPort}/readyz`);
  t.is(ready.status, 200);
  const app = await GatewayClient.connect(`ws://127.0.0.1:${gwPort}/control`);
  t.teardown(() => app.close());
  app.onRequest('sip.invite', () => ({ action: 'answer', sdp: SDP }));
  await app.call('route.register', { routes: [{ match: 'exact', value: 'alice' }] });
  const r = await sipp(t, sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '1']);
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(r.successful, 1);
  // The call count falls when the SIP server's sip.dialogEnded reaches the gateway, an event-loop
  // turn or two after the BYE's 200 went out: sipp may exit first (measured: 2-60 ms, either placement).
  const calls = async () => ((await (await fetch(`http://127.0.0.1:${gwPort}/healthz`)).json()) as { calls: number }).calls;
  await until(async () => (await calls()) === 0, 5000, 'the call count back to 0 after the BYE');
  t.is(await calls(), 0);
  d.proc.kill('SIGTERM');
  const { code } = await d.exited;
  t.is(code, 0, d.stderr());
  t.truthy(d.lines.find((l) => l.msg === 'gateway stopped'), 'the gateway closed its listener and connections');
});

test.serial('bad gateway settings stop start-up with a message naming them', (t) => {
  const dir = stateDir(t);
  const cases: Array<[string[], RegExp]> = [
    [['--gateway-host', '0.0.0.0'], /GATEWAY_HOST 0\.0\.0\.0 is not a loopback address: set GATEWAY_AUTH_TOKEN/],
    [['--sipserver-app-tag', 'has space'], /--sipserver-app-tag/],
    [['--sipserver-route-fallback-url', 'ftp://x'], /--sipserver-route-fallback-url/],
    [['--gateway-media-backends', 'http://127.0.0.1:3002'], /--gateway-media-backends/],
    [['--gateway-answer-timeout-ms', '5'], /--gateway-answer-timeout-ms/],
  ];
  for (const [args, re] of cases) {
    const r = runCli(['daemon', '--state-dir', dir, '--services', 'gateway', '--metrics-port', '0', ...args]);
    t.not(r.status, 0, args.join(' '));
    t.regex(r.stderr, re);
  }
  const help = runCli(['daemon', '--help']);
  t.regex(help.stdout, /--gateway-port/);
  t.regex(help.stdout, /SIPSERVER_ROUTE_FALLBACK_URL/);
});
