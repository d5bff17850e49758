import test from 'ava';
import type { ProbeProtocol } from './fixtures/probe/messages.js';
import { PROBE, startSystem } from './helpers/system.js';

test('an actor on a worker thread answers requests', async (t) => {
  const system = await startSystem(t);
  await system.start({ id: 'p1', module: PROBE });
  const p = system.ref<ProbeProtocol>('p1');
  p.send({ type: 'inc', by: 3 });
  t.is(await p.request({ type: 'get' }), 3);
  const info = await p.request({ type: 'info' });
  t.not(info.threadId, 0);
});
