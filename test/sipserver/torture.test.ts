/**
 * The RFC 4475 torture messages sent to a running SIP server over UDP and TCP: nothing
 * crashes, the invalid ones are counted as malformed, and the server keeps answering.
 * (Their answers go where each message's Via says, mostly not to this test; the parser's
 * verdict on each is tested in test/sip/torture.test.ts.)
 */
import { readdirSync } from 'node:fs';
import test from 'ava';
import { metric, startSip, tcpExchange, udpExchange } from '../helpers/sip.js';
import { mpart01, torture } from '../sip/rfc4475.js';

const names = readdirSync(new URL('../../../test/fixtures/sip/rfc4475/', import.meta.url)).map((f) => f.replace(/\.txt$/, ''));

test('every RFC 4475 message over UDP and TCP: the server survives, counts the malformed ones and keeps serving', async (t) => {
  const h = await startSip(t);
  h.routes.answer = () => ({ body: JSON.stringify({ action: 'reject', data: { status: 404 } }) });
  const messages = [...names.map((n) => torture(n)), mpart01()];
  t.true(messages.length >= 49);
  await Promise.all(messages.map((m) => udpExchange(h.port, m, 300)));
  for (const m of messages) await tcpExchange(h.port, m, 50);
  const options = ['OPTIONS sip:alice@127.0.0.1 SIP/2.0', 'Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bK-after-torture;rport', 'From: <sip:p@127.0.0.1>;tag=1', 'To: <sip:alice@127.0.0.1>', 'Call-ID: after-torture', 'CSeq: 1 OPTIONS', 'Max-Forwards: 70', 'Content-Length: 0', '', ''].join('\r\n');
  const ok = await udpExchange(h.port, options, 1000, 1, (g) => g.length > 0);
  t.regex(ok[0] ?? '', /^SIP\/2\.0 200 OK/);
  const text = await h.system.metrics();
  const malformed = ['dropped', 'answered 400', 'answered 505', 'answered 513'].flatMap((o) => ['udp', 'tcp'].map((tr) => metric(text, `sipserver_malformed_total{transport="${tr}",outcome="${o}"}`))).filter((v) => !Number.isNaN(v));
  t.true(malformed.reduce((a, b) => a + b, 0) >= 10, `malformed counted: ${malformed.join(',')}`);
  t.true(metric(text, 'sipserver_requests_total{method="INVITE"}') >= 10);
  const info = await h.server.request({ type: 'info' });
  t.is(info.dialogs, 0);
});
