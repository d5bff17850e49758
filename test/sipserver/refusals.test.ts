/**
 * The SIP server's refusals and the route handler's answers, with raw UDP/TCP peers (to send
 * exactly the bad bytes) and sipp (483, 420): each gets its status, malformed input is
 * answered 400 or dropped, and the server keeps serving.
 */
import test from 'ava';
import { metric, scenario, sipp, startSip, tcpExchange, udpExchange } from '../helpers/sip.js';

let seq = 0;
/** A request as a peer would send it; `over` replaces or removes (null) header lines. */
function request(method: string, port: number, over: Record<string, string | null> = {}, body = ''): string {
  const n = ++seq;
  const headers: Record<string, string | null> = {
    Via: `SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-test-${n}-${Date.now()};rport`,
    From: `<sip:peer@127.0.0.1>;tag=f${n}`,
    To: `<sip:alice@127.0.0.1:${port}>`,
    'Call-ID': `call-${n}-${Date.now()}@test`,
    CSeq: `1 ${method}`,
    'Max-Forwards': '70',
    Contact: '<sip:peer@127.0.0.1:9>',
    ...over,
  };
  const lines = Object.entries(headers).filter(([, v]) => v !== null).map(([k, v]) => `${k}: ${v}`);
  return [`${method} sip:alice@127.0.0.1:${port} SIP/2.0`, ...lines, `Content-Length: ${Buffer.byteLength(body, 'latin1')}`, '', body].join('\r\n');
}

const statusOf = (msg: string | undefined) => (msg ? Number(/^SIP\/2\.0 (\d{3})/.exec(msg)?.[1]) : undefined);
const finals = (got: string[]) => got.filter((m) => !/^SIP\/2\.0 1\d\d/.test(m));
const header = (msg: string | undefined, name: string) => (msg ? new RegExp(`^${name}: (.*)$`, 'mi').exec(msg)?.[1] : undefined);

test('sipp: Max-Forwards 0 → 483, an unknown Require → 420 with Unsupported (UDP and TCP)', async (t) => {
  const h = await startSip(t);
  for (const transport of ['u1', 't1']) {
    const hops = await sipp(t, h.port, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: '483', MAXFWD: '0', EXTRA: 'Subject: hops' }), '-t', transport, '-m', '1', '-s', 'alice']);
    t.is(hops.code, 0, hops.stdout + hops.errors);
    const ext = await sipp(t, h.port, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: '420', MAXFWD: '70', EXTRA: 'Require: teleportation' }), '-t', transport, '-m', '1', '-s', 'alice']);
    t.is(ext.code, 0, ext.stdout + ext.errors);
  }
  t.is(h.routes.queries.length, 0, 'refused requests never reach the route handler');
  const got = finals(await udpExchange(h.port, request('INVITE', h.port, { Require: 'teleportation, 100rel' })));
  t.is(header(got[0], 'Unsupported'), 'teleportation, 100rel');
});

test('method refusals: REGISTER 405 and an unknown method 501, both with Allow; out-of-dialog BYE and a BYE of no dialog 481', async (t) => {
  const h = await startSip(t);
  const reg = finals(await udpExchange(h.port, request('REGISTER', h.port)));
  t.is(statusOf(reg[0]), 405);
  t.regex(header(reg[0], 'Allow') ?? '', /INVITE, ACK, BYE, CANCEL, OPTIONS/);
  const unknown = finals(await udpExchange(h.port, request('FROBNICATE', h.port)));
  t.is(statusOf(unknown[0]), 501);
  t.truthy(header(unknown[0], 'Allow'));
  t.is(statusOf(finals(await udpExchange(h.port, request('BYE', h.port)))[0]), 481);
  const inDialog = finals(await udpExchange(h.port, request('BYE', h.port, { To: `<sip:alice@127.0.0.1:${h.port}>;tag=nosuchdialog` })));
  t.is(statusOf(inDialog[0]), 481);
  t.is(h.routes.queries.length, 0);
});

test('415 for a body that is not SDP, 482 for a merged request, 513 over the size limit', async (t) => {
  const h = await startSip(t, { maxMessageBytes: 2048 });
  const text = finals(await udpExchange(h.port, request('INVITE', h.port, { 'Content-Type': 'text/plain' }, 'hello')));
  t.is(statusOf(text[0]), 415);
  t.is(header(text[0], 'Accept'), 'application/sdp');
  // Two INVITEs, same Call-ID, From tag and CSeq, different branches: the second is merged.
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'route', data: { tag: 'gw1' } }), delayMs: 800 });
  const first = request('INVITE', h.port, { To: '<sip:silent@127.0.0.1>' });
  const second = first.replace(/branch=[^;\r\n]+/, 'branch=z9hG4bK-other-path');
  const [, merged] = await Promise.all([udpExchange(h.port, first, 300), new Promise<string[]>((r) => setTimeout(() => void udpExchange(h.port, second, 300).then(r), 50))]);
  t.is(statusOf(finals(merged)[0]), 482);
  const big = finals(await udpExchange(h.port, request('OPTIONS', h.port, { Subject: 'x'.repeat(3000) })));
  t.is(statusOf(big[0]), 513);
});

test('malformed messages over UDP and TCP: 400 when a response can be built, dropped otherwise; the server keeps serving', async (t) => {
  const h = await startSip(t);
  // Missing CSeq number: a 400 can be built from Via/From/To/Call-ID... CSeq is missing, so dropped.
  const noCseq = await udpExchange(h.port, request('OPTIONS', h.port, { CSeq: null }));
  t.deepEqual(noCseq, [], 'no CSeq to copy: dropped');
  const badCseq = await udpExchange(h.port, request('OPTIONS', h.port, { CSeq: 'one OPTIONS' }));
  t.is(statusOf(badCseq[0]), 400);
  t.regex(badCseq[0]!, /^SIP\/2\.0 400 .*CSeq/);
  t.deepEqual(await udpExchange(h.port, 'this is not SIP at all\r\n\r\n'), []);
  t.deepEqual(await udpExchange(h.port, Buffer.from([0xff, 0x00, 0x13, 0x37])), []);
  t.deepEqual(await udpExchange(h.port, 'SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKstray\r\n\r\n'), [], 'a malformed response is dropped');
  const version = await udpExchange(h.port, request('OPTIONS', h.port).replace('SIP/2.0\r\n', 'SIP/7.0\r\n'));
  t.is(statusOf(version[0]), 505);
  // TCP: a framing error (no Content-Length) gets 400 and the connection is closed.
  const noLength = request('OPTIONS', h.port, { Via: 'SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bK-tcp-nolen' }).replace(/Content-Length: 0\r\n/, '');
  const framed = await tcpExchange(h.port, noLength);
  t.is(statusOf(framed.data), 400);
  t.true(framed.closed);
  const garbage = await tcpExchange(h.port, 'GARBAGE\r\nContent-Length: 0\r\n\r\n');
  t.is(garbage.data, '');
  // Two good OPTIONS in one TCP segment are framed apart and both answered.
  const two = await tcpExchange(h.port, request('OPTIONS', h.port, { Via: 'SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bK-tcp-a' }) + request('OPTIONS', h.port, { Via: 'SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bK-tcp-b' }));
  t.is(two.data.match(/^SIP\/2\.0 200 OK/gm)?.length, 2);
  // A Via whose port cannot be sent to (0): the answer is lost like a datagram, nothing breaks.
  t.deepEqual(await udpExchange(h.port, request('OPTIONS', h.port, { Via: 'SIP/2.0/UDP 127.0.0.1:0;branch=z9hG4bK-port-zero' })), []);
  // Still serving.
  const ok = await udpExchange(h.port, request('OPTIONS', h.port));
  t.is(statusOf(ok[0]), 200);
  t.truthy(header(ok[0], 'Supported') !== undefined);
  t.regex(header(ok[0], 'Via') ?? '', /received=127\.0\.0\.1;rport=\d+|rport=\d+;received=127\.0\.0\.1/);
  // Counted: the dropped ones and the answered ones, per transport.
  const metrics = await h.system.metrics();
  const value = (series: string) => metric(metrics, series);
  t.is(value('sipserver_malformed_total{transport="udp",outcome="dropped"}'), 4);
  t.is(value('sipserver_malformed_total{transport="udp",outcome="answered 400"}'), 1);
  t.is(value('sipserver_malformed_total{transport="udp",outcome="answered 505"}'), 1);
  t.is(value('sipserver_malformed_total{transport="tcp",outcome="answered 400"}'), 1);
  t.is(value('sipserver_malformed_total{transport="tcp",outcome="dropped"}'), 1);
  t.true(value('sipserver_requests_total{method="OPTIONS"}') >= 3);
  t.true(value('sipserver_responses_total{status="200"}') >= 3);
});

test('route handler answers: redirect 302 with Contact, proxy 501, non-JSON 500, malformed 500, unreachable 503, slow 503 (Retry-After)', async (t) => {
  const h = await startSip(t, { routeTimeoutMs: 1500, retryAfter: 7 });
  const invite = async () => finals(await udpExchange(h.port, request('INVITE', h.port), 5000, 1, (got) => finals(got).length > 0))[0];
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'redirect', data: { contact: 'sip:elsewhere@127.0.0.2' } }) });
  const moved = await invite();
  t.is(statusOf(moved), 302);
  t.is(header(moved, 'Contact'), '<sip:elsewhere@127.0.0.2>');
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'proxy', data: { destination: 'sip:127.0.0.2' } }) });
  t.is(statusOf(await invite()), 501);
  h.routes.answer = () => ({ body: '<html>oops</html>' });
  t.is(statusOf(await invite()), 500);
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'reject', data: { status: 99 } }) });
  t.is(statusOf(await invite()), 500);
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'teleport', data: {} }) });
  t.is(statusOf(await invite()), 500);
  h.routes.answer = () => ({ status: 502, body: 'bad gateway' });
  const down = await invite();
  t.is(statusOf(down), 503);
  t.is(header(down, 'Retry-After'), '7');
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'route', data: { tag: 'gw1' } }), delayMs: 2500 });
  const slow = await invite();
  t.is(statusOf(slow), 503);
  t.is(header(slow, 'Retry-After'), '7');
  const metrics = await h.system.metrics();
  const value = (series: string) => metric(metrics, series);
  t.is(value('sipserver_route_lookups_total{outcome="malformed"}'), 3);
  t.is(value('sipserver_route_lookups_total{outcome="unreachable"}'), 1);
  t.is(value('sipserver_route_lookups_total{outcome="timeout"}'), 1);
  t.is(value('sipserver_route_lookups_total{outcome="redirect"}'), 1);
  t.is(value('sipserver_route_lookup_seconds_count'), 7);
});

test('an unreachable route handler: 503 + Retry-After; draining: new INVITE 503, OPTIONS 503', async (t) => {
  const h = await startSip(t, { routeUrl: 'http://127.0.0.1:1/sipserver/route' });
  const got = finals(await udpExchange(h.port, request('INVITE', h.port), 5000, 1, (g) => finals(g).length > 0));
  t.is(statusOf(got[0]), 503);
  t.is(header(got[0], 'Retry-After'), '1');
  await h.server.request({ type: 'acceptingNew', value: false });
  const drained = finals(await udpExchange(h.port, request('INVITE', h.port)));
  t.is(statusOf(drained[0]), 503);
  t.is(statusOf(finals(await udpExchange(h.port, request('OPTIONS', h.port)))[0]), 503);
  t.false((await h.server.request({ type: 'info' })).acceptingNew);
});

test('route lookups by message: a route actor that is not running or does not answer route.lookup gives 503 + Retry-After, never the HTTP handler', async (t) => {
  for (const actor of ['nobody', 'gw1']) {
    const h = await startSip(t, {}, true, actor);
    const got = finals(await udpExchange(h.port, request('INVITE', h.port), 5000, 1, (g) => finals(g).length > 0));
    t.is(statusOf(got[0]), 503, actor);
    t.is(header(got[0], 'Retry-After'), '1', actor);
    t.is(h.routes.queries.length, 0, `${actor}: the HTTP handler was not asked`);
  }
});

test('a retransmitted INVITE reaches neither the route handler nor the gateway twice; 100 Trying at once', async (t) => {
  const h = await startSip(t);
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'route', data: { tag: 'gw1' } }), delayMs: 300 });
  const inv = request('INVITE', h.port, { To: `<sip:silent@127.0.0.1:${h.port}>` });
  const got = await udpExchange(h.port, inv, 700, 3);
  t.is(got.filter((m) => statusOf(m) === 100).length, 3, 'each copy is answered 100 Trying (the first at once, the others by the transaction)');
  let s = await h.gw.request({ type: 'stats' });
  for (let i = 0; i < 100 && Object.keys(s.invites).length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    s = await h.gw.request({ type: 'stats' });
  }
  await new Promise((r) => setTimeout(r, 300));
  s = await h.gw.request({ type: 'stats' });
  t.is(h.routes.queries.length, 1);
  t.deepEqual(Object.values(s.invites), [1]);
});

test('gateway interface refusals: respond to an unknown key, a bad status, a taken tag, a request in no dialog', async (t) => {
  const h = await startSip(t);
  const { refusalOf } = await import('../../runtime/index.js');
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
      return 'none';
    } catch (err) {
      return refusalOf(err) ?? (err as Error).message;
    }
  };
  t.is(await code(h.server.request({ type: 'respond', key: 'nope', status: 200 })), 'NO_TRANSACTION');
  t.is(await code(h.server.request({ type: 'attach', tag: 'gw1', gateway: 'someone-else' })), 'TAG_TAKEN');
  t.is(await code(h.server.request({ type: 'request', dialog: 'nope', method: 'BYE' })), 'NO_DIALOG');
  t.deepEqual(await h.server.request({ type: 'detach', tag: 'gw1' }), { tag: 'gw1', detached: true });
  t.deepEqual((await h.server.request({ type: 'info' })).tags, {});
});

test('TCP bounds: an idle connection is closed after SIPSERVER_TCP_IDLE_MS; connections over SIPSERVER_MAX_CONNECTIONS are refused', async (t) => {
  const h = await startSip(t, { tcpIdleMs: 1000, maxConnections: 2 });
  const net = await import('node:net');
  const open = () =>
    new Promise<{ s: import('node:net').Socket; closed: Promise<number> }>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port: h.port });
      s.on('error', () => undefined);
      const started = Date.now();
      const closed = new Promise<number>((r) => s.on('close', () => r(Date.now() - started)));
      s.once('connect', () => resolve({ s, closed }));
    });
  const a = await open();
  const b = await open();
  await new Promise((r) => setTimeout(r, 100));
  t.is((await h.server.request({ type: 'info' })).connections, 2);
  const c = await open();
  const third = await Promise.race([c.closed, new Promise<number>((r) => setTimeout(() => r(-1), 800))]);
  t.true(third >= 0 && third < 800, 'the third connection is closed at once');
  const idle = await a.closed;
  t.true(idle >= 900 && idle < 3000, `idle connection closed after ${idle} ms`);
  await b.closed;
  // The server forgets a connection when its own socket's close event comes, which on a loaded
  // machine can follow the client's by a moment.
  let left = -1;
  for (let i = 0; i < 40 && left !== 0; i++) {
    left = (await h.server.request({ type: 'info' })).connections;
    if (left !== 0) await new Promise((r) => setTimeout(r, 50));
  }
  t.is(left, 0, 'the server holds no connection after both closed');
});
