/**
 * HTTP-owned calls and media sessions (POST /calls with a receiverUrl, DELETE /calls/:callId,
 * POST /sessions, DELETE /sessions/:id): bearer-protected, JSON errors for bad input, the call
 * placed to sipp `-sn uas` with its follow-up events POSTed to the test's receiver; during a
 * drain new ones are 503 and a slow receiverUrl holds the drain until its POST is answered; an
 * HTTP media session holds it until deleted.
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, sipp } from '../helpers/sip.js';
import { MEDIA_STUB, SDP, sleep, startGateway, until, type GatewayHarness } from '../helpers/gateway.js';

const TOKEN = 'http-owned-token';
const AUTH = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };

interface Receiver {
  url: string;
  got: Array<{ event?: string; data?: Record<string, unknown>; at: number; answeredAt?: number }>;
  /** Delay of the answer to each event, by event name. */
  delays: Record<string, number>;
}

async function receiver(t: ExecutionContext): Promise<Receiver> {
  const rec: Receiver = { url: '', got: [], delays: {} };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const entry = { ...(JSON.parse(body) as { event?: string; data?: Record<string, unknown> }), at: Date.now() } as Receiver['got'][number];
      rec.got.push(entry);
      setTimeout(() => {
        entry.answeredAt = Date.now();
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      }, rec.delays[entry.event ?? ''] ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  rec.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  return rec;
}

const req = async (h: GatewayHarness, method: string, path: string, body?: unknown, headers: Record<string, string> = AUTH) => {
  const res = await fetch(h.base + path, { method, headers, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, retryAfter: res.headers.get('retry-after') };
};
const code = (r: { body: Record<string, unknown> }) => (r.body.error as { code: string } | undefined)?.code;
const drainOpen = async (h: GatewayHarness) => ((await (await fetch(h.base + '/drain', { headers: AUTH })).json()) as { open: Record<string, number> }).open;

test('POST /calls places a call owned over HTTP: events to the receiverUrl, DELETE /calls/:callId hangs up; bad input is a JSON error', async (t) => {
  const h = await startGateway(t, { token: TOKEN });
  const rec = await receiver(t);
  const local = await freePort();
  const callee = sipp(t, h.sipPort, ['-sn', 'uas', '-m', '1'], 60_000, local);
  await sleep(500);
  const requestUri = `sip:bob@127.0.0.1:${local}`;

  t.is((await req(h, 'POST', '/calls', { requestUri, sdp: SDP, receiverUrl: rec.url }, { 'Content-Type': 'application/json' })).status, 401);
  const bad: Array<[unknown, string, RegExp]> = [
    ['{not json', 'INVALID_REQUEST', /not JSON/],
    [[1, 2], 'INVALID_REQUEST', /JSON object/],
    [{ requestUri, sdp: SDP }, 'INVALID_PARAMS', /receiverUrl/],
    [{ requestUri, sdp: SDP, receiverUrl: 'ftp://x' }, 'INVALID_PARAMS', /receiverUrl/],
    [{ requestUri: 'mailto:bob@x', sdp: SDP, receiverUrl: rec.url }, 'INVALID_PARAMS', /requestUri/],
    [{ requestUri, receiverUrl: rec.url }, 'INVALID_PARAMS', /sdp/],
  ];
  for (const [body, c, re] of bad) {
    const r = await req(h, 'POST', '/calls', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(code(r), c);
    t.regex((r.body.error as { message: string }).message, re);
  }
  t.is((await req(h, 'DELETE', '/calls/nope@x')).status, 404);

  const placed = await req(h, 'POST', '/calls', { requestUri, sdp: SDP, receiverUrl: rec.url });
  t.is(placed.status, 200, JSON.stringify(placed.body));
  const callId = placed.body.callId as string;
  t.regex(callId, /@hostd$/);
  t.regex(placed.body.sdp as string, /^v=0/);
  await until(() => rec.got.some((e) => e.event === 'sip.progress'), 5000, 'sip.progress posted');
  const bye = await req(h, 'DELETE', `/calls/${encodeURIComponent(callId)}`);
  t.deepEqual(bye.body, { callId, status: 200 });
  await until(() => rec.got.some((e) => e.event === 'sip.ended'), 5000, 'sip.ended posted');
  t.deepEqual(rec.got.find((e) => e.event === 'sip.ended')!.data, { callId, reason: 'bye', by: 'local' });
  const done = await callee;
  t.is(done.code, 0, done.stdout + done.errors);
  t.is((await h.healthz()).body.calls, 0);
});

test('a slow receiverUrl holds the drain until its follow-up is delivered; new HTTP calls are 503 while draining', async (t) => {
  const h = await startGateway(t, { token: TOKEN });
  const rec = await receiver(t);
  rec.delays['sip.ended'] = 2000;
  const local = await freePort();
  const callee = sipp(t, h.sipPort, ['-sn', 'uas', '-m', '1'], 60_000, local);
  await sleep(500);
  const placed = await req(h, 'POST', '/calls', { requestUri: `sip:bob@127.0.0.1:${local}`, sdp: SDP, receiverUrl: rec.url });
  t.is(placed.status, 200);
  const callId = placed.body.callId as string;

  let drainedAt = 0;
  const drained = h.gateway.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 30_000 }).then((r) => ((drainedAt = Date.now()), r));
  await until(async () => (await h.get('/readyz')).status === 503, 5000, 'draining');
  const refused = await req(h, 'POST', '/calls', { requestUri: `sip:carol@127.0.0.1:${local}`, sdp: SDP, receiverUrl: rec.url });
  t.is(refused.status, 503);
  t.is(code(refused), 'SHUTTING_DOWN');
  t.is(refused.retryAfter, '1');

  t.is((await req(h, 'DELETE', `/calls/${encodeURIComponent(callId)}`)).status, 200, 'teardown still works');
  await until(() => rec.got.some((e) => e.event === 'sip.ended'), 5000, 'sip.ended posted');
  const open = await drainOpen(h);
  t.is(open.callbacks, 1, JSON.stringify(open));
  t.is(open.calls, 0);
  const r = await drained;
  t.is(r.outcome, 'drained');
  const ended = rec.got.find((e) => e.event === 'sip.ended')!;
  t.truthy(ended.answeredAt);
  t.true(drainedAt >= ended.answeredAt!, `drained ${drainedAt - ended.answeredAt!} ms after the receiver answered`);
  t.true(drainedAt - ended.at >= 1900, 'the 2 s callback was waited for');
  t.is((await callee).code, 0);
});

test('POST /sessions and DELETE /sessions/:id: standalone (or with the callId of no call) refused while draining; the drain waits for the HTTP session', async (t) => {
  const h = await startGateway(t, { token: TOKEN }, { mediaLinkModule: MEDIA_STUB });
  t.is((await req(h, 'POST', '/sessions', {}, { 'Content-Type': 'application/json' })).status, 401);
  t.is((await req(h, 'POST', '/sessions', 'nope')).status, 400);
  const created = await req(h, 'POST', '/sessions', {});
  t.is(created.status, 201);
  const id = created.body.session_id as string;
  t.truthy(id);

  let drainedAt = 0;
  const drained = h.gateway.request({ type: 'drain', reason: 'SIGTERM' }, { timeoutMs: 30_000 }).then((r) => ((drainedAt = Date.now()), r));
  await until(async () => (await h.get('/readyz')).status === 503, 5000, 'draining');
  const standalone = await req(h, 'POST', '/sessions', {});
  t.is(standalone.status, 503);
  t.is(code(standalone), 'SHUTTING_DOWN');
  t.is((await req(h, 'POST', '/sessions', { callId: 'no-such@x' })).status, 503);
  t.is((await drainOpen(h)).mediaSessions, 1);
  await sleep(300);
  t.is(drainedAt, 0, 'the HTTP session holds the drain');
  const del = await req(h, 'DELETE', `/sessions/${id}`);
  t.is(del.status, 200);
  t.is((await req(h, 'DELETE', `/sessions/${id}`)).status, 404);
  t.is((await drained).outcome, 'drained');
});
