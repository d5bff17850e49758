/**
 * Loads the RFC 4475 torture messages kept as text in test/fixtures/sip/rfc4475/: one file per
 * message, named as in the RFC's archive, written with the RFC's own conventions (LF for the
 * RFC's CRLF, `<hex>..</hex>` for bytes that are not printable, §2.2), and turned back into the
 * exact bytes here. The text comes from the RFC (as reproduced in resiprocate's torture test
 * comments, with the long lines already joined, §2.1); every message with a body was checked:
 * its Content-Length equals the length of the body rebuilt here, except where the RFC says it
 * must not (clerr, ncl, mcl01, dblreq).
 */
import { readFileSync } from 'node:fs';

const DIR = new URL('../../../test/fixtures/sip/rfc4475/', import.meta.url);

export function torture(name: string): Buffer {
  const text = readFileSync(new URL(`${name}.txt`, DIR));
  const withHex = Buffer.from(
    text.toString('latin1').replace(/<hex>([0-9A-Fa-f]+)<\/hex>/g, (_m, hex: string) => Buffer.from(hex, 'hex').toString('latin1')),
    'latin1',
  );
  return Buffer.from(withHex.toString('latin1').replace(/\n/g, '\r\n'), 'latin1');
}

/**
 * mpart01 (RFC 4475 §3.1.1.11) carries a DER blob that is only published in the RFC's
 * base64 archive, which is not reachable here: its headers and first body part are the RFC's,
 * the binary part is a stand-in of the same length holding NUL bytes, so Content-Length (553)
 * is the RFC's. NOT byte-exact.
 */
export function mpart01(): Buffer {
  const head = [
    'MESSAGE sip:kumiko@example.org SIP/2.0',
    'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-d87543-4dade06d0bdb11ee-1--d87543-;rport',
    'Max-Forwards: 70',
    'Route: <sip:127.0.0.1:5080>',
    'Identity: r5mwreLuyDRYBi/0TiPwEsY3rEVsk/G2WxhgTV1PF7hHuLIK0YWVKZhKv9Mj8UeXqkMVbnVq37CD+813gvYjcBUaZngQmXc9WNZSDNGCzA+fWl9MEUHWIZo1CeJebdY/XlgKeTa0Olvq0rt70Q5jiSfbqMJmQFteeivUhkMWYUA=',
    'Contact: <sip:fluffy@127.0.0.1:5070>',
    'To: <sip:kumiko@example.org>',
    'From: <sip:fluffy@example.com>;tag=2fb0dcc9',
    'Call-ID: 3d9485ad0c49859b@Zmx1ZmZ5LW1hYy0xNi5sb2NhbA..',
    'CSeq: 1 MESSAGE',
    'Content-Transfer-Encoding: binary',
    'Content-Type: multipart/mixed;boundary=7a9cbec02ceef655',
    'Date: Sat, 15 Oct 2005 04:44:56 GMT',
    'User-Agent: SIPimp.org/0.2.5 (curses)',
    'Content-Length: 553',
    '',
    '',
  ].join('\r\n');
  const part1 = '--7a9cbec02ceef655\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: binary\r\n\r\nHello\r\n--7a9cbec02ceef655\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n';
  const tail = '\r\n--7a9cbec02ceef655--\r\n';
  const blob = Buffer.alloc(553 - part1.length - tail.length);
  for (let i = 0; i < blob.length; i++) blob[i] = i % 7 === 0 ? 0 : (i * 37) & 0xff;
  return Buffer.concat([Buffer.from(head), Buffer.from(part1), blob, Buffer.from(tail)]);
}
