/**
 * Verification runs (scrub): every object with a slice on the run's volumes (all volumes when
 * the scope is the fleet) is verified like POST /$/verify-file does — `light` reads the slice
 * headers, `full` every byte, recomputing and comparing parity and the whole-object MD5 —
 * in object id order from the checkpointed cursor. Bad slices are recorded as faults (the repair
 * worker takes them from there); clean objects have stale faults cleared. A running rebalance
 * parks the scrub; a request made while a rebalance runs is deferred (persisted) and starts when
 * the rebalance ends. Every run is kept in the verifyRuns database (GET /$/verify-runs).
 */
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import { covers, NO_ERRORS, type VerifyErrors, type VerifyMode, type VerifyProgress, type VerifyRun, type VerifyTrigger } from '../../protocols/objstore/maintenance.js';
import { verifyObject } from '../objstore/store/index.js';
import type { Maint } from './maint.js';
import type { VerifyStartReply } from './messages.js';
import type { VerifyState } from './state.js';

const BATCH = 4;
/** objects verified at once */
const PARALLEL = 2;

const runKey = (requestedAt: number, id: string) => `${String(requestedAt).padStart(13, '0')}/${id}`;

function inScope(rec: ObjectRecord, volumeIds: number[] | null): boolean {
  if (volumeIds === null) return true;
  return [...rec.dataVolumes, ...rec.parityVolumes].some((v) => volumeIds.includes(v));
}

function countScope(mt: Maint, volumeIds: number[] | null): number {
  let n = 0;
  for (const { value } of mt.store.meta.objects.getRange()) if (inScope(value, volumeIds)) n++;
  return n;
}

/** Persist the run record (history) as it stands. */
export async function saveRun(mt: Maint, run: VerifyRun): Promise<void> {
  await mt.store.meta.verifyRuns.put(runKey(Date.parse(run.requestedAt), run.id), run as unknown as Record<string, unknown>);
}

export function listRuns(mt: Maint, limit: number): VerifyRun[] {
  const out: VerifyRun[] = [];
  for (const { value } of mt.store.meta.verifyRuns.getRange({ reverse: true, limit })) out.push(value as unknown as VerifyRun);
  return out;
}

export function verifyView(mt: Maint): VerifyProgress {
  const v = mt.state.verify;
  const waitingOnRebalance = Boolean(v) && mt.rebalanceActive();
  return {
    running: Boolean(v) && !v!.deferred && !mt.frozen && !waitingOnRebalance,
    waitingOnRebalance,
    frozen: Boolean(v) && mt.frozen,
    run: v?.run ?? null,
    objectsTotal: v?.objectsTotal ?? 0,
    percent: v && v.objectsTotal > 0 ? Math.min(100, Math.round((v.run.objectsChecked * 1000) / v.objectsTotal) / 10) : v ? 0 : 100,
  };
}

/**
 * POST /$/verify-volumes: accepted false (HTTP 200) under a freeze, or when a run that does not
 * cover the request is going; a run that covers it answers for it; deferred while a rebalance runs.
 */
export async function startVerify(mt: Maint, req: { volumeIds: number[] | null; mode: VerifyMode; trigger: VerifyTrigger }, now = Date.now()): Promise<VerifyStartReply & { started: boolean }> {
  const nowIso = new Date(now).toISOString();
  if (mt.frozen) return { startedAt: nowIso, accepted: false, reason: 'frozen: a maintenance freeze is active (PUT /$/maintenance-freeze {"frozen": false})', started: false };
  const cur = mt.state.verify;
  if (cur) {
    if (covers(cur.run, req)) return { startedAt: cur.run.startedAt ?? cur.run.requestedAt, accepted: true, ...(cur.deferred ? { deferred: true } : {}), started: false };
    return { startedAt: cur.run.startedAt ?? cur.run.requestedAt, accepted: false, reason: `overlapping-run: run ${cur.run.id} (${cur.run.mode}, volumes ${cur.run.volumeIds?.join(',') ?? 'all'}) is going and does not cover this request`, started: false };
  }
  const deferred = mt.rebalanceActive();
  const run: VerifyRun = {
    id: `v${now.toString(36)}`,
    trigger: req.trigger,
    mode: req.mode,
    volumeIds: req.volumeIds,
    status: 'running',
    requestedAt: nowIso,
    startedAt: deferred ? null : nowIso,
    finishedAt: null,
    objectsChecked: 0,
    slicesChecked: 0,
    bytesChecked: 0,
    errors: { ...NO_ERRORS },
    stopReason: null,
  };
  mt.state.verify = { run, cursor: null, objectsTotal: deferred ? 0 : countScope(mt, req.volumeIds), deferred };
  await saveRun(mt, run);
  await mt.save();
  return { startedAt: nowIso, accepted: true, ...(deferred ? { deferred: true } : {}), started: true };
}

export async function stopVerify(mt: Maint, reason: string): Promise<void> {
  const v = mt.state.verify;
  if (!v) return;
  v.run.status = 'stopped';
  v.run.stopReason = reason;
  v.run.finishedAt = new Date().toISOString();
  await saveRun(mt, v.run);
  mt.state.verify = null;
  await mt.save();
  mt.changed();
}

function count(errors: VerifyErrors, status: string): void {
  switch (status) {
    case 'missing':
      errors.missing++;
      break;
    case 'bad-header':
      errors.badHeader++;
      break;
    case 'checksum':
      errors.checksum++;
      break;
    case 'timeout':
      errors.timeout++;
      break;
    case 'parity-mismatch':
      errors.parityMismatch++;
      break;
    default:
      errors.unreadable++;
  }
}

/** Run (or resume) the current verification until it completes or is stopped. */
export async function runVerify(mt: Maint, v: VerifyState): Promise<void> {
  const meta = mt.store.meta;
  while (mt.state.verify === v) {
    await mt.until('scrub');
    if (mt.state.verify !== v) return;
    if (v.deferred || !v.run.startedAt) {
      v.deferred = false;
      v.run.startedAt = new Date().toISOString();
      v.objectsTotal = countScope(mt, v.run.volumeIds);
      mt.log.info({ run: v.run.id }, 'verify: the deferred run starts (the rebalance has ended)');
    }
    await mt.fleet.refresh();
    const batch: ObjectRecord[] = [];
    let last = v.cursor;
    for (const { key, value } of meta.objects.getRange(v.cursor ? { start: v.cursor } : {})) {
      if (key === v.cursor) continue;
      last = key;
      if (inScope(value, v.run.volumeIds)) batch.push(value);
      if (batch.length >= BATCH) break;
    }
    if (!batch.length) {
      v.run.status = 'completed';
      v.run.finishedAt = new Date().toISOString();
      await saveRun(mt, v.run);
      mt.state.verify = null;
      await mt.save();
      mt.log.info({ run: v.run.id, objects: v.run.objectsChecked, errors: v.run.errors }, 'verify run completed');
      const errors = Object.values(v.run.errors).reduce((a, b) => a + b, 0);
      if (errors) {
        const scope = v.run.volumeIds ? `volume(s) ${v.run.volumeIds.join(', ')}` : 'the whole fleet';
        mt.notify({ severity: 'warning', key: `verify:${v.run.id}`, title: `Verify run found ${errors} error(s)`, body: `The ${v.run.mode} verify run ${v.run.id} of ${scope} (trigger: ${v.run.trigger.kind}) checked ${v.run.objectsChecked} objects and found ${JSON.stringify(v.run.errors)}. Faults are in GET /$/faults; repair works on them.` });
      }
      mt.changed();
      return;
    }
    // The batch's objects are verified PARALLEL at a time (their reads queue at low priority in
    // the volumes, behind client traffic), then counted in order (docs/maintenance.md, Measured:
    // two at a time verified at ~60 MiB/s here; four were no faster).
    const results: Array<{ cur: ObjectRecord; r: Awaited<ReturnType<typeof verifyObject>> } | null> = [];
    for (let i = 0; i < batch.length; i += PARALLEL) {
      results.push(
        ...(await Promise.all(
          batch.slice(i, i + PARALLEL).map(async (rec) => {
            const cur = meta.objects.get(rec.id);
            return cur ? { cur, r: await verifyObject(mt.store, cur, v.run.mode) } : null;
          }),
        )),
      );
      if (mt.state.verify !== v) return;
    }
    if (mt.state.verify !== v) return;
    for (const x of results) {
      if (!x) continue;
      v.run.objectsChecked++;
      for (const s of Object.values(x.r.slices)) {
        v.run.slicesChecked++;
        if (s.status !== 'ok') count(v.run.errors, s.status);
      }
      if (v.run.mode === 'full') v.run.bytesChecked += x.cur.size;
      if (x.r.md5 && x.r.md5.ok === false) v.run.errors.md5Mismatch++;
    }
    v.cursor = last;
    await saveRun(mt, v.run);
    await mt.save();
  }
}
