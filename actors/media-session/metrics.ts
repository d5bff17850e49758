/**
 * Prometheus metrics of the media sessions (one set per thread; merged at /metrics). Per-packet
 * counts are kept on each endpoint as plain numbers and added to these counters once a second,
 * so the packet path does no metric work.
 */
import client from 'prom-client';

const existing = <T>(name: string) => client.register.getSingleMetric(name) as T | undefined;

function counter<L extends string = never>(name: string, help: string, labelNames: L[] = []): client.Counter<L> {
  return existing<client.Counter<L>>(name) ?? new client.Counter({ name, help, labelNames });
}

export const packetsCounter = counter('mediabridge_packets_sent_total', 'RTP packets sent to peers, by how they were made (forwarded, mixed, tone)', ['kind']);
const endpointCounters = counter('mediabridge_endpoint_events_total', 'Per-endpoint packet outcomes summed over endpoints: packetsIn, bytesIn, packetsOut, bytesOut, srtpAuthFailures, srtpReplays, policyDrops, malformed, rtcpIn, rtcpOut, notSourceDrops, telephoneEventsDropped, iceChecksRefused', ['counter']);
export const mediaTimeouts = counter('mediabridge_media_timeouts_total', 'endpoint.media_timeout events');
export const transfers = counter('mediabridge_transfers_total', 'endpoint.transfer outcomes (same-thread, relayed, failed)', ['outcome']);
export const toneFinished = counter('mediabridge_tones_finished_total', 'Duration-limited tones that ended');
/** Named by the spec (WebRTC ice_restart rule 1). */
export const iceRestartConflicts = counter('mediabridge_webrtc_ice_restart_conflicts', 'ICE restarts refused because the endpoint already had an unanswered offer');
export const filesFinished = counter('mediabridge_files_finished_total', 'File endpoints that played to their end (or were sought past it)');

const reported = new WeakMap<object, Record<string, number>>();

/** Add what an endpoint counted since the last call to the thread's counters. */
export function reportCounters(endpoint: object, counters: Record<string, number>): void {
  const last = reported.get(endpoint) ?? {};
  for (const [name, value] of Object.entries(counters)) {
    const delta = value - (last[name] ?? 0);
    if (delta > 0) endpointCounters.inc({ counter: name }, delta);
  }
  reported.set(endpoint, { ...counters });
}

/** An endpoint that arrives by transfer: what it counted before was reported where it was. */
export function markReported(endpoint: object, counters: Record<string, number>): void {
  reported.set(endpoint, { ...counters });
}
