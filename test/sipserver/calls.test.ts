/**
 * The SIP server with sipp as the real peer, over UDP and TCP: OPTIONS, a call answered by the
 * fixture gateway, rejects, no route, no gateway, CANCEL, packet loss.
 */
import test from 'ava';
import { scenario, sipp, startSip } from '../helpers/sip.js';

const noSkew = (n: number) => n; // counts are compared exactly

for (const transport of ['u1', 't1'] as const) {
  const name = transport === 'u1' ? 'UDP' : 'TCP';

  test(`${name}: OPTIONS is answered 200 with Allow/Accept/Supported, and 503 while not accepting new work`, async (t) => {
    const h = await startSip(t);
    const ok = await sipp(t, h.port, ['-sf', scenario(t, 'options.xml.tmpl', { STATUS: '200' }), '-t', transport, '-m', '1', '-s', 'ping']);
    t.is(ok.code, 0, ok.stdout + ok.errors);
    t.is(ok.successful, 1);
    t.is(h.routes.queries.length, 0, 'OPTIONS is answered by the SIP server, not routed');
    await h.server.request({ type: 'acceptingNew', value: false });
    const busy = await sipp(t, h.port, ['-sf', scenario(t, 'options.xml.tmpl', { STATUS: '503' }), '-t', transport, '-m', '1', '-s', 'ping']);
    t.is(busy.code, 0, busy.stdout + busy.errors);
  });

  test(`${name}: INVITE → 200 → ACK → BYE completes (sipp -sn uac): the gateway saw one INVITE and one ACK; the server answered the BYE and told it the dialog ended`, async (t) => {
    const h = await startSip(t);
    const r = await sipp(t, h.port, ['-sn', 'uac', '-t', transport, '-m', '1', '-s', 'alice']);
    t.is(r.code, 0, r.stdout + r.errors);
    t.is(r.successful, 1);
    t.is(r.failed, 0);
    const s = await h.gw.request({ type: 'stats' });
    t.deepEqual(Object.values(s.invites), [1]);
    t.is(s.acks, 1);
    t.is(s.byes, 0, 'the BYE of a dialog the server holds is answered by the server');
    t.is(s.dialogs, 1);
    t.deepEqual(s.ended, { bye: 1 });
    t.is(h.routes.queries.length, 1);
    const q = h.routes.queries[0]!;
    t.is(q.method, 'INVITE');
    t.is(q.protocol, transport === 'u1' ? 'udp' : 'tcp');
    t.is(q.uriUser, 'alice');
    t.is(q.toUser, 'alice');
    t.is(q.fromUser, 'sipp');
    t.is(q.source_address, '127.0.0.1');
    t.is(q.contentType, 'application/sdp');
    t.is(q.domain, '127.0.0.1');
    t.is(q.uri, `sip:alice@127.0.0.1:${h.port}`);
    const info = await h.server.request({ type: 'info' });
    t.is(info.dialogs, 0);
  });

  test(`${name}: a gateway reject (486), no route (404 from the handler) and an unattached tag (480)`, async (t) => {
    const h = await startSip(t);
    const refused = (status: string, service: string) => sipp(t, h.port, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: status, MAXFWD: '70', EXTRA: 'Subject: sipserver test' }), '-t', transport, '-m', '1', '-s', service]);
    const busy = await refused('486', 'busy');
    t.is(busy.code, 0, busy.stdout + busy.errors);
    h.routes.answer = () => ({ body: JSON.stringify({ action: 'reject', data: { status: 404, reason: 'No Route' } }) });
    const none = await refused('404', 'nobody');
    t.is(none.code, 0, none.stdout + none.errors);
    h.routes.answer = () => ({ body: JSON.stringify({ action: 'route', data: { tag: 'gw-absent' } }) });
    const absent = await refused('480', 'bob');
    t.is(absent.code, 0, absent.stdout + absent.errors);
    const s = await h.gw.request({ type: 'stats' });
    t.is(Object.keys(s.invites).length, 1, 'only the routed INVITE reached the gateway');
    t.is(s.dialogs, 0);
  });

  test(`${name}: a remote CANCEL before the answer gets 200, the INVITE 487, and the gateway is told`, async (t) => {
    const h = await startSip(t);
    const r = await sipp(t, h.port, ['-sf', scenario(t, 'cancel.xml'), '-t', transport, '-m', '1', '-s', 'silent']);
    t.is(r.code, 0, r.stdout + r.errors);
    const s = await h.gw.request({ type: 'stats' });
    t.is(s.cancelled, 1);
    t.is(noSkew(Object.keys(s.invites).length), 1);
  });
}

test('UDP with -lost 10: calls complete and the gateway saw exactly one INVITE per call', async (t) => {
  const h = await startSip(t);
  const calls = 10;
  const r = await sipp(t, h.port, ['-sf', scenario(t, 'uac-lossy.xml'), '-t', 'u1', '-m', String(calls), '-r', '5', '-l', '5', '-lost', '10', '-s', 'alice', '-recv_timeout', '40000'], 120_000);
  const s = await h.gw.request({ type: 'stats' });
  t.log(`sipp -lost 10: ${r.successful} successful, ${r.failed} failed, exit ${r.code}`);
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(r.successful, calls);
  for (const [callId, n] of Object.entries(s.invites)) t.is(n, 1, `INVITE of ${callId} reached the gateway ${n} times`);
  t.is(h.routes.queries.length, Object.keys(s.invites).length, 'one route lookup per call');
  // each call's BYE reached the server (uac-lossy.xml waits for the BYE's own 200): no dialog left
  t.is((await h.server.request({ type: 'info' })).dialogs, 0);
});
