/**
 * Prometheus metrics of the object store's front (its thread; merged at /metrics): HTTP answers
 * by status, and per-volume capacity and fault gauges read from the records at scrape time.
 */
import client from 'prom-client';
import type { Metadata } from './metadata.js';
import type { Volumes } from './volumes.js';

export const responsesTotal = new client.Counter({
  name: 'objstore_http_responses_total',
  help: 'HTTP answers of the object and management API, by status code',
  labelNames: ['status'] as const,
});

let source: { meta: Metadata; volumes: Volumes } | null = null;

export function reportOn(s: { meta: Metadata; volumes: Volumes } | null): void {
  source = s;
}

new client.Gauge({
  name: 'objstore_volume_bytes',
  help: 'Capacity of each present volume, by kind (total, free)',
  labelNames: ['volume', 'kind'] as const,
  collect() {
    this.reset();
    if (!source) return;
    for (const rec of source.volumes.records(false)) {
      const v = source.volumes.view(rec);
      if (typeof v.bytesTotal === 'number') this.set({ volume: String(rec.id), kind: 'total' }, v.bytesTotal);
      if (typeof v.bytesFree === 'number') this.set({ volume: String(rec.id), kind: 'free' }, v.bytesFree);
    }
  },
});

new client.Gauge({
  name: 'objstore_volume_state',
  help: 'Flags of each volume (1 or 0): healthy, read_only, draining, missing, enabled',
  labelNames: ['volume', 'flag'] as const,
  collect() {
    this.reset();
    if (!source) return;
    for (const rec of source.volumes.records(false)) {
      const v = source.volumes.view(rec);
      const flags: Record<string, unknown> = { healthy: v.isHealthy, read_only: v.isReadOnly, draining: v.isDraining, missing: v.isMissing, enabled: v.isEnabled };
      for (const [flag, on] of Object.entries(flags)) this.set({ volume: String(rec.id), flag }, on ? 1 : 0);
    }
  },
});

new client.Gauge({
  name: 'objstore_volume_faulty_slices',
  help: 'Distinct faulty slices recorded on each volume (the health threshold counts these)',
  labelNames: ['volume'] as const,
  collect() {
    this.reset();
    if (!source) return;
    for (const rec of source.volumes.records(false)) this.set({ volume: String(rec.id) }, rec.faults);
  },
});

new client.Gauge({
  name: 'objstore_faults',
  help: 'Outstanding slice faults, by repair status and blocked reason',
  labelNames: ['repair_status', 'reason'] as const,
  collect() {
    this.reset();
    if (!source) return;
    const counts = new Map<string, number>();
    for (const { value } of source.meta.faults.getRange()) {
      const key = `${value.repairStatus}|${value.repairBlockedReason ?? ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [key, n] of counts) {
      const [repair_status, reason] = key.split('|');
      this.set({ repair_status: repair_status!, reason: reason! }, n);
    }
  },
});
