/**
 * The recording routes of the gateway's port, for trusted services only (all protected like
 * /drain: the bearer token, or on a loopback listener without one the Origin and Host rule):
 *
 * - `GET /recordings/{sessionId}`: `{sessionId, recordings: [{file, size, objectId}]}`.
 * - `GET /recordings/{sessionId}/{file}`: the PCAP, streamed from the object store
 *   (Content-Type application/vnd.tcpdump.pcap, Content-Length, Content-Disposition).
 * - `POST /recordings/{sessionId}/merge {files?: [names]}`: one PCAP out of several of the
 *   session's (all of them when `files` is absent), packets ordered by time
 *   (protocols/media/pcap-merge.ts); every input's header is checked before a byte is sent
 *   (422 `PCAP_INCOMPATIBLE` naming the file), the body is chunked.
 * - `DELETE /recordings/{sessionId}/{file}`: `{deleted: true, sessionId, file, objectId}`.
 *
 * The path is checked first (protocols/gateway/recording-paths.ts: 400 `INVALID_PATH`, nothing
 * touched). Recordings live in the object store (recordings-store.ts); without one, 503
 * `RECORDINGS_UNAVAILABLE`. Recording operations go on while the gateway drains, and a download
 * or merge being streamed holds the drain open (`streams`) until it is out; at the drain's
 * deadline `abortAll` cuts them.
 */
import type { IncomingMessage } from 'node:http';
import { collectBody } from '../../runtime/http/reply.js';
import { routeFor } from '../../runtime/http/router.js';
import { errorBody } from '../../protocols/objstore/errors.js';
import { checkFileName, parseRecordingPath } from '../../protocols/gateway/recording-paths.js';
import { PcapFormatError, PcapSplitter, mergedHeader, pickEarliest, type PcapFileHeader, type PcapRecordBytes } from '../../protocols/media/pcap-merge.js';
import { BodyStream } from './recordings-stream.js';
import { RecordingError, type RecordingObjects, type RecordingEntry } from './recordings-store.js';
import type { Call } from './http.js';
import { protect, send } from './http.js';

/** What the routes use of the gateway. */
export interface RecordingsApi {
  objects: RecordingObjects;
  /** Downloads and merges being streamed (the drain waits for them). */
  streams: Set<BodyStream>;
}

/** Most files one merge takes. */
export const MAX_MERGE_FILES = 1000;
/** A client that takes nothing of a download for this long is cut. */
export const RECORDING_IDLE_MS = 60_000;
const MAX_BODY = 256 * 1024;
/** Merged records are sent in pieces of about this size. */
const MERGE_PIECE = 64 * 1024;
const PCAP_TYPE = 'application/vnd.tcpdump.pcap';

const route = routeFor<Call, void | Promise<void>>();

export const recordingRoutes = [
  route('GET', '/recordings/*', (call, p) => protect(call, () => run(call, p['*'], get))),
  route('POST', '/recordings/*', (call, p) => protect(call, () => run(call, p['*'], merge, true))),
  route('DELETE', '/recordings/*', (call, p) => protect(call, () => run(call, p['*'], remove))),
];

type Handler = (call: Call, api: RecordingsApi, path: Target, body: Promise<Buffer | null>) => Promise<void>;
interface Target {
  sessionId: string;
  file: string | null;
}

/** Check the path (400 before anything else), then run the handler; refusals as JSON errors. */
function run(call: Call, rest: string, handler: Handler, wantsBody = false): void {
  const api = call.s.recordings;
  // The body must be asked for before the handler returns (uWS hands it only then).
  const body = wantsBody ? collectBody(call.r, MAX_BODY) : Promise.resolve(Buffer.alloc(0));
  const parsed = parseRecordingPath(rest);
  if (!parsed.ok) return send(call.r, 400, errorBody('INVALID_PATH', parsed.error));
  void handler(call, api, parsed, body).catch((err: unknown) => {
    if (err instanceof RecordingError) return send(call.r, err.status, errorBody(err.code, err.message));
    if (err instanceof PcapFormatError) return send(call.r, 422, errorBody('PCAP_INVALID', err.message));
    call.s.log.error({ err }, 'recording route failed');
    send(call.r, 500, errorBody('INTERNAL', (err as Error).message));
  });
}

async function get(call: Call, api: RecordingsApi, t: Target): Promise<void> {
  if (t.file === null) {
    const recordings = await api.objects.list(t.sessionId);
    return send(call.r, 200, JSON.stringify({ sessionId: t.sessionId, recordings }));
  }
  const entry = await api.objects.stat(t.sessionId, t.file);
  if (!entry) throw new RecordingError(404, 'RECORDING_NOT_FOUND', `no recording ${t.sessionId}/${t.file}`);
  const source = await api.objects.open(t.sessionId, t.file);
  const out = track(api, new BodyStream(call.r, 200, [['Content-Type', PCAP_TYPE], ['Content-Disposition', `attachment; filename="${entry.file}"`], ['X-Object-Id', entry.objectId], ['Cache-Control', 'no-store']], entry.size, RECORDING_IDLE_MS));
  let sent = 0;
  try {
    for await (const piece of source as AsyncIterable<Buffer>) {
      if (!(await out.write(piece))) break;
      sent += piece.length;
    }
  } catch (err) {
    call.s.log.warn({ err: (err as Error).message, sessionId: t.sessionId, file: t.file, sent }, 'recording download: the store failed mid-body; connection cut');
  } finally {
    source.destroy();
    // Fewer bytes than the length said (the store stopped short): cut, never a short "complete" body.
    if (!out.closed) out.abort();
  }
}

async function merge(call: Call, api: RecordingsApi, t: Target, body: Promise<Buffer | null>): Promise<void> {
  if (t.file !== 'merge') throw new RecordingError(405, 'METHOD_NOT_ALLOWED', `POST is only for /recordings/{sessionId}/merge`);
  const files = await mergeFiles(api, t.sessionId, await body);
  const inputs: Input[] = [];
  try {
    for (const f of files) inputs.push(await openInput(api, t.sessionId, f));
    const headers = [];
    for (const i of inputs) headers.push(await i.header());
    const merged = mergedHeader(headers, files.map((f) => f.file));
    if (!merged.ok) throw new RecordingError(422, 'PCAP_INCOMPATIBLE', merged.error);
    const out = track(api, new BodyStream(call.r, 200, [['Content-Type', PCAP_TYPE], ['Content-Disposition', `attachment; filename="${t.sessionId}-merged.pcap"`], ['Cache-Control', 'no-store']], null, RECORDING_IDLE_MS));
    await streamMerged(call, out, merged.bytes, inputs);
  } finally {
    for (const i of inputs) i.close();
  }
}

/** The files a merge takes: `files` of the body (checked, each must exist), or all of the session's. */
async function mergeFiles(api: RecordingsApi, sessionId: string, body: Buffer | null): Promise<RecordingEntry[]> {
  if (body === null) throw new RecordingError(413, 'TOO_LARGE', `the body is larger than ${MAX_BODY} bytes`);
  let names: string[] | null = null;
  if (body.length > 0) {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      throw new RecordingError(400, 'INVALID_REQUEST', 'the body is not JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RecordingError(400, 'INVALID_REQUEST', 'the body must be a JSON object: {"files": [names]}');
    const f = (value as { files?: unknown }).files;
    if (f !== undefined) {
      if (!Array.isArray(f) || !f.every((n) => typeof n === 'string')) throw new RecordingError(400, 'INVALID_PARAMS', 'files must be an array of file names');
      for (const n of f as string[]) {
        const why = checkFileName(n);
        if (why) throw new RecordingError(400, 'INVALID_PATH', why);
      }
      if (new Set(f).size !== f.length) throw new RecordingError(400, 'INVALID_PARAMS', 'files names a file twice');
      names = f as string[];
    }
  }
  if (names !== null && (names.length < 1 || names.length > MAX_MERGE_FILES)) throw new RecordingError(400, 'INVALID_PARAMS', `a merge takes 1 to ${MAX_MERGE_FILES} files; got ${names.length}`);
  const all = await api.objects.list(sessionId);
  if (names === null) {
    if (all.length === 0) throw new RecordingError(404, 'RECORDING_NOT_FOUND', `session ${sessionId} has no recordings`);
    if (all.length > MAX_MERGE_FILES) throw new RecordingError(400, 'INVALID_PARAMS', `session ${sessionId} has ${all.length} recordings; a merge takes at most ${MAX_MERGE_FILES}: name them in files`);
    return all;
  }
  const byName = new Map(all.map((e) => [e.file, e]));
  return names.map((n) => {
    const e = byName.get(n);
    if (!e) throw new RecordingError(404, 'RECORDING_NOT_FOUND', `no recording ${sessionId}/${n}`);
    return e;
  });
}

/** One input of a merge: the store's GET read through a splitter. */
interface Input {
  name: string;
  header(): Promise<PcapFileHeader>;
  /** The next record; null at the end of the file. */
  next(): Promise<PcapRecordBytes | null>;
  /** Bytes at the end that were not a whole record (after next() gave null). */
  partialBytes: number;
  close(): void;
}

async function openInput(api: RecordingsApi, sessionId: string, entry: RecordingEntry): Promise<Input> {
  const res: IncomingMessage = await api.objects.open(sessionId, entry.file);
  const it = (res as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const split = new PcapSplitter(entry.file);
  let ended = false;
  const more = async (): Promise<boolean> => {
    if (ended) return false;
    const r = await it.next();
    if (r.done) ended = true;
    else split.push(r.value);
    return !r.done;
  };
  const input: Input = {
    name: entry.file,
    async header() {
      for (;;) {
        const h = split.readHeader();
        if (h) return h;
        if (!(await more())) {
          split.finish(); // throws: shorter than a header
        }
      }
    },
    async next() {
      for (;;) {
        const rec = split.shift();
        if (rec) return rec;
        if (!(await more())) {
          input.partialBytes = split.finish().partialBytes;
          return null;
        }
      }
    },
    partialBytes: 0,
    close: () => res.destroy(),
  };
  return input;
}

/** The merged file: the header, then records by time, in pieces of about MERGE_PIECE bytes. */
async function streamMerged(call: Call, out: BodyStream, header: Uint8Array, inputs: Input[]): Promise<void> {
  let piece: Uint8Array[] = [header];
  let size = header.length;
  const flush = async () => {
    const ok = await out.write(Buffer.concat(piece));
    piece = [];
    size = 0;
    return ok;
  };
  try {
    const heads = await Promise.all(inputs.map((i) => i.next()));
    let records = 0;
    for (let i = pickEarliest(heads); i >= 0; i = pickEarliest(heads)) {
      const rec = heads[i]!;
      piece.push(rec.bytes);
      size += rec.bytes.length;
      records++;
      if (size >= MERGE_PIECE && !(await flush())) return;
      heads[i] = await inputs[i]!.next();
    }
    if (size > 0 && !(await flush())) return;
    out.end();
    const partial = inputs.filter((i) => i.partialBytes > 0).map((i) => `${i.name} (${i.partialBytes} bytes)`);
    call.s.log.info({ files: inputs.length, records, ...(partial.length ? { cutShort: partial } : {}) }, 'recordings merged');
  } catch (err) {
    // Nothing sent yet: the refusal is the answer (422 for a corrupt file). Else the 200 is out
    // and the connection is cut, so the client sees an incomplete body.
    if (!out.started) {
      out.release();
      throw err;
    }
    call.s.log.warn({ err: (err as Error).message }, 'recording merge failed mid-body; connection cut');
    out.abort();
  }
}

async function remove(call: Call, api: RecordingsApi, t: Target): Promise<void> {
  if (t.file === null) throw new RecordingError(405, 'METHOD_NOT_ALLOWED', 'DELETE takes one recording: /recordings/{sessionId}/{file}');
  const { objectId } = await api.objects.delete(t.sessionId, t.file);
  call.s.log.info({ sessionId: t.sessionId, file: t.file, objectId }, 'recording deleted');
  send(call.r, 200, JSON.stringify({ deleted: true, sessionId: t.sessionId, file: t.file, objectId }));
}

function track(api: RecordingsApi, out: BodyStream): BodyStream {
  api.streams.add(out);
  void out.done.then(() => api.streams.delete(out));
  return out;
}

/** The drain's deadline: cut every stream still going. */
export function abortAll(api: RecordingsApi): void {
  for (const s of api.streams) s.abort();
}
