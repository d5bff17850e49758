/**
 * The command table: every method of SHAPES with a valid call and with each parameter wrong in
 * each way (missing, wrong type, out of range, unknown extra field), every alias, unknown and
 * not-yet-built methods, and the cross-field rules (srtp/srtp_optional, sine-only frequency); the
 * validator under it has validate.test.ts.
 * Expected values come from the spec (../shared/spec/media-bridge.md), not from the module.
 */
import test, { type ExecutionContext } from 'ava';
import { checkCommand, NOT_YET, SESSIONLESS, SHAPES, TONES, type Checked, type Method } from '../../protocols/media/commands.js';
import { isWebRtcSdp } from '../../protocols/media/sdp/index.js';

type Params = Record<string, unknown>;

const U1 = '0f8fad5b-d9cb-469f-a165-70867728950e';
const U2 = 'C56A4180-65AA-42EC-A945-5FD21DEC0538';
const PLAIN_SDP = 'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0 8\r\na=sendrecv\r\n';
const WEBRTC_SDP =
  'v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuvwx\r\n' +
  'a=fingerprint:sha-256 00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF\r\na=setup:actpass\r\na=rtpmap:111 opus/48000/2\r\n';

/** The predicate must not be consulted by anything but endpoint.create_from_offer. */
const noSdpSniffing = (sdp: string): boolean => {
  throw new Error(`isWebRtcSdp called with ${sdp.slice(0, 20)}`);
};

function accepted(t: ExecutionContext, r: Checked): { method: string; params: Params } {
  if (!r.ok) {
    t.fail(`expected acceptance, got ${r.code}: ${r.message}`);
    return { method: '', params: {} };
  }
  return { method: r.command.method, params: r.command.params as Params };
}

function refused(t: ExecutionContext, r: Checked, code: string): string {
  if (r.ok) {
    t.fail(`expected ${code}, got ${JSON.stringify(r.command).slice(0, 200)}`);
    return '';
  }
  t.is(r.code, code as never, r.message);
  return r.message;
}

const names = (field: string) => new RegExp(`(^|[^\\w])${field.replace(/[.[\]]/g, '\\$&')}([^\\w]|$)`);

// ---- the table of methods, their parameters and a minimal valid call (from the spec) ----

type Kind = 'endpointId' | 'sdp' | 'direction' | 'directionOrAuto' | 'bool' | 'codecs' | 'generation' | 'uuid' | 'optionalUuid' | 'tone' | 'frequency' | 'duration' | 'source' | 'startMs' | 'loopCount' | 'gainDb' | 'positionMs' | 'sampleRate' | 'optionalEndpointId' | 'fileName' | 'urlTimeoutMs' | 'cacheTtlSecs';

interface MethodCase {
  fields: Record<string, Kind>;
  /** A valid call with only the required parameters. */
  minimal: Params;
  /** What the minimal call yields, defaults applied. */
  defaults: Params;
  /** A valid call giving every parameter, and what it yields. */
  full: Params;
  fullResult?: Params;
}

const CASES: Record<Method, MethodCase> = {
  'session.create': { fields: { colocate_with: 'optionalUuid' }, minimal: {}, defaults: { colocate_with: undefined }, full: { colocate_with: U1 } },
  'session.attach': { fields: { session_id: 'uuid' }, minimal: { session_id: U1 }, defaults: { session_id: U1 }, full: { session_id: U2 }, fullResult: { session_id: U2.toLowerCase() } },
  'session.info': { fields: {}, minimal: {}, defaults: {}, full: {} },
  'session.destroy': { fields: {}, minimal: {}, defaults: {}, full: {} },
  'endpoint.rtp.create_from_offer': {
    fields: { sdp: 'sdp', direction: 'direction' },
    minimal: { sdp: PLAIN_SDP },
    defaults: { sdp: PLAIN_SDP, direction: 'sendrecv' },
    full: { sdp: PLAIN_SDP, direction: 'recvonly' },
  },
  'endpoint.rtp.create_offer': {
    fields: { direction: 'direction', srtp: 'bool', srtp_optional: 'bool', codecs: 'codecs' },
    minimal: {},
    defaults: { direction: 'sendrecv', srtp: false, srtp_optional: false, codecs: undefined },
    full: { direction: 'sendonly', srtp: true, srtp_optional: false, codecs: ['opus', 'g722', 'pcma', 'pcmu'] },
  },
  'endpoint.rtp.accept_answer': { fields: { endpoint_id: 'endpointId', sdp: 'sdp' }, minimal: { endpoint_id: 'e1', sdp: PLAIN_SDP }, defaults: { endpoint_id: 'e1', sdp: PLAIN_SDP }, full: { endpoint_id: 'e2', sdp: PLAIN_SDP } },
  'endpoint.rtp.reinvite': { fields: { endpoint_id: 'endpointId', sdp: 'sdp' }, minimal: { endpoint_id: 'e1', sdp: PLAIN_SDP }, defaults: { endpoint_id: 'e1', sdp: PLAIN_SDP }, full: { endpoint_id: 'e2', sdp: PLAIN_SDP } },
  'endpoint.rtp.srtp_rekey': { fields: { endpoint_id: 'endpointId' }, minimal: { endpoint_id: 'e1' }, defaults: { endpoint_id: 'e1' }, full: { endpoint_id: 'x'.repeat(128) } },
  'endpoint.webrtc.create_from_offer': {
    fields: { sdp: 'sdp', direction: 'direction' },
    minimal: { sdp: WEBRTC_SDP },
    defaults: { sdp: WEBRTC_SDP, direction: 'sendrecv' },
    full: { sdp: WEBRTC_SDP, direction: 'inactive' },
  },
  'endpoint.webrtc.create_offer': { fields: { direction: 'direction' }, minimal: {}, defaults: { direction: 'sendrecv' }, full: { direction: 'recvonly' } },
  'endpoint.webrtc.accept_answer': {
    fields: { endpoint_id: 'endpointId', sdp: 'sdp', offer_generation: 'generation' },
    minimal: { endpoint_id: 'e1', sdp: WEBRTC_SDP },
    defaults: { endpoint_id: 'e1', sdp: WEBRTC_SDP, offer_generation: undefined },
    full: { endpoint_id: 'e1', sdp: WEBRTC_SDP, offer_generation: 3 },
  },
  'endpoint.accept_answer': {
    fields: { endpoint_id: 'endpointId', sdp: 'sdp', offer_generation: 'generation' },
    minimal: { endpoint_id: 'e1', sdp: PLAIN_SDP },
    defaults: { endpoint_id: 'e1', sdp: PLAIN_SDP, offer_generation: undefined },
    full: { endpoint_id: 'e1', sdp: WEBRTC_SDP, offer_generation: 0 },
  },
  'endpoint.webrtc.accept_offer': { fields: { endpoint_id: 'endpointId', sdp: 'sdp' }, minimal: { endpoint_id: 'e1', sdp: WEBRTC_SDP }, defaults: { endpoint_id: 'e1', sdp: WEBRTC_SDP }, full: { endpoint_id: 'e1', sdp: WEBRTC_SDP } },
  'endpoint.webrtc.ice_restart': { fields: { endpoint_id: 'endpointId' }, minimal: { endpoint_id: 'e1' }, defaults: { endpoint_id: 'e1' }, full: { endpoint_id: 'e1' } },
  'endpoint.create_tone': {
    fields: { tone: 'tone', frequency: 'frequency', duration_ms: 'duration' },
    minimal: { tone: 'sine' },
    defaults: { tone: 'sine', frequency: undefined, duration_ms: null },
    full: { tone: 'sine', frequency: 440, duration_ms: 1500 },
  },
  'endpoint.update_direction': {
    fields: { endpoint_id: 'endpointId', direction: 'directionOrAuto' },
    minimal: { endpoint_id: 'e1', direction: 'auto' },
    defaults: { endpoint_id: 'e1', direction: 'auto' },
    full: { endpoint_id: 'e1', direction: 'inactive' },
  },
  'endpoint.remove': { fields: { endpoint_id: 'endpointId' }, minimal: { endpoint_id: 'e1' }, defaults: { endpoint_id: 'e1' }, full: { endpoint_id: 'e1' } },
  'endpoint.transfer': {
    fields: { endpoint_id: 'endpointId', target_session_id: 'uuid' },
    minimal: { endpoint_id: 'e1', target_session_id: U1 },
    defaults: { endpoint_id: 'e1', target_session_id: U1 },
    full: { endpoint_id: 'e1', target_session_id: U2 },
    fullResult: { endpoint_id: 'e1', target_session_id: U2.toLowerCase() },
  },
  'endpoint.create_file': {
    fields: { source: 'source', start_ms: 'startMs', loop_count: 'loopCount', gain_db: 'gainDb', timeout_ms: 'urlTimeoutMs', cache_ttl_secs: 'cacheTtlSecs' },
    minimal: { source: 'ring.wav' },
    defaults: { source: 'ring.wav', start_ms: 0, loop_count: 0, gain_db: 0, timeout_ms: undefined, cache_ttl_secs: undefined },
    full: { source: 'https://media.example.com/ring.wav', start_ms: 1500, loop_count: null, gain_db: -6.5, timeout_ms: 2500, cache_ttl_secs: 0 },
  },
  'endpoint.file.pause': { fields: { endpoint_id: 'endpointId' }, minimal: { endpoint_id: 'e1' }, defaults: { endpoint_id: 'e1' }, full: { endpoint_id: 'e1' } },
  'endpoint.file.resume': { fields: { endpoint_id: 'endpointId' }, minimal: { endpoint_id: 'e1' }, defaults: { endpoint_id: 'e1' }, full: { endpoint_id: 'e1' } },
  'endpoint.file.seek': {
    fields: { endpoint_id: 'endpointId', position_ms: 'positionMs' },
    minimal: { endpoint_id: 'e1', position_ms: 0 },
    defaults: { endpoint_id: 'e1', position_ms: 0 },
    full: { endpoint_id: 'e1', position_ms: 61_000 },
  },
  'endpoint.create_websocket': {
    fields: { direction: 'direction', sample_rate: 'sampleRate' },
    minimal: {},
    defaults: { direction: 'sendrecv', sample_rate: 8000 },
    full: { direction: 'sendonly', sample_rate: 48000 },
  },
  'endpoint.create_bridge': {
    fields: { target_session_id: 'uuid', direction: 'direction' },
    minimal: { target_session_id: U1 },
    defaults: { target_session_id: U1, direction: 'sendrecv' },
    full: { target_session_id: U2, direction: 'recvonly' },
    fullResult: { target_session_id: U2.toLowerCase(), direction: 'recvonly' },
  },
  'recording.start': {
    fields: { endpoint_id: 'optionalEndpointId', file_name: 'fileName' },
    minimal: {},
    defaults: { endpoint_id: null, file_name: undefined },
    full: { endpoint_id: 'e1', file_name: 'call-1.pcap' },
  },
  'recording.stop': { fields: { recording_id: 'endpointId' }, minimal: { recording_id: 'r1' }, defaults: { recording_id: 'r1' }, full: { recording_id: U1 } },
};

/** Wrong values for each kind of parameter: [label, value (undefined = omitted), what the message says]. */
const DIRECTION_LIST = /one of sendrecv, sendonly, recvonly, inactive\b/;
const BAD: Record<Kind, Array<[string, unknown, RegExp]>> = {
  endpointId: [
    ['missing', undefined, /required/],
    ['a number', 5, /must be a string; got number 5/],
    ['null', null, /must be a string; got null/],
    ['a boolean', true, /must be a string/],
    ['an object', { id: 'e1' }, /must be a string; got an object/],
    ['an array', ['e1'], /must be a string; got an array/],
    ['empty', '', /must not be empty/],
    ['129 characters', 'e'.repeat(129), /longer than 128/],
  ],
  sdp: [
    ['missing', undefined, /required/],
    ['a number', 0, /must be a string/],
    ['null', null, /must be a string/],
    ['an object', { sdp: 'v=0' }, /must be a string/],
    ['empty', '', /must not be empty/],
    ['60,001 characters', 'v'.repeat(60_001), /longer than 60000/],
  ],
  direction: [
    ['unknown', 'up', DIRECTION_LIST],
    ['upper case', 'SENDRECV', DIRECTION_LIST],
    ['auto (update_direction only)', 'auto', DIRECTION_LIST],
    ['empty', '', DIRECTION_LIST],
    ['a number', 1, /got number 1/],
    ['null', null, /got null/],
    ['an array', ['sendrecv'], /got an array/],
  ],
  directionOrAuto: [
    ['missing', undefined, /required/],
    ['unknown', 'hold', /one of auto, sendrecv, sendonly, recvonly, inactive\b/],
    ['upper case', 'Auto', /one of auto, sendrecv/],
    ['a number', 0, /one of auto/],
    ['null', null, /got null/],
  ],
  bool: [
    ['a string', 'true', /must be true or false; got "true"/],
    ['a number', 1, /must be true or false; got number 1/],
    ['zero', 0, /true or false/],
    ['null', null, /true or false; got null/],
  ],
  codecs: [
    ['empty', [], /at least 1 item\b/],
    ['a string', 'pcmu', /must be an array/],
    ['null', null, /must be an array; got null/],
    ['an object', { 0: 'pcmu' }, /must be an array/],
    ['a repeated codec', ['pcmu', 'opus', 'pcmu'], /lists "pcmu" twice/],
    ['an unknown codec', ['pcmu', 'g729'], /\[1\] must be one of pcmu, pcma, g722, opus; got "g729"/],
    ['an upper-case codec', ['PCMU'], /\[0\] must be one of/],
    ['a number item', [0], /\[0\] must be one of/],
    ['a null item', ['opus', null], /\[1\] must be one of .*got null/],
  ],
  generation: [
    ['negative', -1, /between 0 and 9007199254740991; got -1/],
    ['fractional', 1.5, /must be an integer; got 1.5/],
    ['a string', '1', /must be a number; got "1"/],
    ['null', null, /must be a number; got null/],
    ['a boolean', true, /must be a number/],
    ['beyond 2^53-1', 2 ** 53, /between 0 and/],
  ],
  uuid: [
    ['missing', undefined, /required/],
    ['not a UUID', 'abc', /must be a session UUID; got "abc"/],
    ['without dashes', U1.replaceAll('-', ''), /session UUID/],
    ['with a trailing character', `${U1}0`, /session UUID/],
    ['in braces', `{${U1}}`, /session UUID/],
    ['with a non-hex digit', U1.replace('0f', '0g'), /session UUID/],
    ['empty', '', /session UUID/],
    ['a number', 1, /session UUID; got number 1/],
    ['null', null, /session UUID; got null/],
  ],
  optionalUuid: [
    ['not a UUID', 'abc', /session UUID/],
    ['with a trailing newline', `${U1}\n`, /session UUID/],
    ['null', null, /session UUID; got null/],
    ['an object', { id: U1 }, /session UUID; got an object/],
  ],
  tone: [
    ['missing', undefined, /required/],
    ['unknown', 'dialtone', /one of ringback, ringing, busy, beep, sine, silence; got "dialtone"/],
    ['upper case', 'SINE', /one of ringback/],
    ['empty', '', /one of ringback/],
    ['a number', 440, /one of ringback/],
    ['null', null, /got null/],
  ],
  frequency: [
    ['below 20 Hz', 19.99, /between 20 and 20000 Hz; got 19.99/],
    ['above 20000 Hz', 20_000.01, /between 20 and 20000 Hz/],
    ['zero', 0, /between 20 and 20000 Hz/],
    ['negative', -440, /between 20 and 20000 Hz/],
    ['a string', '440', /must be a number; got "440"/],
    ['null', null, /must be a number; got null/],
    ['a boolean', true, /must be a number/],
  ],
  duration: [
    ['zero', 0, /between 1 and \d+ ms; got 0/],
    ['negative', -20, /between 1 and/],
    ['fractional', 1.5, /integer/],
    ['a string', '100', /must be a number; got "100"/],
    ['a boolean', false, /must be a number/],
    ['an object', {}, /must be a number/],
    ['beyond 2^53-1', 2 ** 53, /between 1 and/],
  ],
  source: [
    ['missing', undefined, /required/],
    ['empty', '', /must not be empty/],
    ['a number', 1, /must be a string; got number 1/],
    ['null', null, /must be a string; got null/],
    ['4097 characters', 'a'.repeat(4097), /longer than 4096/],
  ],
  startMs: [
    ['negative', -1, /between 0 and \d+ ms; got -1/],
    ['fractional', 0.5, /integer/],
    ['a string', '0', /must be a number/],
    ['null', null, /must be a number; got null/],
  ],
  loopCount: [
    ['negative', -1, /between 0 and 10000; got -1/],
    ['above 10000', 10_001, /between 0 and 10000/],
    ['fractional', 1.5, /integer/],
    ['a string', '2', /must be a number/],
    ['a boolean', true, /must be a number/],
  ],
  gainDb: [
    ['below -60 dB', -60.5, /between -60 and 20 dB; got -60.5/],
    ['above 20 dB', 21, /between -60 and 20 dB/],
    ['a string', '-6', /must be a number/],
    ['null', null, /must be a number; got null/],
  ],
  sampleRate: [
    ['12345', 12_345, /sample_rate must be one of 8000, 16000, 48000; got number 12345/],
    ['44100', 44_100, /one of 8000, 16000, 48000/],
    ['a string', '8000', /one of 8000, 16000, 48000; got "8000"/],
    ['null', null, /got null/],
  ],
  optionalEndpointId: [
    ['a number', 5, /must be a string; got number 5/],
    ['empty', '', /must not be empty/],
    ['129 characters', 'e'.repeat(129), /longer than 128/],
  ],
  urlTimeoutMs: [
    ['zero', 0, /timeout_ms must be between 1 and 60000 ms; got 0/],
    ['above 60 s', 60_001, /between 1 and 60000 ms/],
    ['fractional', 1.5, /integer/],
    ['a string', '500', /must be a number/],
    ['null', null, /must be a number; got null/],
  ],
  cacheTtlSecs: [
    ['negative', -1, /cache_ttl_secs must be between 0 and 86400 s; got -1/],
    ['above a day', 86_401, /between 0 and 86400 s/],
    ['a string', '300', /must be a number/],
  ],
  fileName: [
    ['empty', '', /must not be empty/],
    ['a number', 1, /must be a string/],
    ['null', null, /must be a string; got null/],
    ['201 characters', 'a'.repeat(201), /longer than 200/],
  ],
  positionMs: [
    ['missing', undefined, /required/],
    ['negative', -20, /between 0 and/],
    ['fractional', 10.5, /integer/],
    ['a string', '100', /must be a number/],
  ],
};

/** Values that must pass, for each kind: [value, what it yields]. */
const GOOD: Record<Kind, Array<[unknown, unknown]>> = {
  endpointId: [['e', 'e'], ['x'.repeat(128), 'x'.repeat(128)], ['ep with spaces/é', 'ep with spaces/é']],
  sdp: [[PLAIN_SDP, PLAIN_SDP], ['v'.repeat(60_000), 'v'.repeat(60_000)]],
  direction: [['sendrecv', 'sendrecv'], ['sendonly', 'sendonly'], ['recvonly', 'recvonly'], ['inactive', 'inactive'], [undefined, 'sendrecv']],
  directionOrAuto: [['auto', 'auto'], ['sendrecv', 'sendrecv'], ['sendonly', 'sendonly'], ['recvonly', 'recvonly'], ['inactive', 'inactive']],
  bool: [[true, true], [false, false], [undefined, false]],
  codecs: [[['pcmu'], ['pcmu']], [['g722', 'opus'], ['g722', 'opus']], [['opus', 'pcma', 'pcmu', 'g722'], ['opus', 'pcma', 'pcmu', 'g722']], [undefined, undefined]],
  generation: [[0, 0], [1, 1], [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], [undefined, undefined]],
  uuid: [[U1, U1], [U2, U2.toLowerCase()]],
  optionalUuid: [[U1, U1], [U2, U2.toLowerCase()], [undefined, undefined]],
  tone: [['ringback', 'ringback'], ['ringing', 'ringing'], ['busy', 'busy'], ['beep', 'beep'], ['sine', 'sine'], ['silence', 'silence']],
  frequency: [[20, 20], [20_000, 20_000], [440, 440], [440.5, 440.5], [undefined, undefined]],
  duration: [[1, 1], [20, 20], [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], [null, null], [undefined, null]],
  source: [['a.wav', 'a.wav'], ['/srv/media/x y.wav', '/srv/media/x y.wav'], ['a'.repeat(4096), 'a'.repeat(4096)]],
  startMs: [[0, 0], [20, 20], [undefined, 0]],
  loopCount: [[0, 0], [10_000, 10_000], [null, null], [undefined, 0]],
  gainDb: [[-60, -60], [20, 20], [-3.5, -3.5], [undefined, 0]],
  positionMs: [[0, 0], [999_999, 999_999]],
  sampleRate: [[8000, 8000], [16_000, 16_000], [48_000, 48_000], [undefined, 8000]],
  optionalEndpointId: [['e1', 'e1'], [null, null], [undefined, null]],
  fileName: [['a.pcap', 'a.pcap'], ['a'.repeat(200), 'a'.repeat(200)], [undefined, undefined]],
  urlTimeoutMs: [[1, 1], [60_000, 60_000], [undefined, undefined]],
  cacheTtlSecs: [[0, 0], [86_400, 86_400], [undefined, undefined]],
};

function withField(params: Params, field: string, value: unknown): Params {
  const p = { ...params };
  if (value === undefined) delete p[field];
  else p[field] = value;
  return p;
}

test('the table covers every method of SHAPES, and lists each method’s parameters', (t) => {
  t.deepEqual(Object.keys(SHAPES).sort(), Object.keys(CASES).sort());
  for (const [m, c] of Object.entries(CASES)) t.deepEqual(Object.keys(SHAPES[m as Method]).sort(), Object.keys(c.fields).sort(), m);
});

test('the spec’s endpoint commands are all in SHAPES under their canonical names', (t) => {
  const spec = [
    'endpoint.webrtc.create_from_offer', 'endpoint.webrtc.create_offer', 'endpoint.webrtc.accept_answer', 'endpoint.webrtc.accept_offer', 'endpoint.webrtc.ice_restart',
    'endpoint.rtp.create_from_offer', 'endpoint.rtp.create_offer', 'endpoint.rtp.accept_answer', 'endpoint.rtp.reinvite', 'endpoint.rtp.srtp_rekey',
    'endpoint.create_tone', 'endpoint.update_direction', 'endpoint.remove', 'endpoint.transfer',
  ];
  for (const m of spec) t.true(Object.hasOwn(SHAPES, m), m);
});

test('only session.create and session.attach work without a bound session', (t) => {
  t.deepEqual([...SESSIONLESS].sort(), ['session.attach', 'session.create']);
});

test('TONES are the spec’s six tones', (t) => {
  t.deepEqual([...TONES].sort(), ['beep', 'busy', 'ringback', 'ringing', 'silence', 'sine']);
});

for (const [m, c] of Object.entries(CASES) as Array<[Method, MethodCase]>) {
  test(`${m}: a minimal valid call passes with the spec’s defaults`, (t) => {
    const r = accepted(t, checkCommand(m, { ...c.minimal }, noSdpSniffing));
    t.is(r.method, m);
    t.deepEqual(r.params, c.defaults);
  });

  test(`${m}: a call giving every parameter passes as given`, (t) => {
    const r = accepted(t, checkCommand(m, { ...c.full }, noSdpSniffing));
    t.is(r.method, m);
    t.deepEqual(r.params, c.fullResult ?? c.full);
  });

  for (const [field, kind] of Object.entries(c.fields)) {
    test(`${m}: each wrong ${field} is INVALID_PARAMS naming ${field} and what is wrong`, (t) => {
      const base = m === 'endpoint.create_tone' && field === 'frequency' ? { tone: 'sine' } : c.minimal;
      for (const [label, value, why] of BAD[kind]) {
        const msg = refused(t, checkCommand(m, withField(base, field, value), noSdpSniffing), 'INVALID_PARAMS');
        t.regex(msg, names(field), `${field} ${label}: ${msg}`);
        t.regex(msg, why, `${field} ${label}: ${msg}`);
      }
    });

    test(`${m}: each valid ${field} passes and yields the expected value`, (t) => {
      const base = m === 'endpoint.create_tone' && field === 'frequency' ? { tone: 'sine' } : c.minimal;
      for (const [value, expected] of GOOD[kind]) {
        if (value === undefined && Object.hasOwn(c.minimal, field)) continue; // a required field cannot be omitted
        const r = accepted(t, checkCommand(m, withField(base, field, value), noSdpSniffing));
        t.deepEqual(r.params[field], expected, `${field} = ${JSON.stringify(value)}`);
      }
    });
  }

  test(`${m}: an unknown extra field is INVALID_PARAMS naming it`, (t) => {
    const extras: Params[] = [
      { bogus: 1 },
      { Endpoint_ID: 'e1' },
      { type: 'rtp' },
      { toString: 'x' },
      { constructor: 1 },
      { hasOwnProperty: true },
      JSON.parse('{"__proto__": {"x": 1}}') as Params,
    ];
    for (const extra of extras) {
      const [key] = Object.keys(extra);
      const msg = refused(t, checkCommand(m, { ...c.minimal, ...extra }, noSdpSniffing), 'INVALID_PARAMS');
      t.regex(msg, new RegExp(`unknown parameter ${key!}\\b`), msg);
      if (Object.keys(c.fields).length === 0) t.regex(msg, /takes none/);
      else for (const f of Object.keys(c.fields)) t.regex(msg, names(f), `the message lists ${f}: ${msg}`);
    }
  });
}

test('the caller’s params object is not modified', (t) => {
  const params = { type: 'rtp', srtp: true };
  const frozen = Object.freeze({ ...params });
  accepted(t, checkCommand('endpoint.create_offer', frozen, noSdpSniffing));
  t.deepEqual(frozen, params);
  const tone = Object.freeze({ tone: 'beep' });
  accepted(t, checkCommand('endpoint.create_tone', tone, noSdpSniffing));
  t.deepEqual(tone, { tone: 'beep' });
});

// ---- cross-field rules ----

test('endpoint.rtp.create_offer: srtp and srtp_optional are mutually exclusive', (t) => {
  const msg = refused(t, checkCommand('endpoint.rtp.create_offer', { srtp: true, srtp_optional: true }, noSdpSniffing), 'INVALID_PARAMS');
  t.regex(msg, /\bsrtp\b/);
  t.regex(msg, /\bsrtp_optional\b/);
  t.regex(msg, /mutually exclusive/);
  for (const [srtp, srtp_optional] of [[true, false], [false, true], [false, false]]) {
    const r = accepted(t, checkCommand('endpoint.rtp.create_offer', { srtp, srtp_optional }, noSdpSniffing));
    t.deepEqual([r.params.srtp, r.params.srtp_optional], [srtp, srtp_optional]);
  }
  // through the alias as well
  refused(t, checkCommand('endpoint.create_offer', { type: 'rtp', srtp: true, srtp_optional: true }, noSdpSniffing), 'INVALID_PARAMS');
});

test('endpoint.create_tone: frequency is for sine only; other tones refuse it, naming frequency and the tone', (t) => {
  for (const tone of ['ringback', 'ringing', 'busy', 'beep', 'silence']) {
    const msg = refused(t, checkCommand('endpoint.create_tone', { tone, frequency: 440 }, noSdpSniffing), 'INVALID_PARAMS');
    t.regex(msg, /\bfrequency\b/);
    t.regex(msg, new RegExp(`\\b${tone}\\b`));
    // without a frequency every tone is fine
    t.deepEqual(accepted(t, checkCommand('endpoint.create_tone', { tone }, noSdpSniffing)).params, { tone, frequency: undefined, duration_ms: null });
  }
  t.deepEqual(accepted(t, checkCommand('endpoint.create_tone', { tone: 'sine', frequency: 1000, duration_ms: null }, noSdpSniffing)).params, { tone: 'sine', frequency: 1000, duration_ms: null });
});

test('endpoint.create_tone: a bad frequency is a range error even for a non-sine tone', (t) => {
  const msg = refused(t, checkCommand('endpoint.create_tone', { tone: 'busy', frequency: 5 }, noSdpSniffing), 'INVALID_PARAMS');
  t.regex(msg, /frequency must be between 20 and 20000 Hz/);
});

// ---- aliases ----

test('endpoint.create_from_offer dispatches by the SDP (stub predicate): WebRTC or RTP, params kept', (t) => {
  const seen: string[] = [];
  const sniff = (answer: boolean) => (sdp: string) => (seen.push(sdp), answer);
  const web = accepted(t, checkCommand('endpoint.create_from_offer', { sdp: 'WEB', direction: 'recvonly' }, sniff(true)));
  t.deepEqual(web, { method: 'endpoint.webrtc.create_from_offer', params: { sdp: 'WEB', direction: 'recvonly' } });
  const rtp = accepted(t, checkCommand('endpoint.create_from_offer', { sdp: 'RTP' }, sniff(false)));
  t.deepEqual(rtp, { method: 'endpoint.rtp.create_from_offer', params: { sdp: 'RTP', direction: 'sendrecv' } });
  t.deepEqual(seen, ['WEB', 'RTP']);
});

test('endpoint.create_from_offer with the real SDP sniffer: a DTLS/ICE offer is WebRTC, a plain one RTP', (t) => {
  t.is(accepted(t, checkCommand('endpoint.create_from_offer', { sdp: WEBRTC_SDP }, isWebRtcSdp)).method, 'endpoint.webrtc.create_from_offer');
  t.is(accepted(t, checkCommand('endpoint.create_from_offer', { sdp: PLAIN_SDP }, isWebRtcSdp)).method, 'endpoint.rtp.create_from_offer');
  const savp = PLAIN_SDP.replace('RTP/AVP', 'RTP/SAVP') + 'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\n';
  t.is(accepted(t, checkCommand('endpoint.create_from_offer', { sdp: savp }, isWebRtcSdp)).method, 'endpoint.rtp.create_from_offer');
});

test('endpoint.create_from_offer: a missing or bad sdp is INVALID_PARAMS naming sdp, without sniffing', (t) => {
  for (const [label, value, why] of BAD.sdp) {
    const msg = refused(t, checkCommand('endpoint.create_from_offer', withField({ direction: 'sendrecv' }, 'sdp', value), noSdpSniffing), 'INVALID_PARAMS');
    t.regex(msg, names('sdp'), `${label}: ${msg}`);
    t.regex(msg, why, `${label}: ${msg}`);
  }
});

test('endpoint.create_from_offer: other params are checked against the resolved method', (t) => {
  const msg = refused(t, checkCommand('endpoint.create_from_offer', { sdp: PLAIN_SDP, direction: 'both' }, () => false), 'INVALID_PARAMS');
  t.regex(msg, /\bdirection\b/);
  const extra = refused(t, checkCommand('endpoint.create_from_offer', { sdp: WEBRTC_SDP, srtp: true }, () => true), 'INVALID_PARAMS');
  t.regex(extra, /unknown parameter srtp\b/);
  const long = refused(t, checkCommand('endpoint.create_from_offer', { sdp: 'v'.repeat(60_001) }, () => false), 'INVALID_PARAMS');
  t.regex(long, /sdp is longer than 60000/);
});

test('endpoint.create_offer dispatches by type and drops type from the params', (t) => {
  t.deepEqual(accepted(t, checkCommand('endpoint.create_offer', { type: 'webrtc' }, noSdpSniffing)), { method: 'endpoint.webrtc.create_offer', params: { direction: 'sendrecv' } });
  t.deepEqual(accepted(t, checkCommand('endpoint.create_offer', { type: 'webrtc', direction: 'sendonly' }, noSdpSniffing)), {
    method: 'endpoint.webrtc.create_offer',
    params: { direction: 'sendonly' },
  });
  t.deepEqual(accepted(t, checkCommand('endpoint.create_offer', { type: 'rtp', srtp_optional: true, codecs: ['pcma'] }, noSdpSniffing)), {
    method: 'endpoint.rtp.create_offer',
    params: { direction: 'sendrecv', srtp: false, srtp_optional: true, codecs: ['pcma'] },
  });
});

test('endpoint.create_offer: a missing or unknown type is INVALID_PARAMS naming type', (t) => {
  for (const type of [undefined, 'RTP', 'tone', 'sip', '', 1, null, ['rtp']]) {
    const msg = refused(t, checkCommand('endpoint.create_offer', withField({ direction: 'sendrecv' }, 'type', type), noSdpSniffing), 'INVALID_PARAMS');
    t.regex(msg, /\btype\b/, msg);
    t.regex(msg, type === undefined ? /required/ : /one of webrtc, rtp\b/, msg);
  }
});

test('endpoint.create_offer: parameters of the other family are refused', (t) => {
  const msg = refused(t, checkCommand('endpoint.create_offer', { type: 'webrtc', srtp: true }, noSdpSniffing), 'INVALID_PARAMS');
  t.regex(msg, /unknown parameter srtp\b/);
  const bad = refused(t, checkCommand('endpoint.create_offer', { type: 'rtp', codecs: ['g729'] }, noSdpSniffing), 'INVALID_PARAMS');
  t.regex(bad, /codecs\[0\]/);
});

test('endpoint.accept_offer and endpoint.ice_restart are WebRTC aliases; endpoint.srtp_rekey is RTP', (t) => {
  t.deepEqual(accepted(t, checkCommand('endpoint.accept_offer', { endpoint_id: 'e1', sdp: WEBRTC_SDP }, noSdpSniffing)), {
    method: 'endpoint.webrtc.accept_offer',
    params: { endpoint_id: 'e1', sdp: WEBRTC_SDP },
  });
  t.deepEqual(accepted(t, checkCommand('endpoint.ice_restart', { endpoint_id: 'e1' }, noSdpSniffing)), { method: 'endpoint.webrtc.ice_restart', params: { endpoint_id: 'e1' } });
  t.deepEqual(accepted(t, checkCommand('endpoint.srtp_rekey', { endpoint_id: 'e1' }, noSdpSniffing)), { method: 'endpoint.rtp.srtp_rekey', params: { endpoint_id: 'e1' } });
});

test('the aliases check their params like the canonical methods', (t) => {
  for (const m of ['endpoint.accept_offer', 'endpoint.ice_restart', 'endpoint.srtp_rekey']) {
    t.regex(refused(t, checkCommand(m, {}, noSdpSniffing), 'INVALID_PARAMS'), /endpoint_id is required/, m);
    t.regex(refused(t, checkCommand(m, { endpoint_id: 'e1', sdp: WEBRTC_SDP, extra: 1 }, noSdpSniffing), 'INVALID_PARAMS'), /unknown parameter/, m);
  }
  t.regex(refused(t, checkCommand('endpoint.accept_offer', { endpoint_id: 'e1' }, noSdpSniffing), 'INVALID_PARAMS'), /sdp is required/);
});

test('endpoint.accept_answer stays as it is (the session dispatches it by the endpoint’s type)', (t) => {
  const r = accepted(t, checkCommand('endpoint.accept_answer', { endpoint_id: 'e1', sdp: PLAIN_SDP, offer_generation: 2 }, noSdpSniffing));
  t.deepEqual(r, { method: 'endpoint.accept_answer', params: { endpoint_id: 'e1', sdp: PLAIN_SDP, offer_generation: 2 } });
});

// ---- unknown and not-yet-built methods ----

test('unknown methods are METHOD_NOT_FOUND naming the method, including Object.prototype names', (t) => {
  const unknown = [
    'endpoint.foo', 'session.list', 'ENDPOINT.REMOVE', 'endpoint.remove ', 'endpoint', 'endpoint.rtp', 'endpoint.rtp.', 'endpoint.tone.create',
    'endpoint.webrtc.frobnicate', 'endpoint.webrtc.create_offerr', 'endpoint.rtp.ice_restart',
    'toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf',
  ];
  for (const m of unknown) {
    const msg = refused(t, checkCommand(m, {}, noSdpSniffing), 'METHOD_NOT_FOUND');
    t.true(msg.includes(m), msg);
  }
});

test('endpoint.create_with_file is an alias of endpoint.create_file', (t) => {
  const a = accepted(t, checkCommand('endpoint.create_with_file', { source: 'x.wav', loop_count: 2 }, noSdpSniffing));
  t.deepEqual(a, { method: 'endpoint.create_file', params: { source: 'x.wav', start_ms: 0, loop_count: 2, gain_db: 0, timeout_ms: undefined, cache_ttl_secs: undefined } });
  t.regex(refused(t, checkCommand('endpoint.create_with_file', { source: 'x.wav', url: 'y' }, noSdpSniffing), 'INVALID_PARAMS'), /unknown parameter url/);
});

test('session.bridge is an alias of endpoint.create_bridge; no endpoint family is left NOT_IMPLEMENTED', (t) => {
  const a = accepted(t, checkCommand('session.bridge', { target_session_id: U2 }, noSdpSniffing));
  t.deepEqual(a, { method: 'endpoint.create_bridge', params: { target_session_id: U2.toLowerCase(), direction: 'sendrecv' } });
  t.regex(refused(t, checkCommand('session.bridge', {}, noSdpSniffing), 'INVALID_PARAMS'), /target_session_id is required/);
  t.is(NOT_YET.size, 0);
  for (const m of ['endpoint.create_file', 'endpoint.create_websocket', 'endpoint.create_bridge']) t.true(Object.hasOwn(SHAPES, m), m);
});
