/**
 * Erasure-coding tasks (workers/tasks/erasure.ts): called directly, and through the real piscina
 * pool of a real ActorSystem with the buffers transferred.
 */
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { encode, reconstruct, MAX_K, MAX_M, type EncodeResult, type EncodeTask, type ReconstructResult, type ReconstructTask } from '../workers/tasks/erasure.js';
import type { ActorSystem } from '../runtime/system.js';
import { startSystem } from './helpers/system.js';

// ---------------------------------------------------------------- helpers

/** The two ways of running the tasks: the same checks run against both. */
interface Coder {
  name: string;
  encode(task: EncodeTask): Promise<EncodeResult>;
  reconstruct(task: ReconstructTask): Promise<ReconstructResult>;
}

const direct: Coder = { name: 'direct', encode, reconstruct };

function pooled(system: ActorSystem): Coder {
  return {
    name: 'pool',
    encode: (task) => system.runTask('encode', task, movable(task?.data)),
    reconstruct: (task) => system.runTask('reconstruct', task, movable(task?.shards)),
  };
}

/** The transfer list for a task's buffer (the bad-input cases pass things that are not buffers). */
const movable = (b: unknown): ArrayBuffer[] => (b instanceof ArrayBuffer ? [b] : []);

async function withPool(t: ExecutionContext): Promise<Coder> {
  return pooled(await startSystem(t, { poolThreads: 2 }));
}

/** A fresh ArrayBuffer holding a copy of bytes. */
function ab(bytes: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(out).set(bytes);
  return out;
}

/** Every subset of 0..n-1 of the given size, in lexicographic order. */
function combinations(n: number, size: number): number[][] {
  const out: number[][] = [];
  const pick = (from: number, acc: number[]): void => {
    if (acc.length === size) {
      out.push([...acc]);
      return;
    }
    for (let i = from; i < n; i++) pick(i + 1, [...acc, i]);
  };
  pick(0, []);
  return out;
}

/** Encodes random data; returns all k + m shards back to back, as the reference. */
async function stripe(coder: Coder, k: number, m: number, shardSize: number): Promise<Uint8Array> {
  const data = randomBytes(k * shardSize);
  const res = await coder.encode({ k, m, shardSize, data: ab(data) });
  const all = new Uint8Array((k + m) * shardSize);
  all.set(new Uint8Array(res.data));
  all.set(new Uint8Array(res.parity), k * shardSize);
  return all;
}

/**
 * Loses `missing` shards of a full stripe (overwritten with garbage), rebuilds them, and checks the
 * whole buffer is byte-exact again. Returns a message on failure, null on success.
 */
async function lose(coder: Coder, ref: Uint8Array, k: number, m: number, shardSize: number, missing: number[]): Promise<string | null> {
  const shards = new Uint8Array(ref);
  for (const i of missing) shards.set(randomBytes(shardSize), i * shardSize);
  const present = [...Array(k + m).keys()].filter((i) => !missing.includes(i));
  const res = await coder.reconstruct({ k, m, shardSize, shards: shards.buffer, present, wanted: missing });
  const got = new Uint8Array(res.shards);
  if (got.byteLength !== ref.byteLength) return `missing [${missing}]: ${got.byteLength} bytes back, want ${ref.byteLength}`;
  if (!Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(ref)) {
    const bad = [...Array(k + m).keys()].filter((i) => !Buffer.from(got.subarray(i * shardSize, (i + 1) * shardSize)).equals(ref.subarray(i * shardSize, (i + 1) * shardSize)));
    return `missing [${missing}]: shards [${bad}] differ after reconstruct`;
  }
  return null;
}

/** Every combination of 1..maxLost missing shards of a k+m stripe is rebuilt exactly. */
async function everyLoss(t: ExecutionContext, coder: Coder, k: number, m: number, shardSize: number, maxLost = m): Promise<number> {
  const ref = await stripe(coder, k, m, shardSize);
  let cases = 0;
  for (let lost = 1; lost <= maxLost; lost++) {
    const failures = (await Promise.all(combinations(k + m, lost).map((missing) => lose(coder, ref, k, m, shardSize, missing)))).filter((f) => f !== null);
    t.deepEqual(failures, [], `${coder.name} ${k}+${m}, ${lost} lost`);
    cases += combinations(k + m, lost).length;
  }
  return cases;
}

const xor = (a: Uint8Array, b: Uint8Array): Uint8Array => a.map((v, i) => v ^ b[i]!);

// ---------------------------------------------------------------- encode

for (const mode of ['direct', 'pool'] as const) {
  const coderFor = (t: ExecutionContext) => (mode === 'direct' ? Promise.resolve(direct) : withPool(t));

  test(`${mode}: 4+2 encode hands the data back untouched and m parity shards that rebuild it`, async (t) => {
    const coder = await coderFor(t);
    const k = 4, m = 2, shardSize = 64 * 1024;
    const bytes = randomBytes(k * shardSize);
    const res = await coder.encode({ k, m, shardSize, data: ab(bytes) });
    t.true(res.data instanceof ArrayBuffer);
    t.true(res.parity instanceof ArrayBuffer);
    t.true(Buffer.from(res.data).equals(bytes));
    t.is(res.parity.byteLength, m * shardSize);
    // Random data gives parity that is neither zero nor a copy of a data shard.
    const parity = new Uint8Array(res.parity);
    t.true(parity.some((b) => b !== 0));
    for (let j = 0; j < m; j++) {
      for (let i = 0; i < k; i++) t.false(Buffer.from(parity.subarray(j * shardSize, (j + 1) * shardSize)).equals(bytes.subarray(i * shardSize, (i + 1) * shardSize)));
    }
    // Round trip: drop both parity shards' worth of data (shards 0 and 3), rebuild from the rest.
    const all = new Uint8Array((k + m) * shardSize);
    all.set(bytes);
    all.set(parity, k * shardSize);
    t.is(await lose(coder, all, k, m, shardSize, [0, 3]), null);
    // Deterministic: the same data gives the same parity.
    const again = await coder.encode({ k, m, shardSize, data: ab(bytes) });
    t.true(Buffer.from(again.parity).equals(parity));
  });

  test(`${mode}: parity is linear over GF(2^8): parity(a ^ b) = parity(a) ^ parity(b), parity(0) = 0`, async (t) => {
    const coder = await coderFor(t);
    const k = 4, m = 2, shardSize = 4096;
    const a = randomBytes(k * shardSize), b = randomBytes(k * shardSize);
    const [pa, pb, pab, p0] = await Promise.all([a, b, xor(a, b), new Uint8Array(k * shardSize)].map(async (d) => new Uint8Array((await coder.encode({ k, m, shardSize, data: ab(d) })).parity)));
    t.true(Buffer.from(xor(pa!, pb!)).equals(pab!));
    t.true(p0!.every((v) => v === 0));
  });

  test(`${mode}: 4+2 rebuilds every single lost shard and every pair, byte-exact`, async (t) => {
    const coder = await coderFor(t);
    const cases = await everyLoss(t, coder, 4, 2, 16 * 1024);
    t.is(cases, 6 + 15);
  });

  test(`${mode}: 1+1, 2+1 and 8+4 rebuild every loss they can survive`, async (t) => {
    const coder = await coderFor(t);
    t.is(await everyLoss(t, coder, 1, 1, 1024), 2);
    t.is(await everyLoss(t, coder, 2, 1, 1024), 3);
    // 8+4 has 12 + 66 + 220 + 495 loss patterns; small shards keep it quick (through the pool too).
    t.is(await everyLoss(t, coder, 8, 4, 256), 793);
  });

  test(`${mode}: reconstruct with more than k present, or wanting only some of the missing shards`, async (t) => {
    const coder = await coderFor(t);
    const k = 4, m = 2, shardSize = 2048;
    const ref = await stripe(coder, k, m, shardSize);
    // One lost, five present (k + 1): rebuilt from any of them.
    t.is(await lose(coder, ref, k, m, shardSize, [2]), null);
    // Two lost (1 and 5), only 1 wanted: shard 1 is rebuilt, present shards stay as they were.
    const shards = new Uint8Array(ref);
    shards.fill(0xee, 1 * shardSize, 2 * shardSize);
    shards.fill(0xee, 5 * shardSize, 6 * shardSize);
    const res = new Uint8Array((await coder.reconstruct({ k, m, shardSize, shards: shards.buffer, present: [0, 2, 3, 4], wanted: [1] })).shards);
    for (const i of [0, 1, 2, 3, 4]) t.true(Buffer.from(res.subarray(i * shardSize, (i + 1) * shardSize)).equals(ref.subarray(i * shardSize, (i + 1) * shardSize)), `shard ${i}`);
    // Nothing wanted: the buffer comes back as it was.
    const same = await coder.reconstruct({ k, m, shardSize, shards: ab(ref), present: [0, 1, 2, 3, 4, 5], wanted: [] });
    t.true(Buffer.from(same.shards).equals(ref));
  });

  test(`${mode}: m = 0 gives an empty parity buffer; the largest geometry (${MAX_K}+${MAX_M}) works`, async (t) => {
    const coder = await coderFor(t);
    const bytes = randomBytes(3 * 512);
    const res = await coder.encode({ k: 3, m: 0, shardSize: 512, data: ab(bytes) });
    t.true(res.parity instanceof ArrayBuffer);
    t.is(res.parity.byteLength, 0);
    t.true(Buffer.from(res.data).equals(bytes));
    const back = await coder.reconstruct({ k: 3, m: 0, shardSize: 512, shards: ab(bytes), present: [0, 1, 2], wanted: [] });
    t.true(Buffer.from(back.shards).equals(bytes));
    // The coder's limits: MAX_M lost out of MAX_K + MAX_M, at both ends of the stripe.
    const ref = await stripe(coder, MAX_K, MAX_M, 64);
    const n = MAX_K + MAX_M;
    t.is(await lose(coder, ref, MAX_K, MAX_M, 64, [0, 1, 2, 3, 4, 5].slice(0, MAX_M)), null);
    t.is(await lose(coder, ref, MAX_K, MAX_M, 64, [...Array(MAX_M).keys()].map((i) => n - 1 - i).reverse()), null);
  });

  test(`${mode}: bad inputs are rejected with a TypeError naming the field`, async (t) => {
    const coder = await coderFor(t);
    const enc = (task: Record<string, unknown>) => coder.encode(task as unknown as EncodeTask);
    const rec = (task: Record<string, unknown>) => coder.reconstruct(task as unknown as ReconstructTask);
    const data = (n: number) => new ArrayBuffer(n);
    const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
      ['k = 0', () => enc({ k: 0, m: 2, shardSize: 8, data: data(0) }), /^encode: k must be an integer from 1 to 24, got 0$/],
      ['k too large', () => enc({ k: 25, m: 2, shardSize: 8, data: data(200) }), /encode: k must be an integer from 1 to 24, got 25/],
      ['k fractional', () => enc({ k: 1.5, m: 2, shardSize: 8, data: data(8) }), /encode: k must be an integer/],
      ['k a string', () => enc({ k: '4', m: 2, shardSize: 8, data: data(32) }), /encode: k must be an integer from 1 to 24, got "4"/],
      ['m negative', () => enc({ k: 4, m: -1, shardSize: 8, data: data(32) }), /encode: m must be an integer from 0 to 6, got -1/],
      ['m too large', () => enc({ k: 4, m: 7, shardSize: 8, data: data(32) }), /encode: m must be an integer from 0 to 6, got 7/],
      ['shardSize not a multiple of 8', () => enc({ k: 4, m: 2, shardSize: 12, data: data(48) }), /encode: shardSize must be a positive multiple of 8, got 12/],
      ['shardSize 0', () => enc({ k: 4, m: 2, shardSize: 0, data: data(0) }), /encode: shardSize must be a positive multiple of 8, got 0/],
      ['shardSize too large', () => enc({ k: 4, m: 2, shardSize: 2 ** 31, data: data(8) }), /encode: shardSize 2147483648 is too large/],
      ['data short', () => enc({ k: 4, m: 2, shardSize: 8, data: data(31) }), /encode: data must be 32 bytes \(k \* shardSize = 4 \* 8\), got 31/],
      ['data long', () => enc({ k: 4, m: 2, shardSize: 8, data: data(40) }), /encode: data must be 32 bytes .*got 40/],
      ['data a Uint8Array', () => enc({ k: 4, m: 2, shardSize: 8, data: new Uint8Array(32) }), /encode: data must be an ArrayBuffer of 32 bytes .*got a Uint8Array/],
      ['data missing', () => enc({ k: 4, m: 2, shardSize: 8 }), /encode: data must be an ArrayBuffer .*got undefined/],
      ['no task', () => coder.encode(null as unknown as EncodeTask), /encode: the task must be an object, got null/],
      ['shards short', () => rec({ k: 4, m: 2, shardSize: 8, shards: data(40), present: [0, 1, 2, 3], wanted: [4] }), /reconstruct: shards must be 48 bytes \(\(k \+ m\) \* shardSize = 6 \* 8\), got 40/],
      ['too few present', () => rec({ k: 4, m: 2, shardSize: 8, shards: data(48), present: [0, 1, 2], wanted: [3] }), /reconstruct: present must list at least k = 4 shards, got 3/],
      ['wanted in present', () => rec({ k: 4, m: 2, shardSize: 8, shards: data(48), present: [0, 1, 2, 3, 4], wanted: [4, 5] }), /reconstruct: wanted must not list shards that are present, got 4 in both/],
      ['present out of range', () => rec({ k: 4, m: 2, shardSize: 8, shards: data(48), present: [0, 1, 2, 6], wanted: [3] }), /reconstruct: present holds 6: shard indexes are integers from 0 to 5/],
      ['wanted negative', () => rec({ k: 4, m: 2, shardSize: 8, shards: data(48), present: [0, 1, 2, 3], wanted: [-1] }), /reconstruct: wanted holds -1/],
      ['present duplicate', () => rec({ k: 4, m: 2, shardSize: 8, shards: data(48), present: [0, 1, 1, 2, 3], wanted: [4] }), /reconstruct: present holds 1 twice/],
      ['present not an array', () => rec({ k: 4, m: 2, shardSize: 8, shards: data(48), present: '0123', wanted: [4] }), /reconstruct: present must be an array of shard indexes 0\.\.5/],
      ['reconstruct m too large', () => rec({ k: 4, m: 9, shardSize: 8, shards: data(104), present: [0, 1, 2, 3], wanted: [4] }), /reconstruct: m must be an integer from 0 to 6, got 9/],
    ];
    for (const [what, call, message] of cases) {
      const err = await t.throwsAsync(call(), { message }, what);
      // Through the pool the error crosses a thread as a structured clone: still a TypeError.
      t.is(err?.name, 'TypeError', what);
    }
  });
}

// ---------------------------------------------------------------- moving buffers through the pool

test('pool: the caller\'s buffers are detached when passed with transfer, and the results arrive whole', async (t) => {
  const system = await startSystem(t, { poolThreads: 2 });
  const k = 4, m = 2, shardSize = 256 * 1024;
  const bytes = randomBytes(k * shardSize);
  const task: EncodeTask = { k, m, shardSize, data: ab(bytes) };
  const pending = system.runTask('encode', task, [task.data]);
  t.is(task.data.byteLength, 0, 'data moved to the pool');
  const res = await pending;
  t.is(res.data.byteLength, k * shardSize, 'data handed back');
  t.true(Buffer.from(res.data).equals(bytes));
  t.is(res.parity.byteLength, m * shardSize);

  const shards = new Uint8Array((k + m) * shardSize);
  shards.set(bytes);
  shards.set(new Uint8Array(res.parity), k * shardSize);
  const ref = shards.slice();
  shards.fill(0, 0, shardSize);
  const rtask: ReconstructTask = { k, m, shardSize, shards: shards.buffer, present: [1, 2, 3, 4, 5], wanted: [0] };
  const rpending = system.runTask('reconstruct', rtask, [rtask.shards]);
  t.is(rtask.shards.byteLength, 0, 'shards moved to the pool');
  t.is(shards.byteLength, 0, 'views over them are detached too');
  t.true(Buffer.from((await rpending).shards).equals(ref));
});

test('pool: concurrent tasks of different geometries do not mix (one context per k+m per thread)', async (t) => {
  const coder = pooled(await startSystem(t, { poolThreads: 2 }));
  const geometries: Array<[number, number]> = [[4, 2], [2, 1], [8, 4], [6, 3], [4, 2], [10, 4], [1, 1], [3, 2]];
  const failures = await Promise.all(
    geometries.map(async ([k, m]) => {
      const ref = await stripe(direct, k, m, 4096);
      // The pool's parity equals the direct parity of the same data.
      const viaPool = await coder.encode({ k, m, shardSize: 4096, data: ab(ref.subarray(0, k * 4096)) });
      if (!Buffer.from(viaPool.parity).equals(ref.subarray(k * 4096))) return `${k}+${m}: pool parity differs from direct parity`;
      return lose(coder, ref, k, m, 4096, [...Array(m).keys()].map((i) => i * 2 % (k + m)).filter((v, i, a) => a.indexOf(v) === i));
    }),
  );
  t.deepEqual(failures.filter((f) => f !== null), []);
});
