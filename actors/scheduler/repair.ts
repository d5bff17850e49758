/**
 * The repair worker: takes the faults that are `pending`, rebuilds each bad slice from the
 * object's good ones and writes it to a healthy volume — another writable volume that holds no
 * slice of the object (then the record flips to it), else the slice's own volume when that one
 * is still writable and healthy (rewritten in place). The rebuilt object must reproduce its
 * recorded MD5 before anything is committed. A repair that cannot be done is `blocked` with one
 * of the spec's reasons:
 *   insufficient-slices      fewer good slices than k
 *   unrecoverable            the operator accepted the loss (POST /$/faults/accept-loss)
 *   target-unwritable        no healthy volume can take the rebuilt slice
 *   reconstruction-mismatch  the rebuild did not reproduce the stored MD5; nothing was overwritten
 * A blocked fault is re-armed by the next finding of it (a read, a scrub), except an accepted
 * loss. Slices below quorum stay in place, listed here, and keep blocking their volume's removal.
 */
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import type { SliceFault } from '../objstore/store/index.js';
import type { Maint } from './maint.js';
import { volumeOf } from '../../protocols/objstore/layout.js';
import { RebuildError, relocate, type Target } from './relocate.js';

type Reason = NonNullable<SliceFault['repairBlockedReason']>;

async function setStatus(mt: Maint, objectId: string, indexes: number[], status: SliceFault['repairStatus'], reason: Reason | null): Promise<void> {
  const meta = mt.store.meta;
  await meta.root.transaction(() => {
    for (const i of indexes) {
      const key = `${objectId}/${i}`;
      const f = meta.faults.get(key);
      if (f) meta.faults.putSync(key, { ...f, repairStatus: status, repairBlockedReason: reason });
    }
  });
}

/** Where each bad slice goes: another writable volume first, else its own if still writable. */
function chooseTargets(mt: Maint, rec: ObjectRecord, bad: number[]): Target[] | null {
  const holding = new Set([...rec.dataVolumes, ...rec.parityVolumes]);
  const free = mt.fleet
    .writable()
    .filter((w) => !holding.has(w.id))
    .sort((a, b) => b.bytesFree - a.bytesFree || a.id - b.id)
    .map((w) => w.id);
  const writable = new Set(mt.fleet.writable().map((w) => w.id));
  const out: Target[] = [];
  for (const index of bad) {
    const own = volumeOf(rec, index);
    const other = free.shift();
    if (other !== undefined) out.push({ index, to: other });
    else if (writable.has(own)) out.push({ index, to: own });
    else return null;
  }
  return out;
}

/** Repair one object's pending faults. */
async function repairObject(mt: Maint, rec: ObjectRecord, faults: SliceFault[]): Promise<void> {
  const meta = mt.store.meta;
  // A fault recorded against a volume that no longer holds the slice is stale: drop it.
  for (const f of meta.faultsOf(rec.id)) {
    if (f.sliceIndex >= rec.k + rec.m || volumeOf(rec, f.sliceIndex) !== f.volumeId) await meta.faults.remove(`${rec.id}/${f.sliceIndex}`);
  }
  const all = meta.faultsOf(rec.id);
  // Every bad slice is avoided as a source; an accepted loss is not rebuilt (the operator said so).
  const bad = [...new Set(all.map((f) => f.sliceIndex))].sort((a, b) => a - b);
  const accepted = new Set(all.filter((f) => f.repairBlockedReason === 'unrecoverable').map((f) => f.sliceIndex));
  const pending = faults.map((f) => f.sliceIndex).filter((i) => bad.includes(i));
  const wanted = pending.filter((i) => !accepted.has(i));
  if (accepted.size) await setStatus(mt, rec.id, pending.filter((i) => accepted.has(i)), 'blocked', 'unrecoverable');
  if (!wanted.length) return;
  const good = rec.k + rec.m - bad.length;
  if (good < rec.k) {
    await setStatus(mt, rec.id, wanted, 'blocked', 'insufficient-slices');
    mt.state.repairs.blocked++;
    mt.log.error({ objectId: rec.id, path: rec.path, bad, k: rec.k, m: rec.m }, 'repair refused: fewer good slices than needed (insufficient-slices); the slices stay in place');
    mt.notify({ severity: 'critical', key: `blocked:${rec.id}`, title: `Object ${rec.path} cannot be repaired`, body: `Object ${rec.id} (${rec.path}) has ${bad.length} bad slice(s) of ${rec.k + rec.m} and needs ${rec.k} good ones: repair is blocked (insufficient-slices). A disk that comes back may make it readable again; otherwise POST /$/faults/accept-loss.` });
    return;
  }
  await mt.fleet.refresh();
  const targets = chooseTargets(mt, rec, wanted);
  if (!targets) {
    await setStatus(mt, rec.id, wanted, 'blocked', 'target-unwritable');
    mt.state.repairs.blocked++;
    mt.log.warn({ objectId: rec.id, bad }, 'repair refused: no healthy volume can take the rebuilt slice (target-unwritable)');
    return;
  }
  await setStatus(mt, rec.id, wanted, 'repairing', null);
  try {
    await relocate({ store: mt.store, by: 'repair' }, rec, targets, { avoid: new Set(bad), checkMd5: true });
    mt.state.repairs.repaired++;
    mt.log.info({ objectId: rec.id, slices: targets }, 'repaired');
  } catch (err) {
    if (!(err instanceof RebuildError)) {
      await setStatus(mt, rec.id, wanted, 'pending', null);
      throw err;
    }
    if (err.reason === 'gone') return;
    if (err.reason === 'insufficient-slices' || err.reason === 'reconstruction-mismatch' || err.reason === 'target-unwritable') {
      await setStatus(mt, rec.id, wanted, 'blocked', err.reason);
      mt.state.repairs.blocked++;
      mt.log.error({ objectId: rec.id, reason: err.reason, err: err.message }, `repair refused (${err.reason})`);
      mt.notify({ severity: err.reason === 'target-unwritable' ? 'warning' : 'critical', key: `blocked:${rec.id}`, title: `Repair of ${rec.path} is blocked (${err.reason})`, body: `Object ${rec.id} (${rec.path}): ${err.message}` });
      return;
    }
    await setStatus(mt, rec.id, wanted, 'pending', null);
    mt.log.warn({ objectId: rec.id, reason: err.reason, err: err.message }, 'repair failed; it is tried again');
  }
}

/** One round: every object with pending faults. */
export async function repairRound(mt: Maint): Promise<number> {
  const meta = mt.store.meta;
  const byObject = new Map<string, SliceFault[]>();
  for (const { value } of meta.faults.getRange()) {
    if (value.repairStatus !== 'pending' && value.repairStatus !== 'repairing') continue;
    const list = byObject.get(value.objectId) ?? [];
    list.push(value);
    byObject.set(value.objectId, list);
  }
  let done = 0;
  for (const [objectId, faults] of byObject) {
    if (!mt.may('repair')) break;
    const rec = meta.objects.get(objectId);
    if (!rec) {
      for (const f of faults) await meta.faults.remove(`${objectId}/${f.sliceIndex}`);
      continue;
    }
    if (!mt.lock(objectId)) continue;
    try {
      await repairObject(mt, rec, faults);
      done++;
    } finally {
      mt.unlock(objectId);
    }
  }
  mt.state.repairs.lastRunAt = Date.now();
  if (done) await mt.save();
  return done;
}

/** The operator accepts the loss of an object's slices: their repair is blocked as unrecoverable. */
export async function acceptLoss(mt: Maint, objectId: string, sliceIndex: number | null, comment: string): Promise<number> {
  const meta = mt.store.meta;
  let n = 0;
  await meta.root.transaction(() => {
    for (const { key, value } of meta.faults.getRange({ start: `${objectId}/`, end: `${objectId}/~` })) {
      if (sliceIndex !== null && value.sliceIndex !== sliceIndex) continue;
      meta.faults.putSync(key, { ...value, repairStatus: 'blocked', repairBlockedReason: 'unrecoverable', message: comment ? `${value.message} (loss accepted: ${comment})` : value.message });
      n++;
    }
  });
  await meta.root.flushed;
  if (n) mt.log.warn({ objectId, sliceIndex, comment, faults: n }, 'an operator accepted the loss of slices (unrecoverable)');
  return n;
}
