/** The runtime's public face for actors and for the code that starts them. */
export { defineActor, type ActorContext, type ActorDefinition, type StopReason } from './actor/define.js';
export { withTransfer, type ActorRef, type Message, type Protocol, type RequestOptions, type SendOptions } from './actor/protocol.js';
export { ActorError, ReplyError, type ActorErrorCode } from './errors.js';
export type { ChildSpec, SupervisorSpec, Placement, RestartType } from './supervisor/spec.js';
export type { SupervisionEvent } from './supervisor/events.js';
export { ActorSystem, type SystemOptions } from './supervisor/system.js';
export { CheckpointStore, type CheckpointRecord, type CheckpointSummary } from './checkpoint/store.js';
