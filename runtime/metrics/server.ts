/** The daemon's one Prometheus endpoint: GET /metrics on its own port, merged from every thread. */
import client from 'prom-client';
import { closeApp, listen, loadUws, type us_listen_socket } from '../http/uws.js';

export interface MetricsServer {
  port: number;
  close(): void;
}

export async function startMetricsServer(host: string, port: number, gather: () => Promise<string>): Promise<MetricsServer> {
  const uws = loadUws();
  const app = uws.App();
  app.get('/metrics', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    gather().then(
      (text) => {
        if (!aborted) res.cork(() => res.writeHeader('Content-Type', client.register.contentType).end(text));
      },
      (err: Error) => {
        if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').writeHeader('Content-Type', 'application/json').end(JSON.stringify({ error: { code: 'METRICS_FAILED', message: err.message } })));
      },
    );
  });
  app.any('/*', (res, req) => {
    const body = JSON.stringify({ error: { code: 'NOT_FOUND', message: `no such endpoint ${req.getMethod().toUpperCase()} ${req.getUrl()}; metrics are at GET /metrics` } });
    res.writeStatus('404 Not Found').writeHeader('Content-Type', 'application/json').end(body);
  });
  const { socket, port: bound } = await listen(app, host, port);
  let listenSocket: us_listen_socket | null = socket;
  return {
    port: bound,
    close() {
      closeApp(app, listenSocket);
      listenSocket = null;
    },
  };
}
