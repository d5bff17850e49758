/**
 * The gateway's control WebSocket envelope: the media bridge's envelope (protocols/media/
 * envelope.ts: `{id, method, params}` → `{id, result}` | `{id, error: {code, message}}`, events
 * `{event, data}`) plus the other direction: the gateway's own requests to the application
 * (`{id, method, params}`, ids starting `g:`) that the application answers `{id, result}` or
 * `{id, error}`. One frame is either a command or such an answer; `parseFrame` tells which.
 * Pure.
 */
import { parseCommand, MAX_COMMAND_BYTES, type CommandRequest, type ErrorCode } from '../media/envelope.js';

export { MAX_COMMAND_BYTES };

/** The media bridge's codes (forwarded as they are from media commands) and the gateway's own. */
export type GatewayErrorCode =
  | ErrorCode
  /** route.register: a route another connection holds. */
  | 'ROUTE_CONFLICT'
  /** A callId this connection does not own (or no such call). */
  | 'CALL_NOT_FOUND'
  /** The call is not in a state for this (a BYE before the answer, a cancel of an answered call). */
  | 'CALL_STATE'
  /** The SIP side failed: the SIP server refused, or the far end answered with an error. */
  | 'SIP_ERROR'
  /** The gateway drains (part 2): no new work. */
  | 'SHUTTING_DOWN';

export interface GatewayFailure {
  id: string | null;
  error: { code: GatewayErrorCode; message: string };
}

export function gatewayFailure(id: string | null, code: GatewayErrorCode, message: string): GatewayFailure {
  return { id, error: { code, message } };
}

/** The application's answer to one of the gateway's requests. */
export interface AppAnswer {
  id: string;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
}

export type Frame =
  | { kind: 'command'; request: CommandRequest }
  | { kind: 'answer'; answer: AppAnswer }
  | { kind: 'invalid'; reply: GatewayFailure };

/** The prefix of the ids of the gateway's requests to the application. */
export const GATEWAY_REQUEST_PREFIX = 'g:';

/**
 * Read one text frame. An object with `result` or `error` and no `method` is an answer (its
 * `id` must be a string; `result` an object); everything else is read as a command.
 */
export function parseFrame(text: string): Frame {
  let value: unknown;
  if (text.length <= MAX_COMMAND_BYTES) {
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !('method' in value) && ('result' in value || 'error' in value)) {
    const v = value as Record<string, unknown>;
    if (typeof v.id !== 'string' || v.id.length === 0) return { kind: 'invalid', reply: gatewayFailure(null, 'INVALID_REQUEST', 'an answer needs the string `id` of the request it answers') };
    if ('result' in v && (typeof v.result !== 'object' || v.result === null || Array.isArray(v.result))) {
      return { kind: 'invalid', reply: gatewayFailure(v.id, 'INVALID_REQUEST', '`result` must be an object') };
    }
    const error = v.error as { code?: unknown; message?: unknown } | undefined;
    return {
      kind: 'answer',
      answer: {
        id: v.id,
        ...('result' in v ? { result: v.result as Record<string, unknown> } : {}),
        ...(error !== undefined ? { error: { code: String(error?.code ?? 'ERROR'), message: String(error?.message ?? '') } } : {}),
      },
    };
  }
  const parsed = parseCommand(text);
  return parsed.ok ? { kind: 'command', request: parsed.request } : { kind: 'invalid', reply: parsed.reply };
}
