/**
 * Prometheus metrics of background maintenance (the scheduler's thread; merged at /metrics).
 * Relocations are counted as they happen; the job gauges are read from the scheduler's state
 * at scrape time, so they are right after a restart (the state is restored from its checkpoint).
 */
import client from 'prom-client';
import type { Maint } from './maint.js';

export const relocationsTotal = new client.Counter({
  name: 'objstore_relocations_total',
  help: 'Slices relocated (move-then-flip), by what asked (drain, rebalance, repair) and how (copied, reconstructed)',
  labelNames: ['by', 'how'] as const,
});

export const relocationFailuresTotal = new client.Counter({
  name: 'objstore_relocation_failures_total',
  help: 'Relocations refused or failed, by reason (insufficient-slices, reconstruction-mismatch, target-unwritable, verify-failed, gone, changed)',
  labelNames: ['reason'] as const,
});

let current: Maint | null = null;

/** The scheduler instance whose state the gauges report. */
export function reportOn(mt: Maint | null): void {
  current = mt;
}

new client.Gauge({
  name: 'objstore_maintenance_frozen',
  help: '1 while the maintenance freeze holds drains, scrub, repair and rebalance',
  collect() {
    this.set(current?.frozen ? 1 : 0);
  },
});

new client.Gauge({
  name: 'objstore_drain_moved_slices',
  help: 'Slices moved off each volume by its running or last drain',
  labelNames: ['volume', 'state'] as const,
  collect() {
    this.reset();
    for (const d of Object.values(current?.state.drains ?? {})) this.set({ volume: String(d.volumeId), state: d.state }, d.moved);
  },
});

new client.Gauge({
  name: 'objstore_rebalance_running',
  help: '1 while a rebalance runs (paused by a freeze or a drain included)',
  collect() {
    this.set(current?.state.rebalance?.running ? 1 : 0);
  },
});

new client.Gauge({
  name: 'objstore_rebalance_bytes_moved',
  help: 'Bytes moved by the running or last rebalance',
  collect() {
    this.set(current?.state.rebalance?.bytesMoved ?? 0);
  },
});

new client.Gauge({
  name: 'objstore_verify_running',
  help: '1 while a verification run is going (deferred or parked included)',
  collect() {
    this.set(current?.state.verify ? 1 : 0);
  },
});

new client.Gauge({
  name: 'objstore_verify_objects_checked',
  help: 'Objects checked by the running verification run',
  collect() {
    this.set(current?.state.verify?.run.objectsChecked ?? 0);
  },
});

new client.Gauge({
  name: 'objstore_repairs',
  help: 'Repairs since the store was first started, by outcome (repaired, blocked); kept in the scheduler checkpoint',
  labelNames: ['outcome'] as const,
  collect() {
    this.set({ outcome: 'repaired' }, current?.state.repairs.repaired ?? 0);
    this.set({ outcome: 'blocked' }, current?.state.repairs.blocked ?? 0);
  },
});
