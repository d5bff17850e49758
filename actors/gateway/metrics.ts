/** Prometheus metrics of the gateway (merged with every thread's at the daemon's /metrics). */
import client from 'prom-client';

export const callsTotal = new client.Counter({
  name: 'gateway_calls_total',
  help: 'Calls by direction and outcome (answered, rejected, cancelled, timeout, failed, no-owner)',
  labelNames: ['direction', 'outcome'],
});

export const callsActive = new client.Gauge({ name: 'gateway_calls_active', help: 'SIP calls the gateway holds (offered, ringing or up)' });

export const setupSeconds = new client.Histogram({
  name: 'gateway_call_setup_seconds',
  help: 'Time from the INVITE to its final answer, by direction',
  labelNames: ['direction'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
});

export { routeLookupsTotal } from './route-metrics.js';

export const controlConnections = new client.Gauge({ name: 'gateway_control_connections', help: 'Open control WebSocket connections' });

export const controlCommandsTotal = new client.Counter({
  name: 'gateway_control_commands_total',
  help: 'Control commands, by method family and outcome (ok or the error code)',
  labelNames: ['method', 'outcome'],
});
