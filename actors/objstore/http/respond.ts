/** Small helpers to answer on a uWebSockets.js response, always corked. */
import { responsesTotal } from '../metrics.js';
import type { Logger } from 'pino';
import type { HttpResponse } from '../../../runtime/http/uws.js';
import { errorBody, statusLine } from '../../../protocols/objstore/errors.js';
import { StoreError } from '../store/context.js';

export type Headers = Array<[string, string]>;

/** The answer state of a request (runtime/http/reply.ts, shared with the other HTTP fronts). */
export { reply, type Reply } from '../../../runtime/http/reply.js';
import { collectBody, type Reply } from '../../../runtime/http/reply.js';

/**
 * Answer (once: later calls do nothing). `close` ends the connection after the answer: for a
 * request refused while its body may still be arriving.
 */
export function send(r: Reply, status: number, body: string | ArrayBuffer | Uint8Array, headers: Headers = [], contentType?: string, close = false): void {
  if (r.aborted || r.done) return;
  const line = statusLine(status);
  r.done = true;
  responsesTotal.inc({ status: String(status) });
  r.res.cork(() => {
    r.res.writeStatus(line);
    if (contentType) r.res.writeHeader('Content-Type', contentType);
    for (const [k, v] of headers) r.res.writeHeader(k, v);
    r.res.end(body as never, close);
  });
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
  const line = statusLine(status);
  r.done = true;
  responsesTotal.inc({ status: String(status) });
  r.res.cork(() => {
    r.res.writeStatus(line);
    for (const [k, v] of headers) r.res.writeHeader(k, v);
    r.res.endWithoutBody(contentLength);
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
