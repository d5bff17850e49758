/**
 * A uWS request's answer state, shared by the HTTP fronts: uWS responses are unusable once the
 * client has gone, and uWS keeps one abort handler per response, so `reply()` registers it and
 * everyone else comes through `onAbort`.
 */
import type { HttpResponse } from './uws.js';

export interface Reply {
  res: HttpResponse;
  aborted: boolean;
  done: boolean;
  /** Run `fn` when the client goes away before the answer is out (at once if it has). */
  onAbort(fn: () => void): void;
}

export function reply(res: HttpResponse): Reply {
  const hooks: Array<() => void> = [];
  const r: Reply = { res, aborted: false, done: false, onAbort: (fn) => (r.aborted ? fn() : void hooks.push(fn)) };
  res.onAborted(() => {
    r.aborted = true;
    for (const fn of hooks.splice(0)) fn();
  });
  return r;
}

/**
 * Collect a request body of at most `limit` bytes. Registers at once (uWS hands the body only to
 * a handler registered before the request handler returns); null when the body is larger (the
 * rest is ignored; the caller answers 413).
 */
export function collectBody(r: Reply, limit: number): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    r.res.onData((chunk, isLast) => {
      if (size < 0) return;
      size += chunk.byteLength;
      if (size > limit) {
        size = -1;
        resolve(null);
        return;
      }
      parts.push(Buffer.from(chunk.slice(0)));
      if (isLast) resolve(Buffer.concat(parts));
    });
  });
}
