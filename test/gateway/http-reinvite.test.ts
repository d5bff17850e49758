/**
 * A far end's re-INVITE of an HTTP-owned call (POST /calls with a receiverUrl): sipp, the
 * callee, re-INVITEs the gateway once the call is up (test/sip-scenarios/uas-sends-reinvite.xml,
 * a=sendonly); the gateway POSTs `{method: 'sip.reinvite', params}` to the receiverUrl and puts
 * the answer's SDP (a=recvonly) in its 200, which sipp checks. While the gateway drains, the
 * re-INVITE is still answered (the spec: re-INVITEs keep working) and the call ends normally.
 * A receiverUrl that answers a rejection gives that status; one that answers no answer, 500.
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, scenario, sipp } from '../helpers/sip.js';
import { SDP, sleep, startGateway, until, type GatewayHarness } from '../helpers/gateway.js';

const TOKEN = 'reinvite-token';
const AUTH = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
const HELD = SDP.replace('a=rtpmap:0 PCMU/8000\r\n', 'a=rtpmap:0 PCMU/8000\r\na=recvonly\r\n');

interface Posted {
  event?: string;
  method?: string;
  params?: { callId: string; sdp: string; headers: Record<string, string> };
  data?: Record<string, unknown>;
}

/** The application's receiverUrl: records every POST; answers sip.reinvite with `answer`. */
async function receiver(t: ExecutionContext, answer: unknown): Promise<{ url: string; got: Posted[] }> {
  const got: Posted[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const p = JSON.parse(body) as Posted;
      got.push(p);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(p.method === 'sip.reinvite' ? JSON.stringify(answer) : '{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, got };
}

async function placeCall(t: ExecutionContext, h: GatewayHarness, receiverUrl: string, scenarioFile = scenario(t, 'uas-sends-reinvite.xml')) {
  const local = await freePort();
  const callee = sipp(t, h.sipPort, ['-sf', scenarioFile, '-m', '1'], 60_000, local);
  await sleep(500);
  const res = await fetch(h.base + '/calls', { method: 'POST', headers: AUTH, body: JSON.stringify({ requestUri: `sip:bob@127.0.0.1:${local}`, sdp: SDP, receiverUrl }) });
  const body = (await res.json()) as { callId: string };
  t.is(res.status, 200, JSON.stringify(body));
  return { callId: body.callId, callee };
}

const hangUp = (h: GatewayHarness, callId: string) => fetch(`${h.base}/calls/${encodeURIComponent(callId)}`, { method: 'DELETE', headers: AUTH });

test('the far end re-INVITEs an HTTP-owned call: sip.reinvite POSTed to the receiverUrl, its SDP in the 200', async (t) => {
  const h = await startGateway(t, { token: TOKEN });
  const rec = await receiver(t, { action: 'answer', sdp: HELD });
  const { callId, callee } = await placeCall(t, h, rec.url);
  await until(() => rec.got.some((p) => p.method === 'sip.reinvite'), 10_000, 'sip.reinvite posted');
  const asked = rec.got.find((p) => p.method === 'sip.reinvite')!;
  t.is(asked.params!.callId, callId);
  t.regex(asked.params!.sdp, /a=sendonly/);
  t.is(typeof asked.params!.headers, 'object');
  await sleep(300);
  t.is((await hangUp(h, callId)).status, 200);
  const r = await callee;
  t.is(r.code, 0, r.stdout.slice(-1500) + r.errors);
  t.is(r.successful, 1, 'the 200 to the re-INVITE carried a=recvonly');
  await until(() => rec.got.some((p) => p.event === 'sip.ended'), 5000, 'sip.ended posted');
});

test('while the gateway drains, a far end\'s re-INVITE of an HTTP-owned call is still answered; the drain ends after the call', async (t) => {
  const h = await startGateway(t, { token: TOKEN });
  const rec = await receiver(t, { action: 'answer', sdp: HELD });
  const { callId, callee } = await placeCall(t, h, rec.url);
  const drained = h.gateway.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 30_000 });
  await until(async () => (await h.get('/readyz')).status === 503, 5000, 'draining');
  await until(() => rec.got.some((p) => p.method === 'sip.reinvite'), 10_000, 'sip.reinvite posted while draining');
  await sleep(300);
  t.is((await hangUp(h, callId)).status, 200);
  const r = await callee;
  t.is(r.code, 0, r.stdout.slice(-1500) + r.errors);
  t.is(r.successful, 1);
  t.is((await drained).outcome, 'drained');
});

test('a receiverUrl that rejects the re-INVITE gives its status to the far end; one that answers no answer gives 500; the call stays up', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ action: 'reject', status: 488, reason: 'Not Acceptable Here' }, '488'],
    [{ what: 'ever' }, '500'],
  ];
  for (const [answer, status] of cases) {
    const h = await startGateway(t, { token: TOKEN });
    const rec = await receiver(t, answer);
    const { callId, callee } = await placeCall(t, h, rec.url, scenario(t, 'uas-reinvite-refused.xml.tmpl', { STATUS: status }));
    await until(() => rec.got.some((p) => p.method === 'sip.reinvite'), 10_000, 'sip.reinvite posted');
    await sleep(500);
    t.is((await h.healthz()).body.calls, 1, 'the call is still up after the refused re-INVITE');
    t.is((await hangUp(h, callId)).status, 200);
    const r = await callee;
    t.is(r.code, 0, `${status}: ${r.stdout.slice(-1500)}${r.errors}`);
    t.is(r.successful, 1, `sipp received ${status}`);
  }
});
