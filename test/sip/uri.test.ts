/**
 * SIP URIs (RFC 3261 §19.1): parsing of every part, %-escapes, IPv6 references, formatting,
 * and the equivalence examples listed in §19.1.4 (both the equal and the unequal pairs).
 */
import test from 'ava';
import { formatUri, parseUri, uriEquals } from '../../protocols/sip/uri.js';

test('every part of a SIP URI: user, password, host, port, parameters, headers', (t) => {
  t.deepEqual(parseUri('sips:alice:secretword@atlanta.com:5061;transport=tcp;lr?subject=project%20x&priority=urgent'), {
    scheme: 'sips',
    user: 'alice',
    password: 'secretword',
    host: 'atlanta.com',
    port: 5061,
    params: { transport: 'tcp', lr: null },
    headers: [
      ['subject', 'project x'],
      ['priority', 'urgent'],
    ],
  });
});

test('IPv4 and IPv6 reference hosts, with and without port', (t) => {
  t.deepEqual(parseUri('sip:[2001:db8::10]:5070;maddr=[2001:db8::1]'), { scheme: 'sip', host: '[2001:db8::10]', port: 5070, params: { maddr: '[2001:db8::1]' }, headers: [] });
  t.deepEqual(parseUri('sip:+1-212-555-1212:1234@gateway.com;user=phone'), { scheme: 'sip', user: '+1-212-555-1212', password: '1234', host: 'gateway.com', params: { user: 'phone' }, headers: [] });
  t.is((parseUri('sip:192.0.2.4') as { host: string }).host, '192.0.2.4');
});

test('malformed URIs are refused: LWS, bad escapes, bad host, bad port, empty user', (t) => {
  for (const bad of ['sip:user@example.com; lr', 'sip:a%zz@example.com', 'sip:user@exa_mple.com', 'sip:host:99999', 'sip:@host', 'sip:[::1', '<sip:x@y>', 'nocolon']) {
    t.throws(() => parseUri(bad), { instanceOf: SyntaxError }, bad);
  }
});

test('other schemes stay opaque (tel:, http:, unknown)', (t) => {
  t.deepEqual(parseUri('tel:+358-555-1234567;postd=pp22'), { scheme: 'tel', opaque: '+358-555-1234567;postd=pp22' });
});

test('formatUri escapes what must be escaped and round-trips', (t) => {
  const u = parseUri('sip:I%20have%20spaces@example.net;n%61me=v%61lue%25%34%31?Route=%3Csip:x%3E');
  t.is(formatUri(u), 'sip:I%20have%20spaces@example.net;name=value%2541?Route=%3Csip:x%3E');
  t.deepEqual(parseUri(formatUri(u)), u);
});

const EQUAL: Array<[string, string]> = [
  ['sip:%61lice@atlanta.com;transport=TCP', 'sip:alice@AtLanTa.CoM;Transport=tcp'],
  ['sip:carol@chicago.com', 'sip:carol@chicago.com;newparam=5'],
  ['sip:carol@chicago.com', 'sip:carol@chicago.com;security=on'],
  ['sip:carol@chicago.com;newparam=5', 'sip:carol@chicago.com;security=on'],
  ['sip:biloxi.com;transport=tcp;method=REGISTER?to=sip:bob%40biloxi.com', 'sip:biloxi.com;method=REGISTER;transport=tcp?to=sip:bob%40biloxi.com'],
  ['sip:alice@atlanta.com?subject=project%20x&priority=urgent', 'sip:alice@atlanta.com?priority=urgent&subject=project%20x'],
];
const UNEQUAL: Array<[string, string]> = [
  ['SIP:ALICE@AtLanTa.CoM;Transport=udp', 'sip:alice@AtLanTa.CoM;Transport=UDP'],
  ['sip:bob@biloxi.com', 'sip:bob@biloxi.com:5060'],
  ['sip:bob@biloxi.com', 'sip:bob@biloxi.com;transport=udp'],
  ['sip:bob@biloxi.com', 'sip:bob@biloxi.com:6000;transport=tcp'],
  ['sip:carol@chicago.com', 'sip:carol@chicago.com?Subject=next%20meeting'],
  ['sip:bob@phone21.boxesbybob.com', 'sip:bob@192.0.2.4'],
];
test('§19.1.4: the equivalent URI pairs of the RFC compare equal, both ways', (t) => {
  for (const [a, b] of EQUAL) {
    t.true(uriEquals(parseUri(a), parseUri(b)), `${a} = ${b}`);
    t.true(uriEquals(parseUri(b), parseUri(a)), `${b} = ${a}`);
  }
});
test('§19.1.4: the non-equivalent URI pairs of the RFC compare unequal, both ways', (t) => {
  for (const [a, b] of UNEQUAL) {
    t.false(uriEquals(parseUri(a), parseUri(b)), `${a} != ${b}`);
    t.false(uriEquals(parseUri(b), parseUri(a)), `${b} != ${a}`);
  }
});
