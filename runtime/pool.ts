/**
 * The shared pool for pure CPU work (hashing, erasure coding, codecs): one piscina pool in
 * the main thread, reached by any actor through ctx.runTask (buffers are moved, not copied).
 * Task modules live in workers/tasks; each task is a named export taking one argument.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';

export interface PoolOptions {
  filename: string;
  maxThreads?: number;
}

export class CpuPool {
  private readonly pool: Piscina;

  constructor(opts: PoolOptions) {
    this.pool = new Piscina({ filename: opts.filename, maxThreads: opts.maxThreads ?? availableParallelism(), idleTimeout: 30_000 });
  }

  run<R = unknown>(name: string, arg: unknown, transfer: readonly ArrayBuffer[] = []): Promise<R> {
    return this.pool.run(arg, { name, transferList: transfer as ArrayBuffer[] }) as Promise<R>;
  }

  get threads(): number {
    return this.pool.threads.length;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/** ArrayBuffers reachable from a value (a task's result), so they can be moved on. */
export function collectBuffers(value: unknown, out: ArrayBuffer[] = [], depth = 0): ArrayBuffer[] {
  if (depth > 4 || value === null || typeof value !== 'object') return out;
  if (value instanceof ArrayBuffer) {
    if (!out.includes(value)) out.push(value);
  } else if (ArrayBuffer.isView(value)) {
    const b = value.buffer;
    if (b instanceof ArrayBuffer && !out.includes(b)) out.push(b);
  } else if (Array.isArray(value)) {
    for (const v of value) collectBuffers(v, out, depth + 1);
  } else {
    for (const v of Object.values(value)) collectBuffers(v, out, depth + 1);
  }
  return out;
}
