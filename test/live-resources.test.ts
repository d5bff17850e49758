/**
 * The actor API's live part: what `open` makes (here a real TCP server) is handed to every
 * handler and closed exactly once when the instance ends — on stop, on crash (before the restart
 * opens a new one), on shutdown — after onStop; and `persist: 'after-handler'` checkpoints the
 * plain state after every handler, refusals included, so nothing a handler changed is lost.
 */
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { refusalOf, type ChildSpec } from '../runtime/system.js';
import type { HolderArgs, HolderProtocol } from './fixtures/holder/messages.js';
import { FAST_BACKOFF, SHARED, eventually, startTestSystem, tempDir, waitFor } from './helpers/util.js';

const HOLDER = new URL('./fixtures/holder/actor.js', import.meta.url).href;

const holder = (id: string, args: HolderArgs): ChildSpec => ({ id, module: HOLDER, args, backoff: FAST_BACKOFF, placement: SHARED });

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

/** What a TCP client gets from the port: the server's greeting, or the connect error's code. */
function dial(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d.toString()));
    s.on('end', () => resolve(got.trim()));
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

test('stop: onStop sees the live server, then it is closed once, and its port refuses connections', async (t) => {
  const log = join(tempDir(t), 'log');
  const system = await startTestSystem(t);
  await system.start(holder('h', { log }));
  const port = await system.ref<HolderProtocol>('h').request({ type: 'port' });
  t.is(await dial(port), 'held', 'the handler was handed the live server, which serves');
  await system.stopChild('h');
  t.deepEqual(lines(log), [`open ${port}`, 'stop stopped true', `close ${port} stopped`]);
  t.is(await dial(port), 'ECONNREFUSED');
});

test('crash: the crashed instance\'s server is closed before the restart opens a new one', async (t) => {
  const log = join(tempDir(t), 'log');
  const system = await startTestSystem(t);
  await system.start(holder('h', { log }));
  const h = system.ref<HolderProtocol>('h');
  const first = await h.request({ type: 'port' });
  const restarted = eventually(system, 'child-restarted', (e) => e.id === 'h');
  h.send({ type: 'crash' });
  await restarted;
  const second = await h.request({ type: 'port' });
  t.not(second, first);
  t.deepEqual(lines(log), [`open ${first}`, 'stop crash true', `close ${first} crash`, `open ${second}`]);
  t.is(await dial(first), 'ECONNREFUSED');
  t.is(await dial(second), 'held');
});

test('shutdown closes the live server of every running instance', async (t) => {
  const dir = tempDir(t);
  const system = await startTestSystem(t);
  await system.start(holder('a', { log: join(dir, 'a') }));
  await system.start(holder('b', { log: join(dir, 'b') }));
  const pa = await system.ref<HolderProtocol>('a').request({ type: 'port' });
  const pb = await system.ref<HolderProtocol>('b').request({ type: 'port' });
  await system.shutdown();
  t.deepEqual(lines(join(dir, 'a')), [`open ${pa}`, 'stop shutdown true', `close ${pa} shutdown`]);
  t.deepEqual(lines(join(dir, 'b')), [`open ${pb}`, 'stop shutdown true', `close ${pb} shutdown`]);
  t.is(await dial(pa), 'ECONNREFUSED');
  t.is(await dial(pb), 'ECONNREFUSED');
});

test('stopped while open runs: what open makes is still closed', async (t) => {
  const log = join(tempDir(t), 'log');
  const system = await startTestSystem(t);
  const starting = system.start(holder('h', { log, openDelayMs: 400 })).catch(() => undefined);
  // Stop once the instance exists and open is waiting (the actor is placed and its init ran).
  await waitFor('the holder placed', () => system.locate('h') !== null);
  await new Promise((r) => setTimeout(r, 100));
  await system.stopChild('h');
  await starting;
  const got = lines(log);
  t.is(got.length, 3, got.join(' | '));
  const port = Number(got[0]!.split(' ')[1]);
  t.deepEqual(got, [`open ${port}`, 'stop stopped true', `close ${port} stopped`]);
  t.is(await dial(port), 'ECONNREFUSED');
});

test("persist 'after-handler': a change is saved without a checkpoint call, a refusal's change too", async (t) => {
  const log = join(tempDir(t), 'log');
  const system = await startTestSystem(t);
  await system.start(holder('h', { log }));
  const h = system.ref<HolderProtocol>('h');
  t.is(await h.request({ type: 'bump', by: 5 }), 5);
  const refused = await t.throwsAsync(h.request({ type: 'bumpThenRefuse', by: 2 }));
  t.is(refusalOf<HolderProtocol>(refused), 'REFUSED');
  const restarted = eventually(system, 'child-restarted', (e) => e.id === 'h');
  h.send({ type: 'crash' });
  await restarted;
  t.is(await h.request({ type: 'count' }), 7, 'both changes survived the crash: they were checkpointed before the replies');
});

test("persist 'after-handler': the reply is the value the handler returned, not what its objects became during the checkpoint", async (t) => {
  const log = join(tempDir(t), 'log');
  const system = await startTestSystem(t);
  await system.start(holder('v', { log }));
  const h = system.ref<HolderProtocol>('v');
  t.is(await h.request({ type: 'bump', by: 3 }), 3);
  // The handler returns the live state object and changes it on the next turn of the event
  // loop, while the runtime awaits the checkpoint that must go before the reply.
  t.deepEqual(await h.request({ type: 'viewThenBump', by: 100 }), { count: 3 });
  t.is(await h.request({ type: 'count' }), 103, 'the change after the reply happened');
});
