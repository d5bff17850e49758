/**
 * Draining a volume: every slice on it is relocated to another volume (one slice per volume per
 * object), `drainConcurrency` objects at a time, in object id order from the checkpointed cursor.
 * A slice is copied when its volume reads it clean, otherwise rebuilt from the others (an offline
 * or failing disk). A slice with no possible destination, or too few good slices to rebuild,
 * stays where it is and is listed in `stuck` (it keeps blocking the volume's removal). A pass
 * that leaves movable slices behind (objects busy with another job, PUTs that landed during the
 * pass) is followed by another, up to three.
 */
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import type { DrainProgress } from '../../protocols/objstore/maintenance.js';
import type { Maint } from './maint.js';
import { volumeOf } from '../../protocols/objstore/layout.js';
import { RebuildError, relocate } from './relocate.js';
import type { DrainState } from './state.js';

const MAX_PASSES = 3;

export function newDrain(volumeId: number, now: number): DrainState {
  return { volumeId, state: 'running', startedAt: now, finishedAt: null, cursor: null, pass: 1, moved: 0, copied: 0, reconstructed: 0, bytesMoved: 0, noDest: 0, stuck: [] };
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

export function drainView(mt: Maint, d: DrainState): DrainProgress {
  return {
    volumeId: d.volumeId,
    state: d.state,
    startedAt: new Date(d.startedAt).toISOString(),
    finishedAt: d.finishedAt ? new Date(d.finishedAt).toISOString() : null,
    moved: d.moved,
    copied: d.copied,
    reconstructed: d.reconstructed,
    bytesMoved: d.bytesMoved,
    noDest: d.noDest,
    stuck: d.stuck,
    remaining: countOn(mt, d.volumeId),
    pausedBy: d.state === 'running' && mt.frozen ? 'freeze' : null,
  };
}

async function moveOff(mt: Maint, d: DrainState, rec: ObjectRecord): Promise<'moved' | 'stuck' | 'later'> {
  if (!mt.lock(rec.id)) return 'later';
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
        d.stuck.push({ objectId: rec.id, index, reason: 'no-destination: every writable volume holds a slice of this object' });
        result = 'stuck';
        continue;
      }
      const avoid = new Set<number>(mt.fleet.present(d.volumeId) ? [] : [index]);
      try {
        const [r] = await relocate(
          {
            store: mt.store,
            by: `drain ${d.volumeId}`,
            onBadSource: (i, volumeId, code, message) => void mt.store.meta.recordFault({ objectId: rec.id, sliceIndex: i, volumeId, code, message }).catch(() => undefined),
            onFlip: (moved) => {
              for (const x of moved) {
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
        if (err.reason === 'insufficient-slices' || err.reason === 'reconstruction-mismatch') {
          d.stuck.push({ objectId: rec.id, index, reason: `${err.reason}: ${err.message}` });
          result = 'stuck';
          continue;
        }
        mt.log.warn({ volumeId: d.volumeId, objectId: rec.id, index, reason: err.reason, err: err.message }, 'drain: a slice did not move; the next pass tries again');
        result = 'later';
      }
    }
    return result;
  } finally {
    mt.unlock(rec.id);
  }
}

/** Run (or resume) a drain until it completes or is cancelled. */
export async function runDrain(mt: Maint, d: DrainState): Promise<void> {
  const meta = mt.store.meta;
  let later = 0;
  while (d.state === 'running') {
    await mt.until('drain');
    if (d.state !== 'running') return;
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
      if (remaining > d.stuck.length && d.pass < MAX_PASSES) {
        mt.log.info({ volumeId: d.volumeId, pass: d.pass, remaining, stuck: d.stuck.length, later }, 'drain: pass done; slices remain, starting another pass');
        d.pass++;
        d.cursor = null;
        d.stuck = [];
        later = 0;
        await mt.save();
        continue;
      }
      d.state = 'completed';
      d.finishedAt = Date.now();
      await mt.save();
      mt.log.info({ volumeId: d.volumeId, moved: d.moved, remaining, stuck: d.stuck.length }, remaining ? 'drain finished with slices left on the volume' : 'drain finished: the volume holds no live slice');
      mt.notify(
        remaining
          ? { severity: 'warning', key: `drain:${d.volumeId}`, title: `Drain of volume ${d.volumeId} is stuck`, body: `The drain of volume ${d.volumeId} ended after ${d.pass} pass(es) with ${remaining} slice(s) left on it (${d.stuck.length} stuck; first: ${d.stuck[0] ? `${d.stuck[0].objectId}/${d.stuck[0].index}: ${d.stuck[0].reason}` : 'none'}). See GET /$/volumes/${d.volumeId}/drain.` }
          : { severity: 'info', key: `drain:${d.volumeId}`, title: `Drain of volume ${d.volumeId} finished`, body: `Volume ${d.volumeId} holds no live slice any more (${d.moved} moved). It can be deleted: DELETE /$/volumes/${d.volumeId}.` },
      );
      mt.changed();
      return;
    }
    const outcomes = await Promise.all(batch.map((rec) => moveOff(mt, d, rec)));
    later += outcomes.filter((o) => o === 'later').length;
    d.cursor = last;
    await mt.save();
  }
}
