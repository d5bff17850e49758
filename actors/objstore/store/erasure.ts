import { createRequire } from 'node:module';
import { Piscina } from 'piscina';

/**
 * CONTRACT (implementation by the erasure-coding work): Reed–Solomon over GF(2^8) with
 * @ronomon/reed-solomon. Shards are `shardSize` bytes (a multiple of 8); buffers are moved in and
 * out, never copied. Part of the object store's data-path library: the stripe coder calls
 * encodeInto directly; encode and reconstruct are also the piscina tasks of the same names
 * (workers/tasks/erasure.ts re-exports them for the pool), which readers and the scheduler run
 * through ctx.runTask.
 */
export interface EncodeTask {
  k: number;
  m: number;
  shardSize: number;
  /** k shards back to back (k * shardSize bytes) */
  data: ArrayBuffer;
}
/** Returns { data, parity }: the data buffer handed back, and m parity shards back to back. */
export interface EncodeResult {
  data: ArrayBuffer;
  parity: ArrayBuffer;
}

export interface ReconstructTask {
  k: number;
  m: number;
  shardSize: number;
  /** k + m shards back to back; the missing ones hold anything */
  shards: ArrayBuffer;
  /** indexes (0..k+m-1) of the shards present (at least k of them) */
  present: number[];
  /** indexes to rebuild */
  wanted: number[];
}
/** Returns { shards } with the wanted shards filled in. */
export interface ReconstructResult {
  shards: ArrayBuffer;
}

// ---------------------------------------------------------------- implementation

/** The native coder (CommonJS addon), its limits and its context per (k, m). */
interface NativeCoder {
  readonly MAX_K: number;
  readonly MAX_M: number;
  create(k: number, m: number): Buffer;
  encode(
    context: Buffer,
    sources: number,
    targets: number,
    buffer: Buffer,
    bufferOffset: number,
    bufferSize: number,
    parity: Buffer,
    parityOffset: number,
    paritySize: number,
    end: (error?: Error | null) => void,
  ): void;
}

const coder = createRequire(import.meta.url)('@ronomon/reed-solomon') as NativeCoder;

/** Largest k the coder takes (24). */
export const MAX_K = coder.MAX_K;
/** Largest m the coder takes (6); m = 0 (no parity) is handled here without the coder. */
export const MAX_M = coder.MAX_M;
/** The coder addresses buffers with 32-bit sizes. */
const MAX_BYTES = 0xffff_ffff;

const contexts = new Map<string, Buffer>();

/** One context per (k, m) per thread; a context can be shared by concurrent calls. */
function contextFor(k: number, m: number): Buffer {
  const key = `${k}+${m}`;
  let ctx = contexts.get(key);
  if (!ctx) {
    ctx = coder.create(k, m);
    contexts.set(key, ctx);
  }
  return ctx;
}

function run(ctx: Buffer, sources: number, targets: number, buffer: Buffer, parity: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    coder.encode(ctx, sources, targets, buffer, 0, buffer.length, parity, 0, parity.length, (err) => (err ? reject(err) : resolve()));
  });
}

function describe(v: unknown): string {
  if (v instanceof ArrayBuffer) return `an ArrayBuffer of ${v.byteLength} bytes`;
  if (ArrayBuffer.isView(v)) return `a ${v.constructor.name} (pass its ArrayBuffer)`;
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  return typeof v === 'object' ? 'an object' : String(v);
}

function bad(op: string, field: string, want: string, got: unknown): TypeError {
  return new TypeError(`${op}: ${field} must be ${want}, got ${describe(got)}`);
}

function checkInt(op: string, field: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(op, field, `an integer from ${min} to ${max}`, v);
  return v;
}

/** k, m and shardSize of a task, checked against each other and the coder's limits. */
function checkGeometry(op: string, task: unknown): { k: number; m: number; shardSize: number } {
  if (task === null || typeof task !== 'object' || Array.isArray(task)) throw new TypeError(`${op}: the task must be an object, got ${describe(task)}`);
  const t = task as Record<string, unknown>;
  const k = checkInt(op, 'k', t.k, 1, MAX_K);
  const m = checkInt(op, 'm', t.m, 0, MAX_M);
  const s = t.shardSize;
  if (typeof s !== 'number' || !Number.isInteger(s) || s <= 0 || s % 8 !== 0) throw bad(op, 'shardSize', 'a positive multiple of 8', s);
  if (s * Math.max(k, m) > MAX_BYTES) throw new TypeError(`${op}: shardSize ${s} is too large: ${Math.max(k, m)} shards of it exceed ${MAX_BYTES} bytes`);
  return { k, m, shardSize: s };
}

function checkBuffer(op: string, field: string, v: unknown, bytes: number, what: string): ArrayBuffer {
  if (!(v instanceof ArrayBuffer)) throw bad(op, field, `an ArrayBuffer of ${bytes} bytes (${what})`, v);
  if (v.byteLength !== bytes) {
    const detached = v.byteLength === 0 ? ' (a detached buffer? it was moved elsewhere)' : '';
    throw new TypeError(`${op}: ${field} must be ${bytes} bytes (${what}), got ${v.byteLength}${detached}`);
  }
  return v;
}

/** A list of distinct shard indexes 0..n-1, as a bit set. */
function checkIndexes(op: string, field: string, v: unknown, n: number): number {
  if (!Array.isArray(v)) throw bad(op, field, `an array of shard indexes 0..${n - 1}`, v);
  let bits = 0;
  for (const i of v as unknown[]) {
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= n) throw new TypeError(`${op}: ${field} holds ${describe(i)}: shard indexes are integers from 0 to ${n - 1}`);
    if (bits & (1 << i)) throw new TypeError(`${op}: ${field} holds ${i} twice`);
    bits |= 1 << i;
  }
  return bits;
}

/**
 * A result whose buffers piscina moves back to the caller instead of copying. The object keeps
 * its plain shape for direct callers; the markers piscina reads are non-enumerable.
 */
function movable<T extends object>(value: T, buffers: ArrayBuffer[]): T {
  Object.defineProperty(value, Piscina.transferableSymbol, { value: buffers, enumerable: false });
  Object.defineProperty(value, Piscina.valueSymbol, { value: { ...value }, enumerable: false });
  return Piscina.move(value as never) as unknown as T;
}

/**
 * The m parity shards of k data shards, written into `parity` (m * shardSize bytes); `data` is k *
 * shardSize bytes. Views of shared memory are fine (the stripe coder's stripes are). With k = 1
 * every parity shard is a copy of the data shard (the coder's matrix gives exactly that: tested).
 */
export async function encodeInto(k: number, m: number, shardSize: number, data: Uint8Array, parity: Uint8Array): Promise<void> {
  if (data.byteLength !== k * shardSize || parity.byteLength !== m * shardSize) throw new TypeError(`encodeInto: ${k} data and ${m} parity shards of ${shardSize} bytes need ${k * shardSize} and ${m * shardSize} bytes, got ${data.byteLength} and ${parity.byteLength}`);
  if (m === 0) return;
  if (k === 1) {
    for (let j = 0; j < m; j++) parity.set(data, j * shardSize);
    return;
  }
  const targets = ((1 << m) - 1) << k;
  await run(contextFor(k, m), (1 << k) - 1, targets, Buffer.from(data.buffer, data.byteOffset, data.byteLength), Buffer.from(parity.buffer, parity.byteOffset, parity.byteLength));
}

/** Computes the m parity shards of k data shards. The data buffer is handed back untouched. */
export async function encode(task: EncodeTask): Promise<EncodeResult> {
  const { k, m, shardSize } = checkGeometry('encode', task);
  const data = checkBuffer('encode', 'data', task.data, k * shardSize, `k * shardSize = ${k} * ${shardSize}`);
  const parity = new ArrayBuffer(m * shardSize);
  await encodeInto(k, m, shardSize, new Uint8Array(data), new Uint8Array(parity));
  return movable({ data, parity }, [data, parity]);
}

/** Rebuilds the wanted shards in place from the present ones; returns the same buffer. */
export async function reconstruct(task: ReconstructTask): Promise<ReconstructResult> {
  const { k, m, shardSize } = checkGeometry('reconstruct', task);
  const n = k + m;
  const shards = checkBuffer('reconstruct', 'shards', task.shards, n * shardSize, `(k + m) * shardSize = ${n} * ${shardSize}`);
  const present = checkIndexes('reconstruct', 'present', task.present, n);
  const wanted = checkIndexes('reconstruct', 'wanted', task.wanted, n);
  const count = task.present.length;
  if (count < k) throw new TypeError(`reconstruct: present must list at least k = ${k} shards, got ${count}: [${task.present.join(', ')}]`);
  const both = present & wanted;
  if (both !== 0) {
    const overlap = task.wanted.filter((i) => both & (1 << i));
    throw new TypeError(`reconstruct: wanted must not list shards that are present, got ${overlap.join(', ')} in both`);
  }
  if (wanted !== 0) {
    // Every shard is in one buffer: the data half and the parity half are two views of it.
    const dataView = Buffer.from(shards, 0, k * shardSize);
    const parityView = Buffer.from(shards, k * shardSize, m * shardSize);
    await run(contextFor(k, m), present, wanted, dataView, parityView);
  }
  return movable({ shards }, [shards]);
}
