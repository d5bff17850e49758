/** Prometheus metrics of the deployment service (merged with every thread's at /metrics). */
import client from 'prom-client';

export const deploymentsTotal = new client.Counter({
  name: 'deployer_deployments_total',
  help: 'Deployments that reached a terminal status, by status (deployed, failed)',
  labelNames: ['status'],
});

export const pushSeconds = new client.Histogram({
  name: 'deployer_push_seconds',
  help: 'Time of an IaC push (fetch, commit, push, retries), by outcome (pushed, unchanged, found, refused)',
  labelNames: ['outcome'],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
});

export const eventStreams = new client.Gauge({ name: 'deployer_event_streams', help: 'Deployment event streams (SSE) open' });
