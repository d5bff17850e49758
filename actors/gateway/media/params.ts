/**
 * What a media command of a control connection says, checked before anything is sent to a bridge.
 * Pure: no I/O.
 *
 * A control connection may own many sessions, so every command but `session.create` names its
 * session with `session_id` (the bridge itself runs a command on the session bound to its
 * connection; the link binds the named one). `session_id` is taken off and the rest is checked
 * with the media protocol's own validator (protocols/media/commands.ts) and forwarded unchanged.
 * `session.create` takes `callId` (ours: the SIP call the session belongs to, for placement) and
 * the bridge's `colocate_with`. `session.attach` is not offered: a session belongs to the control
 * connection that created it, and taking another's over is what ownership forbids.
 */
import { checkCommand, type Command } from '../../../protocols/media/commands.js';
import { isWebRtcSdp } from '../../../protocols/media/sdp/index.js';
import { checkParams, optional, required, string, uuid } from '../../../protocols/media/validate.js';
import type { MediaLinkErrorCode } from './errors.js';

export type LinkCommand =
  | { kind: 'create'; callId: string | undefined; colocateWith: string | undefined; forward: Record<string, unknown> }
  | { kind: 'session'; sessionId: string; method: string; forward: Record<string, unknown>; command: Command };

export type Checked = { ok: true; value: LinkCommand } | { ok: false; code: MediaLinkErrorCode; message: string };

const CREATE_SHAPE = {
  callId: optional(string({ min: 1, max: 256 }), undefined),
  colocate_with: optional(uuid, undefined),
};

const sessionId = required(uuid);

export function checkLinkCommand(method: string, params: Record<string, unknown>): Checked {
  if (method === 'session.attach') {
    return { ok: false, code: 'METHOD_NOT_FOUND', message: 'session.attach is not offered through the gateway: a session belongs to the control connection that created it, and every session command names it with session_id' };
  }
  if (method === 'session.create') {
    const r = checkParams(CREATE_SHAPE, params);
    if (!r.ok) return { ok: false, code: 'INVALID_PARAMS', message: r.error };
    const { callId, colocate_with } = r.value;
    return { ok: true, value: { kind: 'create', callId, colocateWith: colocate_with, forward: colocate_with === undefined ? {} : { colocate_with } } };
  }
  const { session_id, ...rest } = params;
  const checked = checkCommand(method, rest, isWebRtcSdp);
  if (!checked.ok && checked.code !== 'INVALID_PARAMS') return checked; // METHOD_NOT_FOUND, NOT_IMPLEMENTED
  const sid = sessionId(session_id, 'session_id');
  if (!sid.ok) return { ok: false, code: 'INVALID_PARAMS', message: sid.error };
  if (!checked.ok) return checked;
  return { ok: true, value: { kind: 'session', sessionId: sid.value, method, forward: rest, command: checked.command } };
}
