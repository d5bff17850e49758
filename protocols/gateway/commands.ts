/**
 * The gateway's own control commands (route.*, sip.*) with their parameters, the answers the
 * application gives to the gateway's requests (sip.invite, sip.reinvite), and which methods
 * are media commands passed on to the media link. `checkGatewayCommand` turns a request into
 * a typed command or an INVALID_PARAMS message naming the field (unknown fields are refused
 * too). Pure.
 */
import { arrayOf, boolean, checkParams, describe, number, oneOf, optional, required, string, type Check, type ParamsOf } from '../media/validate.js';
import type { RouteCopy } from './routes.js';
import { parseCallId } from '../sip/index.js';
import type { GatewayErrorCode } from './envelope.js';

type Shape = Record<string, Check<unknown>>;

/** A nested object checked field by field; its fields are named `parent.field` in messages. */
function object<S extends Shape>(shape: S): Check<ParamsOf<S>> {
  return (v, name) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, error: `${name} must be an object; got ${describe(v)}` };
    const prefixed = Object.fromEntries(Object.entries(shape).map(([k, c]) => [k, ((x: unknown) => c(x, `${name}.${k}`)) as Check<unknown>]));
    const r = checkParams(prefixed, v as Record<string, unknown>);
    if (!r.ok) return { ok: false, error: r.error.replace(/^unknown parameter /, `${name}: unknown field `) };
    return { ok: true, value: r.value as ParamsOf<S> };
  };
}

const TOKEN = /^[A-Za-z0-9!%'*+\-.^_`|~]+$/;
/** Extra SIP headers as `{Name: value}`: token names, one-line values. */
const headers: Check<Record<string, string>> = (v, name) => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, error: `${name} must be an object of header name → value; got ${describe(v)}` };
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 32) return { ok: false, error: `${name} has ${entries.length} headers; at most 32` };
  for (const [k, val] of entries) {
    if (!TOKEN.test(k)) return { ok: false, error: `${name}: ${JSON.stringify(k)} is not a header name` };
    if (typeof val !== 'string' || /[\r\n]/.test(val) || val.length > 1024) return { ok: false, error: `${name}.${k} must be a one-line string of at most 1024 characters; got ${describe(val)}` };
  }
  return { ok: true, value: v as Record<string, string> };
};

const sdp = required(string({ min: 1, max: 60_000 }));
/** A Call-ID the application chooses for an outbound call (so it can cancel before the reply). */
const sipCallId: Check<string> = (v, name) => {
  if (typeof v !== 'string' || v.length === 0 || v.length > 256) return { ok: false, error: `${name} must be a string of 1 to 256 characters; got ${describe(v)}` };
  try {
    if (parseCallId(v) !== v) throw new Error('spaces');
  } catch {
    return { ok: false, error: `${name} must be a SIP Call-ID (word ["@" word], RFC 3261 §25.1); got ${describe(v)}` };
  }
  return { ok: true, value: v };
};
const callId = required(string({ min: 1, max: 256 }));
export const ROUTE_MATCHES = ['exact', 'userPrefix'] as const;
/** Routes one connection may hold. */
export const MAX_ROUTES = 1000;

const route = object({ match: required(oneOf(ROUTE_MATCHES)), value: required(string({ min: 1, max: 128 })) });

export const GATEWAY_SHAPES = {
  'route.register': { routes: required(arrayOf(route, { max: MAX_ROUTES })) },
  'route.list': {},
  'sip.createOutbound': {
    requestUri: required(string({ min: 5, max: 1024 })),
    sdp,
    headers: optional(headers, undefined),
    from: optional(string({ min: 1, max: 1024 }), undefined),
    auth: optional(object({ username: required(string({ min: 1, max: 256 })), password: required(string({ max: 256 })) }), undefined),
    callId: optional(sipCallId, undefined),
  },
  'sip.cancelOutbound': { callId },
  'sip.bye': { callId },
  'sip.reinvite': { callId, sdp },
  'sip.calls': {},
} as const;

export type GatewayMethod = keyof typeof GATEWAY_SHAPES;
export type GatewayParams<M extends GatewayMethod> = ParamsOf<(typeof GATEWAY_SHAPES)[M]>;
export type GatewayCommand = { [M in GatewayMethod]: { method: M; params: GatewayParams<M> } }[GatewayMethod];

/** Method families handled by the media link (every method of protocols/media/commands.ts, and those to come). */
const MEDIA_PREFIXES = ['session.', 'endpoint.', 'recording.', 'mixer.'];

export function isMediaMethod(method: string): boolean {
  return MEDIA_PREFIXES.some((p) => method.startsWith(p));
}

export type GatewayChecked = { ok: true; command: GatewayCommand } | { ok: false; code: GatewayErrorCode; message: string };

export function checkGatewayCommand(method: string, params: Record<string, unknown>): GatewayChecked {
  if (!Object.hasOwn(GATEWAY_SHAPES, method)) return { ok: false, code: 'METHOD_NOT_FOUND', message: `unknown method ${method}` };
  const r = checkParams(GATEWAY_SHAPES[method as GatewayMethod], params);
  if (!r.ok) return { ok: false, code: 'INVALID_PARAMS', message: r.error };
  const command = { method, params: r.value } as GatewayCommand;
  if (command.method === 'sip.createOutbound' && !/^sips?:/i.test(command.params.requestUri)) {
    return { ok: false, code: 'INVALID_PARAMS', message: `requestUri must be a sip: URI; got ${describe(command.params.requestUri)}` };
  }
  return { ok: true, command };
}

const ROUTE_COPY = { tag: required(string({ min: 1, max: 256 })), routes: required(arrayOf(route)), accepting: required(boolean) };

/** The gateway's route table as the SIP server is sent it (`routeCopy`): each route as `route.register` takes it. */
export function checkRouteCopy(v: Record<string, unknown>): { ok: true; value: RouteCopy } | { ok: false; error: string } {
  return checkParams(ROUTE_COPY, v);
}

/** The application's answer to `sip.invite` or `sip.reinvite`. */
export type CallAnswer = { action: 'answer'; sdp: string } | { action: 'reject'; status: number; reason?: string };

const ANSWER = { action: required(oneOf(['answer'] as const)), sdp };
const REJECT = { action: required(oneOf(['reject'] as const)), status: required(number({ min: 300, max: 699, integer: true })), reason: optional(string({ min: 1, max: 128 }), undefined) };

/** Check an answer's `result`; the message names what is wrong (the call then gets 502). */
export function checkCallAnswer(result: Record<string, unknown>): { ok: true; answer: CallAnswer } | { ok: false; error: string } {
  const action = oneOf(['answer', 'reject'] as const)(result.action, 'action');
  if (!action.ok) return action;
  const r = checkParams(action.value === 'answer' ? ANSWER : REJECT, result);
  if (!r.ok) return r;
  const v = r.value as CallAnswer;
  if (v.action === 'reject' && v.reason && /[\r\n]/.test(v.reason)) return { ok: false, error: 'reason must be one line' };
  return { ok: true, answer: v.action === 'answer' ? { action: 'answer', sdp: v.sdp } : { action: 'reject', status: v.status, ...(v.reason ? { reason: v.reason } : {}) } };
}
