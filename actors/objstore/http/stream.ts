/**
 * Send a body of known length from an async source on Node's http server, with backpressure:
 * each piece is written and the next is asked for only once the socket took it (its write
 * callback: the reader reuses a batch's buffers once the next piece is asked for, and a queued
 * write holds a view of them) and the response is not over its high-water mark (else 'drain').
 *
 * A slow reader that makes progress is never cut. A reader that takes nothing for `idleMs` (no
 * piece accepted by the socket in that time) is cut, and logged by `onIdle`.
 * If the source fails before anything is sent, `onError` answers with an error; after the
 * headers are out, the connection is closed: a client never gets a body that looks complete
 * but is not. The source is always closed (return()) when it was not read to its end.
 */
import type { Headers, Reply } from './respond.js';
import { writeHead } from './respond.js';

export interface StreamOptions {
  /** How long the client may take nothing before the connection is cut (ms). */
  idleMs: number;
  /** The source failed before the headers went out: answer with an error. */
  onError(err: unknown): void;
  /** The client took nothing for idleMs: `sent` bytes of `total` had been taken. */
  onIdle(sent: number): void;
}

export async function streamBody(r: Reply, status: number, headers: Headers, total: number, source: AsyncIterable<Uint8Array>, opts: StreamOptions): Promise<void> {
  const it = source[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array>;
  try {
    first = await it.next();
  } catch (err) {
    opts.onError(err);
    return;
  }
  if (r.aborted || r.done) return void it.return?.();
  const res = r.res;
  writeHead(r, status, [...headers, ['Content-Length', String(total)]], false);
  if (total === 0) {
    r.done = true;
    res.end();
    return void it.return?.();
  }

  let sent = 0;
  let idled = false;
  /** One piece into the socket: resolves once it took it (or the client went, or idled). */
  const write = (bytes: Uint8Array): Promise<void> =>
    new Promise((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        res.off('close', settle);
        resolve();
      };
      timer = setTimeout(() => {
        idled = true;
        settle();
      }, opts.idleMs);
      res.once('close', settle);
      res.write(bytes, () => {
        sent += bytes.byteLength;
        if (res.writableNeedDrain) res.once('drain', settle);
        else settle();
      });
    });

  let piece: IteratorResult<Uint8Array> = first;
  try {
    while (!piece.done && !r.aborted) {
      await write(piece.value);
      if (idled || r.aborted) break;
      piece = await it.next();
    }
  } catch {
    // A stripe could not be read (or rebuilt) after the headers went out: cut the connection.
  }
  // Close the source whenever it was not read to its end (the body complete after its last piece,
  // a client gone, an error): a source holding resources (the reader's buffers and read budget)
  // gives them back in its finally, which a suspended generator never reaches by itself.
  if (!piece.done) void it.return?.()?.catch(() => undefined);
  r.done = true;
  if (piece.done && !r.aborted) return void res.end();
  if (idled) opts.onIdle(sent);
  res.destroy();
}
