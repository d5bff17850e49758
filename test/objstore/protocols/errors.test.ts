import test from 'ava';
import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { errorBody, statusLine, type ErrorBody } from '../../../protocols/objstore/errors.js';

test('the module is pure: no imports, no timers', (t) => {
  const src = readFileSync(new URL('../../../protocols/objstore/errors.js', import.meta.url), 'utf8');
  t.notRegex(src, /\bfrom\s+['"]|\bimport\s*\(|require\(/);
  t.notRegex(src, /setTimeout|setInterval|setImmediate|Date\.now|Math\.random|process\./);
});

test('errorBody is {"error": {"code", "message"}} as JSON text', (t) => {
  t.is(errorBody('NOT_FOUND', 'no object at /a/b'), '{"error":{"code":"NOT_FOUND","message":"no object at /a/b"}}');
  const tricky = 'quote " backslash \\ newline \n tab \t nul \u0000 é 😀 </script>';
  const parsed = JSON.parse(errorBody('X', tricky)) as ErrorBody;
  t.deepEqual(parsed, { error: { code: 'X', message: tricky } });
  t.deepEqual(Object.keys(parsed), ['error']);
  t.deepEqual(Object.keys(parsed.error), ['code', 'message']);
  t.deepEqual(JSON.parse(errorBody('', '')), { error: { code: '', message: '' } });
});

test('status lines of every code the service answers with', (t) => {
  const expected: Record<number, string> = {
    200: '200 OK',
    201: '201 Created',
    204: '204 No Content',
    206: '206 Partial Content',
    400: '400 Bad Request',
    401: '401 Unauthorized',
    403: '403 Forbidden',
    404: '404 Not Found',
    405: '405 Method Not Allowed',
    409: '409 Conflict',
    411: '411 Length Required',
    413: '413 Content Too Large',
    415: '415 Unsupported Media Type',
    416: '416 Range Not Satisfiable',
    422: '422 Unprocessable Content',
    455: '455 Length Mismatch',
    456: '456 MD5 Mismatch',
    500: '500 Internal Server Error',
    502: '502 Bad Gateway',
    503: '503 Service Unavailable',
    504: '504 Gateway Timeout',
    507: '507 Insufficient Storage',
    202: '202 Accepted',
    408: '408 Request Timeout',
    431: '431 Request Header Fields Too Large',
    304: '304 Not Modified',
  };
  for (const [code, line] of Object.entries(expected)) t.is(statusLine(Number(code)), line);
  t.is(Object.keys(expected).length, 26);
});

test('standard reason phrases agree with Node where RFC 9110 did not rename them', (t) => {
  const renamed = new Set([413, 422]); // Node still says Payload Too Large, Unprocessable Entity
  for (const code of [200, 201, 202, 204, 206, 304, 400, 401, 403, 404, 405, 408, 409, 411, 415, 416, 431, 500, 501, 502, 503, 504, 507]) {
    if (renamed.has(code)) continue;
    t.is(statusLine(code), `${code} ${STATUS_CODES[code]}`);
  }
});

test('an unknown status code throws', (t) => {
  for (const code of [0, -1, 100, 203, 301, 302, 402, 407, 418, 429, 454, 457, 505, 600, 200.5, NaN, Infinity]) {
    const e = t.throws(() => statusLine(code), { instanceOf: RangeError }, String(code));
    t.regex(e!.message, /no status line/);
  }
  t.throws(() => statusLine('200' as unknown as number), { instanceOf: RangeError });
});
