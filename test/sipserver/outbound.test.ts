/**
 * Outbound INVITEs from the SIP server to sipp as the callee (`-sn uas`, and a callee that
 * rings and gets cancelled), over UDP and TCP: the final response is the reply, the 2xx is
 * ACKed and makes a dialog, the gateway's BYE ends it; a CANCEL after the 180 ends in 487.
 */
import test from 'ava';
import { freePort, scenario, sipp, startSip } from '../helpers/sip.js';

const SDP = ['v=0', 'o=hostd 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40002 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const transport of ['u1', 't1'] as const) {
  const name = transport === 'u1' ? 'UDP' : 'TCP';
  const param = transport === 't1' ? ';transport=tcp' : '';

  test(`${name}: an outbound INVITE answered by sipp uas: 200 is the reply, ACK sent, the gateway's BYE completes the call`, async (t) => {
    const h = await startSip(t);
    const local = await freePort();
    const callee = sipp(t, h.port, ['-sn', 'uas', '-t', transport, '-m', '1'], 60_000, local);
    await sleep(500);
    const r = await h.server.request({ type: 'invite', id: 'out-1', requestUri: `sip:bob@127.0.0.1:${local}${param}`, gateway: 'gw1', body: SDP, contentType: 'application/sdp' }, { timeoutMs: 40_000 });
    t.is(r.status, 200);
    t.truthy(r.dialog);
    t.regex(r.raw, /^SIP\/2\.0 200/);
    t.is((await h.server.request({ type: 'info' })).dialogs, 1);
    const bye = await h.gw.request({ type: 'bye', dialog: r.dialog! }, { timeoutMs: 40_000 });
    t.is(bye.status, 200);
    const done = await callee;
    t.is(done.code, 0, done.stdout + done.errors);
    t.is(done.successful, 1);
    t.is((await h.server.request({ type: 'info' })).dialogs, 0);
  });

  test(`${name}: CANCEL of an outbound INVITE while it rings: the reply is 487 and sipp's scenario completes`, async (t) => {
    const h = await startSip(t);
    const local = await freePort();
    const callee = sipp(t, h.port, ['-sf', scenario(t, 'uas-cancel.xml'), '-t', transport, '-m', '1'], 60_000, local);
    await sleep(500);
    const invite = h.server.request({ type: 'invite', id: 'out-2', requestUri: `sip:bob@127.0.0.1:${local}${param}`, gateway: 'gw1' }, { timeoutMs: 40_000 });
    // Asked before any 1xx: sent when the 180 arrives (§9.1).
    t.deepEqual(await h.server.request({ type: 'cancel', id: 'out-2' }), { cancelling: true });
    t.deepEqual(await h.server.request({ type: 'cancel', id: 'out-2' }), { cancelling: false }, 'asked once');
    const r = await invite;
    t.is(r.status, 487);
    t.is(r.dialog, undefined);
    const done = await callee;
    t.is(done.code, 0, done.stdout + done.errors);
    t.is(done.successful, 1);
  });
}

test('outbound INVITE refusals: a non-SIP Request-URI, a bad From, an unknown id to cancel', async (t) => {
  const h = await startSip(t);
  const { refusalOf } = await import('../../runtime/index.js');
  const err = await t.throwsAsync(h.server.request({ type: 'invite', id: 'x', requestUri: 'tel:+123', gateway: 'gw1' }));
  t.is(refusalOf(err), 'INVALID');
  t.regex(err!.message, /not a SIP URI/);
  const err2 = await t.throwsAsync(h.server.request({ type: 'invite', id: 'y', requestUri: 'sip:bob@127.0.0.1:1', gateway: 'gw1', from: '<<<' }));
  t.is(refusalOf(err2), 'INVALID');
  t.deepEqual(await h.server.request({ type: 'cancel', id: 'nope' }), { cancelling: false });
});
