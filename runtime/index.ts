/**
 * The runtime's face for actor modules. Light on purpose: it is loaded into every worker
 * thread, so it must not pull in the main thread's side (supervisor, piscina, rxjs); that
 * side is runtime/system.ts.
 */
export { defineActor, type ActorContext, type ActorDefinition, type PersistPolicy, type StopReason } from './actor/define.js';
export type { TaskArg, TaskMap, TaskName, TaskResult } from './actor/tasks.js';
export { withTransfer, type ActorRef, type CodeOf, type Message, type Protocol, type RequestOptions, type SendOptions } from './actor/protocol.js';
export { ActorError, ReplyError, refusalOf, type ActorErrorCode } from './errors.js';
export type { ChildSpec, SupervisorSpec, Placement, RestartType } from './supervisor/spec.js';
