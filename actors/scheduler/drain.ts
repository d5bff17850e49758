/**
 * Draining a volume: every slice on it is relocated to another volume (one slice per volume per
 * object), `drainConcurrency` objects at a time, in object id order from the checkpointed cursor.
 * A slice is copied when its volume reads it clean, otherwise rebuilt from the others (an offline
 * or failing disk). A slice with no possible destination, or too few good slices to rebuild,
 * stays where it is and is listed in `stuck` (it keeps blocking the volume's removal). A pass
 * that leaves movable slices behind (objects busy with another job, PUTs that landed during the
 * pass) is followed by another, up to three at once.
 *
 * Drains that finish: a slice that could not move for a reason that may go away — too few good
 * slices while a repair is pending for the object's faults, a busy object, a target that failed —
 * is soft: after the quick passes the drain waits (until the repair has dealt with the object's
 * faults, or a backoff of 1 s doubling to 60 s) and passes again, until the volume is empty or
 * only hard failures are left (too few good slices with no repair pending, a rebuild that does
 * not reproduce the MD5, no destination), each listed with its reason. Finished, the drain's
 * status says whether old copies of moved slices still wait for their grace period.
 */
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import type { DrainProgress } from '../../protocols/objstore/maintenance.js';
import type { Maint } from './maint.js';
import { volumeOf } from '../../protocols/objstore/layout.js';
import { RebuildError, relocate } from './relocate.js';
import type { DrainState } from './state.js';

const MAX_PASSES = 3;
/** The first wait before a retry pass; it doubles with each retry, up to RETRY_MAX_MS. */
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 60_000;
/** How often a waiting drain looks whether the repair has dealt with the faults it waits for. */
const RETRY_POLL_MS = 250;

export function newDrain(volumeId: number, now: number): DrainState {
  return { volumeId, state: 'running', startedAt: now, finishedAt: null, cursor: null, pass: 1, moved: 0, copied: 0, reconstructed: 0, bytesMoved: 0, noDest: 0, stuck: [], retries: 0, waitingSince: null, waitingUntil: null };
}

/** Slice indexes of `rec` on volume `v` (more than one only if a record is damaged). */
export function slicesOn(rec: ObjectRecord, v: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < rec.k + rec.m; i++) if (volumeOf(rec, i) === v) out.push(i);
  return out;
}

/** Slices the records place on volume `v` (committed objects only). */
export function countOn(mt: Maint, v: number): number {
  let n = 0;
  for (const { value } of mt.store.meta.objects.getRange()) n += slicesOn(value, v).length;
  return n;
}

/** Old copies of slices the drain of `volumeId` moved that are not deleted yet, and when the last grace period ends. */
function oldCopies(mt: Maint, volumeId: number): { waiting: number; graceEndsAt: string | null } {
  const by = `drain ${volumeId}`;
  let waiting = 0;
  let last = 0;
  for (const { value } of mt.store.meta.moves.getRange()) {
    if (value.by !== by || value.phase !== 'flipped' || value.from === value.to) continue;
    waiting++;
    last = Math.max(last, value.at + mt.args.moveGraceMs);
  }
  return { waiting, graceEndsAt: waiting ? new Date(last).toISOString() : null };
}

export function drainView(mt: Maint, d: DrainState): DrainProgress {
  const copies = oldCopies(mt, d.volumeId);
  const waiting = d.state === 'running' && d.waitingSince ? { since: new Date(d.waitingSince).toISOString(), until: d.waitingUntil ? new Date(d.waitingUntil).toISOString() : null } : null;
  const phase = d.state === 'cancelled' ? 'cancelled' : d.state === 'running' ? (waiting ? 'waiting' : 'moving') : copies.waiting ? 'old-copies-waiting' : 'done';
  return {
    volumeId: d.volumeId,
    state: d.state,
    phase,
    startedAt: new Date(d.startedAt).toISOString(),
    finishedAt: d.finishedAt ? new Date(d.finishedAt).toISOString() : null,
    passes: d.pass,
    moved: d.moved,
    movedOnRetry: d.movedOnRetry ?? 0,
    copied: d.copied,
    reconstructed: d.reconstructed,
    bytesMoved: d.bytesMoved,
    noDest: d.noDest,
    stuck: d.stuck.map((x) => ({ objectId: x.objectId, index: x.index, reason: x.reason, hard: x.hard ?? true })),
    remaining: countOn(mt, d.volumeId),
    waiting,
    oldCopies: copies,
    pausedBy: d.state === 'running' && mt.frozen ? 'freeze' : null,
  };
}

/**
 * Too few good slices to rebuild is hard only when no repair is pending for the object: a repair
 * that rebuilds its bad slices elsewhere gives the drain its sources back.
 */
function repairPending(mt: Maint, objectId: string): boolean {
  return mt.store.meta.faultsOf(objectId).some((f) => f.repairStatus === 'pending' || f.repairStatus === 'repairing');
}

async function moveOff(mt: Maint, d: DrainState, rec: ObjectRecord): Promise<'moved' | 'stuck' | 'later'> {
  if (!mt.lock(rec.id)) {
    for (const index of slicesOn(rec, d.volumeId)) d.stuck.push({ objectId: rec.id, index, reason: 'busy: another job is moving slices of this object', hard: false });
    return 'later';
  }
  try {
    const cur = mt.store.meta.objects.get(rec.id);
    if (!cur) return 'moved';
    let result: 'moved' | 'stuck' | 'later' = 'moved';
    for (const index of slicesOn(cur, d.volumeId)) {
      const latest = mt.store.meta.objects.get(rec.id);
      if (!latest) return 'moved';
      const holding = new Set([...latest.dataVolumes, ...latest.parityVolumes]);
      const dest = mt.fleet
        .writable()
        .filter((w) => !holding.has(w.id) && w.id !== d.volumeId)
        .sort((a, b) => b.bytesFree - a.bytesFree || a.id - b.id)[0];
      if (!dest) {
        d.noDest++;
        d.stuck.push({ objectId: rec.id, index, reason: 'no-destination: every writable volume holds a slice of this object', hard: true });
        result = 'stuck';
        continue;
      }
      const avoid = new Set<number>(mt.fleet.present(d.volumeId) ? [] : [index]);
      // A repair already refused for this object: a drain's finding re-arms it (metadata.ts
      // recordFault), but too few slices now is a hard failure, not a reason to wait again.
      const refusedBefore = mt.store.meta.faultsOf(rec.id).some((f) => f.repairStatus === 'blocked');
      try {
        const [r] = await relocate(
          {
            store: mt.store,
            by: `drain ${d.volumeId}`,
            onBadSource: (i, volumeId, code, message) => void mt.store.meta.recordFault({ objectId: rec.id, sliceIndex: i, volumeId, code, message }).catch(() => undefined),
            onFlip: (moved) => {
              for (const x of moved) {
                const key = `${rec.id}/${x.index}`;
                if (d.softStuck?.includes(key)) {
                  d.softStuck = d.softStuck.filter((k) => k !== key);
                  d.movedOnRetry = (d.movedOnRetry ?? 0) + 1;
                }
                d.moved++;
                if (x.how === 'copied') d.copied++;
                else d.reconstructed++;
                d.bytesMoved += x.bytes;
              }
              mt.saveSync();
            },
          },
          latest,
          [{ index, to: dest.id }],
          { avoid },
        );
        mt.fleet.account(dest.id, r!.bytes);
      } catch (err) {
        if (!(err instanceof RebuildError)) throw err;
        if (err.reason === 'gone') return 'moved';
        if (err.reason === 'reconstruction-mismatch' || (err.reason === 'insufficient-slices' && (refusedBefore || !repairPending(mt, rec.id)))) {
          d.stuck.push({ objectId: rec.id, index, reason: `${err.reason}: ${err.message}`, hard: true });
          result = 'stuck';
          continue;
        }
        const why = err.reason === 'insufficient-slices' ? `${err.reason} until the repair of its faults: ${err.message}` : `${err.reason}: ${err.message}`;
        d.stuck.push({ objectId: rec.id, index, reason: why, hard: false });
        const key = `${rec.id}/${index}`;
        if (!d.softStuck?.includes(key)) d.softStuck = [...(d.softStuck ?? []), key];
        mt.log.warn({ volumeId: d.volumeId, objectId: rec.id, index, reason: err.reason, err: err.message }, 'drain: a slice did not move; it is tried again');
        result = 'later';
      }
    }
    return result;
  } finally {
    mt.unlock(rec.id);
  }
}

/**
 * Wait before a retry pass: until no object of a soft stuck slice has a repair pending (the
 * repair has dealt with the faults), or the backoff ends, or the drain is cancelled.
 */
async function waitToRetry(mt: Maint, d: DrainState): Promise<void> {
  const retries = d.retries ?? 0;
  const now = Date.now();
  d.waitingSince = now;
  d.waitingUntil = now + Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** retries);
  await mt.save();
  const objects = [...new Set(d.stuck.filter((x) => !x.hard).map((x) => x.objectId))];
  const waitsForRepair = objects.some((id) => repairPending(mt, id));
  mt.log.info({ volumeId: d.volumeId, retry: retries + 1, soft: d.stuck.filter((x) => !x.hard).length, hard: d.stuck.filter((x) => x.hard).length, waitsForRepair }, 'drain: slices could not move; retrying after the repair or a backoff');
  while (d.state === 'running' && !mt.signal.aborted && Date.now() < d.waitingUntil) {
    await new Promise((r) => setTimeout(r, RETRY_POLL_MS).unref());
    if (waitsForRepair && !objects.some((id) => repairPending(mt, id))) break;
  }
  // Stopping: the wait is resumed at the next start (waitingSince stays in the checkpoint).
  if (mt.signal.aborted) return;
  d.retries = retries + 1;
  d.waitingSince = null;
  d.waitingUntil = null;
}

/** Run (or resume) a drain until it completes or is cancelled. */
export async function runDrain(mt: Maint, d: DrainState): Promise<void> {
  const meta = mt.store.meta;
  while (d.state === 'running') {
    await mt.until('drain');
    if (d.state !== 'running') return;
    // A drain resumed while waiting waits again (the wait itself is not checkpointed work).
    if (d.waitingSince) await waitToRetry(mt, d);
    if (d.state !== 'running' || mt.signal.aborted) return;
    await mt.fleet.refresh();
    const batch: ObjectRecord[] = [];
    let last = d.cursor;
    for (const { key, value } of meta.objects.getRange(d.cursor ? { start: d.cursor } : {})) {
      if (key === d.cursor) continue;
      last = key;
      if (slicesOn(value, d.volumeId).length) batch.push(value);
      if (batch.length >= mt.args.drainConcurrency) break;
    }
    if (batch.length === 0) {
      const remaining = countOn(mt, d.volumeId);
      const hard = d.stuck.filter((x) => x.hard ?? true).length;
      if (remaining > hard) {
        // Movable slices are left (soft failures, or slices that landed during the pass): a
        // quick pass first, then passes after a wait for the repair or a backoff.
        mt.log.info({ volumeId: d.volumeId, pass: d.pass, remaining, hard, soft: d.stuck.length - hard }, 'drain: pass done; slices remain, starting another pass');
        if (d.pass >= MAX_PASSES) await waitToRetry(mt, d);
        if (d.state !== 'running' || mt.signal.aborted) return;
        d.pass++;
        d.cursor = null;
        d.stuck = [];
        await mt.save();
        continue;
      }
      d.state = 'completed';
      d.finishedAt = Date.now();
      await mt.save();
      mt.log.info({ volumeId: d.volumeId, moved: d.moved, remaining, stuck: d.stuck.length, passes: d.pass }, remaining ? 'drain finished with slices left on the volume (hard failures)' : 'drain finished: the volume holds no live slice');
      mt.notify(
        remaining
          ? { severity: 'warning', key: `drain:${d.volumeId}`, title: `Drain of volume ${d.volumeId} is stuck`, body: `The drain of volume ${d.volumeId} ended after ${d.pass} pass(es) with ${remaining} slice(s) left on it that no retry moves (first: ${d.stuck[0] ? `${d.stuck[0].objectId}/${d.stuck[0].index}: ${d.stuck[0].reason}` : 'none'}). See GET /$/volumes/${d.volumeId}/drain.` }
          : { severity: 'info', key: `drain:${d.volumeId}`, title: `Drain of volume ${d.volumeId} finished`, body: `Volume ${d.volumeId} holds no live slice any more (${d.moved} moved). It can be deleted: DELETE /$/volumes/${d.volumeId}.` },
      );
      mt.changed();
      return;
    }
    await Promise.all(batch.map((rec) => moveOff(mt, d, rec)));
    d.cursor = last;
    await mt.save();
  }
}
