/**
 * What every maintenance job works with: the store's data path (low-priority volume refs), the
 * fleet, the state and its checkpoint, the gate that holds work back (freeze, parking), and a
 * lock per object so that two jobs never move slices of one object at once.
 */
import type { Logger } from 'pino';
import { CheckpointStore } from '../../runtime/checkpoint/store.js';
import { mayRun, RESUME_ORDER, type MaintenanceKind } from '../../protocols/objstore/maintenance.js';
import type { SliceContext } from '../objstore/store/index.js';
import type { Fleet } from './fleet.js';
import { SCHEDULER_ID, type SchedulerArgs } from './messages.js';
import type { SchedulerState } from './state.js';
import type { Notification } from '../../protocols/objstore/notify.js';

export class Maint {
  readonly store: SliceContext;
  readonly fleet: Fleet;
  readonly log: Logger;
  readonly args: SchedulerArgs;
  readonly state: SchedulerState;
  readonly signal: AbortSignal;
  private readonly saveFn: () => Promise<void>;
  private readonly checkpoints: CheckpointStore;
  private readonly busy = new Set<string>();
  private waiters: Array<{ kind: MaintenanceKind; resolve: () => void }> = [];
  /** kinds in the order they were let go after the last freeze (for the log and the tests) */
  lastResume: MaintenanceKind[] = [];
  private closed = false;
  /** tells the store's notifier (actors/objstore/notify.ts) of a condition; nothing by default */
  readonly notify: (n: Notification) => void;

  constructor(o: { store: SliceContext; fleet: Fleet; log: Logger; args: SchedulerArgs; state: SchedulerState; signal: AbortSignal; save: () => Promise<void>; notify?: (n: Notification) => void }) {
    this.notify = o.notify ?? (() => undefined);
    this.store = o.store;
    this.fleet = o.fleet;
    this.log = o.log;
    this.args = o.args;
    this.state = o.state;
    this.signal = o.signal;
    this.saveFn = o.save;
    this.checkpoints = CheckpointStore.within(o.store.meta.root);
  }

  get frozen(): boolean {
    return this.store.meta.meta.get('maintenanceFrozen') === true;
  }

  drainsActive(): boolean {
    return Object.values(this.state.drains).some((d) => d.state === 'running');
  }

  rebalanceActive(): boolean {
    return this.state.rebalance?.running === true;
  }

  may(kind: MaintenanceKind): boolean {
    return mayRun(kind, { frozen: this.frozen, drainsActive: this.drainsActive(), rebalanceActive: this.rebalanceActive() });
  }

  /** Resolves when `kind` may run (now, or after the freeze lifts / the parking ends). */
  async until(kind: MaintenanceKind): Promise<void> {
    while (!this.may(kind)) {
      if (this.signal.aborted) throw new Error('scheduler stopping');
      await new Promise<void>((resolve) => {
        this.waiters.push({ kind, resolve });
        // The freeze flag can change in LMDB without a message (another process): look again.
        const t = setTimeout(resolve, 2000);
        t.unref();
      });
    }
  }

  /**
   * Something the gate depends on changed: let the waiters look again, in the resume order
   * (drains, then scrub and repair, then rebalance).
   */
  changed(): void {
    const ws = this.waiters.splice(0).sort((a, b) => RESUME_ORDER.indexOf(a.kind) - RESUME_ORDER.indexOf(b.kind));
    const freed = ws.filter((w) => this.may(w.kind)).map((w) => w.kind);
    if (freed.length) this.lastResume = [...new Set(freed)];
    for (const w of ws) w.resolve();
  }

  /**
   * Checkpoint the state inside the current LMDB transaction: a relocation's counters commit
   * with its flip, so a kill -9 between the flip and the batch's checkpoint loses no count.
   */
  saveSync(): void {
    this.checkpoints.saveSync(SCHEDULER_ID, 'scheduler', this.state);
  }

  async save(): Promise<void> {
    await this.saveFn();
  }

  /**
   * The scheduler instance ends (its signal is aborted first): wake every job waiting at the gate
   * so that it sees the abort and stops. Once only.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.changed();
  }

  /** Take the object for this job; false when another job works on it now. */
  lock(objectId: string): boolean {
    if (this.busy.has(objectId)) return false;
    this.busy.add(objectId);
    return true;
  }

  unlock(objectId: string): void {
    this.busy.delete(objectId);
  }

  get busyObjects(): number {
    return this.busy.size;
  }
}
