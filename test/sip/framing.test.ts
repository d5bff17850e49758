/**
 * TCP framing by Content-Length (RFC 3261 §18.3) and CRLF keep-alives (RFC 5626 §4.4.1).
 */
import test from 'ava';
import { frameStream } from '../../protocols/sip/framing.js';

const MSG = 'OPTIONS sip:a@b.example.com SIP/2.0\r\nl: 5\r\nCall-ID: x\r\n\r\nhello';

test('a whole message is framed by its Content-Length (compact form too), the next one left in the buffer', (t) => {
  const buf = Buffer.from(MSG + MSG.slice(0, 20));
  t.deepEqual(frameStream(buf), { kind: 'message', skip: 0, length: MSG.length });
});

test('a message cut in the headers or in the body is incomplete', (t) => {
  t.deepEqual(frameStream(Buffer.from(MSG.slice(0, 30))), { kind: 'incomplete' });
  t.deepEqual(frameStream(Buffer.from(MSG.slice(0, -1))), { kind: 'incomplete' });
});

test('keep-alives: a double CRLF is a ping, a single CRLF a pong, and they are skipped before a message', (t) => {
  t.deepEqual(frameStream(Buffer.from('\r\n\r\n')), { kind: 'keepalive', skip: 4, ping: true });
  t.deepEqual(frameStream(Buffer.from('\r\n')), { kind: 'keepalive', skip: 2, ping: false });
  t.deepEqual(frameStream(Buffer.from(`\r\n\r\n${MSG}`)), { kind: 'message', skip: 4, length: MSG.length });
});

test('framing errors: no Content-Length, a negative one, an oversized message, endless headers', (t) => {
  t.is(frameStream(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nCall-ID: x\r\n\r\n')).kind, 'error');
  t.is(frameStream(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nContent-Length: -999\r\n\r\n')).kind, 'error');
  t.deepEqual(frameStream(Buffer.from('OPTIONS sip:a@b SIP/2.0\r\nContent-Length: 100000\r\n\r\n')), { kind: 'error', reason: 'message of 100051 bytes exceeds the limit of 65535' });
  t.is(frameStream(Buffer.alloc(70000, 0x41)).kind, 'error');
});
