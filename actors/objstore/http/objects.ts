/**
 * The object API: PUT, GET, HEAD, DELETE, OPTIONS (and POST refused) on /{path} and /${id}.
 */
import { routeFor, Router } from '../../../runtime/http/router.js';
import { ALLOWED_METHODS, contentDisposition, corsHeaders, objectHeaders, type ObjectRecord } from '../../../protocols/objstore/headers.js';
import { originAllowed } from '../../../protocols/objstore/origin.js';
import { parseTarget } from '../../../protocols/objstore/paths.js';
import { contentRange, parseRange, unsatisfiedRange } from '../../../protocols/objstore/range.js';
import type { StoreContext } from '../store/context.js';
import { ObjectReader } from '../store/get.js';
import { ObjectWriter } from '../store/put.js';
import { removeSlices } from '../store/remove.js';
import { expectContinue, header, send, sendError, sendFailure, sendHead, type Reply } from './respond.js';
import { BodyFeed } from './body-feed.js';
import { streamBody } from './stream.js';

const MD5_HEX = /^[0-9a-fA-F]{32}$/;

function fail(r: Reply, err: unknown, ctx: StoreContext, close = false): void {
  sendFailure(r, err, ctx.log, 'object request', close);
}

/** Resolve the target of a GET/HEAD/DELETE/OPTIONS to its record, or answer 400/404. */
function lookup(r: Reply, ctx: StoreContext, url: string): ObjectRecord | null {
  const t = parseTarget(url);
  if (t.kind === 'invalid') {
    sendError(r, 400, 'INVALID_PATH', t.reason);
    return null;
  }
  if (t.kind === 'path' && t.trailingSlash) {
    sendError(r, 404, 'NOT_FOUND', `${t.path}/ is a container; containers cannot be fetched or listed over HTTP (the read-only mount at /run/objstore/data lists them)`);
    return null;
  }
  const rec = ctx.meta.find(t);
  if (!rec) {
    const what = t.kind === 'id' ? `object ${t.id}` : (ctx.meta.containers.get(t.path) ?? 0) > 0 ? `${t.path} is a container, not an object; it` : t.path;
    sendError(r, 404, 'NOT_FOUND', `${what} does not exist`);
    return null;
  }
  return rec;
}

/** One object request, as its handler sees it (its headers are r.req's). */
export interface ObjectCall {
  ctx: StoreContext;
  r: Reply;
  /** The path, raw (still percent-encoded), without the query. */
  url: string;
  query: URLSearchParams;
}

const route = routeFor<ObjectCall, void>();

/** Every path that does not begin with /$/ is an object path (spec): one pattern, a route a method. */
const router = new Router<ObjectCall, void>([
  route('PUT', '/*', ({ ctx, r, url }) => put(ctx, r, url)),
  route('GET', '/*', (call) => getOrHead(call, false)),
  route('HEAD', '/*', (call) => getOrHead(call, true)),
  route('DELETE', '/*', ({ ctx, r, url }) => {
    const rec = lookup(r, ctx, url);
    if (rec) void del(ctx, r, rec);
  }),
  route('OPTIONS', '/*', ({ ctx, r, url }) => {
    const origin = header(r.req, 'origin') || undefined;
    const host = header(r.req, 'host') || undefined;
    const rec = lookup(r, ctx, url);
    // The preflight approves only allowed origins: for another, no CORS headers (the browser
    // then refuses the request it was asking about).
    if (rec) send(r, 204, '', [['Allow', ALLOWED_METHODS], ...(originAllowed(origin, host, ctx.settings.allowedOrigins) ? corsHeaders(origin) : [])]);
  }),
  route('POST', '/*', ({ r }) => sendError(r, 400, 'POST_NOT_SUPPORTED', 'POST is not supported on object paths: store an object with PUT')),
]);

export function handleObject(ctx: StoreContext, r: Reply, url: string, query: URLSearchParams): void {
  const method = (r.req.method ?? '').toUpperCase();
  const m = router.match(method, url);
  // Allow is the spec's list (the methods an object has; POST is refused with its own 400), as OPTIONS says it.
  if (m.kind !== 'found') return sendError(r, 405, 'METHOD_NOT_ALLOWED', `${method} is not supported on object paths`, [['Allow', ALLOWED_METHODS]]);
  m.route.handle({ ctx, r, url, query }, m.params);
}

/**
 * PUT: every header check first, then the writer is begun while the body already comes in
 * (BodyFeed queues it and feeds the writer with backpressure). The answer: 201 when the writer
 * finished; the writer's refusal (409, 456, 503...); 455 when the client stalls mid-body;
 * nothing, and nothing left behind, when the client goes away.
 */
function put(ctx: StoreContext, r: Reply, url: string): void {
  const lengthHeader = header(r.req, 'content-length');
  const md5Header = header(r.req, 'content-md5');
  const mime = header(r.req, 'content-type');
  const chunked = header(r.req, 'transfer-encoding') !== '';
  const t = parseTarget(url);
  if (t.kind === 'invalid') return sendError(r, 400, 'INVALID_PATH', t.reason);
  if (t.kind === 'id') return sendError(r, 400, 'INVALID_PATH', 'the path must not begin with $: object ids are assigned by the store');
  if (t.trailingSlash) return sendError(r, 400, 'INVALID_PATH', `${t.path}/ names a container; an object path does not end with /`);
  if (chunked || lengthHeader === '') return sendError(r, 411, 'LENGTH_REQUIRED', 'Content-Length is required: uploads of unknown length are not supported');
  if (!/^\d+$/.test(lengthHeader)) return sendError(r, 400, 'INVALID_CONTENT_LENGTH', `Content-Length ${JSON.stringify(lengthHeader)} is not a byte count`);
  const size = Number(lengthHeader);
  if (!Number.isSafeInteger(size) || size > ctx.settings.maxObjectBytes) return sendError(r, 413, 'TOO_LARGE', `objects are limited to ${ctx.settings.maxObjectBytes} bytes`);
  if (md5Header && !MD5_HEX.test(md5Header)) return sendError(r, 400, 'INVALID_CONTENT_MD5', `Content-MD5 must be 32 hex digits, got ${JSON.stringify(md5Header)}`);
  // The body may be on its way already: this refusal closes the connection.
  if (/[\x00-\x1f\x7f]/.test(mime)) return sendError(r, 400, 'INVALID_CONTENT_TYPE', 'Content-Type must not contain control characters', [], true);

  let writer: ObjectWriter | null = null;
  const finish = async (w: ObjectWriter) => {
    try {
      const rec = await w.finish();
      send(r, 201, '', objectHeaders(rec).filter(([k]) => ['X-Object-Id', 'X-Container-Id', 'Content-MD5'].includes(k)));
    } catch (err) {
      fail(r, err, ctx);
    }
  };
  const feed = new BodyFeed(r, {
    expected: size,
    idleMs: ctx.settings.bodyIdleTimeoutMs,
    onEnd: () => void finish(writer!),
    onIdle: async (got) => {
      // What was written is removed before the answer says "nothing was stored".
      await writer?.abort();
      const headers: Array<[string, string]> = [['X-Received-Bytes', String(got)], ['X-Expected-Bytes', String(size)]];
      sendError(r, 455, 'LENGTH_MISMATCH', `received ${got} of ${size} bytes, then nothing for ${ctx.settings.bodyIdleTimeoutMs} ms; nothing was stored`, headers, true);
    },
  });
  // A client that goes away (or half-closes: uWS then closes) leaves nothing behind.
  r.onAbort(() => {
    if (feed.ended) return;
    feed.stop();
    void writer?.abort();
  });
  ObjectWriter.begin(ctx, { path: t.path, size, mime: mime || 'application/octet-stream', expectedMd5: md5Header ? md5Header.toLowerCase() : null }).then(
    (w) => {
      if (r.aborted || feed.ended) return void w.abort();
      writer = w;
      // Accepted: a client that waits for 100 Continue sends the body now, not before.
      expectContinue(r);
      if (size === 0) {
        feed.stop();
        return void finish(w);
      }
      feed.attach(w);
    },
    (err: unknown) => {
      feed.stop();
      // A body still on its way: a large one closes the connection after the answer, a small
      // one is read and dropped (respond.ts).
      fail(r, err, ctx);
    },
  );
}

function getOrHead({ ctx, r, url, query }: ObjectCall, head: boolean): void {
  const rangeHeader = header(r.req, 'range') || undefined;
  const downloadAs = query.get('download_as');
  const rec = lookup(r, ctx, url);
  if (!rec) return;
  const headers = objectHeaders(rec);
  if (downloadAs) {
    try {
      headers.push(['Content-Disposition', contentDisposition(downloadAs)]);
    } catch (err) {
      return sendError(r, 400, 'INVALID_DOWNLOAD_AS', `download_as: ${(err as Error).message}`);
    }
  }
  const range = parseRange(rangeHeader, rec.size);
  if (range.kind === 'unsatisfiable') return sendError(r, 416, 'RANGE_NOT_SATISFIABLE', range.reason, [...headers.filter(([k]) => k !== 'Content-Type'), ['Content-Range', unsatisfiedRange(rec.size)]]);
  const [status, start, end] = range.kind === 'full' ? [200, 0, rec.size - 1] : [206, range.start, range.end];
  if (status === 206) headers.push(['Content-Range', contentRange(start, end, rec.size)]);
  const length = end - start + 1;
  if (head) return sendHead(r, status, headers, Math.max(0, length));
  const reader = new ObjectReader(ctx, rec);
  void streamBody(r, status, headers, Math.max(0, length), reader.range(start, end), {
    idleMs: ctx.settings.sendIdleTimeoutMs,
    onError: (err) => fail(r, err, ctx),
    onIdle: (sent) => ctx.log.warn({ objectId: rec.id, sent, total: length, idleMs: ctx.settings.sendIdleTimeoutMs }, `GET cut: the client took nothing for ${ctx.settings.sendIdleTimeoutMs} ms (OBJSTORE_SEND_IDLE_TIMEOUT_MS) after ${sent} of ${length} bytes`),
  });
}

async function del(ctx: StoreContext, r: Reply, rec: ObjectRecord): Promise<void> {
  const bucket = rec.path.split('/')[1]!;
  if (ctx.meta.policy(bucket).deleteProtected) {
    return sendError(r, 403, 'DELETE_PROTECTED', `bucket ${bucket} is delete-protected: objects in it cannot be deleted (PUT /$/buckets/${bucket}/policy to change that)`);
  }
  try {
    const removed = await ctx.meta.removeObject(rec);
    if (!removed) return sendError(r, 404, 'NOT_FOUND', `object ${rec.id} does not exist`);
    const volumes = [...rec.dataVolumes, ...rec.parityVolumes];
    const left = (await removeSlices(ctx, rec.id, volumes)).length;
    if (left) {
      // The record is gone; the slices left behind are queued for removal when their volume is back.
      await ctx.meta.intents.put(rec.id, { id: rec.id, path: rec.path, volumes, startedAt: Date.now() });
      ctx.log.warn({ objectId: rec.id, left }, 'object deleted; some slices could not be removed yet');
    }
    send(r, 204, '', [['X-Object-Id', rec.id]]);
  } catch (err) {
    fail(r, err, ctx);
  }
}
