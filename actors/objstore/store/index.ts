/**
 * The object store's data-path library, shared on purpose by the two actors that work on the
 * slices: the store actor (actors/objstore: PUT, GET, DELETE, verify-file, boot clean-up) and the
 * maintenance scheduler (actors/scheduler: drain, rebalance, scrub, repair). Both run it on their
 * own thread with their own context; the library holds no actor of its own.
 *
 * This file is its face: the actors import the data path from here, not from the modules behind
 * it. The scheduler needs only the slice side (SliceContext: read, verify, relocate, remove); the
 * store actor also writes objects (StoreContext). The rules it follows (layout, stripes, slice
 * headers) are pure and live in protocols/objstore/.
 */
export { Metadata, DEFAULT_HEALTH_FAULT_THRESHOLD } from '../metadata.js';
export type { MoveRecord, SliceFault, VolumeRecord, PathConflict } from '../metadata.js';
export { errorCode, StoreError } from './context.js';
export type { SliceContext, SliceSettings, StoreContext, StoreSettings } from './context.js';
export { BufferPool } from './buffers.js';
export { coders } from './coders.js';
export { ObjectReader, readBuffers, readSliceChunks, type ReaderContext } from './get.js';
export { ObjectWriter, conflictError, type PutRequest } from './put.js';
export { verifyObject, type SliceResult, type SliceStatus, type VerifyResult } from './verify.js';
export { removeSlices } from './remove.js';
export { writeSliceRecords } from './slice-records.js';
export { rebuildBatch, TooFewSlices, type BatchChunks } from './stripe-rebuild.js';
export { encode, encodeInto, reconstruct, MAX_K, MAX_M } from './erasure.js';
export type { EncodeResult, EncodeTask, ReconstructResult, ReconstructTask } from './erasure.js';
