/** Prometheus metrics of the bridge front (merged with every thread's at /metrics). */
import client from 'prom-client';

export const commandsTotal = new client.Counter({
  name: 'mediabridge_commands_total',
  help: 'Commands handled, by method and outcome (ok or the error code)',
  labelNames: ['method', 'outcome'],
});

export const sessionsGauge = new client.Gauge({ name: 'mediabridge_sessions', help: 'Sessions in the registry (bound or orphaned)' });
