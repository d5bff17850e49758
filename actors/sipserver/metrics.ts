/** Prometheus metrics of the SIP server (merged with every thread's at /metrics). */
import client from 'prom-client';

export const requestsTotal = new client.Counter({ name: 'sipserver_requests_total', help: 'SIP requests received (retransmissions included), by method', labelNames: ['method'] });
export const responsesTotal = new client.Counter({ name: 'sipserver_responses_total', help: 'SIP responses sent (first sends, not retransmissions), by status', labelNames: ['status'] });
export const transactionsActive = new client.Gauge({ name: 'sipserver_transactions_active', help: 'Transactions in the transaction table' });
export const dialogsActive = new client.Gauge({ name: 'sipserver_dialogs_active', help: 'Dialogs the SIP server holds' });
export const routeLookups = new client.Counter({ name: 'sipserver_route_lookups_total', help: 'Route lookups, by outcome (reject, redirect, proxy, route, malformed, unreachable, timeout)', labelNames: ['outcome'] });
export const routeLookupSeconds = new client.Histogram({ name: 'sipserver_route_lookup_seconds', help: 'Route lookup latency', buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] });
export const malformedTotal = new client.Counter({ name: 'sipserver_malformed_total', help: 'Malformed messages, by transport and outcome (answered 400/505/513, or dropped)', labelNames: ['transport', 'outcome'] });
