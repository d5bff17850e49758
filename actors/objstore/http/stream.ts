/**
 * Send a body of known length from an async source with uWebSockets.js backpressure: tryEnd
 * each piece; when the socket is full, wait for the writable event and send the rest from the
 * offset it reports. (One writable handler per response: uWS keeps the first one registered.)
 * If the source fails before anything is sent, `onError` answers with an error; after the
 * headers are out, the connection is closed: a client never gets a body that looks complete
 * but is not. The source is always closed (return()) when it was not read to its end.
 */
import { statusLine } from '../../../protocols/objstore/errors.js';
import type { Headers, Reply } from './respond.js';

export async function streamBody(r: Reply, status: number, headers: Headers, total: number, source: AsyncIterable<Uint8Array>, onError: (err: unknown) => void): Promise<void> {
  const it = source[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  try {
    first = await it.next();
  } catch (err) {
    onError(err);
    return;
  }
  if (r.aborted) return void it.return?.();
  const res = r.res;
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const [k, v] of headers) res.writeHeader(k, v);
    if (total === 0) {
      res.end();
      r.done = true;
    }
  });
  if (r.done) return;

  /** The piece waiting for the socket to drain, if any. */
  let waiting: { bytes: Uint8Array; start: number; resolve: () => void } | null = null;
  const wake = () => {
    const w = waiting;
    waiting = null;
    w?.resolve();
  };
  res.onWritable((offset) => {
    if (!waiting) return true;
    const [ok, done] = res.tryEnd(waiting.bytes.subarray(offset - waiting.start), total);
    if (done) r.done = true;
    if (ok || done) wake();
    return ok;
  });
  r.onAbort(wake);

  const write = (bytes: Uint8Array): Promise<void> => {
    const start = res.getWriteOffset();
    let ok = false;
    let done = false;
    res.cork(() => {
      [ok, done] = res.tryEnd(bytes, total);
    });
    if (done) r.done = true;
    if (ok || done) return Promise.resolve();
    return new Promise((resolve) => (waiting = { bytes, start, resolve }));
  };

  let piece: IteratorResult<Uint8Array> = first;
  try {
    while (!piece.done && !r.aborted && !r.done) {
      await write(piece.value);
      if (r.done || r.aborted) break;
      piece = await it.next();
    }
  } catch {
    // A stripe could not be read (or rebuilt) after the headers went out: cut the connection.
  }
  // Close the source whenever it was not read to its end (the body complete after its last piece,
  // a client gone, an error): a source holding resources (the reader's buffers and read budget)
  // gives them back in its finally, which a suspended generator never reaches by itself.
  if (!piece.done) void it.return?.()?.catch(() => undefined);
  if (!r.done && !r.aborted) {
    r.done = true;
    res.close();
  }
}
