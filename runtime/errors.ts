/**
 * Errors that cross actor boundaries. They travel as plain data (WireError) and are
 * rebuilt as ActorError on the requesting side, so `instanceof` and `code` work everywhere.
 */
import type { CodeOf, Protocol } from './actor/protocol.js';

export type ActorErrorCode =
  /** The request got no reply before its deadline. */
  | 'TIMEOUT'
  /**
   * The actor crashed while handling this request, or its thread died with the request on it.
   * (Requests still waiting in the mailbox of an actor that crashed in place are kept for the
   * restarted instance.)
   */
  | 'ACTOR_CRASHED'
  /** The actor was stopped (shutdown, escalation, or stopped itself) before it replied. */
  | 'ACTOR_STOPPED'
  /** No actor with this id exists. */
  | 'NO_SUCH_ACTOR'
  /** The actor's mailbox is full; the message was not accepted. */
  | 'MAILBOX_FULL'
  /** The message has a type the actor has no handler for. */
  | 'UNKNOWN_MESSAGE'
  /** The handler refused the request on purpose (ReplyError); the actor keeps running. */
  | 'REPLY_ERROR';

export interface WireError {
  code: ActorErrorCode;
  message: string;
  /** Application code carried by a ReplyError, e.g. 'INVALID_PARAMS'. */
  appCode?: string;
  details?: unknown;
  stack?: string;
}

export class ActorError extends Error {
  readonly code: ActorErrorCode;
  readonly appCode: string | undefined;
  readonly details: unknown;
  constructor(code: ActorErrorCode, message: string, appCode?: string, details?: unknown) {
    super(message);
    this.name = 'ActorError';
    this.code = code;
    this.appCode = appCode;
    this.details = details;
  }
  toWire(): WireError {
    return { code: this.code, message: this.message, appCode: this.appCode, details: this.details };
  }
  static fromWire(w: WireError): ActorError {
    const e = new ActorError(w.code, w.message, w.appCode, w.details);
    if (w.stack) e.stack = w.stack;
    return e;
  }
}

/**
 * Thrown by a handler to refuse a request without crashing the actor. The requester
 * receives an ActorError with code REPLY_ERROR and `appCode` set to `code`.
 */
export class ReplyError<C extends string = string> extends Error {
  readonly code: C;
  readonly details: unknown;
  constructor(code: C, message: string, details?: unknown) {
    super(message);
    this.name = 'ReplyError';
    this.code = code;
    this.details = details;
  }
}

/**
 * The refusal code of a rejected request, typed by the receiver's protocol: `'READ_ONLY'` when
 * the volume actor refused with that code, null for any other failure (a crash, a time-out, a
 * stopped actor, a non-actor error). Comparing it with a code the protocol does not declare is a
 * compile error.
 */
export function refusalOf<P extends Protocol>(err: unknown): CodeOf<P> | null {
  if (err instanceof ActorError && err.code === 'REPLY_ERROR' && typeof err.appCode === 'string') return err.appCode as CodeOf<P>;
  return null;
}

/** Describe any thrown value as a short string, for logs and crash reports. */
export function describeError(err: unknown): { message: string; stack?: string } {
  if (err instanceof Error) return { message: err.message, stack: err.stack };
  return { message: String(err) };
}
