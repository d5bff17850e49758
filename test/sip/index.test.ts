/**
 * The public face of protocols/sip: the example of docs/gateway.md ("SIP core") run as written
 * (parse an INVITE, drive its server transaction with an injected clock, build the responses),
 * and the purity of every file of the module (sibling imports only, node:crypto in digest.ts,
 * no timers, clock, randomness or I/O).
 */
import test from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import * as sip from '../../protocols/sip/index.js';

const INVITE = [
  'INVITE sip:bob@gw.example.com SIP/2.0',
  'Via: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK74bf9;rport',
  'Max-Forwards: 70',
  'From: Alice <sip:alice@atlanta.example.com>;tag=9fxced76sl',
  'To: Bob <sip:bob@gw.example.com>',
  'Call-ID: 3848276298220188511@atlanta.example.com',
  'CSeq: 1 INVITE',
  'Contact: <sip:alice@192.0.2.10>',
  'Content-Length: 0',
  '',
  '',
].join('\r\n');

test('docs example: parse, server transaction with an injected clock, 180 and 200, 2xx retransmission until ACK', (t) => {
  const parsed = sip.parseMessage(Buffer.from(INVITE));
  if (!parsed.ok || parsed.message.kind !== 'request') return t.fail();
  const invite = parsed.message;
  t.is(sip.checkRequest(invite, { allow: ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS'], supported: [], accept: ['application/sdp'], forwarding: false }), undefined);

  const table = new sip.TransactionTable();
  let now = 1_000;
  const first = table.receive(invite, false, now);
  t.deepEqual(first.actions.map((a) => a.action.type), ['request', 'send']); // TU gets the INVITE, 100 Trying goes out
  const key = first.actions[0]!.key;

  const tag = sip.newTag(Uint8Array.from([1, 2, 3, 4, 5, 6]));
  const ringing = sip.createResponse(invite, 180, { toTag: tag });
  t.deepEqual(table.respond(key, ringing, (now += 50)).map((a) => a.action.type), ['send']);
  const ok = sip.createResponse(invite, 200, { toTag: tag, contact: [sip.parseNameAddr('<sip:bob@192.0.2.20>', 'Contact')] });
  t.deepEqual(table.respond(key, ok, (now += 50)).map((a) => a.action.type), ['send', 'startTimer']); // Accepted, Timer L
  const dialog = sip.createUasDialog(invite, ok);
  t.is(sip.dialogKey(dialog.id), `3848276298220188511@atlanta.example.com\n${tag}\n9fxced76sl`);

  let schedule = sip.start2xxRetransmit(now);
  t.is(schedule.next, now + 500);
  const r = sip.on2xxRetransmitTimer(schedule);
  if (r.retransmit) schedule = r.schedule;
  t.is(schedule.next, now + 1500);

  const bytes = sip.serializeMessage(ok).toString();
  t.true(bytes.startsWith('SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK74bf9;rport\r\n'));
  t.true(bytes.includes(`To: "Bob" <sip:bob@gw.example.com>;tag=${tag}\r\n`));
  t.deepEqual(sip.responseTarget(invite.via[0]!), { host: '192.0.2.10', port: 5060 });
  t.is(table.nextDeadline(), now + 32000);
  t.deepEqual(table.fire(now + 32000).map((a) => a.action.type), ['terminated']);
  t.is(table.size, 0);
});

const DIR = new URL('../../../protocols/sip/', import.meta.url);
const FORBIDDEN = /setTimeout|setInterval|setImmediate|queueMicrotask|Date\.now|new Date\b|performance\.now|Math\.random|process\.|\brequire\s*\(|\bfs\b/;
for (const file of readdirSync(DIR).filter((f) => f.endsWith('.ts'))) {
  test(`protocols/sip/${file} is pure: sibling imports only, no timers, clock, randomness or I/O`, (t) => {
    const src = readFileSync(new URL(file, DIR), 'utf8');
    t.true(src.startsWith('/**'), 'opens with its header comment');
    const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\bimport\s+['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2] ?? m[3]);
    for (const i of imports) t.true(/^\.\/[\w-]+\.js$/.test(i as string) || (file === 'digest.ts' && i === 'node:crypto'), `${file} imports ${i}`);
    t.notRegex(src, FORBIDDEN);
  });
}
