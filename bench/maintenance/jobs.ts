/**
 * The maintenance jobs the benchmark times, driven through the management API as an operator
 * would: a drain, a verification run, a rebalance. Each is started, polled (every 100 ms) until
 * it has ended, checked (completed, nothing stuck, no error found), and timed by the job's own
 * start and finish timestamps (the store runs in this process: its clock is ours).
 *
 * The drained volumes form a pair (`Pair`): six volumes hold every object's six slices (4+2), the
 * seventh is empty. Draining the full one of the pair moves each of its slices to the only
 * volume that holds no slice of that object — the empty one — so drains can go back and forth
 * over the same data, and a drain of the empty volume after a rebalance puts every moved slice
 * back where it was.
 */
import type { DrainProgress, RebalanceProgress, VerifyMode, VerifyProgress, VerifyRun } from '../../protocols/objstore/maintenance.js';
import { api, settled, waitFor } from '../../test/objstore/maint.js';

/** One finished job: its span (epoch ms), what it moved or checked. */
export interface JobRun {
  startMs: number;
  endMs: number;
  /** bytes moved (drain, rebalance: slice bytes) or checked (full verify: object bytes) */
  bytes: number;
  /** slices moved (drain, rebalance) or objects checked (verify) */
  items: number;
  /** false: stopped at a deadline (cancelled drain, stopped verify) */
  complete: boolean;
  /** rebalance: how it ended */
  outcome?: string;
}

export const seconds = (r: JobRun) => (r.endMs - r.startMs) / 1000;
export const mibPerSec = (r: JobRun) => r.bytes / 1024 / 1024 / seconds(r);
export const perSec = (r: JobRun) => r.items / seconds(r);

const POLL_MS = 100;
const JOB_TIMEOUT_MS = 30 * 60_000;

function at(iso: string | null, what: string): number {
  const t = iso === null ? Number.NaN : Date.parse(iso);
  if (!Number.isFinite(t)) throw new Error(`${what}: no timestamp (${JSON.stringify(iso)})`);
  return t;
}

async function ok<T>(what: string, p: Promise<{ status: number; body: T }>, want: number): Promise<T> {
  const r = await p;
  if (r.status !== want) throw new Error(`${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

export class Jobs {
  constructor(private readonly base: () => string) {}

  /**
   * Drain the volume to completion (fails if a slice is left on it); with a `deadline` (epoch ms)
   * reached first, the drain is cancelled there and the run shows what it moved until then.
   */
  async drain(volumeId: number, deadline = Number.POSITIVE_INFINITY): Promise<JobRun> {
    const url = `${this.base()}/$/volumes/${volumeId}/drain`;
    await ok(`POST /$/volumes/${volumeId}/drain`, api(url, 'POST'), 202);
    let d = await waitFor(
      `the drain of volume ${volumeId}`,
      async () => {
        const r = await ok(`GET /$/volumes/${volumeId}/drain`, api<{ drain: DrainProgress }>(url), 200);
        return r.drain.state !== 'running' || Date.now() >= deadline ? r.drain : null;
      },
      JOB_TIMEOUT_MS,
      POLL_MS,
    );
    if (d.state === 'running') {
      d = (await ok(`DELETE /$/volumes/${volumeId}/drain`, api<{ drain: DrainProgress }>(url, 'DELETE'), 200)).drain;
      // (it may have completed just before the cancel came)
      if (d.state === 'cancelled') return { startMs: at(d.startedAt, 'drain start'), endMs: at(d.finishedAt, 'drain cancel'), bytes: d.bytesMoved, items: d.moved, complete: false };
    }
    if (d.state !== 'completed' || d.remaining !== 0 || d.stuck.length) throw new Error(`drain of volume ${volumeId} ended ${d.state} with ${d.remaining} slice(s) left: ${JSON.stringify(d.stuck.slice(0, 3))}`);
    return { startMs: at(d.startedAt, 'drain start'), endMs: at(d.finishedAt, 'drain finish'), bytes: d.bytesMoved, items: d.moved, complete: true };
  }

  /** Wait for the old slices of finished moves to be deleted (after their grace period). */
  settle(): Promise<void> {
    return settled(this.base());
  }

  /** A drained volume takes writes again: the drain record is closed and the volume made writable. */
  async release(volumeId: number): Promise<void> {
    await ok(`DELETE /$/volumes/${volumeId}/drain`, api(`${this.base()}/$/volumes/${volumeId}/drain`, 'DELETE'), 200);
    await this.readOnly(volumeId, false);
  }

  async readOnly(volumeId: number, isReadOnly: boolean): Promise<void> {
    await ok(`PUT /$/volumes/${volumeId}`, api(`${this.base()}/$/volumes/${volumeId}`, 'PUT', { isReadOnly }), 200);
  }

  /**
   * A whole-fleet verification run to its end; fails if it finds an error (the data is clean).
   * With a `deadline` (epoch ms) reached first, the run is stopped there (DELETE) and shows what
   * it checked until then.
   */
  async verify(mode: VerifyMode, deadline = Number.POSITIVE_INFINITY): Promise<JobRun> {
    const base = this.base();
    const start = await ok('POST /$/verify-volumes', api<{ startedAt: string; accepted: boolean; deferred?: boolean; reason?: string }>(`${base}/$/verify-volumes`, 'POST', { mode }), 200);
    if (!start.accepted || start.deferred) throw new Error(`verify ${mode} not started: ${JSON.stringify(start)}`);
    const running = await waitFor(
      `the ${mode} verification run`,
      async () => {
        const p = await ok('GET /$/verify-volumes', api<VerifyProgress>(`${base}/$/verify-volumes`), 200);
        return p.run === null ? 'ended' : Date.now() >= deadline ? 'deadline' : null;
      },
      JOB_TIMEOUT_MS,
      POLL_MS,
    );
    if (running === 'deadline') await ok('DELETE /$/verify-volumes', api(`${base}/$/verify-volumes`, 'DELETE'), 200);
    const runs = (await ok('GET /$/verify-runs', api<{ runs: VerifyRun[] }>(`${base}/$/verify-runs?limit=10`), 200)).runs;
    const run = runs.find((r) => r.startedAt === start.startedAt && r.mode === mode);
    if (!run) throw new Error(`the ${mode} run started at ${start.startedAt} is not in /$/verify-runs`);
    const errors = Object.values(run.errors).reduce((s, n) => s + n, 0);
    // (a run stopped at the deadline may have completed just before the stop came)
    const fine = run.status === 'completed' || (running === 'deadline' && run.status === 'stopped');
    if (!fine || errors) throw new Error(`verify ${mode} ended ${run.status} with errors ${JSON.stringify(run.errors)}`);
    return { startMs: at(run.startedAt, 'verify start'), endMs: at(run.finishedAt, 'verify finish'), bytes: run.bytesChecked, items: run.objectsChecked, complete: run.status === 'completed' };
  }

  /** A rebalance (deadband 0) at this concurrency, to its end. */
  async rebalance(concurrency: number): Promise<JobRun> {
    const base = this.base();
    await ok('POST /$/rebalance', api(`${base}/$/rebalance`, 'POST', { deadband: 0, concurrency }), 202);
    const r = await waitFor(
      'the rebalance',
      async () => {
        const p = await ok('GET /$/rebalance', api<RebalanceProgress>(`${base}/$/rebalance`), 200);
        return p.running ? null : p;
      },
      JOB_TIMEOUT_MS,
      POLL_MS,
    );
    if (r.lastOutcome === 'cancelled' || r.unrecoverable) throw new Error(`rebalance ended ${r.lastOutcome} (unrecoverable ${r.unrecoverable})`);
    return { startMs: at(r.startedAt, 'rebalance start'), endMs: at(r.finishedAt, 'rebalance finish'), bytes: r.bytesMoved, items: r.moves, complete: true, outcome: r.lastOutcome ?? '?' };
  }
}

/** The two volumes drains go back and forth between: one holds slices, the other is empty. */
export class Pair {
  constructor(private readonly jobs: Jobs, public full: number, public empty: number) {}

  /**
   * Drain the full one onto the empty one, settle, make the drained one writable; they swap.
   * A drain cancelled at `deadline` is then started again and run to its end (untimed: the
   * run returned is the part before the deadline).
   */
  async flip(deadline = Number.POSITIVE_INFINITY): Promise<JobRun> {
    const run = await this.jobs.drain(this.full, deadline);
    if (!run.complete) await this.jobs.drain(this.full);
    await this.jobs.settle();
    await this.jobs.release(this.full);
    [this.full, this.empty] = [this.empty, this.full];
    return run;
  }

  /**
   * After a rebalance filled the empty volume: drain it back (every slice returns to the volume
   * it came from), settle, make it writable again. Untimed.
   */
  async restore(): Promise<void> {
    await this.jobs.drain(this.empty);
    await this.jobs.settle();
    await this.jobs.release(this.empty);
  }
}

/**
 * Run `once(deadline)` again and again until `deadline` (epoch ms); each run stops there at the
 * latest. Returns the runs, the last one cut at the deadline.
 */
export async function keepRunning(once: (deadline: number) => Promise<JobRun>, deadline: number): Promise<JobRun[]> {
  const runs: JobRun[] = [];
  while (Date.now() < deadline) runs.push(await once(deadline));
  return runs;
}

/**
 * Repeat a measurement up to `reps` times, and again only while the runs so far took less than
 * `budgetS` seconds in all (`cost`: the seconds a run counts for, its measured part): short
 * measurements get `reps` runs (a median), long ones fewer.
 */
export async function repeat<T>(reps: number, budgetS: number, cost: (run: T) => number, once: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let spent = 0;
  for (let i = 0; i < reps && (i === 0 || spent < budgetS); i++) {
    const run = await once(i);
    spent += cost(run);
    out.push(run);
  }
  return out;
}
