/**
 * The command envelope (spec: "a request has `id` (string), `method` (string) and `params`
 * (object)"): parseCommand on good and bad text, failure(), the size limit, and the purity of
 * the five pure modules of the media bridge's command path.
 */
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { failure, MAX_COMMAND_BYTES, parseCommand, type CommandFailure, type ErrorCode, type Parsed } from '../../protocols/media/envelope.js';

function refused(t: ExecutionContext, p: Parsed): CommandFailure {
  if (p.ok) {
    t.fail(`expected a refusal, got ${JSON.stringify(p.request).slice(0, 200)}`);
    throw new Error('unreachable');
  }
  return p.reply;
}

test('a well-formed command parses into {id, method, params}', (t) => {
  const p = parseCommand('{"id":"req-1","method":"endpoint.remove","params":{"endpoint_id":"e1"}}');
  t.deepEqual(p, { ok: true, request: { id: 'req-1', method: 'endpoint.remove', params: { endpoint_id: 'e1' } } });
});

test('whitespace and key order do not matter; extra top-level fields are ignored', (t) => {
  const p = parseCommand(' \n{ "params" : {"a": [1, {"b": null}]}, "jsonrpc": "2.0", "method": "m", "id": "x" }\t');
  t.deepEqual(p, { ok: true, request: { id: 'x', method: 'm', params: { a: [1, { b: null }] } } });
});

test('params may be omitted (it is then {}), and {} is accepted', (t) => {
  t.deepEqual(parseCommand('{"id":"1","method":"session.info"}'), { ok: true, request: { id: '1', method: 'session.info', params: {} } });
  t.deepEqual(parseCommand('{"id":"1","method":"session.info","params":{}}'), { ok: true, request: { id: '1', method: 'session.info', params: {} } });
});

test('the method is not checked here: any non-empty string passes to the command table', (t) => {
  const p = parseCommand('{"id":"1","method":"no.such.method"}');
  t.true(p.ok);
  if (p.ok) t.is(p.request.method, 'no.such.method');
});

for (const text of ['', ' ', '{', '}', '{"id":"1",}', "{'id':'1','method':'m'}", 'undefined', 'NaN', '{"id":"1","method":"m"} x', '{"id":1 "method":"m"}', '\u0000']) {
  test(`malformed JSON ${JSON.stringify(text)} is PARSE_ERROR with id null`, (t) => {
    const r = refused(t, parseCommand(text));
    t.is(r.id, null);
    t.is(r.error.code, 'PARSE_ERROR');
    t.regex(r.error.message, /JSON/);
  });
}

for (const text of ['42', '-1.5', '"a string"', 'true', 'false', 'null', '[]', '[{"id":"1","method":"m","params":{}}]']) {
  test(`JSON that is not an object (${text}) is INVALID_REQUEST with id null`, (t) => {
    const r = refused(t, parseCommand(text));
    t.is(r.id, null);
    t.is(r.error.code, 'INVALID_REQUEST');
    t.regex(r.error.message, /object/);
  });
}

const badIds: Array<[string, unknown]> = [
  ['missing', undefined],
  ['null', null],
  ['a number', 7],
  ['a boolean', true],
  ['an object', { a: 1 }],
  ['an array', ['1']],
  ['empty', ''],
  ['257 characters long', 'i'.repeat(257)],
];
for (const [what, id] of badIds) {
  test(`an id that is ${what} is INVALID_REQUEST with id null, naming id`, (t) => {
    const r = refused(t, parseCommand(JSON.stringify({ id, method: 'session.info', params: {} })));
    t.is(r.id, null);
    t.is(r.error.code, 'INVALID_REQUEST');
    t.regex(r.error.message, /\bid\b/);
  });
}

test('ids of 1 and of 256 characters (any characters) are accepted and echoed as given', (t) => {
  for (const id of ['1', 'é', ' ', 'x'.repeat(256), '🎵'.repeat(128)]) {
    const p = parseCommand(JSON.stringify({ id, method: 'm' }));
    t.true(p.ok, id);
    if (p.ok) t.is(p.request.id, id);
  }
});

const badMethods: Array<[string, unknown]> = [
  ['missing', undefined],
  ['null', null],
  ['a number', 1],
  ['a boolean', false],
  ['an array', ['session.info']],
  ['an object', { name: 'session.info' }],
  ['empty', ''],
];
for (const [what, method] of badMethods) {
  test(`a method that is ${what} is INVALID_REQUEST echoing the id, naming method`, (t) => {
    const r = refused(t, parseCommand(JSON.stringify({ id: 'abc', method, params: {} })));
    t.is(r.id, 'abc');
    t.is(r.error.code, 'INVALID_REQUEST');
    t.regex(r.error.message, /\bmethod\b/);
  });
}

const badParams: Array<[string, unknown]> = [
  ['null', null],
  ['an array', [{ endpoint_id: 'e' }]],
  ['an empty array', []],
  ['a string', '{"endpoint_id":"e"}'],
  ['a number', 0],
  ['a boolean', true],
];
for (const [what, params] of badParams) {
  test(`params that are ${what} are INVALID_REQUEST echoing the id, naming params`, (t) => {
    const r = refused(t, parseCommand(JSON.stringify({ id: 'abc', method: 'endpoint.remove', params })));
    t.is(r.id, 'abc');
    t.is(r.error.code, 'INVALID_REQUEST');
    t.regex(r.error.message, /\bparams\b/);
  });
}

/** A command whose UTF-8 encoding is exactly `bytes` long, padded with `pad` (one character). */
function commandOfBytes(bytes: number, pad: string): string {
  const head = '{"id":"big","method":"endpoint.rtp.create_from_offer","params":{"sdp":"';
  const tail = '"}}';
  const room = bytes - Buffer.byteLength(head + tail);
  const padBytes = Buffer.byteLength(pad);
  const filler = pad.repeat(Math.floor(room / padBytes)) + 'v'.repeat(room % padBytes);
  const text = head + filler + tail;
  if (Buffer.byteLength(text) !== bytes) throw new Error('bad test helper');
  return text;
}

test('the size limit is 64 KiB: a command of exactly the limit parses, one byte more is refused', (t) => {
  t.is(MAX_COMMAND_BYTES, 64 * 1024);
  const atLimit = parseCommand(commandOfBytes(MAX_COMMAND_BYTES, 'v'));
  t.true(atLimit.ok);
  if (atLimit.ok) t.regex(atLimit.request.params.sdp as string, /^v{65000,}$/);
  const r = refused(t, parseCommand(commandOfBytes(MAX_COMMAND_BYTES + 1, 'v')));
  t.is(r.id, null);
  t.is(r.error.code, 'INVALID_REQUEST');
  t.regex(r.error.message, new RegExp(`${MAX_COMMAND_BYTES + 1}\\b.*\\b${MAX_COMMAND_BYTES}\\b`));
});

test('the size limit counts UTF-8 bytes, not characters', (t) => {
  // 3-byte characters: 21,846 of them are 65,538 bytes, far fewer characters than the limit.
  const euro = commandOfBytes(MAX_COMMAND_BYTES + 1, '€');
  t.true(euro.length < MAX_COMMAND_BYTES);
  t.is(refused(t, parseCommand(euro)).error.code, 'INVALID_REQUEST');
  t.true(parseCommand(commandOfBytes(MAX_COMMAND_BYTES, '€')).ok);
  // 4-byte characters (surrogate pairs in JS strings) count 4, not 2.
  const notes = commandOfBytes(MAX_COMMAND_BYTES + 1, '🎵');
  t.true(notes.length < MAX_COMMAND_BYTES);
  t.is(refused(t, parseCommand(notes)).error.code, 'INVALID_REQUEST');
  t.true(parseCommand(commandOfBytes(MAX_COMMAND_BYTES, '🎵')).ok);
  // 2-byte characters.
  t.is(refused(t, parseCommand(commandOfBytes(MAX_COMMAND_BYTES + 1, 'é'))).error.code, 'INVALID_REQUEST');
  t.true(parseCommand(commandOfBytes(MAX_COMMAND_BYTES, 'é')).ok);
});

test('an oversize message is refused before parsing: even invalid JSON gets the size error', (t) => {
  const r = refused(t, parseCommand('{'.repeat(MAX_COMMAND_BYTES + 1)));
  t.is(r.error.code, 'INVALID_REQUEST');
  t.regex(r.error.message, /limit/);
});

test('an SDP offer with 16 audio sections fits in one command', (t) => {
  const section = (i: number) =>
    `m=audio ${40000 + 2 * i} RTP/SAVP 0 8 9 111 101\r\nc=IN IP4 192.0.2.1\r\na=rtpmap:111 opus/48000/2\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\na=sendrecv\r\n`;
  let sdp = 'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nt=0 0\r\n';
  for (let i = 0; i < 16; i++) sdp += section(i);
  const p = parseCommand(JSON.stringify({ id: '1', method: 'endpoint.create_from_offer', params: { sdp } }));
  t.true(p.ok);
  if (p.ok) t.is(p.request.params.sdp, sdp);
});

test('failure() builds {id, error: {code, message}} that survives JSON', (t) => {
  const codes: ErrorCode[] = [
    // the spec's codes, then ours
    'NO_SESSION', 'INVALID_PARAMS', 'SESSION_NOT_FOUND', 'ENDPOINT_ERROR', 'TRANSFER_FAILED',
    'PARSE_ERROR', 'INVALID_REQUEST', 'METHOD_NOT_FOUND', 'NOT_IMPLEMENTED', 'LIMIT_EXCEEDED', 'UNAUTHORIZED', 'INTERNAL_ERROR',
  ];
  for (const code of codes) {
    const f = failure('id-1', code, `because ${code}`);
    t.deepEqual(JSON.parse(JSON.stringify(f)), { id: 'id-1', error: { code, message: `because ${code}` } });
  }
  t.deepEqual(failure(null, 'PARSE_ERROR', 'x'), { id: null, error: { code: 'PARSE_ERROR', message: 'x' } });
  t.is(JSON.stringify(failure(null, 'PARSE_ERROR', 'x')), '{"id":null,"error":{"code":"PARSE_ERROR","message":"x"}}');
});

test('a __proto__ key in params stays an own field (JSON.parse does not set the prototype)', (t) => {
  const p = parseCommand('{"id":"1","method":"m","params":{"__proto__":{"polluted":true}}}');
  t.true(p.ok);
  if (!p.ok) return;
  t.deepEqual(Object.keys(p.request.params), ['__proto__']);
  t.is(Object.getPrototypeOf(p.request.params), Object.prototype);
  t.is(({} as Record<string, unknown>).polluted, undefined);
});

// ---- purity of the five modules of the command path ----

const PURE = ['envelope', 'validate', 'commands', 'routing', 'outbound'];
for (const name of PURE) {
  test(`protocols/media/${name}.ts is pure: sibling imports only, no timers, clock, randomness or I/O`, (t) => {
    const src = readFileSync(new URL(`../../../protocols/media/${name}.ts`, import.meta.url), 'utf8');
    const imports = [...src.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\bimport\s+['"]([^'"]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]/g)].map(
      (m) => m[1] ?? m[2] ?? m[3] ?? m[4],
    );
    for (const i of imports) t.regex(i as string, /^\.\/[\w-]+\.js$/, `${name}.ts imports ${i}`);
    t.notRegex(src, /setTimeout|setInterval|setImmediate|queueMicrotask|Date\.now|new Date\b|performance\.now|Math\.random|process\.|\bnode:|\brequire\s*\(|\bfs\b/);
  });
}

test('the purity check sees forbidden things (it is not vacuous)', (t) => {
  const forbidden = /setTimeout|setInterval|setImmediate|queueMicrotask|Date\.now|new Date\b|performance\.now|Math\.random|process\.|\bnode:|\brequire\s*\(|\bfs\b/;
  for (const bad of ["import { readFileSync } from 'node:fs';", 'const t = Date.now();', 'setTimeout(f, 1)', "import fs from 'fs'", 'x = Math.random()']) t.regex(bad, forbidden);
  for (const path of ['../media/g711.js', '../../runtime/x.js', 'node:crypto', 'sdp-transform', './types', './sdp/index.js']) t.notRegex(path, /^\.\/[\w-]+\.js$/);
  t.regex('./types.js', /^\.\/[\w-]+\.js$/);
});
