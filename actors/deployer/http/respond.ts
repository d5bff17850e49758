/**
 * Answering on a uWS response for the deployment service: once, corked, never after the client
 * went away; refusals (protocols/deploy/errors.ts) as the project's JSON error body; request
 * bodies read with a cap (413 above it). Any error that is not a refusal is a 500 INTERNAL, logged.
 */
import type { Logger } from 'pino';
import { refusalBody, Refused, refuse, unwrap, type Refusal } from '../../../protocols/deploy/errors.js';
import { parseJsonObject } from '../../../protocols/deploy/api.js';
import type { Body } from '../../../protocols/deploy/fields.js';
import { errorBody, statusLine } from '../../../protocols/objstore/errors.js';

export type Headers = Array<[string, string]>;

export { reply, type Reply } from '../../../runtime/http/reply.js';
import { collectBody, type Reply } from '../../../runtime/http/reply.js';

/** Answer once; `close` ends the connection too (a refusal while the body may still be arriving). */
export function send(r: Reply, status: number, body: string | Uint8Array, headers: Headers = [], contentType?: string, close = false): void {
  if (r.aborted || r.done) return;
  r.done = true;
  r.res.cork(() => {
    r.res.writeStatus(statusLine(status));
    if (contentType) r.res.writeHeader('Content-Type', contentType);
    for (const [k, v] of headers) r.res.writeHeader(k, v);
    r.res.end(body as never, close);
  });
}

export function sendJson(r: Reply, status: number, value: unknown): void {
  send(r, status, JSON.stringify(value), [], 'application/json');
}

export function sendRefusal(r: Reply, e: Refusal, headers: Headers = [], close = false): void {
  send(r, e.status, refusalBody(e), headers, 'application/json', close);
}

/** A refusal with its status; anything else 500, logged as `what` failed. */
export function sendFailure(r: Reply, err: unknown, log: Logger, what: string, close = false): void {
  if (err instanceof Refused) {
    const auth: Headers = err.refusal.status === 401 && err.refusal.code === 'UNAUTHORIZED' ? [['WWW-Authenticate', 'Bearer']] : [];
    return sendRefusal(r, err.refusal, auth, close);
  }
  log.error({ err: (err as Error).stack ?? String(err) }, `${what} failed`);
  send(r, 500, errorBody('INTERNAL', (err as Error).message ?? String(err)), [], 'application/json', close);
}

/** Start reading a small body now (see collectBody); a body above `limit` rejects with 413. */
export async function readBody(r: Reply, limit: number): Promise<Buffer> {
  const body = await collectBody(r, limit);
  if (body === null) throw new Refused({ status: 413, code: 'BODY_TOO_LARGE', message: `request body over ${limit} bytes` });
  return body;
}

/** A JSON object body (validators check its fields); 400 when it is not JSON or not an object. */
export async function readJson(body: Promise<Buffer> | null): Promise<Body> {
  if (body === null) return refuse(400, 'MISSING_FIELD', 'a JSON body is required');
  return unwrap(parseJsonObject((await body).toString('utf8')));
}
