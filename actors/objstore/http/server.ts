/**
 * Port 80: the object store's HTTP server (Node's http, its llhttp parser), in front of the two
 * route tables (objects.ts, manage.ts). It owns what is HTTP/1.x before any route: the server's
 * limits and timeouts, the request target (origin or absolute form, split from its query), Host,
 * the header count, `100 Continue` going through the handlers (sent only once a request is
 * accepted), and the answers to requests the parser refuses (JSON errors naming what was wrong,
 * in order after the answers already owed on the connection). Why node:http and not uWS: llhttp
 * answers pipelined requests in order, speaks HTTP/1.0, refuses duplicate Content-Length and
 * bad header bytes, and its timeouts are settings (docs/object-store.md "The HTTP server").
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorBody, statusLine } from '../../../protocols/objstore/errors.js';
import { responsesTotal } from '../metrics.js';
import { reply, sendError, type Reply } from './respond.js';

/** Headers a request may have (431 above): a bound on the work of one request's headers. */
export const MAX_HEADERS = 100;

export interface FrontOptions {
  /** Bytes of request line and headers (431 above). */
  maxHeaderBytes: number;
  /** The request line and headers must come within this (408 after). */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A small body (the management API's) that stalls this long is answered 408 (respond.ts collectBody). */
  bodyIdleTimeoutMs: number;
}

/** A request the routes see: its reply, its raw path (percent-encoded, no query) and its query. */
export type FrontHandler = (r: Reply, url: string, query: URLSearchParams) => void;

/** The target's path and query (origin form, or absolute form: `http://host/path?q`), or null. */
export function splitTarget(target: string): { url: string; query: URLSearchParams } | null {
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  const rest = absolute ? target.slice(absolute[0].length) || '/' : target;
  if (!rest.startsWith('/')) return null;
  const q = rest.indexOf('?');
  return q < 0 ? { url: rest, query: new URLSearchParams() } : { url: rest.slice(0, q), query: new URLSearchParams(rest.slice(q + 1)) };
}

/**
 * Per connection, the requests whose answers are still owed, in order. They are handled one at
 * a time, each once the answer before it is out: a GET pipelined after a PUT sees the object,
 * and a request behind one whose answer closes the connection never takes effect unanswered.
 * `then` runs when no answer is owed (an error answer of the parser's waits for it).
 */
interface Line {
  owed: Array<{ res: ServerResponse; start: () => void }>;
  then: (() => void) | null;
}
const lines = new WeakMap<Socket, Line>();

function lineOf(socket: Socket): Line {
  let line = lines.get(socket);
  if (!line) lines.set(socket, (line = { owed: [], then: null }));
  return line;
}

function onRequest(handle: FrontHandler, req: IncomingMessage, res: ServerResponse, opts: FrontOptions): void {
  const line = lineOf(req.socket);
  const entry = { res, start: () => dispatch(handle, req, res, opts) };
  line.owed.push(entry);
  let paid = false;
  const pay = () => {
    if (paid) return;
    paid = true;
    line.owed.splice(line.owed.indexOf(entry), 1);
    const next = line.owed[0];
    if (next) {
      if (!next.res.destroyed) next.start();
    } else if (line.then) {
      const then = line.then;
      line.then = null;
      then();
    }
  };
  res.once('finish', pay);
  res.once('close', pay);
  if (line.owed.length === 1) entry.start();
}

function dispatch(handle: FrontHandler, req: IncomingMessage, res: ServerResponse, opts: FrontOptions): void {
  const r = reply(req, res, opts.bodyIdleTimeoutMs);
  if (req.rawHeaders.length / 2 > MAX_HEADERS) return sendError(r, 431, 'TOO_MANY_HEADERS', `a request may have at most ${MAX_HEADERS} headers`, [], true);
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
    return sendError(r, 400, 'MISSING_HOST', 'an HTTP/1.1 request must have a Host header (RFC 9112 section 3.2)', [], true);
  }
  const target = splitTarget(req.url ?? '');
  if (!target) return sendError(r, 400, 'INVALID_TARGET', `the request target ${JSON.stringify((req.url ?? '').slice(0, 64))} is not a path`, [], true);
  handle(r, target.url, target.query);
}

/** What to answer a request the parser refused (llhttp's error codes), or a headers timeout. */
export function clientErrorAnswer(err: { code?: string; reason?: string; message: string }, opts: FrontOptions): [number, string, string] {
  const why = err.reason ?? err.message;
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'HEADERS_TOO_LARGE', `the request line and headers are over ${opts.maxHeaderBytes} bytes`];
    case 'HPE_INVALID_URL':
      return [400, 'INVALID_TARGET', `the request target has a byte not allowed there: a raw space, NUL, control character or byte outside ASCII (percent-encode a path's UTF-8 bytes) (${why})`];
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return [400, 'INVALID_CONTENT_LENGTH', `Content-Length must be one decimal byte count, given once and not with Transfer-Encoding (${why})`];
    case 'HPE_INVALID_TRANSFER_ENCODING':
      if (/content-length/i.test(why)) return [400, 'INVALID_CONTENT_LENGTH', `Content-Length must not come with Transfer-Encoding (${why})`];
      return [400, 'INVALID_TRANSFER_ENCODING', `bad Transfer-Encoding (${why})`];
    case 'HPE_INVALID_CHUNK_SIZE':
      return [400, 'INVALID_TRANSFER_ENCODING', `bad Transfer-Encoding or chunk (${why})`];
    case 'HPE_INVALID_HEADER_TOKEN':
      return [400, 'INVALID_HEADER', `a header name or value has a character not allowed there, such as a control character (${why})`];
    case 'HPE_INVALID_METHOD':
      return [400, 'INVALID_METHOD', `the request line does not begin with a known method (${why})`];
    case 'HPE_INVALID_VERSION':
    case 'HPE_INVALID_CONSTANT':
      return [400, 'INVALID_REQUEST_LINE', `the request line must be: method, one space, the target (a raw space in it is percent-encoded: %20), one space, HTTP/1.1 or HTTP/1.0 (${why})`];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'REQUEST_TIMEOUT', `the request line and headers did not come within ${opts.headersTimeoutMs} ms (OBJSTORE_HEADERS_TIMEOUT_MS)`];
    default:
      return [400, 'BAD_REQUEST', `the request is not valid HTTP/1.1 (${why})`];
  }
}

/** A connection closed after an error answer reads (and drops) what still comes, for a while. */
const LINGER_MS = 2000;

/** An error answer written on the socket itself (no request object), then the connection closed. */
function rawAnswer(socket: Socket, status: number, code: string, message: string): void {
  if (!socket.writable) return void socket.destroy();
  const body = errorBody(code, message);
  responsesTotal.inc({ status: String(status) });
  socket.end(`HTTP/1.1 ${statusLine(status)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

function onClientError(err: Error & { code?: string; reason?: string }, socket: Socket, opts: FrontOptions): void {
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.code === 'HPE_INVALID_EOF_STATE' || !socket.writable) return void socket.destroy();
  const line = lineOf(socket);
  // The error is in the body of a request being answered (its handler is reading it): the
  // connection goes, and that handler sees its client gone.
  if (line.owed.some(({ res }) => !res.req.complete)) return void socket.destroy();
  const answer = () => rawAnswer(socket, ...clientErrorAnswer(err, opts));
  // The answers owed to earlier requests on this connection go first (pipelining).
  if (line.owed.length === 0) answer();
  else line.then = answer;
}

export function createFront(handle: FrontHandler, opts: FrontOptions): http.Server {
  const server = http.createServer(
    {
      maxHeaderSize: opts.maxHeaderBytes,
      // Host is checked here, with a JSON answer.
      requireHostHeader: false,
      // A body has its own idle timeout (OBJSTORE_BODY_IDLE_TIMEOUT_MS); a whole upload has none.
      requestTimeout: 0,
      headersTimeout: opts.headersTimeoutMs,
      keepAliveTimeout: opts.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(opts.headersTimeoutMs / 4))),
      noDelay: true,
    },
    (req, res) => onRequest(handle, req, res, opts),
  );
  // One more than the limit, so a request over it can be told apart (and refused).
  server.maxHeadersCount = MAX_HEADERS + 1;
  // A slow reader making progress is never cut by the server (http/stream.ts watches progress).
  server.timeout = 0;
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => onRequest(handle, req, res, opts));
  // CONNECT (a tunnel) is not routed by Node's server: refused here, with an answer.
  server.on('connect', (req: IncomingMessage, socket: Socket) => rawAnswer(socket, 405, 'METHOD_NOT_ALLOWED', `CONNECT is not supported (${JSON.stringify((req.url ?? '').slice(0, 64))})`));
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => onClientError(err, socket, opts));
  return server;
}

/** Listen on host:port (0: ephemeral); resolves with the bound port. */
export function listenFront(server: http.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error) => reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stop listening and close every connection (idle keep-alive ones too). */
export function closeFront(server: http.Server): void {
  server.close();
  server.closeAllConnections();
}
