/**
 * The transaction table: every live transaction of one SIP element, keyed per matching.ts,
 * driven by an injected clock. The SIP server actor owns one, feeds it what arrives and what
 * its TU answers, arms one real timer for `nextDeadline()` and calls `fire(now)` when it goes
 * off. No I/O and no time source in here.
 *
 * Decisions:
 * - A new request (not ACK) that matches nothing creates its server transaction at once; an
 *   ACK or a response that matches nothing comes back as `unmatched` for the core (ACK for a
 *   2xx, §13.3.1.4; a stray 2xx retransmission, §13.2.2.4).
 * - Terminated transactions are removed when the step that terminated them returns.
 * - Every action is tagged with its transaction's key.
 */
import { cancelledInviteKey, clientTransactionKey, responseTransactionKey, serverTransactionKey } from './matching.js';
import type { TimerConfig, TimerName } from './timers.js';
import { DeadlineHeap } from './deadlines.js';
import {
  createClientTransaction,
  createServerTransaction,
  step,
  type Step,
  type Transaction,
  type TransactionAction,
  type TransactionEvent,
} from './transaction.js';
import type { SipMessage, SipRequest, SipResponse } from './types.js';

export interface KeyedAction {
  key: string;
  action: TransactionAction;
}

export interface TableResult {
  actions: KeyedAction[];
  /** A message no transaction took (ACK for 2xx, stray response), for the core. */
  unmatched?: SipMessage;
}

export class TransactionTable {
  private readonly txs = new Map<string, Transaction>();
  /** Every timer deadline set, earliest first; stale ones are skipped (deadlines.ts). */
  private readonly deadlines = new DeadlineHeap();

  constructor(private readonly config?: TimerConfig) {}

  get size(): number {
    return this.txs.size;
  }

  get(key: string): Transaction | undefined {
    return this.txs.get(key);
  }

  /** A message from the network. */
  receive(msg: SipMessage, reliable: boolean, now: number): TableResult {
    const key = msg.kind === 'request' ? serverTransactionKey(msg) : responseTransactionKey(msg);
    const tx = this.txs.get(key);
    if (tx) {
      if (msg.kind === 'request' && msg.method === 'ACK' && tx.kind === 'ist' && tx.state !== 'completed' && tx.state !== 'confirmed' && tx.state !== 'accepted') {
        return { actions: [], unmatched: msg };
      }
      return { actions: this.apply(key, step(tx, { type: 'receive', message: msg }, now)) };
    }
    if (msg.kind === 'response' || msg.method === 'ACK') return { actions: [], unmatched: msg };
    const o = this.config ? { reliable, config: this.config } : { reliable };
    return { actions: this.apply(key, createServerTransaction(msg, o, now)) };
  }

  /** Send a request through a new client transaction; returns its key. */
  request(req: SipRequest, reliable: boolean, now: number): { key: string; actions: KeyedAction[] } {
    const key = clientTransactionKey(req);
    const o = this.config ? { reliable, config: this.config } : { reliable };
    return { key, actions: this.apply(key, createClientTransaction(req, o, now)) };
  }

  /** The TU answers the server transaction `key`. */
  respond(key: string, response: SipResponse, now: number): KeyedAction[] {
    return this.event(key, { type: 'respond', response }, now);
  }

  /** The transport failed to deliver for `key` (§17.1.4, §17.2.4). */
  transportError(key: string, now: number): KeyedAction[] {
    return this.event(key, { type: 'transportError' }, now);
  }

  /** The INVITE server transaction a received CANCEL targets (§9.2), if it is still there. */
  cancelTarget(cancel: SipRequest): { key: string; tx: Transaction } | undefined {
    const key = cancelledInviteKey(cancel);
    const tx = this.txs.get(key);
    return tx && tx.kind === 'ist' ? { key, tx } : undefined;
  }

  /** The earliest running timer deadline, or undefined when no timer runs. */
  nextDeadline(): number | undefined {
    for (;;) {
      const d = this.deadlines.peek();
      if (!d || this.live(d.key, d.timer, d.at)) return d?.at;
      this.deadlines.pop();
    }
  }

  /**
   * Fire every timer whose deadline is at or before `now`, earliest first. Each fires at its
   * own deadline, so a late call does not shift the retransmission schedule.
   */
  fire(now: number): KeyedAction[] {
    const out: KeyedAction[] = [];
    for (let d = this.deadlines.peek(); d && d.at <= now; d = this.deadlines.peek()) {
      this.deadlines.pop();
      if (this.live(d.key, d.timer, d.at)) out.push(...this.event(d.key, { type: 'timer', timer: d.timer }, d.at));
    }
    return out;
  }

  /** The transaction `key` still runs `timer` with this deadline (else the heap entry is stale). */
  private live(key: string, timer: TimerName, at: number): boolean {
    return this.txs.get(key)?.timers[timer] === at;
  }

  private event(key: string, e: TransactionEvent, now: number): KeyedAction[] {
    const tx = this.txs.get(key);
    return tx ? this.apply(key, step(tx, e, now)) : [];
  }

  private apply(key: string, s: Step): KeyedAction[] {
    if (s.tx.state === 'terminated') this.txs.delete(key);
    else {
      const before = this.txs.get(key)?.timers;
      this.txs.set(key, s.tx);
      for (const [name, at] of Object.entries(s.tx.timers) as Array<[TimerName, number | undefined]>) {
        if (at !== undefined && before?.[name] !== at) this.deadlines.push({ at, key, timer: name });
      }
    }
    return s.actions.map((action) => ({ key, action }));
  }
}
