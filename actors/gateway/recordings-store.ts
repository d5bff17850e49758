/**
 * Where the gateway's recording routes find recordings: objects `<bucket>/<sessionId>/<file>`
 * of the object store in the same daemon (the media bridge stores a finished recording there,
 * actors/media-session/recording-store.ts). The listing comes from the store actor's
 * `mountList` and `mountStatMany` (names, sizes, object ids, no HTTP); the bytes from the store's
 * own GET on loopback (streamed, verified by the store as any GET), and a delete is the store's
 * DELETE (a delete-protected bucket answers 403 and keeps the object).
 *
 * Where no object store runs in this daemon, or GATEWAY_RECORDING_BUCKET is empty, every call
 * fails with RecordingError 503 `RECORDINGS_UNAVAILABLE` saying which: the bridge then keeps
 * recordings as local files only, which the gateway does not serve.
 */
import { request, type IncomingMessage } from 'node:http';
import type { ActorRef } from '../../runtime/index.js';
import type { ObjstoreProtocol } from '../objstore/messages.js';

/** How long the store actor may take to answer `info`, `mountList` or `mountStatMany`. */
const STORE_ASK_MS = 5000;

export interface RecordingEntry {
  file: string;
  size: number;
  objectId: string;
}

/** A refusal of a recording route: its HTTP status, code and message. */
export class RecordingError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class RecordingObjects {
  constructor(
    /** GATEWAY_RECORDING_BUCKET (null: none set). */
    readonly bucket: string | null,
    private readonly store: ActorRef<ObjstoreProtocol>,
  ) {}

  /** The session's recordings in name order (none: an empty list). */
  async list(sessionId: string): Promise<RecordingEntry[]> {
    const bucket = this.needBucket();
    const dir = `/${bucket}/${sessionId}`;
    const listing = await this.ask(() => this.store.request({ type: 'mountList', path: dir }, { timeoutMs: STORE_ASK_MS }));
    if (!listing) return [];
    const names = listing.names.filter((_, i) => listing.dir[i] === 0);
    if (names.length === 0) return [];
    const entries = await this.ask(() => this.store.request({ type: 'mountStatMany', path: dir, names }, { timeoutMs: STORE_ASK_MS }));
    return entries.flatMap((e) => (e && !e.dir && e.id !== undefined && e.size !== undefined ? [{ file: e.name, size: e.size, objectId: e.id }] : []));
  }

  /** One recording's entry; null when there is none. */
  async stat(sessionId: string, file: string): Promise<RecordingEntry | null> {
    const bucket = this.needBucket();
    const e = await this.ask(() => this.store.request({ type: 'mountStat', path: `/${bucket}/${sessionId}/${file}` }, { timeoutMs: STORE_ASK_MS }));
    return e && !e.dir && e.id !== undefined && e.size !== undefined ? { file: e.name, size: e.size, objectId: e.id } : null;
  }

  /** The store's GET of a recording: its response, streaming (404 → RecordingError). */
  async open(sessionId: string, file: string): Promise<IncomingMessage> {
    const res = await this.http('GET', sessionId, file);
    if (res.statusCode === 200) return res;
    throw await storeRefusal(res, `${sessionId}/${file}`);
  }

  /** Delete a recording (404 when there is none; 403 from a delete-protected bucket). */
  async delete(sessionId: string, file: string): Promise<{ objectId: string }> {
    const res = await this.http('DELETE', sessionId, file);
    if (res.statusCode === 204) {
      res.resume();
      return { objectId: String(res.headers['x-object-id'] ?? '') };
    }
    throw await storeRefusal(res, `${sessionId}/${file}`);
  }

  private needBucket(): string {
    if (!this.bucket) throw new RecordingError(503, 'RECORDINGS_UNAVAILABLE', 'recordings are not stored as objects here: GATEWAY_RECORDING_BUCKET is empty (set it to the media bridge\'s MEDIA_RECORDING_BUCKET)');
    return this.bucket;
  }

  /** A question to the store actor; its absence is 503 RECORDINGS_UNAVAILABLE. */
  private async ask<T>(q: () => Promise<T>): Promise<T> {
    try {
      return await q();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'NO_SUCH_ACTOR' || code === 'ACTOR_STOPPED' || code === 'TIMEOUT') {
        throw new RecordingError(503, 'RECORDINGS_UNAVAILABLE', `the object store does not run in this daemon (${(err as Error).message}): recordings are served only from it`);
      }
      throw err;
    }
  }

  private async http(method: 'GET' | 'DELETE', sessionId: string, file: string): Promise<IncomingMessage> {
    const bucket = this.needBucket();
    const { port } = await this.ask(() => this.store.request({ type: 'info' }, { timeoutMs: STORE_ASK_MS }));
    const path = '/' + [bucket, sessionId, file].map(encodeURIComponent).join('/');
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, timeout: STORE_ASK_MS }, resolve);
      req.on('timeout', () => req.destroy(new RecordingError(504, 'STORE_TIMEOUT', `the object store did not answer ${method} ${path} within ${STORE_ASK_MS} ms`)));
      req.on('error', (err) => reject(err instanceof RecordingError ? err : new RecordingError(502, 'STORE_FAILED', `the object store failed ${method} ${path}: ${err.message}`)));
      req.end();
    });
  }
}

/** The store's refusal as a RecordingError (404 named as the recording's; its message kept). */
async function storeRefusal(res: IncomingMessage, what: string): Promise<RecordingError> {
  const parts: Buffer[] = [];
  for await (const b of res) parts.push(b as Buffer);
  let message = Buffer.concat(parts).toString('utf8').slice(0, 300);
  try {
    message = (JSON.parse(message) as { error: { message: string } }).error.message;
  } catch {
    /* not the store's JSON error */
  }
  const status = res.statusCode ?? 502;
  if (status === 404) return new RecordingError(404, 'RECORDING_NOT_FOUND', `no recording ${what}`);
  if (status === 403) return new RecordingError(403, 'DELETE_PROTECTED', message);
  return new RecordingError(502, 'STORE_FAILED', `the object store answered ${status}: ${message}`);
}
