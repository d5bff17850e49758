import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import type { CourierProtocol } from './fixtures/courier/messages.js';
import type { FlakyProtocol } from './fixtures/flaky/messages.js';
import type { ProbeProtocol } from './fixtures/probe/messages.js';
import { PROBE } from './helpers/system.js';
import { COURIER, FAST_BACKOFF, FLAKY, SHARED, DEDICATED, startTestSystem, ofType, recordEvents, rejectsWith, waitFor } from './helpers/util.js';

function filled(size: number, value: number): ArrayBuffer {
  const buf = new ArrayBuffer(size);
  new Uint8Array(buf).fill(value);
  return buf;
}

const sha256 = (b: ArrayBuffer | Uint8Array) => createHash('sha256').update(b instanceof Uint8Array ? b : new Uint8Array(b)).digest('hex');

// ---------------------------------------------------------------- deadlines

test('a request past its deadline fails with TIMEOUT; the actor keeps working and is not restarted', async (t) => {
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  const p = system.ref<ProbeProtocol>('p');
  p.send({ type: 'inc', by: 5 });
  const started = Date.now();
  const err = await rejectsWith(t, p.request({ type: 'sleep', ms: 5000 }, { timeoutMs: 150 }), 'TIMEOUT');
  const waited = Date.now() - started;
  t.true(waited >= 140, `waited ${waited} ms`);
  t.true(waited < 4000, `gave up after ${waited} ms, before the reply would have come`);
  t.regex(err.message, /sleep/);
  // Later messages are handled once the sleep is over; state and instance are the same.
  t.is(await p.request({ type: 'get' }), 5);
  t.is((await p.request({ type: 'info' })).starts, 1);
  t.is(await p.request({ type: 'sleep', ms: 10 }, { timeoutMs: 20_000 }), 10);
  t.is(ofType(events, 'child-crashed').length, 0);
});

// ---------------------------------------------------------------- transfer

test('request with transfer moves the buffer: the sender is detached, the actor sees it whole', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  const p = system.ref<ProbeProtocol>('p');
  // First message: the location is not known yet (queued while resolving).
  const a = filled(1 << 20, 1);
  const first = p.request({ type: 'byteLength', data: a }, { transfer: [a] });
  t.is(a.byteLength, 0, 'detached at once, before any reply');
  t.is(await first, 1 << 20);
  // Location known: the direct path.
  const b = filled(300_000, 2);
  const second = p.request({ type: 'byteLength', data: b }, { transfer: [b] });
  t.is(b.byteLength, 0);
  t.is(await second, 300_000);
  // Without transfer it is a copy: the sender keeps its buffer.
  const c = filled(1000, 3);
  t.is(await p.request({ type: 'byteLength', data: c }), 1000);
  t.is(c.byteLength, 1000);
});

test('send (cast) with transfer detaches the sender; the receiver got every byte', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'c', module: COURIER, placement: SHARED });
  const c = system.ref<CourierProtocol>('c');
  const bufs = [filled(65_536, 3), filled(1 << 20, 9)];
  for (const b of bufs) {
    c.send({ type: 'put', data: b }, { transfer: [b] });
    t.is(b.byteLength, 0);
  }
  t.deepEqual(await c.request({ type: 'received' }), [
    { len: 65_536, sum: 65_536 * 3 },
    { len: 1 << 20, sum: (1 << 20) * 9 },
  ]);
});

test('a reply sent withTransfer arrives intact and is moved out of the actor', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  await system.start({ id: 'c', module: COURIER, placement: SHARED });
  const buf = await system.ref<ProbeProtocol>('p').request({ type: 'fill', size: 200_000, value: 0xab });
  t.true(buf instanceof ArrayBuffer);
  t.is(buf.byteLength, 200_000);
  t.true(new Uint8Array(buf).every((x) => x === 0xab));

  const c = system.ref<CourierProtocol>('c');
  const made = await c.request({ type: 'make', size: 4096, value: 5 });
  t.is(made.byteLength, 4096);
  t.true(new Uint8Array(made).every((x) => x === 5));
  t.is(await c.request({ type: 'lastMadeLength' }), 0, "the actor's copy was detached: moved, not copied");
});

async function transferBetween(t: import('ava').ExecutionContext, sameThread: boolean): Promise<void> {
  const system = await startTestSystem(t);
  const placement = sameThread ? SHARED : DEDICATED;
  await system.start({ id: 'a', module: COURIER, placement });
  await system.start({ id: 'b', module: COURIER, placement });
  const a = system.ref<CourierProtocol>('a');
  const b = system.ref<CourierProtocol>('b');
  const [ia, ib] = await Promise.all([a.request({ type: 'info' }), b.request({ type: 'info' })]);
  if (sameThread) t.is(ia.threadId, ib.threadId, 'both on one thread');
  else t.not(ia.threadId, ib.threadId, 'on two threads');

  // a -> b, request with transfer: a's buffer is detached, b measured all of it. Twice: the
  // first goes while the location is resolved, the second on the known route.
  for (const size of [1 << 20, 77_777]) {
    const r = await a.request({ type: 'pass', to: 'b', size, value: 4, via: 'request' });
    t.deepEqual(r, { detached: true, reply: { len: size, sum: size * 4 } });
  }
  // a -> b, cast with transfer.
  const s = await a.request({ type: 'pass', to: 'b', size: 50_000, value: 2, via: 'send' });
  t.deepEqual(s, { detached: true, reply: null });
  const received = await waitFor('b to receive the cast', async () => {
    const r = await b.request({ type: 'received' });
    return r.length > 0 && r;
  });
  t.deepEqual(received, [{ len: 50_000, sum: 100_000 }]);
  // b -> a: a reply withTransfer from one actor to another.
  t.deepEqual(await a.request({ type: 'pull', from: 'b', size: 123_456, value: 1 }), { len: 123_456, sum: 123_456 });
  t.is(await b.request({ type: 'lastMadeLength' }), 0, "b's buffer moved to a");
}

test('transfer between two actors on different threads: moved both ways', (t) => transferBetween(t, false));
test('transfer between two actors on the same thread: moved both ways', (t) => transferBetween(t, true));

for (const sameThread of [true, false]) {
  test(`a reply from one actor to another is a copy, not the replier's own object (${sameThread ? 'same thread' : 'two threads'})`, async (t) => {
    const system = await startTestSystem(t);
    const placement = sameThread ? SHARED : DEDICATED;
    await system.start({ id: 'owner', module: COURIER, placement });
    await system.start({ id: 'taker', module: COURIER, placement });
    // taker gets owner's items array and appends to what it received.
    t.is(await system.ref<CourierProtocol>('taker').request({ type: 'grab', from: 'owner' }), 3);
    t.is(await system.ref<CourierProtocol>('taker').request({ type: 'grab', from: 'owner' }), 3);
    t.deepEqual(await system.ref<CourierProtocol>('owner').request({ type: 'items' }), ['a', 'b'], "owner's state untouched");
  });
}

for (const via of ['send', 'request'] as const) {
  test(`a message handed over (${via}) reaches an actor of the same thread as the very object; otherwise, and across threads, as a copy`, async (t) => {
    const system = await startTestSystem(t);
    await system.start({ id: 'giver', module: COURIER, placement: SHARED });
    await system.start({ id: 'near', module: COURIER, placement: SHARED });
    await system.start({ id: 'far', module: COURIER, placement: DEDICATED });
    const giver = system.ref<CourierProtocol>('giver');
    t.deepEqual(await giver.request({ type: 'handOver', to: 'near', handover: true, via }), { same: true, value: 1 }, 'same thread, handed over: no clone');
    t.deepEqual(await giver.request({ type: 'handOver', to: 'near', handover: false, via }), { same: false, value: 1 }, 'same thread, not handed over: a clone');
    const far = await giver.request({ type: 'handOver', to: 'far', handover: true, via });
    t.is(far.same, false, 'another thread: always a copy');
  });
}

test('forward and ask between actors reach the right actor, across threads and within one', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'x', module: PROBE, placement: SHARED });
  await system.start({ id: 'y', module: PROBE, placement: SHARED });
  await system.start({ id: 'z', module: PROBE, placement: DEDICATED });
  const [x, y, z] = [system.ref<ProbeProtocol>('x'), system.ref<ProbeProtocol>('y'), system.ref<ProbeProtocol>('z')];
  const [ix, iy, iz] = await Promise.all([x, y, z].map((r) => r.request({ type: 'info' })));
  t.is(ix!.threadId, iy!.threadId);
  t.not(ix!.threadId, iz!.threadId);
  x.send({ type: 'forward', to: 'y', msg: { type: 'inc', by: 3 } });
  x.send({ type: 'forward', to: 'z', msg: { type: 'inc', by: 4 } });
  await waitFor('y to get the forward', async () => (await y.request({ type: 'get' })) !== 0);
  await waitFor('z to get the forward', async () => (await z.request({ type: 'get' })) !== 0);
  t.is(await y.request({ type: 'get' }), 3);
  t.is(await z.request({ type: 'get' }), 4);
  t.is(await x.request({ type: 'get' }), 0, 'x only passed them on');
  t.is(await x.request({ type: 'ask', to: 'y', msg: { type: 'get' } }), 3);
  t.is(await x.request({ type: 'ask', to: 'z', msg: { type: 'get' } }), 4);
  t.is(await z.request({ type: 'ask', to: 'x', msg: { type: 'get' } }), 0);
});

// ---------------------------------------------------------------- errors

test('ReplyError reaches the requester as REPLY_ERROR with appCode; the actor is not restarted', async (t) => {
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  const p = system.ref<ProbeProtocol>('p');
  p.send({ type: 'inc', by: 9 });
  const err = await rejectsWith(t, p.request({ type: 'refuse', code: 'INVALID_PARAMS' }), 'REPLY_ERROR');
  t.is(err.appCode, 'INVALID_PARAMS');
  t.regex(err.message, /INVALID_PARAMS/);
  // As a cast it is logged, not a crash.
  p.send({ type: 'refuse', code: 'ALSO_NOT' });
  t.is(await p.request({ type: 'get' }), 9, 'in-memory state kept');
  t.is((await p.request({ type: 'info' })).starts, 1);
  t.deepEqual(ofType(events, 'child-crashed'), []);
  t.deepEqual(ofType(events, 'child-restarting'), []);
});

test('an unknown message type gives UNKNOWN_MESSAGE and does not crash the actor', async (t) => {
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  const p = system.ref<ProbeProtocol>('p');
  p.send({ type: 'inc', by: 2 });
  const err = await rejectsWith(t, p.request({ type: 'noSuchThing' } as never), 'UNKNOWN_MESSAGE');
  t.regex(err.message, /noSuchThing/);
  // Not even a name inherited from Object.prototype counts as a handler.
  await rejectsWith(t, p.request({ type: 'toString' } as never), 'UNKNOWN_MESSAGE');
  p.send({ type: 'alsoUnknown' } as never);
  t.is(await p.request({ type: 'get' }), 2);
  t.is((await p.request({ type: 'info' })).starts, 1);
  t.deepEqual(ofType(events, 'child-crashed'), []);
});

test('a request to an unknown id fails with NO_SUCH_ACTOR at once, not after the deadline', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  const started = Date.now();
  await rejectsWith(t, system.ref<ProbeProtocol>('ghost').request({ type: 'get' }), 'NO_SUCH_ACTOR');
  t.true(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  // From inside an actor too: its ask fails at once (and, not caught, crashes the asking handler).
  const t2 = Date.now();
  const err = await rejectsWith(t, system.ref<ProbeProtocol>('p').request({ type: 'ask', to: 'ghost', msg: { type: 'get' } }), 'ACTOR_CRASHED');
  t.regex(err.message, /no actor with id ghost/);
  t.true(Date.now() - t2 < 10_000);
});

test('a request to an actor that was stopped fails with NO_SUCH_ACTOR, not TIMEOUT', async (t) => {
  const system = await startTestSystem(t, { requestTimeoutMs: 15_000 });
  await system.start({ id: 'solo', module: PROBE, placement: DEDICATED }); // its thread is retired with it
  await system.start({ id: 'shared1', module: PROBE, placement: SHARED });
  await system.start({ id: 'shared2', module: PROBE, placement: SHARED });
  for (const id of ['solo', 'shared1']) {
    const r = system.ref<ProbeProtocol>(id);
    t.is(await r.request({ type: 'get' }), 0); // the route is now cached
    await system.stopChild(id);
    t.is(system.locate(id), null);
    const started = Date.now();
    await rejectsWith(t, r.request({ type: 'get' }), 'NO_SUCH_ACTOR');
    t.true(Date.now() - started < 10_000, `${id}: took ${Date.now() - started} ms`);
  }
  t.is(await system.ref<ProbeProtocol>('shared2').request({ type: 'get' }), 0);
});

test('a request in flight when its actor crashes fails with ACTOR_CRASHED at once, and the restarted actor answers', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'c', module: COURIER, backoff: FAST_BACKOFF, placement: SHARED });
  const c = system.ref<CourierProtocol>('c');
  t.is((await c.request({ type: 'info' })).starts, 1);
  c.send({ type: 'crashAfter', ms: 300 });
  const started = Date.now();
  const err = await rejectsWith(t, c.request({ type: 'wait', ms: 20_000 }, { timeoutMs: 15_000 }), 'ACTOR_CRASHED');
  t.true(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
  t.regex(err.message, /crashAfter 300/);
  // The new instance is not held up by the old one's unfinished handler.
  const info = await waitFor('the restarted actor', async () => {
    const i = await c.request({ type: 'info' }, { timeoutMs: 3000 });
    return i.starts === 2 && i;
  }, 15_000); // well before the old instance's 20 s wait would end

  t.is(info.starts, 2);
  t.is(await c.request({ type: 'wait', ms: 5 }, { timeoutMs: 3000 }), 5);
});

test('a request whose own handler throws fails with ACTOR_CRASHED', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'p', module: PROBE, backoff: FAST_BACKOFF, placement: SHARED });
  const err = await rejectsWith(t, system.ref<ProbeProtocol>('p').request({ type: 'crash', message: 'boom-7' }), 'ACTOR_CRASHED');
  t.regex(err.message, /boom-7/);
});

// ---------------------------------------------------------------- ordering

test('messages that arrive while init runs wait for it, and keep their order', async (t) => {
  const system = await startTestSystem(t);
  const events = recordEvents(t, system);
  const starting = system.start({ id: 'slow', module: FLAKY, args: { failures: 0, initDelayMs: 600 }, placement: SHARED });
  await waitFor('the actor to be placed', () => system.locate('slow') !== null);
  const slow = system.ref<FlakyProtocol>('slow');
  slow.send({ type: 'log', line: 'one' });
  const attempts = slow.request({ type: 'attempts' });
  slow.send({ type: 'log', line: 'two' });
  const lines = slow.request({ type: 'lines' });
  t.deepEqual(await Promise.all([attempts, lines]), [1, ['one', 'two']]);
  await starting;
  t.deepEqual(ofType(events, 'child-crashed'), []);
});

test('casts from one sender are handled in order (1000 incs, then get)', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  await system.start({ id: 'c', module: COURIER, placement: SHARED });
  const p = system.ref<ProbeProtocol>('p');
  const c = system.ref<CourierProtocol>('c');
  let want = 0;
  for (let i = 1; i <= 1000; i++) {
    p.send({ type: 'inc', by: i });
    want += i;
    c.send({ type: 'append', v: i });
  }
  t.is(await p.request({ type: 'get' }), want);
  t.deepEqual(await c.request({ type: 'log' }), Array.from({ length: 1000 }, (_, i) => i + 1));
});

for (const sameThread of [false, true]) {
  test(`casts from one actor to another keep their order (${sameThread ? 'same thread' : 'two threads'})`, async (t) => {
    const system = await startTestSystem(t);
    const placement = sameThread ? SHARED : DEDICATED;
    await system.start({ id: 'from', module: COURIER, placement });
    await system.start({ id: 'to', module: COURIER, placement });
    const to = system.ref<CourierProtocol>('to');
    await system.ref<CourierProtocol>('from').request({ type: 'spray', to: 'to', count: 1000 });
    const log = await waitFor('1000 casts to arrive', async () => {
      const l = await to.request({ type: 'log' });
      return l.length >= 1000 && l;
    });
    t.deepEqual(log, Array.from({ length: 1000 }, (_, i) => i));
  });
}

// ---------------------------------------------------------------- CPU pool

test('runTask through the pool: right sha256, and the caller\'s buffer is moved', async (t) => {
  const system = await startTestSystem(t);
  await system.start({ id: 'p', module: PROBE, placement: SHARED });
  await system.start({ id: 'c', module: COURIER, placement: SHARED });

  // From the main thread: test -> probe (transfer) -> pool (transfer) -> digest.
  const bytes = randomBytes(256 * 1024);
  const data = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const want = sha256(bytes);
  const pending = system.ref<ProbeProtocol>('p').request({ type: 'hash', data }, { transfer: [data] });
  t.is(data.byteLength, 0);
  t.is(await pending, want);

  // From inside an actor: its own buffer is detached by runTask.
  const r = await system.ref<CourierProtocol>('c').request({ type: 'hash', size: 100_000, value: 17 });
  t.is(r.digest, sha256(filled(100_000, 17)));
  t.is(r.after, 0);

  // The system's own runTask.
  const direct = filled(5000, 1);
  const wantDirect = sha256(direct);
  const p2 = system.runTask('hash', { algorithm: 'sha256', data: direct }, [direct]);
  t.is(direct.byteLength, 0);
  t.is(await p2, wantDirect);
});

test('a failing pool task rejects the request; an unknown task does too', async (t) => {
  const system = await startTestSystem(t);
  // Both are compile errors through TaskMap; the casts make the calls a type-blind caller could send.
  await t.throwsAsync(system.runTask('hash', { algorithm: 'crc7' as 'sha256', data: new ArrayBuffer(4) }), { message: /unsupported algorithm/ });
  await t.throwsAsync(system.runTask('nope' as 'hash', {} as never));
});
