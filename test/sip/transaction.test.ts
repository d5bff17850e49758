/**
 * The four transaction state machines (RFC 3261 §17 Figures 5-8, RFC 6026) driven with an
 * injected clock: every retransmission time and timeout below is computed from RFC 3261
 * Table 4 with T1 = 500 ms, T2 = 4 s, T4 = 5 s, not read from the module.
 */
import test from 'ava';
import { createClientTransaction, createServerTransaction, step, type Step, type Transaction, type TransactionAction, type TransactionEvent } from '../../protocols/sip/transaction.js';
import { DEFAULT_TIMERS, timerDuration, type TimerName } from '../../protocols/sip/timers.js';
import type { SipRequest, SipResponse } from '../../protocols/sip/types.js';
import { createResponse } from '../../protocols/sip/build.js';
import { branchOf } from '../../protocols/sip/via.js';
import { request, response } from './messages.js';

const UDP = { reliable: false };
const TCP = { reliable: true };

/** Run timers like a real clock would, until `until`, recording when each send happens. */
function runClock(s: Step, until: number): { tx: Transaction; sends: number[]; actions: Array<[number, TransactionAction]> } {
  let tx = s.tx;
  const sends: number[] = [];
  const actions: Array<[number, TransactionAction]> = [];
  for (;;) {
    const next = Object.entries(tx.timers).sort((a, b) => (a[1] as number) - (b[1] as number))[0];
    if (!next || (next[1] as number) > until) return { tx, sends, actions };
    const now = next[1] as number;
    const r = step(tx, { type: 'timer', timer: next[0] as TimerName }, now);
    tx = r.tx;
    for (const a of r.actions) {
      actions.push([now, a]);
      if (a.type === 'send') sends.push(now);
    }
  }
}
const types = (s: Step) => s.actions.map((a) => (a.type === 'startTimer' || a.type === 'cancelTimer' || a.type === 'timeout' ? `${a.type}:${a.timer}` : a.type));
const ev = (tx: Transaction, e: TransactionEvent, now: number) => step(tx, e, now);
const rx = (m: SipRequest | SipResponse) => ({ type: 'receive', message: m }) as const;

test('timer table: RFC 3261 Table 4 values for UDP and TCP', (t) => {
  const udp = (n: TimerName) => timerDuration(n, false);
  const tcp = (n: TimerName) => timerDuration(n, true);
  t.deepEqual(['A', 'B', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M'].map((n) => udp(n as TimerName)), [500, 32000, 32000, 500, 32000, 500, 32000, 5000, 32000, 5000, 32000, 32000]);
  t.deepEqual(['B', 'D', 'F', 'H', 'I', 'J', 'K', 'L', 'M'].map((n) => tcp(n as TimerName)), [32000, 0, 32000, 32000, 0, 0, 0, 32000, 32000]);
  t.is(timerDuration('B', false, { t1: 100, t2: 4000, t4: 5000 }), 6400, 'B = 64·T1 follows T1');
  t.is(timerDuration('D', false, { t1: 1000, t2: 4000, t4: 5000 }), 64000, 'D is at least 32 s and at least 64·T1');
  t.deepEqual(DEFAULT_TIMERS, { t1: 500, t2: 4000, t4: 5000 });
});

test('INVITE client over UDP: sent at once, Timer A retransmits at 0.5, 1.5, 3.5, 7.5, 15.5, 31.5 s, Timer B times out at 32 s', (t) => {
  const s = createClientTransaction(request('INVITE'), UDP, 0);
  t.deepEqual(types(s), ['send', 'startTimer:A', 'startTimer:B']);
  t.is(s.tx.state, 'calling');
  const run = runClock(s, 40000);
  t.deepEqual(run.sends, [500, 1500, 3500, 7500, 15500, 31500]);
  t.deepEqual(run.actions.filter(([, a]) => a.type === 'timeout' || a.type === 'terminated').map(([at, a]) => [at, a.type]), [
    [32000, 'timeout'],
    [32000, 'terminated'],
  ]);
  t.is(run.tx.state, 'terminated');
});

test('INVITE client: a 1xx moves to Proceeding and stops retransmission', (t) => {
  const s = createClientTransaction(request('INVITE'), UDP, 0);
  const p = ev(s.tx, rx(response(s.tx.request!, 180, { toTag: 'a6c85cf' })), 200);
  t.is(p.tx.state, 'proceeding');
  t.deepEqual(types(p), ['cancelTimer:A', 'cancelTimer:B', 'response']);
  t.deepEqual(p.tx.timers, {});
});

test('INVITE client: a 486 is ACKed by the transaction (same branch, To tag of the response), again on each retransmission, Timer D 32 s', (t) => {
  const inv = request('INVITE');
  const s = createClientTransaction(inv, UDP, 0);
  const busy = response(inv, 486, { toTag: 'a6c85cf' });
  const c = ev(s.tx, rx(busy), 100);
  t.is(c.tx.state, 'completed');
  t.deepEqual(types(c), ['cancelTimer:A', 'cancelTimer:B', 'send', 'response', 'startTimer:D']);
  const ack = c.actions.find((a) => a.type === 'send');
  t.true(ack?.type === 'send' && ack.message.kind === 'request');
  if (ack?.type === 'send' && ack.message.kind === 'request') {
    t.is(ack.message.method, 'ACK');
    t.deepEqual(ack.message.cseq, { seq: inv.cseq.seq, method: 'ACK' });
    t.is(branchOf(ack.message.via[0]!), branchOf(inv.via[0]!));
    t.is(ack.message.to.params['tag'], 'a6c85cf');
    t.deepEqual(ack.message.uri, inv.uri);
  }
  const again = ev(c.tx, rx(busy), 600);
  t.deepEqual(types(again), ['send'], 'the retransmitted 486 is absorbed and ACKed again, not passed up');
  t.is(c.tx.timers.D, 100 + 32000);
  const end = ev(c.tx, { type: 'timer', timer: 'D' }, 32100);
  t.is(end.tx.state, 'terminated');
});

test('INVITE client over TCP: no Timer A, a non-2xx final terminates at once (D = 0)', (t) => {
  const s = createClientTransaction(request('INVITE'), TCP, 0);
  t.deepEqual(types(s), ['send', 'startTimer:B']);
  const c = ev(s.tx, rx(response(s.tx.request!, 603, { toTag: 'x' })), 10);
  t.deepEqual(types(c), ['cancelTimer:B', 'send', 'response', 'terminated']);
});

test('INVITE client (RFC 6026): a 2xx moves to Accepted, its retransmissions reach the TU, Timer M ends it', (t) => {
  const s = createClientTransaction(request('INVITE'), UDP, 0);
  const ok = response(s.tx.request!, 200, { toTag: 'a6c85cf' });
  const a = ev(s.tx, rx(ok), 100);
  t.is(a.tx.state, 'accepted');
  t.deepEqual(types(a), ['cancelTimer:A', 'cancelTimer:B', 'response', 'startTimer:M']);
  t.false(a.actions.some((x) => x.type === 'send'), 'the transaction does not ACK a 2xx');
  t.deepEqual(types(ev(a.tx, rx(ok), 600)), ['response']);
  t.is(ev(a.tx, { type: 'timer', timer: 'M' }, 32100).tx.state, 'terminated');
});

test('INVITE client: a transport error in Calling tells the TU and terminates', (t) => {
  const s = createClientTransaction(request('INVITE'), UDP, 0);
  t.deepEqual(types(ev(s.tx, { type: 'transportError' }, 1)), ['transportError', 'cancelTimer:A', 'cancelTimer:B', 'terminated']);
});

test('non-INVITE client over UDP: Timer E doubles to T2 (0.5, 1.5, 3.5, 7.5, 11.5 ... s), Timer F times out at 32 s', (t) => {
  const s = createClientTransaction(request('BYE', { toTag: 'a6c85cf' }), UDP, 0);
  t.deepEqual(types(s), ['send', 'startTimer:E', 'startTimer:F']);
  const run = runClock(s, 40000);
  t.deepEqual(run.sends, [500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
  t.deepEqual(run.actions.filter(([, a]) => a.type === 'timeout').map(([at]) => at), [32000]);
});

test('non-INVITE client: in Proceeding Timer E is T2 at once', (t) => {
  const s = createClientTransaction(request('BYE', { toTag: 'a6c85cf' }), UDP, 0);
  const p = ev(s.tx, rx(response(s.tx.request!, 100)), 100);
  t.is(p.tx.state, 'proceeding');
  const r = ev(p.tx, { type: 'timer', timer: 'E' }, 500);
  t.deepEqual(types(r), ['send', 'startTimer:E']);
  t.is(r.tx.timers.E, 500 + 4000);
});

test('non-INVITE client: a final response completes it, Timer K (T4) absorbs retransmissions, 0 on TCP', (t) => {
  const s = createClientTransaction(request('BYE', { toTag: 'a6c85cf' }), UDP, 0);
  const ok = response(s.tx.request!, 200, { toTag: 'a6c85cf' });
  const c = ev(s.tx, rx(ok), 50);
  t.deepEqual(types(c), ['cancelTimer:E', 'cancelTimer:F', 'response', 'startTimer:K']);
  t.is(c.tx.timers.K, 5050);
  t.deepEqual(types(ev(c.tx, rx(ok), 60)), [], 'absorbed');
  const tcp = createClientTransaction(request('BYE', { toTag: 'a6c85cf' }), TCP, 0);
  t.deepEqual(types(ev(tcp.tx, rx(ok), 50)), ['cancelTimer:F', 'response', 'terminated']);
});

test('INVITE server: passes the INVITE up and sends 100 Trying; a retransmitted INVITE gets the last response again', (t) => {
  const inv = request('INVITE', { extra: ['Timestamp: 54'] });
  const s = createServerTransaction(inv, UDP, 0);
  t.deepEqual(types(s), ['request', 'send']);
  const trying = s.actions[1];
  t.true(trying?.type === 'send' && trying.message.kind === 'response' && trying.message.status === 100);
  if (trying?.type === 'send' && trying.message.kind === 'response') {
    t.is(trying.message.to.params['tag'], undefined, '100 carries no To tag');
    t.deepEqual(trying.message.headers, [{ name: 'Timestamp', value: '54' }], 'Timestamp echoed (§8.2.6.1)');
  }
  const ringing = createResponse(inv, 180, { toTag: 'a6c85cf' });
  const p = ev(s.tx, { type: 'respond', response: ringing }, 100);
  const again = ev(p.tx, rx(inv), 200);
  t.deepEqual(again.actions, [{ type: 'send', message: ringing }]);
  t.deepEqual(types(again), ['send'], 'the retransmission is absorbed (not passed up)');
});

test('INVITE server over UDP: a 486 is retransmitted by Timer G at 0.5, 1.5, 3.5, 7.5, 11.5 ... s until ACK; Timer H at 32 s', (t) => {
  const inv = request('INVITE');
  const s = createServerTransaction(inv, UDP, 0);
  const c = ev(s.tx, { type: 'respond', response: createResponse(inv, 486, { toTag: 'x' }) }, 0);
  t.is(c.tx.state, 'completed');
  t.is(c.tx.request, undefined, 'answered finally: the parsed request is let go (it lives up to 64·T1 more)');
  t.is(s.tx.request, inv, 'the step before is untouched');
  t.deepEqual(types(c), ['send', 'startTimer:G', 'startTimer:H']);
  const run = runClock(c, 40000);
  t.deepEqual(run.sends, [500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500]);
  t.deepEqual(run.actions.filter(([, a]) => a.type === 'timeout').map(([at, a]) => [at, a.type === 'timeout' && a.timer]), [[32000, 'H']]);
});

test('INVITE server: the ACK confirms, stops G and H, Timer I (T4) absorbs further ACKs; I = 0 on TCP', (t) => {
  const inv = request('INVITE');
  const s = createServerTransaction(inv, UDP, 0);
  const c = ev(s.tx, { type: 'respond', response: createResponse(inv, 486, { toTag: 'x' }) }, 0);
  const ack = request('ACK', { toTag: 'x' });
  const k = ev(c.tx, rx(ack), 700);
  t.is(k.tx.state, 'confirmed');
  t.deepEqual(types(k), ['cancelTimer:G', 'cancelTimer:H', 'startTimer:I']);
  t.is(k.tx.timers.I, 5700);
  t.deepEqual(types(ev(k.tx, rx(ack), 800)), []);
  t.is(ev(k.tx, { type: 'timer', timer: 'I' }, 5700).tx.state, 'terminated');
  const tcp = createServerTransaction(inv, TCP, 0);
  const tc = ev(tcp.tx, { type: 'respond', response: createResponse(inv, 486, { toTag: 'x' }) }, 0);
  t.deepEqual(types(tc), ['send', 'startTimer:H'], 'no Timer G on a reliable transport');
  t.deepEqual(types(ev(tc.tx, rx(ack), 10)), ['cancelTimer:H', 'terminated']);
});

test('INVITE server (RFC 6026): a 2xx moves to Accepted with Timer L; INVITE retransmissions absorbed, 2xx resends go out, ACK goes up', (t) => {
  const inv = request('INVITE');
  const s = createServerTransaction(inv, UDP, 0);
  const ok = createResponse(inv, 200, { toTag: 'x' });
  const a = ev(s.tx, { type: 'respond', response: ok }, 10);
  t.is(a.tx.state, 'accepted');
  t.is(a.tx.request, undefined, 'accepted keeps neither the request…');
  t.is(a.tx.lastResponse, undefined, '…nor the 2xx (the TU retransmits it)');
  t.deepEqual(types(a), ['send', 'startTimer:L']);
  t.is(a.tx.timers.L, 32010);
  t.deepEqual(types(ev(a.tx, rx(inv), 100)), [], 'INVITE retransmission absorbed');
  t.deepEqual(types(ev(a.tx, { type: 'respond', response: ok }, 510)), ['send'], 'the core retransmits the 2xx through it');
  const ack = request('ACK', { toTag: 'x', branch: 'z9hG4bKnew' });
  t.deepEqual(types(ev(a.tx, rx(ack), 600)), ['ack']);
  t.is(ev(a.tx, { type: 'timer', timer: 'L' }, 32010).tx.state, 'terminated');
});

test('INVITE server: 100 Trying can be left to the TU (autoTrying false)', (t) => {
  t.deepEqual(types(createServerTransaction(request('INVITE'), { reliable: false, autoTrying: false }, 0)), ['request']);
});

test('non-INVITE server: retransmissions absorbed in Trying, answered with the last response after; Timer J 32 s on UDP, 0 on TCP', (t) => {
  const bye = request('BYE', { toTag: 'x' });
  const s = createServerTransaction(bye, UDP, 0);
  t.deepEqual(types(s), ['request']);
  t.deepEqual(types(ev(s.tx, rx(bye), 5)), []);
  const ok = createResponse(bye, 200);
  const c = ev(s.tx, { type: 'respond', response: ok }, 10);
  t.deepEqual(types(c), ['send', 'startTimer:J']);
  t.is(c.tx.request, undefined, 'completed keeps the last response only');
  t.is(c.tx.lastResponse, ok);
  t.is(c.tx.timers.J, 32010);
  t.deepEqual(ev(c.tx, rx(bye), 20).actions, [{ type: 'send', message: ok }]);
  t.is(ev(c.tx, { type: 'timer', timer: 'J' }, 32010).tx.state, 'terminated');
  const tcp = createServerTransaction(bye, TCP, 0);
  t.deepEqual(types(ev(tcp.tx, { type: 'respond', response: ok }, 10)), ['send', 'terminated']);
});

test('a timer event for a timer that is not running is ignored', (t) => {
  const s = createClientTransaction(request('INVITE'), TCP, 0);
  const r = ev(s.tx, { type: 'timer', timer: 'A' }, 500);
  t.deepEqual(r.actions, []);
  t.is(r.tx.state, 'calling');
});
