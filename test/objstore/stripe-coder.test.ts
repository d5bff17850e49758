/**
 * The stripe coder actor (actors/stripe-coder) in a real actor system on its own thread: a PUT's
 * stripes hashed in order (the digest equals node:crypto's MD5 of the bytes), parity that rebuilds
 * lost data shards (checked by reconstructing them), short last stripes laid out and padded, and
 * every bad message refused with the field named: out of order, unknown PUT, bad geometry.
 */
import test, { type ExecutionContext } from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import type { ActorRef } from '../../runtime/index.js';
import { ActorError } from '../../runtime/index.js';
import { stripeCoderId, type StripeCoderProtocol } from '../../actors/stripe-coder/messages.js';
import { encode, reconstruct } from '../../workers/tasks/erasure.js';
import { startTestSystem } from '../helpers/util.js';

const CODER = new URL('../../actors/stripe-coder/actor.js', import.meta.url).href;

async function startCoder(t: ExecutionContext): Promise<ActorRef<StripeCoderProtocol>> {
  const system = await startTestSystem(t);
  await system.start({ id: stripeCoderId(0), module: CODER, args: {}, placement: { mode: 'dedicated' } });
  return system.ref<StripeCoderProtocol>(stripeCoderId(0));
}

const own = (bytes: Uint8Array): ArrayBuffer => new Uint8Array(bytes).buffer;

async function refused(t: ExecutionContext, p: Promise<unknown>, code: string, words: RegExp): Promise<void> {
  const err = await t.throwsAsync(p, { instanceOf: ActorError });
  t.is(err?.appCode, code, err?.message);
  t.regex(err?.message ?? '', words);
}

/** Rebuild data shards `lost` of a stripe from the others and the parity; returns the rebuilt shards. */
async function rebuild(k: number, m: number, shard: number, data: Uint8Array, parity: Uint8Array, lost: number[]): Promise<Uint8Array[]> {
  const all = new Uint8Array((k + m) * shard);
  all.set(data, 0);
  all.set(parity, k * shard);
  for (const i of lost) all.fill(0, i * shard, (i + 1) * shard);
  const present = Array.from({ length: k + m }, (_, i) => i).filter((i) => !lost.includes(i));
  const r = await reconstruct({ k, m, shardSize: shard, shards: all.buffer, present, wanted: lost });
  return lost.map((i) => new Uint8Array(r.shards, i * shard, shard));
}

test('stripes hashed in order give the MD5 of the whole body; parity rebuilds lost shards', async (t) => {
  const coder = await startCoder(t);
  const k = 4;
  const m = 2;
  const shard = 4096;
  const body = randomBytes(3 * k * shard + 5000);
  const put = '$00000000000000000000a001';
  let seq = 0;
  for (let off = 0; off < body.byteLength; off += k * shard, seq++) {
    const part = body.subarray(off, off + k * shard);
    const full = part.byteLength === k * shard;
    // The last stripe: 5000 bytes over 4 chunks of at most 1256 bytes each (its own shard size).
    const lastShard = 1256;
    const lengths = full ? null : [1256, 1256, 1256, 1232];
    const s = full ? shard : lastShard;
    const stripe = new ArrayBuffer(k * shard);
    new Uint8Array(stripe).set(part);
    const parity = new ArrayBuffer(m * s);
    const r = await coder.request({ type: 'stripe', put, seq, k, m, shard: s, data: stripe, filled: part.byteLength, lengths, parity }, { transfer: [stripe, parity] });
    t.is(r.data.byteLength, k * s, `stripe ${seq}: k shards of the stripe's shard size`);
    const laid = new Uint8Array(r.data);
    if (lengths) {
      // Each chunk sits at the start of its shard, padded with zeros.
      let from = 0;
      lengths.forEach((len, i) => {
        t.true(Buffer.from(laid.subarray(i * s, i * s + len)).equals(part.subarray(from, from + len)), `chunk ${i} laid out`);
        t.true(laid.subarray(i * s + len, (i + 1) * s).every((b) => b === 0), `chunk ${i} padded with zeros`);
        from += len;
      });
    } else t.true(Buffer.from(laid).equals(part), 'a full stripe comes back as it went');
    const rebuilt = await rebuild(k, m, s, laid, new Uint8Array(r.parity!), [0, 2]);
    t.true(Buffer.from(rebuilt[0]!).equals(Buffer.from(laid.subarray(0, s))), `stripe ${seq}: shard 0 rebuilt from the parity`);
    t.true(Buffer.from(rebuilt[1]!).equals(Buffer.from(laid.subarray(2 * s, 3 * s))), `stripe ${seq}: shard 2 rebuilt from the parity`);
  }
  t.is(await coder.request({ type: 'digest', put, stripes: seq }), createHash('md5').update(body).digest('hex'));
  // The digest ended the PUT: its hash is gone.
  await refused(t, coder.request({ type: 'digest', put, stripes: seq }), 'OUT_OF_ORDER', /no hash of/);
  // A PUT of no bytes sends no stripe.
  t.is(await coder.request({ type: 'digest', put: '$00000000000000000000a002', stripes: 0 }), createHash('md5').digest('hex'));
});

test('two PUTs interleaved on one coder keep their own hashes; m = 0 gives no parity', async (t) => {
  const coder = await startCoder(t);
  const a = randomBytes(2 * 4096);
  const b = randomBytes(2 * 4096);
  for (let seq = 0; seq < 2; seq++) {
    for (const [put, body] of [['$a', a], ['$b', b]] as const) {
      const data = own(body.subarray(seq * 4096, (seq + 1) * 4096));
      const r = await coder.request({ type: 'stripe', put, seq, k: 2, m: 0, shard: 2048, data, filled: 4096, lengths: null, parity: null }, { transfer: [data] });
      t.is(r.parity, null);
    }
  }
  t.is(await coder.request({ type: 'digest', put: '$b', stripes: 2 }), createHash('md5').update(b).digest('hex'));
  t.is(await coder.request({ type: 'digest', put: '$a', stripes: 2 }), createHash('md5').update(a).digest('hex'));
});

test('a stripe out of order, a missing stripe and bad messages are refused, naming what is wrong', async (t) => {
  const coder = await startCoder(t);
  const stripe = (over: Record<string, unknown>) => {
    const data = new ArrayBuffer(4096);
    const parity = new ArrayBuffer(2 * 1024);
    return coder.request({ type: 'stripe', put: '$c', seq: 0, k: 4, m: 2, shard: 1024, data, filled: 4096, lengths: null, parity, ...over } as never);
  };
  await refused(t, stripe({ seq: 1 }), 'OUT_OF_ORDER', /stripe 1 of \$c came first/);
  await stripe({});
  await refused(t, stripe({ seq: 0 }), 'OUT_OF_ORDER', /stripe 0 of \$c came when stripe 1 was expected/);
  await refused(t, coder.request({ type: 'digest', put: '$c', stripes: 2 }), 'OUT_OF_ORDER', /1 stripes hashed, the writer sent 2/);
  await refused(t, stripe({ put: '' }), 'BAD_REQUEST', /put must name/);
  await refused(t, stripe({ put: '$d', seq: -1 }), 'BAD_REQUEST', /seq must be/);
  await refused(t, stripe({ put: '$d', k: 0 }), 'BAD_REQUEST', /k must be 1\.\.24/);
  await refused(t, stripe({ put: '$d', m: 7 }), 'BAD_REQUEST', /m 0\.\.6/);
  await refused(t, stripe({ put: '$d', shard: 12 }), 'BAD_REQUEST', /shard must be a positive multiple of 8/);
  await refused(t, stripe({ put: '$d', data: 'bytes' }), 'BAD_REQUEST', /data must be an ArrayBuffer or a SharedArrayBuffer/);
  await refused(t, stripe({ put: '$d', filled: 5000 }), 'BAD_REQUEST', /filled must be 0\.\.4096/);
  await refused(t, stripe({ put: '$d', filled: 4000 }), 'BAD_REQUEST', /a full stripe is k \* shard = 4096 bytes/);
  await refused(t, stripe({ put: '$d', lengths: [1, 2] }), 'BAD_REQUEST', /lengths must be 4 chunk lengths/);
  await refused(t, stripe({ put: '$d', lengths: [1024, 1024, 1024, 1000] }), 'BAD_REQUEST', /lengths add up to 4072 bytes, the stripe holds 4096/);
  await refused(t, stripe({ put: '$d', parity: new ArrayBuffer(10) }), 'BAD_REQUEST', /parity must be an ArrayBuffer or a SharedArrayBuffer of m \* shard = 2048 bytes/);
  // forget drops a PUT: its next stripe would have to start over at 0.
  t.is(await coder.request({ type: 'forget', put: '$c' }), null);
  await refused(t, stripe({ seq: 1 }), 'OUT_OF_ORDER', /came first/);
});

test('one data shard (small objects): the parity is copies of the data, and the Reed–Solomon decoder rebuilds the data from it', async (t) => {
  const coder = await startCoder(t);
  for (const m of [1, 2, 3]) {
    const body = randomBytes(4096);
    const data = own(body);
    const parity = new ArrayBuffer(m * 4096);
    const r = await coder.request({ type: 'stripe', put: `$k1m${m}`, seq: 0, k: 1, m, shard: 4096, data, filled: 4096, lengths: null, parity }, { transfer: [data, parity] });
    for (let j = 0; j < m; j++) t.true(Buffer.from(r.parity!, j * 4096, 4096).equals(body), `1+${m}: parity shard ${j} is a copy of the data`);
    // The Reed–Solomon decoder (@ronomon, through reconstruct) agrees: from the parity alone it
    // gives the data back, so copies are the coder's own parity for one data shard.
    const [rebuilt] = await rebuild(1, m, 4096, body, new Uint8Array(r.parity!), [0]);
    t.true(Buffer.from(rebuilt!).equals(body), `1+${m}: the data rebuilt from the parity alone`);
  }
});

test('stripes sent without waiting for each other are hashed in the order they were sent', async (t) => {
  const coder = await startCoder(t);
  const k = 4;
  const shard = 64 * 1024;
  const body = randomBytes(16 * k * shard);
  const replies = await Promise.all(
    Array.from({ length: 16 }, (_, seq) => {
      const data = own(body.subarray(seq * k * shard, (seq + 1) * k * shard));
      const parity = new ArrayBuffer(2 * shard);
      return coder.request({ type: 'stripe', put: '$burst', seq, k, m: 2, shard, data, filled: k * shard, lengths: null, parity }, { transfer: [data, parity] });
    }),
  );
  replies.forEach((r, seq) => t.true(Buffer.from(r.data).equals(body.subarray(seq * k * shard, (seq + 1) * k * shard)), `stripe ${seq} came back whole`));
  t.is(await coder.request({ type: 'digest', put: '$burst', stripes: 16 }), createHash('md5').update(body).digest('hex'));
});

test('a stripe in shared memory is hashed and coded where it is: the parity lands in the shared buffer', async (t) => {
  const coder = await startCoder(t);
  const k = 4;
  const shard = 8192;
  const body = randomBytes(2 * k * shard);
  const stripes = [0, 1].map((seq) => {
    const sab = new SharedArrayBuffer(k * shard);
    new Uint8Array(sab).set(body.subarray(seq * k * shard, (seq + 1) * k * shard));
    return sab;
  });
  for (const [seq, sab] of stripes.entries()) {
    const parity = new SharedArrayBuffer(2 * shard);
    const r = await coder.request({ type: 'stripe', put: '$shared', seq, k, m: 2, shard, data: sab, filled: k * shard, lengths: null, parity });
    t.true(Buffer.from(new Uint8Array(parity)).equals(Buffer.from(new Uint8Array(r.parity!))), 'the reply shares the parity written into the buffer sent');
    const reference = await encode({ k, m: 2, shardSize: shard, data: own(body.subarray(seq * k * shard, (seq + 1) * k * shard)) });
    t.true(Buffer.from(new Uint8Array(parity)).equals(Buffer.from(reference.parity)), `stripe ${seq}: the parity, in the caller's shared buffer`);
    t.is(new Uint8Array(sab).byteLength, k * shard, 'the shared stripe stays with the caller');
  }
  t.is(await coder.request({ type: 'digest', put: '$shared', stripes: 2 }), createHash('md5').update(body).digest('hex'));
});
