/**
 * Stream framing (RFC 3261 §18.3): where one SIP message ends in a TCP byte stream, by the
 * blank line and Content-Length, and the CRLF keep-alives of RFC 5626 §4.4.1 between messages.
 *
 * Decisions:
 * - Pure: the caller keeps its buffer and asks again when more bytes arrive.
 * - A missing or malformed Content-Length, or a message over `maxBytes` (default 65535), is
 *   a framing error: the stream cannot be resynchronised and the caller should answer 400 if
 *   it can and close the connection (RFC 4475 ncl). Headers longer than `maxBytes` without a
 *   blank line are an error too, so the buffer never grows without bound.
 */
import { DEFAULT_MAX_BYTES } from './parse.js';

export type Frame =
  /** `skip` leading bytes are keep-alive CRLFs; the message is the next `length` bytes. */
  | { kind: 'message'; skip: number; length: number }
  /** Only keep-alives so far: drop `skip` bytes. "\r\n\r\n" asks for a "\r\n" pong (RFC 5626). */
  | { kind: 'keepalive'; skip: number; ping: boolean }
  | { kind: 'incomplete' }
  | { kind: 'error'; reason: string };

export function frameStream(buf: Buffer, maxBytes = DEFAULT_MAX_BYTES): Frame {
  let skip = 0;
  while (buf[skip] === 0x0d && buf[skip + 1] === 0x0a) skip += 2;
  if (skip === buf.length) return skip === 0 ? { kind: 'incomplete' } : { kind: 'keepalive', skip, ping: skip >= 4 };
  if (buf.length - skip === 1 && buf[skip] === 0x0d) return { kind: 'incomplete' };
  const end = buf.indexOf('\r\n\r\n', skip, 'latin1');
  if (end < 0) return buf.length - skip > maxBytes ? { kind: 'error', reason: `no end of headers within ${maxBytes} bytes` } : { kind: 'incomplete' };
  const head = buf.subarray(skip, end).toString('latin1');
  const m = /\r\n(?:content-length|l)[ \t]*:[ \t]*([^\r\n]*)/i.exec(head);
  if (!m) return { kind: 'error', reason: 'missing Content-Length on a stream transport' };
  const value = (m[1] as string).trim();
  if (!/^\d+$/.test(value)) return { kind: 'error', reason: 'bad Content-Length' };
  const length = end + 4 - skip + Number(value);
  if (length > maxBytes) return { kind: 'error', reason: `message of ${length} bytes exceeds the limit of ${maxBytes}` };
  return buf.length - skip >= length ? { kind: 'message', skip, length } : { kind: 'incomplete' };
}
