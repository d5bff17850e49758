/** Metrics only the main thread (supervisor) updates. */
import client from 'prom-client';

export const restartsTotal = new client.Counter({
  name: 'hostd_actor_restarts_total',
  help: 'Actor restarts by the supervisor, by actor kind.',
  labelNames: ['kind'] as const,
});

export const crashesTotal = new client.Counter({
  name: 'hostd_actor_crashes_total',
  help: 'Actor crashes, by actor kind and cause (handler, uncaught, unhandled-rejection, init, thread-exit).',
  labelNames: ['kind', 'cause'] as const,
});

export const escalationsTotal = new client.Counter({
  name: 'hostd_supervisor_escalations_total',
  help: 'Supervisors that exceeded their restart intensity and escalated to their parent.',
  labelNames: ['supervisor'] as const,
});

export const actorsGauge = new client.Gauge({
  name: 'hostd_actors',
  help: 'Actors currently running, by kind.',
  labelNames: ['kind'] as const,
});

export const threadsGauge = new client.Gauge({
  name: 'hostd_worker_threads',
  help: 'Worker threads currently alive, by group (dedicated for threads of their own).',
  labelNames: ['group'] as const,
});
