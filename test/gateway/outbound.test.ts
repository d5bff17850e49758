/**
 * Outbound calls placed by an application with sip.createOutbound, sipp as the callee, over
 * UDP and TCP: answered by `-sn uas` (18x reported as sip.progress, the 200's SDP returned),
 * cancelled while ringing (sip.cancelOutbound; the INVITE ends 487), cancelled because the
 * owner closed, and digest authentication when the callee challenges.
 */
import test from 'ava';
import { GatewayError } from '../../actors/gateway/client.js';
import { freePort, scenario, sipp } from '../helpers/sip.js';
import { SDP, sleep, startGateway, until } from '../helpers/gateway.js';

for (const transport of ['u1', 't1'] as const) {
  const name = transport === 'u1' ? 'UDP' : 'TCP';
  const param = transport === 't1' ? ';transport=tcp' : '';

  test(`${name}: sip.createOutbound to sipp uas: 180 as sip.progress, {callId, sdp} of the 200, then sip.bye`, async (t) => {
    const h = await startGateway(t);
    const app = await h.connect();
    const local = await freePort();
    const callee = sipp(t, h.sipPort, ['-sn', 'uas', '-t', transport, '-m', '1'], 60_000, local);
    await sleep(500);
    const progress = app.waitFor('sip.progress', undefined, 20_000);
    const out = await app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}${param}`, sdp: SDP, headers: { 'X-Ticket': '42' } });
    t.is(out.status, 200);
    t.regex(out.callId, /@hostd$/);
    t.regex(out.sdp, /^v=0/);
    t.deepEqual(await progress, { callId: out.callId, status: 180, reason: 'Ringing' });
    t.deepEqual(await app.call('sip.calls', {}), { calls: [{ callId: out.callId, direction: 'outbound', state: 'up' }] });
    t.is((await h.healthz()).body.calls, 1);
    t.deepEqual(await app.call('sip.bye', { callId: out.callId }), { callId: out.callId, status: 200 });
    const done = await callee;
    t.is(done.code, 0, done.stdout + done.errors);
    t.is(done.successful, 1);
    await until(async () => (await h.healthz()).body.calls === 0, 5000, 'calls back to 0');
  });

  test(`${name}: sip.cancelOutbound while the callee rings: CANCEL, 487, the command fails SIP_ERROR 487`, async (t) => {
    const h = await startGateway(t);
    const app = await h.connect();
    const other = await h.connect();
    const local = await freePort();
    const callee = sipp(t, h.sipPort, ['-sf', scenario(t, 'uas-cancel.xml'), '-t', transport, '-m', '1'], 60_000, local);
    await sleep(500);
    const callId = `cancel-me-${transport}@app`;
    const ringing = app.waitFor('sip.progress', (e) => e.callId === callId, 20_000);
    const out = app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}${param}`, sdp: SDP, callId });
    await ringing;
    const foreign = await t.throwsAsync(other.call('sip.cancelOutbound', { callId }));
    t.is((foreign as GatewayError).code, 'CALL_NOT_FOUND', 'only the owner may cancel');
    t.deepEqual(await app.call('sip.cancelOutbound', { callId }), { callId, cancelling: true });
    const failed = await t.throwsAsync(out);
    t.is((failed as GatewayError).code, 'SIP_ERROR');
    t.regex(failed!.message, /487/);
    const done = await callee;
    t.is(done.code, 0, done.stdout + done.errors);
    t.is(done.successful, 1);
    t.is((await h.healthz()).body.calls, 0);
  });

  test(`${name}: the owner closes while its outbound call rings: the gateway cancels it`, async (t) => {
    const h = await startGateway(t);
    const app = await h.connect();
    const local = await freePort();
    const callee = sipp(t, h.sipPort, ['-sf', scenario(t, 'uas-cancel.xml'), '-t', transport, '-m', '1'], 60_000, local);
    await sleep(500);
    const ringing = app.waitFor('sip.progress', undefined, 20_000);
    app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}${param}`, sdp: SDP }).catch(() => undefined);
    await ringing;
    await app.close();
    const done = await callee;
    t.is(done.code, 0, done.stdout + done.errors);
    t.is(done.successful, 1, 'sipp saw the CANCEL and sent 487');
    await until(async () => (await h.healthz()).body.calls === 0, 5000, 'calls back to 0');
  });

  test(`${name}: digest: the callee's 401 is answered with the credentials; wrong ones end in the callee's 403`, async (t) => {
    const h = await startGateway(t);
    const app = await h.connect();
    const local = await freePort();
    const callee = sipp(t, h.sipPort, ['-sf', scenario(t, 'uas-auth.xml'), '-t', transport, '-m', '1'], 60_000, local);
    await sleep(500);
    const out = await app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}${param}`, sdp: SDP, auth: { username: 'alice', password: 's3cret' } });
    t.is(out.status, 200, 'sipp verified the Authorization (a wrong one gets 403)');
    await app.call('sip.bye', { callId: out.callId });
    const done = await callee;
    t.is(done.code, 0, done.stdout + done.errors);
    t.is(done.successful, 1);

    const again = sipp(t, h.sipPort, ['-sf', scenario(t, 'uas-auth.xml'), '-t', transport, '-m', '1', '-timeout', '5s'], 60_000, local);
    await sleep(500);
    const bad = await t.throwsAsync(app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}${param}`, sdp: SDP, auth: { username: 'alice', password: 'wrong' } }));
    t.regex(bad!.message, /SIP_ERROR: the far end answered 403/);
    await again;
  });
}

test('sip.createOutbound refusals: a Call-ID in use, a From that is not an address', async (t) => {
  const h = await startGateway(t);
  const app = await h.connect();
  const local = await freePort();
  const callee = sipp(t, h.sipPort, ['-sn', 'uas', '-m', '1'], 60_000, local);
  await sleep(500);
  const out = await app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}`, sdp: SDP, callId: 'fixed-1@app' });
  const dup = await t.throwsAsync(app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}`, sdp: SDP, callId: 'fixed-1@app' }));
  t.regex(dup!.message, /INVALID_PARAMS: .*callId fixed-1@app is already in use/);
  const from = await t.throwsAsync(app.call('sip.createOutbound', { requestUri: `sip:bob@127.0.0.1:${local}`, sdp: SDP, from: '<<<' }));
  t.regex(from!.message, /INVALID_PARAMS/);
  await app.call('sip.bye', { callId: out.callId });
  t.is((await callee).successful, 1);
});
