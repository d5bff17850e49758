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
