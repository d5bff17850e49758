/**
 * Transaction matching (RFC 3261 §17.1.3, §17.2.3, §9.2) and the transaction table driven
 * with an injected clock, as the SIP server actor will drive it.
 */
import test from 'ava';
import { createResponse } from '../../protocols/sip/build.js';
import { cancelledInviteKey, clientTransactionKey, responseTransactionKey, serverTransactionKey } from '../../protocols/sip/matching.js';
import { parseMessage } from '../../protocols/sip/parse.js';
import { TransactionTable, type KeyedAction } from '../../protocols/sip/table.js';
import type { SipMessage, SipRequest } from '../../protocols/sip/types.js';
import { torture } from './rfc4475.js';
import { request, response } from './messages.js';

const sent = (acts: KeyedAction[]): SipMessage[] => acts.flatMap((a) => (a.action.type === 'send' ? [a.action.message] : []));
const kinds = (acts: KeyedAction[]) => acts.map((a) => a.action.type);

test('the ACK of a non-2xx final response matches its INVITE server transaction; CANCEL has its own', (t) => {
  const inv = request('INVITE');
  t.is(serverTransactionKey(request('ACK', { toTag: 'x' })), serverTransactionKey(inv));
  t.not(serverTransactionKey(request('CANCEL')), serverTransactionKey(inv));
  t.is(cancelledInviteKey(request('CANCEL')), serverTransactionKey(inv));
});

test('the same branch from a different sent-by is a different transaction', (t) => {
  t.not(serverTransactionKey(request('INVITE', { sentBy: 'other.example.com' })), serverTransactionKey(request('INVITE')));
  t.not(serverTransactionKey(request('INVITE', { branch: 'z9hG4bKother' })), serverTransactionKey(request('INVITE')));
});

test('without a magic-cookie branch (RFC 2543, RFC 4475 inv2543) the INVITE, its retransmission and its ACK share a key', (t) => {
  const r = parseMessage(torture('inv2543'));
  if (!r.ok || r.message.kind !== 'request') return t.fail();
  const inv = r.message;
  const again = parseMessage(torture('inv2543'));
  if (!again.ok || again.message.kind !== 'request') return t.fail();
  t.is(serverTransactionKey(again.message), serverTransactionKey(inv));
  const ack: SipRequest = { ...inv, method: 'ACK', cseq: { seq: inv.cseq.seq, method: 'ACK' }, to: { ...inv.to, params: { ...inv.to.params, tag: 'srv' } } };
  t.is(serverTransactionKey(ack), serverTransactionKey(inv));
  const bye: SipRequest = { ...inv, method: 'BYE', cseq: { seq: 57, method: 'BYE' } };
  t.not(serverTransactionKey(bye), serverTransactionKey(inv));
});

test('badbranch: the bare cookie falls back to RFC 2543 matching', (t) => {
  const r = parseMessage(torture('badbranch'));
  if (!r.ok || r.message.kind !== 'request') return t.fail();
  t.true(serverTransactionKey(r.message).startsWith('s2543|'));
});

test('a response matches the client transaction with its top branch and CSeq method', (t) => {
  const inv = request('INVITE');
  t.is(responseTransactionKey(response(inv, 180)), clientTransactionKey(inv));
  const cancel = request('CANCEL');
  t.is(responseTransactionKey(response(cancel, 200)), clientTransactionKey(cancel));
  t.not(clientTransactionKey(cancel), clientTransactionKey(inv));
});

test('table: a retransmitted INVITE gets the last response again and is not passed up twice', (t) => {
  const table = new TransactionTable();
  const inv = request('INVITE');
  const first = table.receive(inv, false, 0);
  t.deepEqual(kinds(first.actions), ['request', 'send']);
  const again = table.receive(inv, false, 400);
  t.deepEqual(kinds(again.actions), ['send']);
  t.is((sent(again.actions)[0] as { status: number }).status, 100);
});

test('table: CANCEL gets 200 from its own transaction, then the INVITE 487, then the ACK confirms', (t) => {
  const table = new TransactionTable();
  const inv = request('INVITE');
  const key = table.receive(inv, false, 0).actions[0]?.key as string;
  const cancel = request('CANCEL');
  const c = table.receive(cancel, false, 1000);
  t.deepEqual(kinds(c.actions), ['request']);
  const target = table.cancelTarget(cancel);
  t.is(target?.key, key);
  const cancelKey = c.actions[0]?.key as string;
  t.not(cancelKey, key);
  t.deepEqual(kinds(table.respond(cancelKey, createResponse(cancel, 200, { toTag: 'x' }), 1000)), ['send', 'startTimer']);
  const terminated = table.respond(key, createResponse(inv, 487, { toTag: 'x' }), 1000);
  t.is((sent(terminated)[0] as { status: number }).status, 487);
  const ack = table.receive(request('ACK', { toTag: 'x' }), false, 1100);
  t.deepEqual(kinds(ack.actions), ['cancelTimer', 'cancelTimer', 'startTimer']);
  t.is(table.get(key)?.state, 'confirmed');
});

test('table: an ACK or a response that matches nothing is handed back to the core', (t) => {
  const table = new TransactionTable();
  const ack = request('ACK', { toTag: 'x', branch: 'z9hG4bK2xxack' });
  t.is(table.receive(ack, false, 0).unmatched, ack);
  const stray = response(request('INVITE'), 200, { toTag: 'x' });
  t.is(table.receive(stray, false, 0).unmatched, stray);
});

test('table: a retransmitted non-2xx final response to our INVITE is ACKed again', (t) => {
  const table = new TransactionTable();
  const inv = request('INVITE');
  table.request(inv, false, 0);
  const busy = response(inv, 486, { toTag: 'x' });
  const first = table.receive(busy, false, 100);
  t.deepEqual(kinds(first.actions), ['cancelTimer', 'cancelTimer', 'send', 'response', 'startTimer']);
  const again = table.receive(busy, false, 700);
  t.deepEqual(kinds(again.actions), ['send']);
  t.is((sent(again.actions)[0] as SipRequest).method, 'ACK');
});

test('table: nextDeadline and fire(now) run the timers of every transaction from the injected clock', (t) => {
  const table = new TransactionTable({ t1: 100, t2: 400, t4: 500 });
  table.request(request('OPTIONS', { branch: 'z9hG4bKopt' }), false, 0);
  table.request(request('INVITE', { branch: 'z9hG4bKinv' }), false, 50);
  t.is(table.nextDeadline(), 100, 'E of the OPTIONS at T1');
  t.deepEqual(table.fire(99), []);
  const at150 = table.fire(150);
  t.deepEqual(at150.map((a) => [a.key, a.action.type]), [
    ['c|z9hG4bKopt|OPTIONS', 'send'],
    ['c|z9hG4bKopt|OPTIONS', 'startTimer'],
    ['c|z9hG4bKinv|INVITE', 'send'],
    ['c|z9hG4bKinv|INVITE', 'startTimer'],
  ]);
  t.is(table.nextDeadline(), 300, 'E fired at its deadline 100 and doubled to 200 ms: 300 (A: 150 + 200 = 350)');
  const end = table.fire(6400 + 50);
  t.true(end.some((a) => a.action.type === 'timeout'));
  t.is(table.size, 0, 'both timed out (F and B = 64·T1) and were removed');
});

test('table: with RFC 2543 matching the ACK for a 2xx reaches the Accepted INVITE transaction and goes up to the TU', (t) => {
  const r = parseMessage(torture('inv2543'));
  if (!r.ok || r.message.kind !== 'request') return t.fail();
  const inv = r.message;
  const table = new TransactionTable();
  const key = table.receive(inv, false, 0).actions[0]?.key as string;
  table.respond(key, createResponse(inv, 200, { toTag: 'srv' }), 10);
  t.is(table.get(key)?.state, 'accepted');
  const ack: SipRequest = { ...inv, method: 'ACK', cseq: { seq: inv.cseq.seq, method: 'ACK' }, to: { ...inv.to, params: { ...inv.to.params, tag: 'srv' } }, body: Buffer.alloc(0) };
  t.deepEqual(kinds(table.receive(ack, false, 20).actions), ['ack']);
});

test('table: a transport error ends a client transaction and tells the TU (§17.1.4)', (t) => {
  const table = new TransactionTable();
  const { key } = table.request(request('OPTIONS', { branch: 'z9hG4bKte' }), true, 0);
  t.deepEqual(kinds(table.transportError(key, 5)), ['transportError', 'cancelTimer', 'terminated']);
  t.is(table.size, 0);
  t.deepEqual(table.transportError(key, 6), [], 'an unknown key is ignored');
});
