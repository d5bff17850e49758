/** What a control connection's media command must say (pure): session_id, callId, the bridge's own checks. */
import test from 'ava';
import { checkLinkCommand } from '../../actors/gateway/media/params.js';

const SID = '82188FE6-5CD4-41B9-BCF7-9CD76427D6A7';

test('session.create takes callId and colocate_with, and forwards colocate_with only', (t) => {
  t.deepEqual(checkLinkCommand('session.create', {}), { ok: true, value: { kind: 'create', callId: undefined, colocateWith: undefined, forward: {} } });
  t.deepEqual(checkLinkCommand('session.create', { callId: 'abc@host', colocate_with: SID }), {
    ok: true,
    value: { kind: 'create', callId: 'abc@host', colocateWith: SID.toLowerCase(), forward: { colocate_with: SID.toLowerCase() } },
  });
});

test('session.create refuses a bad callId or colocate_with, and unknown parameters, by name', (t) => {
  const bad = (params: Record<string, unknown>) => {
    const r = checkLinkCommand('session.create', params);
    return r.ok ? 'accepted' : `${r.code}: ${r.message}`;
  };
  t.is(bad({ callId: 7 }), 'INVALID_PARAMS: callId must be a string; got number 7');
  t.is(bad({ callId: '' }), 'INVALID_PARAMS: callId must not be empty');
  t.is(bad({ callId: 'x'.repeat(257) }), 'INVALID_PARAMS: callId is longer than 256 characters');
  t.is(bad({ callId: null }), 'INVALID_PARAMS: callId must be a string; got null');
  t.is(bad({ colocate_with: 'abc' }), 'INVALID_PARAMS: colocate_with must be a session UUID; got "abc"');
  t.is(bad({ session_id: SID }), 'INVALID_PARAMS: unknown parameter session_id (this command takes callId, colocate_with)');
});

test('a session command names its session: session_id is taken off, lower-cased, the rest forwarded as sent', (t) => {
  const r = checkLinkCommand('endpoint.create_tone', { session_id: SID, tone: 'beep' });
  if (!r.ok || r.value.kind !== 'session') return t.fail(JSON.stringify(r));
  t.is(r.value.sessionId, SID.toLowerCase());
  t.is(r.value.method, 'endpoint.create_tone');
  t.deepEqual(r.value.forward, { tone: 'beep' }, 'defaults are the bridge’s to fill');
  const alias = checkLinkCommand('endpoint.create_offer', { session_id: SID, type: 'rtp' });
  if (!alias.ok || alias.value.kind !== 'session') return t.fail(JSON.stringify(alias));
  t.is(alias.value.method, 'endpoint.create_offer', 'an alias is forwarded as sent');
  t.is(alias.value.command.method, 'endpoint.rtp.create_offer', 'and checked as what it stands for');
});

test('session_id missing or malformed is INVALID_PARAMS naming it', (t) => {
  for (const [params, message] of [
    [{}, 'session_id is required'],
    [{ session_id: 42 }, 'session_id must be a session UUID; got number 42'],
    [{ session_id: 'not-a-uuid' }, 'session_id must be a session UUID; got "not-a-uuid"'],
  ] as const) {
    t.deepEqual(checkLinkCommand('session.info', params), { ok: false, code: 'INVALID_PARAMS', message });
  }
});

test("the bridge's own parameter checks apply before anything is forwarded", (t) => {
  const bad = (method: string, params: Record<string, unknown>) => {
    const r = checkLinkCommand(method, { session_id: SID, ...params });
    return r.ok ? 'accepted' : `${r.code}: ${r.message}`;
  };
  t.is(bad('endpoint.create_tone', { tone: 'whistle' }), 'INVALID_PARAMS: tone must be one of ringback, ringing, busy, beep, sine, silence; got "whistle"');
  t.is(bad('endpoint.create_tone', { tone: 'beep', frequency: 440 }), 'INVALID_PARAMS: frequency applies to the sine tone only; beep has fixed frequencies');
  t.is(bad('endpoint.rtp.create_offer', { srtp: true, srtp_optional: true }), 'INVALID_PARAMS: srtp and srtp_optional are mutually exclusive');
  t.is(bad('endpoint.remove', {}), 'INVALID_PARAMS: endpoint_id is required');
  t.is(bad('endpoint.transfer', { endpoint_id: 'e', target_session_id: 'x' }), 'INVALID_PARAMS: target_session_id must be a session UUID; got "x"');
  t.is(bad('endpoint.create_offer', { type: 'sip' }), 'INVALID_PARAMS: type must be one of webrtc, rtp; got "sip"');
  t.is(bad('session.info', { verbose: true }), 'INVALID_PARAMS: unknown parameter verbose (this command takes none)');
});

test('unknown and not-yet methods are refused before session_id is looked at; session.attach is not offered', (t) => {
  const code = (method: string, params: Record<string, unknown> = {}) => {
    const r = checkLinkCommand(method, params);
    return r.ok ? 'accepted' : r.code;
  };
  t.is(code('session.list'), 'METHOD_NOT_FOUND');
  t.is(code('endpoint.webrtc.create_offr'), 'METHOD_NOT_FOUND');
  t.is(code('recording.start'), 'INVALID_PARAMS', 'recording is built (issue 17): without session_id it is refused for that');
  t.is(code('recording.start', { session_id: SID }), 'accepted');
  t.is(code('recording.stop', { session_id: SID }), 'INVALID_PARAMS');
  t.is(code('endpoint.create_file'), 'INVALID_PARAMS', 'file endpoints are built: without source (and session_id) it is refused for that');
  t.is(code('session.attach', { session_id: SID }), 'METHOD_NOT_FOUND');
  t.is(code('__proto__'), 'METHOD_NOT_FOUND');
  t.is(code('endpoint.webrtc.create_offer', { session_id: SID }), 'accepted', 'the bridge answers NOT_IMPLEMENTED itself');
});
