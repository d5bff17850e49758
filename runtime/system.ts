/** The runtime's face for the main thread: the code that starts actor systems and reads checkpoints. */
export * from './index.js';
export type { SupervisionEvent } from './supervisor/events.js';
export { ActorSystem, type SystemOptions } from './supervisor/system.js';
export { CheckpointStore, type CheckpointRecord, type CheckpointSummary } from './checkpoint/store.js';
