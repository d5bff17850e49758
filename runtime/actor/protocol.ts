/**
 * Typing of actor messages. A receiving actor declares, beside itself (messages.ts), the
 * union of messages it accepts and the replies of those that are requests:
 *
 *   export type CounterMsg = { type: 'inc'; by: number } | { type: 'get' };
 *   export interface CounterReplies { get: number }
 *   export type CounterProtocol = Protocol<CounterMsg, CounterReplies, 'TOO_BIG'>;
 *
 * The third parameter names the codes the actor refuses requests with (its ReplyErrors): a
 * sender reads them from a rejection with `refusalOf<CounterProtocol>(err)`, typed.
 *
 * Senders import only these types, never the actor.
 */

export interface Message {
  type: string;
}

export interface Protocol<M extends Message = Message, R = {}, C extends string = string> {
  msg: M;
  replies: R;
  /** The refusal codes (ReplyError codes) of the receiver. Types only: never present at run time. */
  codes?: C;
}

export type MsgOf<P extends Protocol> = P['msg'];
export type MsgType<P extends Protocol> = P['msg']['type'];
/** Message types that carry a reply. */
export type RequestType<P extends Protocol> = MsgType<P> & keyof P['replies'];
export type MsgOfType<P extends Protocol, T extends string> = Extract<P['msg'], { type: T }>;
export type ReplyOf<P extends Protocol, T extends RequestType<P>> = P['replies'][T];
/** The refusal codes a receiver declares (string when it declares none). */
export type CodeOf<P extends Protocol> = NonNullable<P['codes']>;

export interface SendOptions {
  /** ArrayBuffers (or MessagePorts) to move, not copy. The sender's buffers are detached. */
  transfer?: Transferable[];
  /**
   * The message is handed over: the sender keeps no reference to it or to anything in it, and
   * never reads or changes it again. An actor on the same thread then gets the very object
   * instead of a structured clone (across threads it is copied as always). For messages built
   * fresh for one send on a hot path: the clone is most of what a same-thread message costs.
   * Ignored when `transfer` is given (the buffers are detached by a clone).
   */
  handover?: boolean;
}

export interface RequestOptions extends SendOptions {
  /** Deadline for the reply; default from the runtime (5 s). */
  timeoutMs?: number;
}

export type Transferable = ArrayBuffer | import('node:worker_threads').MessagePort;

/** A typed address of an actor. Plain to create, cheap to keep; `id` is all it holds of the target. */
export interface ActorRef<P extends Protocol = Protocol> {
  readonly id: string;
  send(msg: MsgOf<P>, opts?: SendOptions): void;
  request<T extends RequestType<P>>(msg: MsgOfType<P, T>, opts?: RequestOptions): Promise<ReplyOf<P, T>>;
}

const TRANSFER = Symbol.for('hostd.transfer');

/** A reply value together with the buffers to move with it. */
export interface Transferring<T> {
  readonly [TRANSFER]: true;
  readonly value: T;
  readonly transfer: Transferable[];
}

/** Return this from a handler to move buffers of the reply instead of copying them. */
export function withTransfer<T>(value: T, transfer: Transferable[]): Transferring<T> {
  return { [TRANSFER]: true, value, transfer };
}

export function isTransferring(v: unknown): v is Transferring<unknown> {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[TRANSFER] === true;
}
