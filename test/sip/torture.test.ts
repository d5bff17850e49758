/**
 * RFC 4475 torture messages against protocols/sip. Valid messages (§3.1.1) parse and give the
 * fields the RFC describes; invalid ones (§3.1.2) are refused with the status the RFC asks for;
 * the transaction- and application-layer ones (§3.2, §3.3) parse and are then answered by the
 * rule the RFC names (refusals.ts, via.ts). Expected values are read from the RFC's text for
 * §3.1 and §3.2; for §3.3 (whose descriptions were not at hand next to the messages) the
 * expected answers are those of RFC 3261 for the defect each message carries: 400 for missing
 * or repeated single-value headers (§20), 416 (§8.2.2.1), 420 + Unsupported (§8.2.2.3), 415
 * (§8.2.3), 483 when forwarding (§16.3), 406 for an Accept without SDP.
 * Every message is byte-exact from the RFC except mpart01 (see rfc4475.ts).
 */
import test from 'ava';
import { headerValue, headerValues, parseMessage } from '../../protocols/sip/parse.js';
import { checkRequest, type ServerPolicy } from '../../protocols/sip/refusals.js';
import type { ParseResult, SipMessage, SipRequest, SipResponse, SipUri } from '../../protocols/sip/types.js';
import { branchOf, isRfc3261Branch, rportOf } from '../../protocols/sip/via.js';
import { mpart01, torture } from './rfc4475.js';

function ok(t: import('ava').ExecutionContext, r: ParseResult): SipMessage {
  if (!r.ok) {
    t.fail(`refused: ${r.status} ${r.reason}`);
    throw new Error('unreachable');
  }
  return r.message;
}
function req(t: import('ava').ExecutionContext, name: string): SipRequest {
  const m = ok(t, parseMessage(torture(name)));
  if (m.kind !== 'request') throw new Error('expected a request');
  return m;
}
function res(t: import('ava').ExecutionContext, buf: Buffer): SipResponse {
  const m = ok(t, parseMessage(buf));
  if (m.kind !== 'response') throw new Error('expected a response');
  return m;
}
function refused(t: import('ava').ExecutionContext, name: string) {
  const r = parseMessage(torture(name));
  if (r.ok) {
    t.fail(`${name} was accepted`);
    throw new Error('unreachable');
  }
  return r;
}
const sip = (u: unknown) => u as SipUri;

const GATEWAY: ServerPolicy = { allow: ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS'], supported: ['timer'], accept: ['application/sdp'] };

// §3.1.1 valid messages

test('wsinv (3.1.1.1): folding, LWS around colons, compact and mixed-case names, leading zeros', (t) => {
  const m = req(t, 'wsinv');
  t.is(m.method, 'INVITE');
  t.deepEqual(sip(m.uri).params, { unknownparam: null });
  t.is(sip(m.to.uri).user, 'vivekg');
  t.is(m.to.params['tag'], '1918181833n');
  t.is(m.from.displayName, 'J Rosenberg \\"');
  t.is(m.from.params['tag'], '98asjd8');
  t.is(m.maxForwards, 68);
  t.deepEqual(m.cseq, { seq: 9, method: 'INVITE' });
  t.is(m.callId, 'wsinv.ndaksdj@192.0.2.1');
  t.deepEqual(
    m.via.map((v) => [v.transport, v.host, branchOf(v)]),
    [
      ['UDP', '192.0.2.2', '390skdjuw'],
      ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
      ['UDP', '192.168.255.111', 'z9hG4bK30239'],
    ],
  );
  t.is(headerValue(m, 'Subject'), '');
  t.is(headerValue(m, 'NewFangledHeader'), 'newfangled value continued newfangled value');
  t.is(headerValue(m, 'UnknownHeaderWithUnusualValue'), ';;,,;;,;', 'an unknown header is never split');
  t.deepEqual(sip(m.route[0]?.uri).params, { lr: null, unknownwith: 'value', 'unknown-no-value': null });
  t.is(m.contact.length, 1);
  t.is(m.contact[0]?.displayName, 'Quoted string ""');
  t.deepEqual(m.contact[0]?.params, { newparam: 'newvalue', secondparam: null, q: '0.33' });
  t.is(m.body.length, 150);
});

test('intmeth (3.1.1.2): token characters in the method, unusual URI user and password, quoted NUL', (t) => {
  const m = req(t, 'intmeth');
  t.is(m.method, "!interesting-Method0123456789_*+`.%indeed'~");
  t.is(sip(m.uri).user, "1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*");
  t.is(sip(m.uri).password, "&it+has=1,weird!*pas$wo~d_too.(doesn't-it)");
  t.is(sip(m.uri).host, 'example.com');
  t.is(branchOf(m.via[0]!), "z9hG4bK-.!%66*_+`'~");
  t.is(m.to.displayName, 'BEL:\x07 NUL:\x00 DEL:\x7f');
  t.is(m.from.displayName, "token1~` token2'+_ token3*%!.-");
  t.is(m.from.params["fromparam''~+*_!.-%"], 'работающий');
  t.is(m.from.params['tag'], "_token~1'+`*%!-.");
  t.is(m.callId, "intmeth.word%ZK-!.*_+'@word`~)(><:\\/\"][?}{");
  t.deepEqual(m.cseq, { seq: 139122385, method: m.method });
  t.is(m.maxForwards, 255);
  t.is(headerValue(m, "extensionHeader-!.%*+_`'~"), '\ufeff大停電');
});

test('esc01 (3.1.1.3): %-escapes decoded once in user parts and URI parameters', (t) => {
  const m = req(t, 'esc01');
  t.is(sip(m.uri).user, 'sips:user@example.com');
  t.is(sip(m.to.uri).user, 'user');
  t.is(sip(m.from.uri).user, 'I have spaces');
  t.is(m.callId, 'esc01.239409asdfakjkn23onasd0-3234');
  t.is(m.contentType?.subtype, 'sdp');
  t.is(sip(m.contact[0]?.uri).user, 'caller');
  t.deepEqual(sip(m.contact[0]?.uri).params, { lr: null, name: 'value%41' }, 'never unescaped recursively');
});

test('escnull (3.1.1.4): escaped NULs keep their place in the user part; two Contacts', (t) => {
  const m = req(t, 'escnull');
  t.is(sip(m.to.uri).user, 'null-\x00-null');
  t.is(sip(m.from.uri).user, 'null-\x00-null');
  t.deepEqual(m.contact.map((c) => sip(c.uri).user), ['\x00', '\x00\x00']);
});

test('esc02 (3.1.1.5): % is not an escape in a method, display name, branch or header name', (t) => {
  const m = req(t, 'esc02');
  t.is(m.method, 'RE%47IST%45R');
  t.is(m.to.displayName, '%Z%45');
  t.is(branchOf(m.via[0]!), 'z9hG4bK209%fzsnel234');
  t.deepEqual(m.contact.map((c) => sip(c.uri).user), ['alias1', 'alias3'], 'two Contact values, not three');
  t.is(headerValue(m, 'C%6Fntact'), '<sip:alias2@host2.example.com>');
});

test('lwsdisp (3.1.1.6): no LWS between the display name and <', (t) => {
  const m = req(t, 'lwsdisp');
  t.is(m.from.displayName, 'caller');
  t.is(sip(m.from.uri).user, 'caller');
});

test('longreq (3.1.1.7): long values and 34 Via values under every spelling of Via', (t) => {
  const m = req(t, 'longreq');
  t.is(m.via.length, 34);
  t.deepEqual(m.via.slice(0, 33).map((v) => v.host), Array.from({ length: 33 }, (_, i) => `sip${33 - i}.example.com`));
  t.is(m.via[33]?.params['received'], '192.0.2.5');
  t.false(isRfc3261Branch(branchOf(m.via[33]!)));
  t.is(sip(m.to.uri).port, 6000);
  t.is(m.from.params['tag'], `1${'298'.repeat(50)}2424`);
  t.is(m.body.length, 150);
});

test('dblreq (3.1.1.8): the octets after Content-Length in a datagram are ignored', (t) => {
  const m = req(t, 'dblreq');
  t.is(m.method, 'REGISTER');
  t.is(m.body.length, 0);
  t.is(m.contact.length, 1);
});

test('semiuri (3.1.1.9): a ; in the user part; Accept split into six values', (t) => {
  const m = req(t, 'semiuri');
  t.is(sip(m.uri).user, 'user;par=u@example.net');
  t.deepEqual(sip(m.uri).params, {});
  t.deepEqual(headerValues(m, 'Accept'), ['application/sdp', 'application/pkcs7-mime', 'multipart/mixed', 'multipart/signed', 'message/sip', 'message/sipfrag']);
});

test('transports (3.1.1.10): known and unknown Via transports', (t) => {
  const m = req(t, 'transports');
  t.deepEqual(m.via.map((v) => v.transport), ['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP']);
  t.is(m.callId, 'transports.kijh4akdnaqjkwendsasfdj');
});

test('mpart01 (3.1.1.11, not byte-exact): a multipart body with NULs is framed by Content-Length', (t) => {
  const m = ok(t, parseMessage(mpart01()));
  t.is(m.body.length, 553);
  t.is(m.contentType?.params['boundary'], '7a9cbec02ceef655');
  t.is(rportOf(m.via[0]!), true, 'rport without a value');
  t.is(m.via[0]?.port, 5070);
  t.is(headerValue(m, 'y'), headerValue(m, 'Identity'), 'y is the compact form of Identity');
  t.true(headerValue(m, 'Identity')?.startsWith('r5mwre'));
});

test('unreason (3.1.1.12): a UTF-8 reason phrase', (t) => {
  const m = res(t, torture('unreason'));
  t.is(m.status, 200);
  t.is(m.reason, '= 2**3 * 5**2 но сто девяносто девять - простое');
  t.is(m.body.length, 154);
});

test('noreason (3.1.1.13): an empty reason phrase after the required SP', (t) => {
  const m = res(t, torture('noreason'));
  t.is(m.status, 100);
  t.is(m.reason, '');
});

// §3.1.2 invalid messages: refused, and a request still gets its 400 (raw fields kept).

const INVALID_400: Array<[string, string]> = [
  ['badinv01', 'Via'],
  ['clerr', 'Content-Length'],
  ['ncl', 'Content-Length'],
  ['scalar02', 'CSeq'],
  ['quotbal', 'quoted string'],
  ['ltgtruri', 'Request-URI'],
  ['lwsruri', 'request line'],
  ['lwsstart', 'request line'],
  ['trws', 'request line'],
  ['escruri', 'headers'],
  ['regbadct', '<>'],
  ['badaspec', 'URI'],
  ['baddn', 'display name'],
  ['mismatch01', 'CSeq method'],
];
for (const [name, mentions] of INVALID_400) {
  test(`${name}: refused with 400, the reason naming ${mentions}, Call-ID and CSeq still readable`, (t) => {
    const r = refused(t, name);
    t.is(r.status, 400);
    t.true(r.reason.includes(mentions), r.reason);
    t.is(r.partial.kind, 'request');
    t.truthy(r.partial.callId);
    t.truthy(r.partial.cseq);
    t.true(r.partial.via.length > 0);
  });
}

test('badvers (3.1.2.16): SIP/7.0 is refused with 505', (t) => {
  t.is(refused(t, 'badvers').status, 505);
});

test('mismatch02 (3.1.2.18): an unknown method with a different CSeq method gets 501', (t) => {
  const r = refused(t, 'mismatch02');
  t.is(r.status, 501);
  t.is(r.partial.method, 'NEWMETHOD');
});

test('scalarlg (3.1.2.5) and bigcode (3.1.2.19): responses with out-of-range values are refused (dropped, never answered)', (t) => {
  for (const name of ['scalarlg', 'bigcode']) {
    const r = refused(t, name);
    t.is(r.partial.kind, 'response');
  }
});

test('baddate (3.1.2.12): a non-GMT Date is kept as text; the request is accepted', (t) => {
  t.is(headerValue(req(t, 'baddate'), 'Date'), 'Fri, 01 Jan 2010 16:00:00 EST');
});

// §3.2 transaction layer

test('badbranch (3.2.1): a bare magic cookie parses but is not an RFC 3261 branch (RFC 2543 matching)', (t) => {
  const m = req(t, 'badbranch');
  t.is(branchOf(m.via[0]!), 'z9hG4bK');
  t.false(isRfc3261Branch(branchOf(m.via[0]!)));
});

// §3.3 application layer

test('insuf (3.3.1): missing Call-ID, From and To are refused with 400', (t) => {
  const r = refused(t, 'insuf');
  t.is(r.status, 400);
  t.regex(r.reason, /missing (From|To|Call-ID)/);
});

test('unkscm (3.3.2) and novelsc (3.3.3): unknown Request-URI schemes parse and get 416', (t) => {
  for (const name of ['unkscm', 'novelsc']) {
    const m = req(t, name);
    t.false(m.uri.scheme === 'sip');
    t.is(checkRequest(m, GATEWAY)?.status, 416);
  }
});

test('unksm2 (3.3.4): unknown schemes in To, From and Contact parse as opaque URIs', (t) => {
  const m = req(t, 'unksm2');
  t.deepEqual(m.to.uri, { scheme: 'isbn', opaque: '2983792873' });
  t.deepEqual(m.from.uri, { scheme: 'http', opaque: '//www.example.com' });
  t.deepEqual(m.contact[0]?.uri, { scheme: 'name', opaque: 'John_Smith' });
  t.is(checkRequest(m, GATEWAY)?.status, 405, 'the gateway does not implement REGISTER');
});

test('bext01 (3.3.5): unknown Require options get 420 listing them in Unsupported', (t) => {
  const r = checkRequest(req(t, 'bext01'), GATEWAY);
  t.is(r?.status, 420);
  t.deepEqual(r?.headers, [{ name: 'Unsupported', value: 'nothingSupportsThis, nothingSupportsThisEither' }]);
});

test('invut (3.3.6): an unknown body type gets 415 with Accept', (t) => {
  const r = checkRequest(req(t, 'invut'), GATEWAY);
  t.is(r?.status, 415);
  t.deepEqual(r?.headers[0], { name: 'Accept', value: 'application/sdp' });
});

test('regaut01 (3.3.7): an unknown authorization scheme parses and is not split at commas', (t) => {
  t.deepEqual(headerValues(req(t, 'regaut01'), 'Authorization'), ['NoOneKnowsThisScheme opaque-data=here']);
});

test('multi01 (3.3.8) and mcl01 (3.3.9): repeated single-value headers are refused with 400', (t) => {
  t.regex(refused(t, 'multi01').reason, /more than one (CSeq|Call-ID|From|To|Max-Forwards)/);
  t.regex(refused(t, 'mcl01').reason, /more than one Content-Length/);
});

test('bcast (3.3.10): a 200 with a broadcast Via parses (what to do is the application\'s)', (t) => {
  const m = res(t, torture('bcast'));
  t.deepEqual(m.via.map((v) => v.host), ['192.0.2.198', '255.255.255.255']);
});

test('zeromf (3.3.11): Max-Forwards 0 is 483 when forwarding, answered normally by an endpoint', (t) => {
  const m = req(t, 'zeromf');
  t.is(m.maxForwards, 0);
  t.is(checkRequest(m, GATEWAY)?.status, 483);
  t.is(checkRequest(m, { ...GATEWAY, forwarding: false }), undefined);
});

test('cparam01 (3.3.12): in addr-spec form the parameter belongs to the Contact header', (t) => {
  const c = req(t, 'cparam01').contact[0]!;
  t.deepEqual(c.params, { unknownparam: null });
  t.deepEqual(sip(c.uri).params, {});
});

test('cparam02 (3.3.13): inside <> the parameter belongs to the URI', (t) => {
  const c = req(t, 'cparam02').contact[0]!;
  t.deepEqual(c.params, {});
  t.deepEqual(sip(c.uri).params, { unknownparam: null });
});

test('regescrt (3.3.14): an escaped header in a Contact URI in name-addr form parses', (t) => {
  t.deepEqual(sip(req(t, 'regescrt').contact[0]?.uri).headers, [['Route', '<sip:sip.example.com>']]);
});

test('sdp01 (3.3.15): an INVITE whose Accept excludes SDP gets 406', (t) => {
  t.is(checkRequest(req(t, 'sdp01'), GATEWAY)?.status, 406);
});

test('inv2543 (3.4.1): an RFC 2543 INVITE (no branch, no Max-Forwards, no Content-Length) parses', (t) => {
  const m = req(t, 'inv2543');
  t.is(branchOf(m.via[0]!), undefined);
  t.is(m.maxForwards, undefined);
  t.is(m.body.length, 105, 'the datagram rest is the body');
  t.is(m.recordRoute[0] && sip(m.recordRoute[0].uri).params['maddr'], 'ss1.example.com');
});
