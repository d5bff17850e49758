/**
 * The runtime's own Prometheus metrics. Every thread imports this module and gets its own
 * registry (module state is per thread); the main thread merges all of them on scrape.
 * Metric names and help texts must be identical in every thread for the merge.
 */
import client from 'prom-client';

export const registry = client.register;

export const messagesTotal = new client.Counter({
  name: 'hostd_actor_messages_total',
  help: 'Messages handled by actors, by actor kind and outcome (ok, reply_error, crash, unknown).',
  labelNames: ['kind', 'outcome'] as const,
});

export const handlerSeconds = new client.Histogram({
  name: 'hostd_actor_handler_seconds',
  help: 'Time spent in actor message handlers, by actor kind.',
  labelNames: ['kind'] as const,
  buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
});

export const droppedTotal = new client.Counter({
  name: 'hostd_actor_messages_dropped_total',
  help: 'Messages not delivered: no such actor, mailbox full, actor stopped.',
  labelNames: ['reason'] as const,
});

export const requestTimeoutsTotal = new client.Counter({
  name: 'hostd_request_timeouts_total',
  help: 'Requests that got no reply before their deadline.',
});

export const mailboxDepth = new client.Gauge({
  name: 'hostd_actor_mailbox_depth',
  help: 'Messages waiting in mailboxes, per thread.',
  labelNames: ['thread'] as const,
});

export const checkpointsTotal = new client.Counter({
  name: 'hostd_checkpoints_written_total',
  help: 'Checkpoints written to LMDB, by actor kind.',
  labelNames: ['kind'] as const,
});

/** The labelled children an actor kind updates on every message, looked up once per kind. */
export interface KindMetrics {
  ok: client.Counter.Internal;
  replyError: client.Counter.Internal;
  crash: client.Counter.Internal;
  unknown: client.Counter.Internal;
  handler: client.Histogram.Internal<'kind'>;
}

const byKind = new Map<string, KindMetrics>();

export function kindMetrics(kind: string): KindMetrics {
  let k = byKind.get(kind);
  if (!k) {
    k = {
      ok: messagesTotal.labels(kind, 'ok'),
      replyError: messagesTotal.labels(kind, 'reply_error'),
      crash: messagesTotal.labels(kind, 'crash'),
      unknown: messagesTotal.labels(kind, 'unknown'),
      handler: handlerSeconds.labels(kind),
    };
    byKind.set(kind, k);
  }
  return k;
}
