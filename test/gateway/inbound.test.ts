/**
 * Inbound calls through the gateway with sipp as the caller, over UDP and TCP: answered by an
 * application on /control (it sees sip.invite with the SDP; /healthz counts the call 1 → 0),
 * rejected, no route (404) and the fallback route handler, an application that never answers
 * (504), a remote CANCEL, and UDP loss (`-lost 10`: one sip.invite per call).
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { scenario, sipp } from '../helpers/sip.js';
import { answeringApp, sleep, startGateway, until } from '../helpers/gateway.js';

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
}
