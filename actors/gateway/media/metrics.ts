/**
 * Prometheus metrics of the gateway's media link (merged with every thread's at /metrics). The
 * `backend` label is the backend's URL without query or credentials.
 */
import client from 'prom-client';

export const linkSessions = new client.Gauge({
  name: 'gateway_media_sessions',
  help: 'Media sessions the gateway holds on each media bridge backend',
  labelNames: ['backend'],
});

export const linkCommands = new client.Counter({
  name: 'gateway_media_commands_total',
  help: 'Media commands of control connections, by method and outcome (ok or the error code); refused ones are counted under method "invalid"',
  labelNames: ['method', 'outcome'],
});

export const backendConnections = new client.Gauge({
  name: 'gateway_media_backend_connections',
  help: 'Open WebSocket connections to each media bridge backend',
  labelNames: ['backend'],
});

export const backendUp = new client.Gauge({
  name: 'gateway_media_backend_up',
  help: '1 while a media bridge backend is reachable (its last connection attempt succeeded), else 0',
  labelNames: ['backend'],
});

export const backendConnectFailures = new client.Counter({
  name: 'gateway_media_backend_connect_failures_total',
  help: 'Failed connection attempts to each media bridge backend',
  labelNames: ['backend'],
});

/** A URL as a label and in logs: scheme, host, port and path only (a token in the query stays out). */
export function backendLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'invalid-url';
  }
}
