/**
 * The message parser and serializer beyond the torture messages: compact forms, list and
 * non-list headers, name-addr vs addr-spec (§20.10), Via parameters (§18.2.1, RFC 3581),
 * Content-Length framing (§18.3), size limits, the raw 400, and serialization.
 */
import test from 'ava';
import { newBranch, newCallId, newTag, rawErrorResponse } from '../../protocols/sip/build.js';
import { canonicalName } from '../../protocols/sip/headers.js';
import { headerValue, headerValues, parseMessage } from '../../protocols/sip/parse.js';
import { serializeMessage } from '../../protocols/sip/serialize.js';
import type { ParseResult, SipMessage } from '../../protocols/sip/types.js';
import { maddrOf, parseVia, receivedOf, responseTarget, rportOf, ttlOf } from '../../protocols/sip/via.js';
import { torture } from './rfc4475.js';

const BASE = [
  'INVITE sip:bob@biloxi.example.com SIP/2.0',
  'Via: SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK776asdhds',
  'Max-Forwards: 70',
  'To: Bob <sip:bob@biloxi.example.com>',
  'From: Alice <sip:alice@atlanta.example.com>;tag=1928301774',
  'Call-ID: a84b4c76e66710@pc33.atlanta.example.com',
  'CSeq: 314159 INVITE',
];
function parse(extra: string[], o: { body?: string; cl?: boolean; lines?: string[] } = {}): ParseResult {
  const body = o.body ?? '';
  const lines = [...(o.lines ?? BASE), ...extra, ...(o.cl === false ? [] : [`Content-Length: ${Buffer.byteLength(body)}`])];
  return parseMessage(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
function ok(t: import('ava').ExecutionContext, r: ParseResult): SipMessage {
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  t.pass();
  return r.message;
}

test('compact header names of RFC 3261 §7.3.3 and later RFCs expand to their long forms', (t) => {
  const table: Record<string, string> = { i: 'Call-ID', m: 'Contact', e: 'Content-Encoding', l: 'Content-Length', c: 'Content-Type', f: 'From', s: 'Subject', k: 'Supported', t: 'To', v: 'Via', o: 'Event', r: 'Refer-To', b: 'Referred-By', u: 'Allow-Events', a: 'Accept-Contact', j: 'Reject-Contact', d: 'Request-Disposition', x: 'Session-Expires', y: 'Identity', n: 'Identity-Info' };
  for (const [short, long] of Object.entries(table)) {
    t.is(canonicalName(short), long);
    t.is(canonicalName(short.toUpperCase()), long);
  }
  t.is(canonicalName('cSeQ'), 'CSeq');
  t.is(canonicalName('X-Custom'), 'X-Custom', 'unknown names keep their spelling');
});

test('list headers split at top-level commas only; auth, Date and unknown headers are never split', (t) => {
  const m = ok(t, parse(['k: 100rel, timer', 'Supported: path', 'WWW-Authenticate: Digest realm="a,b", nonce="x"', 'Date: Sat, 13 Nov 2010 23:29:00 GMT', 'X-List: a, b', 'Accept: application/sdp;q="0.5,x", text/plain']));
  t.deepEqual(headerValues(m, 'Supported'), ['100rel', 'timer', 'path']);
  t.deepEqual(headerValues(m, 'WWW-Authenticate'), ['Digest realm="a,b", nonce="x"']);
  t.deepEqual(headerValues(m, 'Date'), ['Sat, 13 Nov 2010 23:29:00 GMT']);
  t.deepEqual(headerValues(m, 'X-List'), ['a, b']);
  t.deepEqual(headerValues(m, 'Accept'), ['application/sdp;q="0.5,x"', 'text/plain'], 'a comma inside quotes does not split');
});

test('Contact lists: commas inside quotes and <> do not split; addr-spec parameters belong to the header', (t) => {
  const m = ok(t, parse(['Contact: "Doe, John" <sip:j,k@a.example.com;x=1>;q=0.7, sip:k@b.example.com;expires=60']));
  t.is(m.contact.length, 2);
  t.is(m.contact[0]?.displayName, 'Doe, John');
  t.deepEqual(m.contact[0]?.params, { q: '0.7' });
  t.deepEqual(m.contact[1]?.params, { expires: '60' });
});

test('name-addr rules (§20.10): quoted or token display names; addr-spec with "?" refused; Contact: * read', (t) => {
  t.is(ok(t, parse([], { lines: BASE.map((l) => (l.startsWith('To:') ? 'To: Bob  Smith <sip:bob@biloxi.example.com>' : l)) })).to.displayName, 'Bob Smith');
  const bad = parse([], { lines: BASE.map((l) => (l.startsWith('To:') ? 'To: sip:bob@biloxi.example.com?x=y' : l)) });
  t.false(bad.ok);
  const star = ok(t, parse(['Contact: *', 'Expires: 0'], { lines: BASE.map((l) => l.replace('INVITE', 'REGISTER')) }));
  t.true(star.contactStar);
});

test('header folding and LWS: continuation lines join with one SP', (t) => {
  const m = ok(t, parse(['Subject: I know you\'re there,', '    pick up the phone', '\tand talk to me!']));
  t.is(headerValue(m, 'Subject'), "I know you're there, pick up the phone and talk to me!");
});

test('Via: branch, received, rport with and without value, maddr, ttl, IPv6 sent-by', (t) => {
  const v = parseVia('SIP/2.0/UDP [2001:db8::9]:5080;branch=z9hG4bKx;received=192.0.2.1;rport=5066;maddr=224.2.0.1;ttl=16');
  t.deepEqual([v.host, v.port, receivedOf(v), rportOf(v), maddrOf(v), ttlOf(v)], ['[2001:db8::9]', 5080, '192.0.2.1', 5066, '224.2.0.1', 16]);
  t.is(rportOf(parseVia('SIP/2.0/UDP a.example.com;rport;branch=z9hG4bKx')), true);
  t.is(rportOf(parseVia('SIP/2.0/UDP a.example.com;branch=z9hG4bKx')), undefined);
  t.throws(() => parseVia('SIP/2.0/UDP a.example.com;ttl=256'));
  t.throws(() => parseVia('SIP/2.0/UDP a.example.com;branch'));
});

test('responses go to received and rport when present (§18.2.2, RFC 3581 §4)', (t) => {
  t.deepEqual(responseTarget(parseVia('SIP/2.0/UDP 10.0.0.1:5070;received=192.0.2.1;rport=61000')), { host: '192.0.2.1', port: 61000 });
  t.deepEqual(responseTarget(parseVia('SIP/2.0/UDP 10.0.0.1:5070;received=192.0.2.1')), { host: '192.0.2.1', port: 5070 });
  t.deepEqual(responseTarget(parseVia('SIP/2.0/UDP a.example.com')), { host: 'a.example.com', port: 5060 });
});

test('Content-Length: the body is cut to it on a datagram; a longer one is 400; required on a stream', (t) => {
  const m = ok(t, parseMessage(`${[...BASE, 'Content-Length: 4'].join('\r\n')}\r\n\r\nv=0\r\nJUNK`));
  t.is(m.body.toString(), 'v=0\r');
  const long = parseMessage(`${[...BASE, 'Content-Length: 40'].join('\r\n')}\r\n\r\nv=0\r\n`);
  t.deepEqual(!long.ok && [long.status, long.reason], [400, 'Content-Length 40 is larger than the 5 bytes of body received']);
  const stream = parseMessage(`${BASE.join('\r\n')}\r\n\r\n`, { stream: true });
  t.is(!stream.ok && stream.status, 400);
  t.true(ok(t, parseMessage(`${BASE.join('\r\n')}\r\n\r\n`)).body.length === 0, 'no Content-Length on UDP: the rest of the datagram');
});

test('size limits: an oversized message and too many headers are refused with 513 before any parsing', (t) => {
  const big = Buffer.alloc(70000, 0x61);
  const r = parseMessage(big);
  t.deepEqual(!r.ok && [r.status, r.reason], [513, 'message of 70000 bytes exceeds the limit of 65535']);
  const many = parse(Array.from({ length: 200 }, (_, i) => `X-H${i}: ${i}`));
  t.is(!many.ok && many.status, 513);
  t.true(parse(Array.from({ length: 200 }, (_, i) => `X-H${i}: ${i}`)).ok === false);
  t.true(parseMessage(Buffer.from(`${[...BASE, 'Content-Length: 0'].join('\r\n')}\r\n\r\n`), { maxBytes: 100 }).ok === false, 'the limit is a parameter');
});

test('leading CRLFs before the start line are ignored (§7.5); a message without the blank line is 400', (t) => {
  t.true(parseMessage(`\r\n\r\n${[...BASE, 'Content-Length: 0'].join('\r\n')}\r\n\r\n`).ok);
  t.false(parseMessage(BASE.join('\r\n')).ok);
});

test('a refused request keeps the raw Via/From/To/Call-ID/CSeq and rawErrorResponse answers it with 400', (t) => {
  const r = parseMessage(torture('badinv01'));
  if (r.ok) return t.fail();
  const bytes = rawErrorResponse(r.partial, r.status, 'Bad Request', 'srvtag');
  t.truthy(bytes);
  const text = bytes?.toString() ?? '';
  t.true(text.startsWith('SIP/2.0 400 Bad Request\r\nVia: SIP/2.0/UDP 192.0.2.15;;,;,,\r\n'));
  t.true(text.includes('To: sip:j.user@example.com;tag=srvtag\r\n'));
  t.true(text.includes('Call-ID: badinv01.0ha0isndaksdjasdf3234nas\r\nCSeq: 8 INVITE\r\n'));
  t.true(text.endsWith('Content-Length: 0\r\n\r\n'));
  const resp = parseMessage(torture('bigcode'));
  t.is(!resp.ok && rawErrorResponse(resp.partial, 400, 'Bad Request'), undefined, 'never answer a response');
});

test('serializer: long-form names, CRLF, a correct Content-Length, and parse(serialize(m)) gives m back', (t) => {
  const m = ok(t, parseMessage(torture('wsinv')));
  const out = serializeMessage(m);
  const text = out.toString('utf8');
  t.true(text.startsWith('INVITE sip:vivekg@chair-dnrc.example.com;unknownparam SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.2;branch=390skdjuw\r\n'));
  t.true(text.includes('\r\nContact: "Quoted string \\"\\"" <sip:jdrosen@example.com>;newparam=newvalue;secondparam;q=0.33\r\n'));
  t.true(text.includes('\r\nSubject: \r\n'));
  t.true(text.includes('\r\nContent-Length: 150\r\n\r\nv=0\r\n'));
  t.false(/\r\n[a-z]:/.test(text), 'no compact forms');
  const again = parseMessage(out);
  t.deepEqual(again.ok && again.message, m);
});

test('serializer: the Content-Length written is the body length, whatever headers say', (t) => {
  const m = ok(t, parse(['X-A: 1'], { body: 'hello' }));
  const changed = { ...m, body: Buffer.from('hello, world'), headers: [...m.headers, { name: 'Content-Length', value: '3' }] };
  const text = serializeMessage(changed).toString();
  t.is(text.match(/Content-Length/g)?.length, 1);
  t.true(text.endsWith('Content-Length: 12\r\n\r\nhello, world'));
});

test('serializer: `own` bytes are the same bytes in memory of their own (a kept response does not hold a pool block)', (t) => {
  const m = ok(t, parse(['X-A: 1'], { body: 'hello' }));
  const pooled = serializeMessage(m);
  const own = serializeMessage(m, { own: true });
  t.deepEqual(own, pooled);
  t.is(own.byteOffset, 0);
  t.is(own.buffer.byteLength, own.length, 'its ArrayBuffer is exactly its bytes');
  t.true(pooled.buffer.byteLength > pooled.length, 'the default is a slice of the shared pool');
});

test('identifiers from caller-provided random bytes: branch with the magic cookie, tag, Call-ID', (t) => {
  const bytes = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  t.is(newBranch(bytes), 'z9hG4bKAQIDBAUGBwgJCgsM');
  t.is(newTag(bytes.subarray(0, 6)), 'AQIDBAUG');
  t.is(newCallId(bytes, 'gw.example.com'), 'AQIDBAUGBwgJCgsM@gw.example.com');
  t.regex(newBranch(Uint8Array.from([255, 255, 255, 255, 255, 255])), /^z9hG4bK[A-Za-z0-9.-]+$/, 'token characters only');
});

test('headerValues reads the typed headers from their fields, under any spelling', (t) => {
  const m = ok(t, parseMessage(torture('wsinv')));
  t.deepEqual(headerValues(m, 'v'), ['SIP/2.0/UDP 192.0.2.2;branch=390skdjuw', 'SIP/2.0/TCP spindle.example.com;branch=z9hG4bK9ikj8', 'SIP/2.0/UDP 192.168.255.111;branch=z9hG4bK30239']);
  t.deepEqual(headerValues(m, 'i'), ['wsinv.ndaksdj@192.0.2.1']);
  t.is(headerValue(m, 'CSEQ'), '9 INVITE');
  t.is(headerValue(m, 'max-forwards'), '68');
  t.is(headerValue(m, 'l'), '150');
  t.is(headerValue(m, 'c'), 'application/sdp');
  t.is(headerValue(m, 'To'), '<sip:vivekg@chair-dnrc.example.com>;tag=1918181833n');
});

test('a 501 from the parser (RFC 4475 mismatch02) is answered with the Allow the caller adds', (t) => {
  const r = parseMessage(torture('mismatch02'));
  if (r.ok) return t.fail();
  const text = rawErrorResponse(r.partial, r.status, 'Not Implemented', 'x', [{ name: 'Allow', value: 'INVITE, ACK, BYE, CANCEL, OPTIONS' }])?.toString() ?? '';
  t.true(text.startsWith('SIP/2.0 501 Not Implemented\r\n'));
  t.true(text.includes('\r\nAllow: INVITE, ACK, BYE, CANCEL, OPTIONS\r\nContent-Length: 0\r\n\r\n'));
});

test('malformed input never throws: every truncation and single-byte corruption of the torture messages gets a result', (t) => {
  let results = 0;
  for (const name of ['wsinv', 'intmeth', 'esc01', 'longreq', 'unreason', 'badinv01', 'quotbal', 'scalar02']) {
    const buf = torture(name);
    for (let i = 0; i < buf.length; i += 5) {
      results += parseMessage(buf.subarray(0, i)).ok ? 1 : 1;
      for (const b of [0x00, 0x0a, 0x22, 0x3c, 0x3b, 0x2c, 0x25, 0xff]) {
        const copy = Buffer.from(buf);
        copy[i] = b;
        results += parseMessage(copy).ok ? 1 : 1;
      }
    }
  }
  t.true(results > 3000);
});

test('start lines: the SIP version is case-insensitive (§7.1); a status line without reason is tolerated; bare LF refused', (t) => {
  t.true(parse([], { lines: [BASE[0]!.replace('SIP/2.0', 'sip/2.0'), ...BASE.slice(1)] }).ok);
  const r = parseMessage('SIP/2.0 180\r\nVia: SIP/2.0/UDP a.example.com;branch=z9hG4bKx\r\nFrom: <sip:a@b.example.com>;tag=1\r\nTo: <sip:c@d.example.com>\r\nCall-ID: x\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n');
  t.deepEqual(r.ok && r.message.kind === 'response' && [r.message.status, r.message.reason], [180, '']);
  const lf = parse(['Subject: a\nInjected: b']);
  t.deepEqual(!lf.ok && lf.reason, 'bare CR or LF inside a line');
});
