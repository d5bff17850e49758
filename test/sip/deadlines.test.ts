/**
 * The transaction table's deadline heap: pops come out in deadline order whatever the order of
 * the pushes (checked against a sort on seeded random inputs), and the table built on it fires
 * exactly the timers still running — a timer stopped by a response never fires, however many
 * transactions wait.
 */
import test from 'ava';
import { DeadlineHeap } from '../../protocols/sip/deadlines.js';
import { TransactionTable } from '../../protocols/sip/table.js';
import { prng } from '../helpers/prng.js';
import { request, response } from './messages.js';

test('the heap pops deadlines in order, interleaved pushes and pops included (seeded, against a sort)', (t) => {
  const seed = 20261126;
  const rnd = prng(seed);
  for (let round = 0; round < 50; round++) {
    const heap = new DeadlineHeap();
    const reference: number[] = [];
    const popped: number[] = [];
    const expected: number[] = [];
    for (let i = 0; i < 400; i++) {
      if (reference.length && rnd() < 0.3) {
        reference.sort((a, b) => a - b);
        expected.push(reference.shift()!);
        popped.push(heap.pop()!.at);
      } else {
        const at = Math.floor(rnd() * 1000);
        reference.push(at);
        heap.push({ at, key: `k${i}`, timer: 'E' });
      }
    }
    t.is(heap.length, reference.length);
    while (heap.length) popped.push(heap.pop()!.at);
    expected.push(...reference.sort((a, b) => a - b));
    if (JSON.stringify(popped) !== JSON.stringify(expected)) return t.fail(`round ${round} of seed ${seed}: out of order`);
  }
  t.is(new DeadlineHeap().pop(), undefined);
  t.pass();
});

test('the table fires only timers still running: 2000 INVITEs answered 180 stop their Timer A and B; the unanswered one retransmits and times out', (t) => {
  const table = new TransactionTable({ t1: 100, t2: 400, t4: 500 });
  for (let i = 0; i < 2000; i++) {
    const r = table.request(request('INVITE', { branch: `z9hG4bKa${i}` }), false, 0);
    // A provisional answer stops A and B (Proceeding: no timer runs).
    table.receive(response(table.get(r.key)!.request!, 180, { toTag: 't' }), false, 10);
  }
  const silent = table.request(request('INVITE', { branch: 'z9hG4bKsilent' }), false, 20);
  t.is(table.nextDeadline(), 120, 'the only running timer is the silent one\'s A (20 + T1)');
  const fired = table.fire(20 + 64 * 100);
  t.true(fired.every((a) => a.key === silent.key), 'nothing fired for the answered transactions');
  t.is(fired.filter((a) => a.action.type === 'send').length, 6, 'A retransmits at 120, 320, 720, 1520, 3120, 6320 (doubling from T1) before B');
  t.true(fired.some((a) => a.action.type === 'timeout'), 'B timed it out at 64·T1');
  t.is(table.nextDeadline(), undefined, 'no timer left: the stale entries of stopped timers are not deadlines');
  t.is(table.size, 2000, 'the answered transactions wait in Proceeding');
});
