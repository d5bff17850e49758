/**
 * Calls in progress, over UDP and TCP with sipp: the owner disconnecting mid-call (sipp
 * receives the gateway's BYE, the owner's media sessions are destroyed), a re-INVITE from the
 * caller (sip.reinvite to the owner, whose SDP goes into the 200), and the application's BYE.
 */
import test from 'ava';
import { scenario, sipp } from '../helpers/sip.js';
import { answeringApp, MEDIA_STUB, SDP, sleep, startGateway, until } from '../helpers/gateway.js';

for (const transport of ['u1', 't1'] as const) {
  const name = transport === 'u1' ? 'UDP' : 'TCP';

  test(`${name}: the owner disconnects mid-call: sipp receives BYE, its media session is destroyed, calls → 0`, async (t) => {
    const h = await startGateway(t, {}, { mediaLinkModule: MEDIA_STUB });
    const { app, invites } = await answeringApp(h, 'alice');
    const watcher = await h.connect();
    const confirmed = app.waitFor('sip.confirmed', undefined, 20_000);
    const call = sipp(t, h.sipPort, ['-sf', scenario(t, 'uac-bye-in.xml'), '-s', 'alice', '-t', transport, '-m', '1']);
    const { callId } = await confirmed;
    t.is(callId, invites[0]!.callId);
    await app.call('session.create', { callId });
    t.is((await watcher.call('session.count', {})).total, 1);
    t.is((await h.healthz()).body.calls, 1);
    await app.close();
    const r = await call;
    t.is(r.code, 0, r.stdout + r.errors);
    t.is(r.successful, 1, 'sipp got the BYE and answered it');
    await until(async () => (await h.healthz()).body.calls === 0, 5000, 'calls back to 0');
    t.is((await watcher.call('session.count', {})).total, 0);
    t.is((await h.server.request({ type: 'info' })).dialogs, 0);
  });

  test(`${name}: a re-INVITE from the caller reaches the owner as sip.reinvite; its SDP answers it`, async (t) => {
    const h = await startGateway(t);
    const { app } = await answeringApp(h, 'alice');
    const reinvites: Array<{ callId: string; sdp: string }> = [];
    app.onRequest('sip.reinvite', (p) => {
      reinvites.push(p);
      return { action: 'answer', sdp: SDP.replace('a=rtpmap:0 PCMU/8000\r\n', 'a=rtpmap:0 PCMU/8000\r\na=recvonly\r\n') };
    });
    const ended = app.waitFor('sip.ended', undefined, 20_000);
    const r = await sipp(t, h.sipPort, ['-sf', scenario(t, 'uac-reinvite.xml'), '-s', 'alice', '-t', transport, '-m', '1']);
    t.is(r.code, 0, r.stdout + r.errors);
    t.is(r.successful, 1, 'the 200 to the re-INVITE carried a=recvonly');
    t.is(reinvites.length, 1);
    t.regex(reinvites[0]!.sdp, /a=sendonly/);
    t.like(await ended, { reason: 'bye', by: 'remote' });
  });

  test(`${name}: the application re-INVITEs and hangs up a call it placed (sip.reinvite, sip.bye)`, async (t) => {
    const h = await startGateway(t);
    const app = await h.connect();
    const { freePort } = await import('../helpers/sip.js');
    const local = await freePort();
    const callee = sipp(t, h.sipPort, ['-sf', scenario(t, 'uas-reinvite.xml'), '-t', transport, '-m', '1'], 60_000, local);
    await sleep(500);
    const param = transport === 't1' ? ';transport=tcp' : '';
    const out = await app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}${param}`, sdp: SDP });
    t.is(out.status, 200);
    t.regex(out.sdp, /m=audio/);
    const re = await app.call('sip.reinvite', { callId: out.callId, sdp: SDP + 'a=sendonly\r\n' });
    t.is(re.status, 200);
    t.regex(re.sdp ?? '', /a=recvonly/);
    const ended = app.waitFor('sip.ended');
    t.deepEqual(await app.call('sip.bye', { callId: out.callId }), { callId: out.callId, status: 200 });
    t.deepEqual(await ended, { callId: out.callId, reason: 'bye', by: 'local' });
    const done = await callee;
    t.is(done.code, 0, done.stdout + done.errors);
    t.is(done.successful, 1);
    const again = await t.throwsAsync(app.call('sip.bye', { callId: out.callId }));
    t.regex(again!.message, /CALL_NOT_FOUND/);
  });
}

test('UDP: a 2xx never ACKed: after 64·T1 the SIP server sends BYE (RFC 3261 §13.3.1.4) and the owner gets sip.ended no-ack', async (t) => {
  t.timeout(90_000);
  const h = await startGateway(t);
  const { app } = await answeringApp(h, 'alice');
  const ended = app.waitFor('sip.ended', undefined, 60_000);
  const r = await sipp(t, h.sipPort, ['-sf', scenario(t, 'uac-no-ack.xml'), '-s', 'alice', '-t', 'u1', '-m', '1', '-timeout', '60s'], 80_000);
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(r.successful, 1, 'sipp received the BYE');
  t.like(await ended, { reason: 'no-ack', by: 'local' });
  t.is((await h.healthz()).body.calls, 0);
});
