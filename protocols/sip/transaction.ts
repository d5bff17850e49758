/**
 * The four transaction state machines of RFC 3261 §17 with the RFC 6026 changes, as pure
 * transition functions `(transaction, event, now) -> {transaction, actions}`:
 *   INVITE client (ict, Figure 5 + RFC 6026 Accepted state, timers A, B, D, M),
 *   non-INVITE client (nict, Figure 6, timers E, F, K),
 *   INVITE server (ist, Figure 7 + RFC 6026 Accepted state, timers G, H, I, L),
 *   non-INVITE server (nist, Figure 8, timer J).
 *
 * Decisions:
 * - No clock and no timer inside: `now` is passed in, a started timer is an action carrying its
 *   duration and the transaction records its deadline (`timers`), so a table (table.ts) or
 *   the actor can fire it. A timer event for a timer that is not running is ignored.
 * - A timer whose value is 0 on a reliable transport (D, I, J, K) is not started: the
 *   transaction goes to Terminated at once, which is what firing it would do.
 * - The INVITE server transaction sends 100 Trying itself on creation (§17.2.1) unless told
 *   not to; 2xx responses move it to Accepted, where the TU (the UAS core) retransmits the 2xx
 *   (§13.3.1.4) by sending it again through the transaction, INVITE retransmissions are
 *   absorbed and ACKs are passed up (RFC 6026 §8.5-8.7).
 * - In the INVITE client transaction a 2xx moves to Accepted: it and its retransmissions go
 *   to the TU, which sends the ACK itself (§13.2.2.4); a non-2xx final is ACKed here, and its
 *   retransmissions ACKed again (§17.1.1.3).
 * - Entering Proceeding stops Timer A and Timer B (B only matters in Calling, §17.1.1.2); the
 *   TU guards a Proceeding INVITE with its own timer (e.g. CANCEL after a setup timeout).
 */
import { createNon2xxAck, createResponse } from './build.js';
import { timerDuration, type TimerConfig, type TimerName, DEFAULT_TIMERS } from './timers.js';
import type { SipMessage, SipRequest, SipResponse } from './types.js';

export type TransactionKind = 'ict' | 'nict' | 'ist' | 'nist';
export type TransactionState = 'calling' | 'trying' | 'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated';

export interface Transaction {
  kind: TransactionKind;
  state: TransactionState;
  /**
   * The request: a client transaction's for its whole life; a server transaction's until its
   * final response. The states after that (completed, confirmed, accepted) only absorb
   * retransmissions, for up to 64·T1, and a busy server holds ~130 000 of them: they keep the
   * last response and their timers, not the parsed request.
   */
  request?: SipRequest;
  reliable: boolean;
  config: TimerConfig;
  /** Server: the last response sent. Client: the final response received. */
  lastResponse?: SipResponse;
  /** ict: the ACK sent for a non-2xx final response. */
  ack?: SipRequest;
  /** Current retransmission interval of A, E or G. */
  interval: number;
  /** Running timers and their deadlines (same clock as `now`). */
  timers: Partial<Record<TimerName, number>>;
}

export type TransactionEvent =
  | { type: 'receive'; message: SipMessage }
  | { type: 'respond'; response: SipResponse }
  | { type: 'timer'; timer: TimerName }
  | { type: 'transportError' };

export type TransactionAction =
  | { type: 'send'; message: SipMessage }
  | { type: 'startTimer'; timer: TimerName; ms: number }
  | { type: 'cancelTimer'; timer: TimerName }
  | { type: 'request'; request: SipRequest }
  | { type: 'response'; response: SipResponse }
  | { type: 'ack'; request: SipRequest }
  | { type: 'timeout'; timer: TimerName }
  | { type: 'transportError' }
  | { type: 'terminated' };

export interface Step {
  tx: Transaction;
  actions: TransactionAction[];
}

export interface TransactionOptions {
  reliable: boolean;
  config?: TimerConfig;
  /** ist only: send 100 Trying at once (default true). */
  autoTrying?: boolean;
}

class Builder {
  readonly actions: TransactionAction[] = [];
  readonly tx: Transaction;
  constructor(
    tx: Transaction,
    readonly now: number,
  ) {
    this.tx = { ...tx, timers: { ...tx.timers } };
  }
  send(message: SipMessage): void {
    this.actions.push({ type: 'send', message });
  }
  up(a: TransactionAction): void {
    this.actions.push(a);
  }
  start(timer: TimerName, ms: number): void {
    this.tx.timers[timer] = this.now + ms;
    this.actions.push({ type: 'startTimer', timer, ms });
  }
  cancel(...timers: TimerName[]): void {
    for (const timer of timers) {
      if (this.tx.timers[timer] === undefined) continue;
      delete this.tx.timers[timer];
      this.actions.push({ type: 'cancelTimer', timer });
    }
  }
  /** Start a wait timer (D, I, J, K), or terminate at once when it is 0 (reliable transport). */
  wait(timer: TimerName): void {
    const ms = timerDuration(timer, this.tx.reliable, this.tx.config);
    if (ms === 0) this.terminate();
    else this.start(timer, ms);
  }
  terminate(): void {
    this.cancel(...(Object.keys(this.tx.timers) as TimerName[]));
    this.tx.state = 'terminated';
    this.actions.push({ type: 'terminated' });
  }
  done(): Step {
    return { tx: this.tx, actions: this.actions };
  }
}

/** A client transaction's request (kept for its whole life). */
function clientRequest(t: Transaction): SipRequest {
  if (!t.request) throw new Error(`${t.kind} transaction without its request`);
  return t.request;
}

function fresh(kind: TransactionKind, state: TransactionState, request: SipRequest, o: TransactionOptions): Transaction {
  const config = o.config ?? DEFAULT_TIMERS;
  return { kind, state, request, reliable: o.reliable, config, interval: config.t1, timers: {} };
}

/** A client transaction for `request` (INVITE gives an ict, anything but ACK a nict): sends it. */
export function createClientTransaction(request: SipRequest, o: TransactionOptions, now: number): Step {
  if (request.method === 'ACK') throw new Error('ACK has no client transaction');
  const invite = request.method === 'INVITE';
  const b = new Builder(fresh(invite ? 'ict' : 'nict', invite ? 'calling' : 'trying', request, o), now);
  b.send(request);
  if (!o.reliable) b.start(invite ? 'A' : 'E', b.tx.config.t1);
  b.start(invite ? 'B' : 'F', timerDuration(invite ? 'B' : 'F', o.reliable, b.tx.config));
  return b.done();
}

/** A server transaction for a received `request` (INVITE: ist, else nist): passes it up. */
export function createServerTransaction(request: SipRequest, o: TransactionOptions, now: number): Step {
  if (request.method === 'ACK') throw new Error('ACK has no server transaction');
  const invite = request.method === 'INVITE';
  const b = new Builder(fresh(invite ? 'ist' : 'nist', invite ? 'proceeding' : 'trying', request, o), now);
  b.up({ type: 'request', request });
  if (invite && (o.autoTrying ?? true)) {
    const trying = createResponse(request, 100);
    b.tx.lastResponse = trying;
    b.send(trying);
  }
  return b.done();
}

export function step(tx: Transaction, event: TransactionEvent, now: number): Step {
  const b = new Builder(tx, now);
  if (tx.state === 'terminated') return b.done();
  if (event.type === 'timer' && tx.timers[event.timer] === undefined) return b.done();
  if (event.type === 'timer') delete b.tx.timers[event.timer];
  switch (tx.kind) {
    case 'ict':
      ict(b, event);
      break;
    case 'nict':
      nict(b, event);
      break;
    case 'ist':
      ist(b, event);
      break;
    case 'nist':
      nist(b, event);
      break;
  }
  return b.done();
}

function ict(b: Builder, e: TransactionEvent): void {
  const t = b.tx;
  if (e.type === 'timer') {
    if (e.timer === 'A' && t.state === 'calling') {
      b.send(clientRequest(t));
      t.interval *= 2;
      b.start('A', t.interval);
    } else if (e.timer === 'B' && t.state === 'calling') {
      b.up({ type: 'timeout', timer: 'B' });
      b.terminate();
    } else if ((e.timer === 'D' && t.state === 'completed') || (e.timer === 'M' && t.state === 'accepted')) b.terminate();
    return;
  }
  if (e.type === 'transportError') {
    if (t.state === 'calling' || t.state === 'proceeding') {
      b.up({ type: 'transportError' });
      b.terminate();
    }
    return;
  }
  if (e.type !== 'receive' || e.message.kind !== 'response') return;
  const r = e.message;
  if (t.state === 'calling' || t.state === 'proceeding') {
    b.cancel('A', 'B');
    if (r.status < 200) {
      t.state = 'proceeding';
      b.up({ type: 'response', response: r });
    } else if (r.status < 300) {
      t.state = 'accepted';
      t.lastResponse = r;
      b.up({ type: 'response', response: r });
      b.start('M', timerDuration('M', t.reliable, t.config));
    } else {
      t.state = 'completed';
      t.lastResponse = r;
      t.ack = createNon2xxAck(clientRequest(t), r);
      b.send(t.ack);
      b.up({ type: 'response', response: r });
      b.wait('D');
    }
  } else if (t.state === 'accepted' && r.status >= 200 && r.status < 300) {
    b.up({ type: 'response', response: r });
  } else if (t.state === 'completed' && r.status >= 300 && t.ack) {
    b.send(t.ack);
  }
}

function nict(b: Builder, e: TransactionEvent): void {
  const t = b.tx;
  if (e.type === 'timer') {
    if (e.timer === 'E' && (t.state === 'trying' || t.state === 'proceeding')) {
      b.send(clientRequest(t));
      t.interval = t.state === 'trying' ? Math.min(2 * t.interval, t.config.t2) : t.config.t2;
      b.start('E', t.interval);
    } else if (e.timer === 'F' && (t.state === 'trying' || t.state === 'proceeding')) {
      b.up({ type: 'timeout', timer: 'F' });
      b.terminate();
    } else if (e.timer === 'K' && t.state === 'completed') b.terminate();
    return;
  }
  if (e.type === 'transportError') {
    if (t.state === 'trying' || t.state === 'proceeding') {
      b.up({ type: 'transportError' });
      b.terminate();
    }
    return;
  }
  if (e.type !== 'receive' || e.message.kind !== 'response') return;
  const r = e.message;
  if (t.state !== 'trying' && t.state !== 'proceeding') return;
  if (r.status < 200) {
    t.state = 'proceeding';
    b.up({ type: 'response', response: r });
  } else {
    t.state = 'completed';
    t.lastResponse = r;
    b.cancel('E', 'F');
    b.up({ type: 'response', response: r });
    b.wait('K');
  }
}

function ist(b: Builder, e: TransactionEvent): void {
  const t = b.tx;
  if (e.type === 'timer') {
    if (e.timer === 'G' && t.state === 'completed' && t.lastResponse) {
      b.send(t.lastResponse);
      t.interval = Math.min(2 * t.interval, t.config.t2);
      b.start('G', t.interval);
    } else if (e.timer === 'H' && t.state === 'completed') {
      b.up({ type: 'timeout', timer: 'H' });
      b.terminate();
    } else if ((e.timer === 'I' && t.state === 'confirmed') || (e.timer === 'L' && t.state === 'accepted')) b.terminate();
    return;
  }
  if (e.type === 'transportError') {
    b.up({ type: 'transportError' });
    if (t.state === 'proceeding' || t.state === 'completed') b.terminate();
    return;
  }
  if (e.type === 'receive') {
    const m = e.message;
    if (m.kind !== 'request') return;
    if (m.method === 'ACK') {
      if (t.state === 'completed') {
        t.state = 'confirmed';
        b.cancel('G', 'H');
        b.wait('I');
      } else if (t.state === 'accepted') b.up({ type: 'ack', request: m });
    } else if ((t.state === 'proceeding' || t.state === 'completed') && t.lastResponse) b.send(t.lastResponse);
    return;
  }
  const r = e.response;
  if (t.state === 'proceeding') {
    b.send(r);
    t.lastResponse = r;
    if (r.status >= 300) {
      t.state = 'completed';
      t.request = undefined;
      if (!t.reliable) b.start('G', t.config.t1);
      b.start('H', timerDuration('H', t.reliable, t.config));
    } else if (r.status >= 200) {
      // accepted (RFC 6026) absorbs retransmitted INVITEs; the TU retransmits its 2xx itself
      t.state = 'accepted';
      t.request = undefined;
      t.lastResponse = undefined;
      b.start('L', timerDuration('L', t.reliable, t.config));
    }
  } else if (t.state === 'accepted' && r.status >= 200 && r.status < 300) {
    t.lastResponse = r;
    b.send(r);
  }
}

function nist(b: Builder, e: TransactionEvent): void {
  const t = b.tx;
  if (e.type === 'timer') {
    if (e.timer === 'J' && t.state === 'completed') b.terminate();
    return;
  }
  if (e.type === 'transportError') {
    b.up({ type: 'transportError' });
    b.terminate();
    return;
  }
  if (e.type === 'receive') {
    if (e.message.kind === 'request' && (t.state === 'proceeding' || t.state === 'completed') && t.lastResponse) b.send(t.lastResponse);
    return;
  }
  if (t.state !== 'trying' && t.state !== 'proceeding') return;
  const r = e.response;
  b.send(r);
  t.lastResponse = r;
  if (r.status < 200) t.state = 'proceeding';
  else {
    t.state = 'completed';
    t.request = undefined;
    b.wait('J');
  }
}
