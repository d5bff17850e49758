/**
 * The media bridge's command envelope (spec: "a request has `id` (string), `method` (string)
 * and `params` (object)"), its replies, events and error codes. Pure: parsing and shaping only.
 *
 * Not shown in the spec, decided here (docs/media-bridge.md):
 * - error reply `{id, error: {code, message}}`; a message that is not JSON, or not an object
 *   with a string `id`, gets `id: null` (nothing to correlate with) and PARSE_ERROR or
 *   INVALID_REQUEST;
 * - `params` may be omitted (treated as `{}`), but when present must be an object;
 * - the size limit counts the UTF-8 bytes of the message, as it came over the wire (a string's
 *   length counts UTF-16 units: 64 Ki of them can be 192 KiB), and is checked before parsing;
 * - events are `{event, data}` with `data.session_id` and, for endpoint events, `endpoint_id`.
 */

export type ErrorCode =
  // the spec's codes
  | 'NO_SESSION'
  | 'INVALID_PARAMS'
  | 'SESSION_NOT_FOUND'
  | 'ENDPOINT_ERROR'
  | 'TRANSFER_FAILED'
  // ours (not shown in the spec)
  | 'PARSE_ERROR'
  | 'INVALID_REQUEST'
  | 'METHOD_NOT_FOUND'
  | 'NOT_IMPLEMENTED'
  | 'LIMIT_EXCEEDED'
  | 'UNAUTHORIZED'
  | 'INTERNAL_ERROR'
  // WebRTC (the spec says both are rejected, not how): accept_answer's offer_generation is not
  // the pending offer's; ice_restart while the endpoint's offer is still unanswered.
  | 'OFFER_GENERATION_MISMATCH'
  | 'OFFER_PENDING';

export interface CommandRequest {
  id: string;
  method: string;
  params: Record<string, unknown>;
}

export interface CommandSuccess<R = Record<string, unknown>> {
  id: string;
  result: R;
}

export interface CommandFailure {
  id: string | null;
  error: { code: ErrorCode; message: string };
}

export type CommandReply<R = Record<string, unknown>> = CommandSuccess<R> | CommandFailure;

export interface EventMessage<D = Record<string, unknown>> {
  event: string;
  data: D;
}

/** Largest command accepted (an SDP with many sections is a few KiB). */
export const MAX_COMMAND_BYTES = 64 * 1024;

export type Parsed = { ok: true; request: CommandRequest } | { ok: false; reply: CommandFailure };

export function failure(id: string | null, code: ErrorCode, message: string): CommandFailure {
  return { id, error: { code, message } };
}

/** Parse one WebSocket text message into a request, or the error reply to send back. */
export function parseCommand(text: string): Parsed {
  const bytes = utf8Length(text);
  if (bytes > MAX_COMMAND_BYTES) {
    return { ok: false, reply: failure(null, 'INVALID_REQUEST', `message is ${bytes} bytes; the limit is ${MAX_COMMAND_BYTES}`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reply: failure(null, 'PARSE_ERROR', `message is not valid JSON: ${(err as Error).message}`) };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reply: failure(null, 'INVALID_REQUEST', 'a command is a JSON object {id, method, params}') };
  }
  const v = value as Record<string, unknown>;
  if (typeof v.id !== 'string' || v.id.length === 0 || v.id.length > 256) {
    return { ok: false, reply: failure(null, 'INVALID_REQUEST', '`id` must be a non-empty string of at most 256 characters') };
  }
  if (typeof v.method !== 'string' || v.method.length === 0) {
    return { ok: false, reply: failure(v.id, 'INVALID_REQUEST', '`method` must be a non-empty string') };
  }
  if (v.params !== undefined && (typeof v.params !== 'object' || v.params === null || Array.isArray(v.params))) {
    return { ok: false, reply: failure(v.id, 'INVALID_REQUEST', '`params` must be an object') };
  }
  return { ok: true, request: { id: v.id, method: v.method, params: (v.params as Record<string, unknown> | undefined) ?? {} } };
}

/** UTF-8 length of a string (a lone surrogate counts 3, as it is sent as U+FFFD). */
function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
