/**
 * Piscina tasks `encode` and `reconstruct`: the Reed–Solomon wrapper of the object store's
 * data-path library (actors/objstore/store/erasure.ts), run in the shared CPU pool.
 */
export { encode, reconstruct, MAX_K, MAX_M } from '../../actors/objstore/store/erasure.js';
export type { EncodeResult, EncodeTask, ReconstructResult, ReconstructTask } from '../../actors/objstore/store/erasure.js';
