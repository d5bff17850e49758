/** The bounds the object store works under: MD5 on one core and the erasure coder in the pool. */
import { createHash, randomFillSync } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { CpuPool } from '../../runtime/pool.js';
import type { EncodeResult, EncodeTask } from '../../workers/tasks/erasure.js';

const MIB = 1024 * 1024;

/** MiB/s of createHash('md5') over `totalMiB` of random data fed in 1 MiB updates, on this thread. */
export function md5Speed(totalMiB = 64): number {
  // 64 MiB of distinct data, so the hash reads memory, not one cached megabyte again and again.
  const src = randomFillSync(Buffer.allocUnsafe(totalMiB * MIB));
  const t0 = performance.now();
  const h = createHash('md5');
  for (let off = 0; off < src.length; off += MIB) h.update(src.subarray(off, off + MIB));
  h.digest();
  return totalMiB / ((performance.now() - t0) / 1000);
}

export interface EncodeFigures {
  /** MB/s (10^6) of data shards encoded, and the same in MiB/s */
  mb_s: number;
  mib_s: number;
  tasks: number;
  inFlight: number;
  threads: number;
}

/**
 * Erasure encode throughput through the runtime's piscina pool (runtime/pool.ts with the real task
 * module): k+m with `shardSize` shards, `inFlight` tasks kept queued, each task's data buffer moved
 * to the pool and back and then reused for the next task (no copies, no allocation but parity).
 */
export class EncodeBench {
  private readonly pool: CpuPool;
  readonly threads: number;

  constructor(threads = availableParallelism()) {
    const tasks = new URL('../../workers/tasks/index.js', import.meta.url).href;
    this.pool = new CpuPool({ filename: tasks, maxThreads: threads });
    this.threads = threads;
  }

  async run(k: number, m: number, shardSize: number, inFlight: number, totalMiB: number): Promise<EncodeFigures> {
    const bytes = k * shardSize;
    const tasks = Math.max(inFlight, Math.round((totalMiB * MIB) / bytes));
    const buffers = Array.from({ length: inFlight }, () => {
      const b = new ArrayBuffer(bytes);
      randomFillSync(new Uint8Array(b));
      return b;
    });
    let issued = 0;
    const t0 = performance.now();
    await Promise.all(
      buffers.map(async (first) => {
        let data = first;
        while (issued < tasks) {
          issued++;
          const task: EncodeTask = { k, m, shardSize, data };
          const res = await this.pool.run<EncodeResult>('encode', task, [data]);
          if (res.parity.byteLength !== m * shardSize || res.data.byteLength !== bytes) throw new Error('encode returned wrong sizes');
          data = res.data;
        }
      }),
    );
    const s = (performance.now() - t0) / 1000;
    return { mb_s: (tasks * bytes) / 1e6 / s, mib_s: (tasks * bytes) / MIB / s, tasks, inFlight, threads: this.threads };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
