/**
 * Piscina task module: pure CPU work any actor can run through ctx.runTask(name, arg).
 * Each task is a named export taking one plain argument; buffers arrive moved, not copied.
 */
export { hash } from './hash.js';
export { encode, reconstruct } from './erasure.js';
