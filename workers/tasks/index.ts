/**
 * Piscina task module: pure CPU work any actor can run through ctx.runTask(name, arg).
 * Each task is a named export taking one plain argument; buffers arrive moved, not copied.
 * TaskMap below is the one declaration of their names and types (runtime/actor/tasks.ts).
 */
import type { HashTask } from './hash.js';
import type { EncodeResult, EncodeTask, ReconstructResult, ReconstructTask } from './erasure.js';

export { hash } from './hash.js';
export { encode, reconstruct } from './erasure.js';

declare module '../../runtime/actor/tasks.js' {
  interface TaskMap {
    hash: { arg: HashTask; result: string };
    encode: { arg: EncodeTask; result: EncodeResult };
    reconstruct: { arg: ReconstructTask; result: ReconstructResult };
  }
}
