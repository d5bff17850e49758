/**
 * The answer side of the object store's port 80 (Node's http server, llhttp): one Reply per
 * request, and the helpers every handler answers through (status, headers, JSON errors, HEAD,
 * small bodies). One home for "answered once", "the client went away" and "close the
 * connection after this answer" (a refusal while a body may still be on its way).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { responsesTotal } from '../metrics.js';
import { errorBody, statusLine } from '../../../protocols/objstore/errors.js';
import { StoreError } from '../store/context.js';

export type Headers = Array<[string, string]>;

/** A request's answer state. */
export interface Reply {
  req: IncomingMessage;
  res: ServerResponse;
  /** The client went away before the answer was out. */
  aborted: boolean;
  /** An answer was given (or the connection cut): later answers do nothing. */
  done: boolean;
  /** Run `fn` when the client goes away before the answer is out (at once if it has). */
  onAbort(fn: () => void): void;
  /** How long a small body (collectBody) may stall before it is answered 408 (0: never). */
  bodyIdleMs: number;
}

export function reply(req: IncomingMessage, res: ServerResponse, bodyIdleMs = 0): Reply {
  const hooks: Array<() => void> = [];
  const r: Reply = { req, res, aborted: false, done: false, bodyIdleMs, onAbort: (fn) => (r.aborted ? fn() : void hooks.push(fn)) };
  res.once('close', () => {
    if (res.writableFinished) return;
    r.aborted = true;
    for (const fn of hooks.splice(0)) fn();
  });
  return r;
}

/** A request header as one string ('' when absent). */
export function header(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return v === undefined ? '' : Array.isArray(v) ? v.join(', ') : v;
}

/** The reason phrase of a status (the store's 455 and 456 included). */
export function reason(status: number): string {
  return statusLine(status).slice(4);
}

/**
 * How long a connection closed after a refusal keeps reading (and dropping) what the client still
 * sends: closing a socket with unread bytes makes the kernel send a reset, which can destroy the
 * answer before the client reads it. The client sees our FIN at once and stops; this bounds a
 * client that does not.
 */
const LINGER_MS = 2000;

function linger(sock: Socket): void {
  const s = sock as Socket & { destroySoon?: () => void };
  s.destroySoon = function (this: Socket) {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
}

/**
 * A body up to this size that was not read is read and dropped after a refusal (the connection
 * stays open: a pipelined request behind it is answered); a larger or chunked one closes it.
 */
const DROP_MAX_BYTES = 64 * 1024;

/** The request declares a body (larger than DROP_MAX_BYTES, or chunked) that has not all come yet. */
function bodyPending(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) <= DROP_MAX_BYTES)) return false;
  return !req.complete;
}

/** Status line and headers of an answer, once; `close` adds Connection: close and lingers. */
export function writeHead(r: Reply, status: number, headers: Headers, close: boolean): void {
  const flat: string[] = [];
  for (const [k, v] of headers) flat.push(k, v);
  // A body the client may still be sending (a refusal before it was read) is never read to its
  // end here: the connection closes after the answer.
  if (close || bodyPending(r.req)) {
    flat.push('Connection', 'close');
    linger(r.req.socket);
  } else if (!r.req.complete) {
    // A small body not read (a refusal): read and dropped, so a request behind it is parsed.
    r.req.resume();
  }
  responsesTotal.inc({ status: String(status) });
  r.res.writeHead(status, reason(status), flat);
}

/**
 * Answer (once: later calls do nothing). `close` ends the connection after the answer: for a
 * request refused while its body may still be arriving.
 */
export function send(r: Reply, status: number, body: string | ArrayBuffer | Uint8Array, headers: Headers = [], contentType?: string, close = false): void {
  if (r.aborted || r.done) return;
  r.done = true;
  const bytes = typeof body === 'string' ? Buffer.from(body) : body instanceof ArrayBuffer ? Buffer.from(body) : body;
  // Content-Length always (never chunked): HTTP/1.0 clients keep the connection only so.
  const withLength: Headers = [...headers, ['Content-Length', String(bytes.byteLength)]];
  writeHead(r, status, contentType ? [['Content-Type', contentType], ...withLength] : withLength, close);
  r.res.end(bytes);
}

export function sendJson(r: Reply, status: number, value: unknown, headers: Headers = []): void {
  send(r, status, JSON.stringify(value), headers, 'application/json');
}

export function sendError(r: Reply, status: number, code: string, message: string, headers: Headers = [], close = false): void {
  send(r, status, errorBody(code, message), headers, 'application/json', close);
}

/**
 * Answer a failure, for both APIs: a StoreError with its status, code, message and headers;
 * anything else is a 500 INTERNAL with its message, logged as `what` failed.
 */
export function sendFailure(r: Reply, err: unknown, log: Logger, what: string, close = false): void {
  if (err instanceof StoreError) return sendError(r, err.status, err.code, err.message, err.headers, close);
  log.error({ err: (err as Error).stack ?? String(err) }, `${what} failed`);
  sendError(r, 500, 'INTERNAL', (err as Error).message ?? String(err), [], close);
}

/** Status and headers, no body (HEAD): Content-Length is the size the GET would send. */
export function sendHead(r: Reply, status: number, headers: Headers, contentLength: number): void {
  if (r.aborted || r.done) return;
  r.done = true;
  writeHead(r, status, [...headers, ['Content-Length', String(contentLength)]], false);
  r.res.end();
}

/** A client waiting for `100 Continue` is told to send its body (once the request is accepted). */
export function expectContinue(r: Reply): void {
  if (!r.aborted && !r.done && !r.res.headersSent && /^100-continue$/i.test(header(r.req, 'expect'))) r.res.writeContinue();
}

/**
 * A request body of at most `limit` bytes; null when it is larger (the rest is not read), when
 * the client went away, or when it stalled for `r.bodyIdleMs` (then answered here: 408
 * BODY_TIMEOUT, the connection closed — a client that promises a body and stops must not hold a
 * handler for ever).
 */
export function collectBody(r: Reply, limit: number): Promise<Buffer | null> {
  expectContinue(r);
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    let idle: NodeJS.Timeout | undefined;
    const stop = (value: Buffer | null) => {
      clearTimeout(idle);
      r.req.off('data', onData);
      resolve(value);
    };
    const arm = () => {
      if (!r.bodyIdleMs) return;
      clearTimeout(idle);
      idle = setTimeout(() => {
        sendError(r, 408, 'BODY_TIMEOUT', `received ${size} bytes of the body, then nothing for ${r.bodyIdleMs} ms`, [], true);
        stop(null);
      }, r.bodyIdleMs);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        r.req.pause();
        stop(null);
        return;
      }
      parts.push(chunk);
      arm();
    };
    r.req.on('data', onData);
    r.req.once('end', () => size <= limit && stop(Buffer.concat(parts)));
    // A client gone mid-body: nothing to answer; resolve so the handler ends.
    r.onAbort(() => stop(null));
    if (!r.req.complete) arm();
  });
}

/** Collect a small request body (management API), refusing bodies over `limit` bytes. */
export async function readSmallBody(r: Reply, limit = 64 * 1024): Promise<Buffer | null> {
  const body = await collectBody(r, limit);
  if (body === null) sendError(r, 413, 'BODY_TOO_LARGE', `request body over ${limit} bytes`);
  return body;
}

/** Parse a JSON object body; an empty body is {} (spec). Sends 400 and returns null on bad JSON. */
export async function readJsonObject(r: Reply): Promise<Record<string, unknown> | null> {
  const buf = await readSmallBody(r);
  if (!buf) return null;
  const text = buf.toString('utf8').trim();
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      sendError(r, 400, 'INVALID_BODY', 'the body must be a JSON object');
      return null;
    }
    return v as Record<string, unknown>;
  } catch (err) {
    sendError(r, 400, 'INVALID_JSON', `the body is not valid JSON: ${(err as Error).message}`);
    return null;
  }
}
