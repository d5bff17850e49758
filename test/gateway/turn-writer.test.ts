/** actors/gateway/turn-writer.ts: a control connection's frames gathered per loop turn. */
import test from 'ava';
import { TurnWriter } from '../../actors/gateway/turn-writer.js';

const turn = () => new Promise((r) => setImmediate(r));

test('frames sent in one turn go out in one write, in order, at the end of the turn', async (t) => {
  const writes: string[][] = [];
  const w = new TurnWriter((texts) => writes.push(texts));
  w.push('a');
  w.push('b');
  w.push('c');
  t.deepEqual(writes, [], 'nothing written inside the turn');
  await turn();
  t.deepEqual(writes, [['a', 'b', 'c']]);
  w.push('d');
  await turn();
  t.deepEqual(writes, [['a', 'b', 'c'], ['d']], 'the next turn: a write of its own');
  await turn();
  t.is(writes.length, 2, 'no empty writes');
});

test('flush writes what is gathered at once (before a close) and nothing twice', async (t) => {
  const writes: string[][] = [];
  const w = new TurnWriter((texts) => writes.push(texts));
  w.push('x');
  w.flush();
  t.deepEqual(writes, [['x']]);
  await turn();
  t.deepEqual(writes, [['x']], 'the turn-end write found nothing left');
});

test('a dropped writer (socket gone) forgets what it gathered and takes nothing more', async (t) => {
  const writes: string[][] = [];
  const w = new TurnWriter((texts) => writes.push(texts));
  w.push('lost');
  w.drop();
  w.push('after');
  w.flush();
  await turn();
  t.deepEqual(writes, []);
});
