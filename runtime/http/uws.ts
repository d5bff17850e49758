/**
 * uWebSockets.js from `@trufflesuite/uws-js-unofficial`. The package silently falls back to a
 * slow JavaScript server when its native binary fails to load: treat that as a start-up error.
 */
import uws from '@trufflesuite/uws-js-unofficial';

export function loadUws(): typeof uws {
  if (!/\[native code\]/.test(Function.prototype.toString.call(uws.App))) {
    throw new Error('uWebSockets.js native binary did not load (the JavaScript fallback is not accepted); check the Node.js version and platform');
  }
  return uws;
}

export type { TemplatedApp, HttpResponse, HttpRequest, us_listen_socket } from '@trufflesuite/uws-js-unofficial';

/** Listen on host:port (port 0 = ephemeral). Resolves with the listen socket and the bound port. */
export function listen(app: uws.TemplatedApp, host: string, port: number): Promise<{ socket: uws.us_listen_socket; port: number }> {
  const u = loadUws();
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) reject(new Error(`cannot listen on ${host}:${port} (in use or not permitted)`));
      else resolve({ socket, port: u.us_socket_local_port(socket) });
    });
  });
}

export function closeListen(socket: uws.us_listen_socket): void {
  loadUws().us_listen_socket_close(socket);
}

/**
 * Close the listen socket and every connection of an app (idle keep-alive ones too). A worker
 * thread must do this before it ends: uWS's open sockets abort the process when the thread's
 * event loop closes. `App.close` exists in this build but not in its type declarations.
 */
export function closeApp(app: uws.TemplatedApp, socket: uws.us_listen_socket | null): void {
  if (socket) closeListen(socket);
  const closable = app as unknown as { close?: () => void };
  closable.close?.();
}
