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

export const dockerCalls = new client.Counter({
  name: 'deployer_docker_calls_total',
  help: 'Docker Engine API calls of the swarm reconciler and monitors, by operation (services, tasks, create, update)',
  labelNames: ['op'],
});

export const monitorPolls = new client.Counter({
  name: 'deployer_monitor_polls_total',
  help: 'Rollout monitor polls, by deploy type and what the poll found (waiting, deployed, failed, error)',
  labelNames: ['deploy_type', 'result'],
});

export const rolloutSeconds = new client.Histogram({
  name: 'deployer_rollout_seconds',
  help: 'Time from a target starting monitoring to its outcome, by deploy type and outcome (deployed, failed)',
  labelNames: ['deploy_type', 'outcome'],
  buckets: [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800],
});

export const deploymentsByStatus = new client.Gauge({
  name: 'deployer_deployments',
  help: 'Deployments in the store, by current status',
  labelNames: ['status'],
});

export const applies = new client.Counter({
  name: 'deployer_swarm_applies_total',
  help: 'Service specs the embedded swarm reconciler applied, by result (created, updated, unchanged, refused, error)',
  labelNames: ['result'],
});
