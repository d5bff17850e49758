/**
 * Refusal rules of a UAS (RFC 3261 §8.2, §11.2, §21): the status, the headers that must go
 * with it (Allow, Unsupported, Accept, Retry-After), the order of the checks, and the OPTIONS
 * answer.
 */
import test from 'ava';
import { answerOptions, checkRequest, mergeKey, notAcceptableHere, refusalResponse, type ServerPolicy } from '../../protocols/sip/refusals.js';
import { headerValue, headerValues } from '../../protocols/sip/parse.js';
import { request } from './messages.js';

const P: ServerPolicy = { allow: ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS'], supported: ['timer', 'replaces'], accept: ['application/sdp'] };
const SDP = ['Content-Type: application/sdp'];

test('a plain INVITE passes every check', (t) => {
  t.is(checkRequest(request('INVITE'), P), undefined);
});

test('405 for a known method the server does not implement, 501 for an unknown one, both with Allow (§8.2.1)', (t) => {
  t.deepEqual(checkRequest(request('SUBSCRIBE'), P), { status: 405, reason: 'Method Not Allowed', headers: [{ name: 'Allow', value: 'INVITE, ACK, BYE, CANCEL, OPTIONS' }] });
  t.is(checkRequest(request('FROBNICATE'), P)?.status, 501);
});

test('ACK is never refused (no response to an ACK)', (t) => {
  t.is(checkRequest(request('ACK', { extra: ['Require: foo'] }), { ...P, unavailable: { retryAfter: 5 } }), undefined);
});

test('503 with Retry-After while unavailable, before anything else', (t) => {
  t.deepEqual(checkRequest(request('FROBNICATE'), { ...P, unavailable: { retryAfter: 30 } }), { status: 503, reason: 'Service Unavailable', headers: [{ name: 'Retry-After', value: '30' }] });
});

test('483 for Max-Forwards 0 when forwarding (§16.3)', (t) => {
  const r = request('INVITE');
  t.is(checkRequest({ ...r, maxForwards: 0 }, P)?.status, 483);
  t.is(checkRequest({ ...r, maxForwards: 1 }, P), undefined);
});

test('416 for a Request-URI scheme other than sip/sips (§8.2.2.1)', (t) => {
  t.is(checkRequest(request('INVITE', { uri: 'tel:+15551234' }), P)?.status, 416);
});

test('482 for a merged request; mergeKey identifies requests without To tag by Call-ID, From tag and CSeq (§8.2.2.2)', (t) => {
  t.is(checkRequest(request('INVITE'), { ...P, merged: true })?.status, 482);
  t.is(mergeKey(request('INVITE', { branch: 'z9hG4bKa' })), mergeKey(request('INVITE', { branch: 'z9hG4bKb' })));
  t.is(mergeKey(request('BYE', { toTag: 'x' })), undefined);
});

test('420 with Unsupported naming exactly the unknown Require options (§8.2.2.3); CANCEL is exempt', (t) => {
  t.deepEqual(checkRequest(request('INVITE', { extra: ['Require: timer, 100rel, foo'] }), P)?.headers, [{ name: 'Unsupported', value: '100rel, foo' }]);
  t.is(checkRequest(request('CANCEL', { extra: ['Require: foo'] }), P), undefined);
});

test('415 with Accept for a body type not accepted, or a Content-Encoding other than identity (§8.2.3)', (t) => {
  const plain = request('INVITE', { extra: ['Content-Type: text/plain'] });
  const r = checkRequest({ ...plain, body: Buffer.from('hi') }, P);
  t.is(r?.status, 415);
  t.deepEqual(r?.headers[0], { name: 'Accept', value: 'application/sdp' });
  const gz = request('INVITE', { extra: [...SDP, 'Content-Encoding: gzip'] });
  t.is(checkRequest({ ...gz, body: Buffer.from('x') }, P)?.status, 415);
  const sdp = request('INVITE', { extra: SDP });
  t.is(checkRequest({ ...sdp, body: Buffer.from('v=0\r\n') }, P), undefined);
});

test('the refusal response carries the status, the headers and a To tag', (t) => {
  const req = request('SUBSCRIBE');
  const res = refusalResponse(req, checkRequest(req, P)!, 'srv1');
  t.is(res.status, 405);
  t.is(res.to.params['tag'], 'srv1');
  t.deepEqual(headerValues(res, 'Allow'), ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS']);
});

test('488 Not Acceptable Here with an optional Warning', (t) => {
  const r = notAcceptableHere(request('INVITE'), 'x', '304 gw.example.com "Media type not available"');
  t.is(r.status, 488);
  t.is(headerValue(r, 'Warning'), '304 gw.example.com "Media type not available"');
});

test('OPTIONS gets 200 with Allow, Accept, Accept-Encoding, Accept-Language and Supported (§11.2)', (t) => {
  const r = answerOptions(request('OPTIONS'), P, 'x');
  t.is(r.status, 200);
  t.deepEqual(
    r.headers.map((h) => h.name),
    ['Allow', 'Accept', 'Accept-Encoding', 'Accept-Language', 'Supported'],
  );
  t.deepEqual(headerValues(r, 'Supported'), ['timer', 'replaces']);
});

test('406 for an INVITE whose Accept takes no body type we answer with (§20.1: ranges, q=0, an empty Accept)', (t) => {
  const withAccept = (v: string) => checkRequest(request('INVITE', { extra: [`Accept: ${v}`] }), P)?.status;
  t.is(withAccept('text/nobodyKnowsThis'), 406);
  t.is(withAccept('application/sdp;q=0'), 406);
  t.is(withAccept('application/sdpx'), 406);
  t.is(withAccept('application/*'), undefined);
  t.is(withAccept('*/*'), undefined);
  t.is(withAccept('text/plain, application/sdp;level=1'), undefined);
  t.is(checkRequest(request('INVITE', { extra: ['Accept:'] }), P)?.status, 406, 'an empty Accept takes nothing');
});

test('a body without Content-Type is 415 (§20.15)', (t) => {
  t.is(checkRequest({ ...request('INVITE'), body: Buffer.from('v=0\r\n') }, P)?.status, 415);
});
