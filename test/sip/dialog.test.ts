/**
 * Dialogs (RFC 3261 §12-§15): creation on both sides, in-dialog requests with loose and strict
 * routing, CSeq order (500), unknown dialogs (481), glare (491), CANCEL (200 then 487), the
 * ACK for a 2xx and the 2xx retransmission schedule. Expected values follow the RFC sections
 * named in each test.
 */
import test from 'ava';
import { createResponse } from '../../protocols/sip/build.js';
import {
  cancelResponses,
  createAckFor2xx,
  createInDialogRequest,
  createUacDialog,
  createUasDialog,
  dialogKey,
  glareRetryDelay,
  localInviteDone,
  noDialogResponse,
  on2xxRetransmitTimer,
  receiveInDialogRequest,
  remoteInviteDone,
  requestDialogKey,
  responseDialogKey,
  start2xxRetransmit,
  type TwoXxSchedule,
} from '../../protocols/sip/dialog.js';
import { parseUri } from '../../protocols/sip/uri.js';
import { parseVia } from '../../protocols/sip/via.js';
import type { SipUri } from '../../protocols/sip/types.js';
import { request, response } from './messages.js';

const RR = ['Record-Route: <sip:p2.example.com;lr>', 'Record-Route: <sip:p1.example.com;lr>'];
const VIA = parseVia('SIP/2.0/UDP 192.0.2.9:5060;branch=z9hG4bKnext');

test('UAS dialog (§12.1.1): id from Call-ID, our To tag and their From tag; route set as Record-Route; target from Contact; remote CSeq', (t) => {
  const inv = request('INVITE', { extra: RR });
  const ok = createResponse(inv, 200, { toTag: 'as83' });
  const d = createUasDialog(inv, ok);
  t.deepEqual(d.id, { callId: inv.callId, localTag: 'as83', remoteTag: '1928301774' });
  t.deepEqual(d.routeSet.map((r) => (r.uri as SipUri).host), ['p2.example.com', 'p1.example.com']);
  t.is((d.remoteTarget as SipUri).host, 'pc33.atlanta.example.com');
  t.is(d.remoteSeq, 314159);
  t.is(d.localSeq, undefined);
  t.is(d.state, 'confirmed');
  t.is(requestDialogKey(request('BYE', { toTag: 'as83', cseq: 1 })), dialogKey(d.id));
});

test('UAC dialog (§12.1.2): the route set is the Record-Route of the response reversed; target from its Contact; early on 1xx', (t) => {
  const inv = request('INVITE');
  const ringing = response(inv, 180, { toTag: 'b1', extra: [...RR, 'Contact: <sip:bob@192.0.2.4>'] });
  const d = createUacDialog(inv, ringing);
  t.is(d.state, 'early');
  t.deepEqual(d.routeSet.map((r) => (r.uri as SipUri).host), ['p1.example.com', 'p2.example.com']);
  t.is((d.remoteTarget as SipUri).host, '192.0.2.4');
  t.is(d.localSeq, 314159);
  t.is(responseDialogKey(ringing), dialogKey(d.id));
});

test('in-dialog request with a loose route set (§12.2.1.1): Request-URI is the remote target, Route the route set, CSeq + 1', (t) => {
  const inv = request('INVITE');
  const d = createUacDialog(inv, response(inv, 200, { toTag: 'b1', extra: [...RR, 'Contact: <sip:bob@192.0.2.4>'] }));
  const { dialog, request: bye } = createInDialogRequest(d, 'BYE', { via: VIA });
  t.is((bye.uri as SipUri).host, '192.0.2.4');
  t.deepEqual(bye.route.map((r) => (r.uri as SipUri).host), ['p1.example.com', 'p2.example.com']);
  t.deepEqual(bye.cseq, { seq: 314160, method: 'BYE' });
  t.is(dialog.localSeq, 314160);
  t.is(bye.to.params['tag'], 'b1');
  t.is(bye.from.params['tag'], '1928301774');
  t.is(bye.callId, inv.callId);
});

test('in-dialog request with a strict first hop (§12.2.1.1): Request-URI is the first route, the remote target goes last in Route', (t) => {
  const inv = request('INVITE');
  const d = createUacDialog(inv, response(inv, 200, { toTag: 'b1', extra: ['Record-Route: <sip:p2.example.com;lr>', 'Record-Route: <sip:strict.example.com;method=INVITE>', 'Contact: <sip:bob@192.0.2.4>'] }));
  const { request: bye } = createInDialogRequest(d, 'BYE', { via: VIA });
  t.deepEqual(bye.uri, parseUri('sip:strict.example.com'));
  t.deepEqual(bye.route.map((r) => (r.uri as SipUri).host), ['p2.example.com', '192.0.2.4']);
});

test('ACK for a 2xx (§13.2.2.4) is its own request: CSeq number of the INVITE, method ACK, new branch, routed like the dialog', (t) => {
  const inv = request('INVITE');
  const d = createUacDialog(inv, response(inv, 200, { toTag: 'b1', extra: [...RR, 'Contact: <sip:bob@192.0.2.4>'] }));
  const ack = createAckFor2xx(d, inv, VIA);
  t.deepEqual(ack.cseq, { seq: inv.cseq.seq, method: 'ACK' });
  t.is(ack.via[0]?.params['branch'], 'z9hG4bKnext');
  t.is((ack.uri as SipUri).host, '192.0.2.4');
  t.is(ack.route.length, 2);
});

test('a request with a lower remote CSeq is refused with 500 (§12.2.2); a higher one advances it', (t) => {
  const inv = request('INVITE', { cseq: 10 });
  const d = createUasDialog(inv, createResponse(inv, 200, { toTag: 'as83' }));
  const low = receiveInDialogRequest(d, request('BYE', { toTag: 'as83', cseq: 9 }));
  t.false(low.ok);
  t.is(!low.ok && low.status, 500);
  const hi = receiveInDialogRequest(d, request('BYE', { toTag: 'as83', cseq: 11 }));
  t.true(hi.ok);
  t.is(hi.dialog.remoteSeq, 11);
  t.true(receiveInDialogRequest(d, request('ACK', { toTag: 'as83', cseq: 10 })).ok, 'ACK carries the INVITE number');
});

test('a re-INVITE while ours is pending gets 491 (§14.2); after our final response it is accepted and refreshes the target', (t) => {
  const inv = request('INVITE', { cseq: 10 });
  let d = createUasDialog(inv, createResponse(inv, 200, { toTag: 'as83' }));
  d = createInDialogRequest(d, 'INVITE', { via: VIA }).dialog;
  const reinvite = request('INVITE', { toTag: 'as83', cseq: 11, extra: [] });
  const glare = receiveInDialogRequest(d, reinvite);
  t.is(!glare.ok && glare.status, 491);
  d = localInviteDone(d);
  const moved = { ...reinvite, contact: [{ uri: parseUri('sip:alice@192.0.2.77'), params: {} }] };
  const okay = receiveInDialogRequest(d, moved);
  t.true(okay.ok);
  t.is((okay.dialog.remoteTarget as SipUri).host, '192.0.2.77');
  const overlap = receiveInDialogRequest(okay.dialog, { ...moved, cseq: { seq: 12, method: 'INVITE' } });
  t.deepEqual(!overlap.ok && [overlap.status, overlap.headers], [500, [{ name: 'Retry-After', value: '5' }]], 'a second INVITE before we answered the first');
  t.true(receiveInDialogRequest(remoteInviteDone(okay.dialog), { ...moved, cseq: { seq: 12, method: 'INVITE' } }).ok);
});

test('glare back-off (§14.1): 2.1-4 s in 10 ms units for the Call-ID owner, 0-2 s otherwise', (t) => {
  t.is(glareRetryDelay(true, 0), 2100);
  t.is(glareRetryDelay(true, 0.999999), 4000);
  t.is(glareRetryDelay(false, 0), 0);
  t.is(glareRetryDelay(false, 0.999999), 2000);
  t.is(glareRetryDelay(false, 0.5) % 10, 0);
});

test('a request for no known dialog gets 481 (§12.2.2)', (t) => {
  const r = noDialogResponse(request('BYE', { toTag: 'gone' }));
  t.is(r.status, 481);
  t.is(r.reason, 'Call/Transaction Does Not Exist');
});

test('CANCEL (§9.2): 200 to the CANCEL and 487 to the INVITE, both with the same To tag', (t) => {
  const inv = request('INVITE');
  const r = cancelResponses(inv, request('CANCEL'), 'as83');
  t.deepEqual([r.cancel.status, r.cancel.cseq.method, r.cancel.to.params['tag']], [200, 'CANCEL', 'as83']);
  t.deepEqual([r.invite.status, r.invite.cseq.method, r.invite.to.params['tag']], [487, 'INVITE', 'as83']);
});

test('2xx retransmission by the UAS core (§13.3.1.4): at 0.5, 1.5, 3.5, 7.5, 11.5 ... 31.5 s, given up at 32 s', (t) => {
  let s: TwoXxSchedule = start2xxRetransmit(0);
  const times: number[] = [];
  for (;;) {
    const at = s.next;
    const r = on2xxRetransmitTimer(s);
    if (!r.retransmit) {
      t.is(at, 32000);
      break;
    }
    times.push(at);
    s = r.schedule;
  }
  t.deepEqual(times, [500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
});
