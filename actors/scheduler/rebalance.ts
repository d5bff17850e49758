/**
 * Rebalance: shed slices from volumes above the capacity-weighted target fill (plus the
 * deadband) onto volumes below it, biggest objects first. Each batch re-reads the live fills
 * (so bytesToMove is right after a restart), picks the most-over source, and moves up to
 * `concurrency` slices of the biggest objects of the current size tier (`currentMinObjectSize`)
 * that lives on it; PUT /$/rebalance changes the concurrency of the next batch. Data slices are
 * copied, parity slices always recomputed from the data (never copied). The job ends when no
 * volume is above target + deadband, when `maxMoves` moves are done, or when nothing more can
 * move; it waits while a drain runs and stops for a freeze (both resumed by themselves).
 */
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import { chooseDestination, nextTier, planRebalance, rate, SIZE_TIERS, tierCeiling, ZERO_REBALANCE_COUNTERS, type RebalanceProgress, type VolumeFill } from '../../protocols/objstore/maintenance.js';
import { geometry, sliceSize } from '../../protocols/objstore/stripes.js';
import { slicesOn } from './drain.js';
import type { Maint } from './maint.js';
import { RebuildError, relocate } from './relocate.js';
import type { RebalanceState } from './state.js';

export function newRebalance(p: { deadband: number; maxMoves: number | null; concurrency: number }, now: number): RebalanceState {
  return {
    running: true,
    deadband: p.deadband,
    maxMoves: p.maxMoves,
    concurrency: p.concurrency,
    startedAt: now,
    finishedAt: null,
    lastOutcome: null,
    targetFill: 0,
    bytesToMove: 0,
    bytesMoved: 0,
    sourceVolumeIds: [],
    currentSourceVolumeId: null,
    currentMinObjectSize: SIZE_TIERS[0]!,
    doneSources: [],
    counters: { ...ZERO_REBALANCE_COUNTERS },
    lastBatch: null,
  };
}

export function rebalanceView(mt: Maint, r: RebalanceState | null): RebalanceProgress {
  const s = r ?? newRebalance({ deadband: 0, maxMoves: null, concurrency: 0 }, 0);
  let bytesToMove = s.bytesToMove;
  let targetFill = s.targetFill;
  let sourceVolumeIds = s.sourceVolumeIds;
  if (mt.fleet.all().length) {
    const plan = planRebalance(mt.fleet.fills(), s.deadband);
    bytesToMove = plan.bytesToMove;
    targetFill = plan.targetFill;
    if (r?.running) sourceVolumeIds = plan.sources;
  }
  const { bytesPerSec, etaSeconds } = r?.running && r.startedAt ? rate(s.bytesMoved, Date.now() - r.startedAt, bytesToMove) : { bytesPerSec: 0, etaSeconds: 0 };
  return {
    running: r?.running === true,
    concurrency: s.concurrency,
    targetFill,
    deadband: s.deadband,
    bytesToMove,
    bytesMoved: s.bytesMoved,
    bytesPerSec,
    etaSeconds,
    sourceVolumeIds,
    currentSourceVolumeId: s.currentSourceVolumeId,
    currentMinObjectSize: s.currentMinObjectSize,
    startedAt: r?.startedAt ? new Date(r.startedAt).toISOString() : null,
    ...s.counters,
    maxMoves: s.maxMoves,
    pausedBy: r?.running ? (mt.frozen ? 'freeze' : mt.drainsActive() ? 'drain' : null) : null,
    lastOutcome: s.lastOutcome,
    finishedAt: s.finishedAt ? new Date(s.finishedAt).toISOString() : null,
    lastBatch: s.lastBatch,
  };
}

function finish(r: RebalanceState, outcome: string): void {
  r.running = false;
  r.finishedAt = Date.now();
  r.lastOutcome = outcome;
  r.currentSourceVolumeId = null;
}

/** Candidates taken from one scan of the records (memory stays bounded; the next scan finds the rest). */
const SCAN_LIMIT = 10_000;

/** The biggest objects of the tier with a slice on `source`, not skipped for it. */
function candidates(mt: Maint, source: number, tier: number, skip: Set<string>, limit: number): ObjectRecord[] {
  const ceiling = tierCeiling(tier);
  const found: ObjectRecord[] = [];
  for (const { value } of mt.store.meta.objects.getRange()) {
    if (value.size < tier || value.size >= ceiling || skip.has(value.id)) continue;
    if (slicesOn(value, source).length) found.push(value);
  }
  return found.sort((a, b) => b.size - a.size || (a.id < b.id ? -1 : 1)).slice(0, limit);
}

async function moveOne(mt: Maint, r: RebalanceState, rec: ObjectRecord, source: number, fills: VolumeFill[], destinations: number[], target: number, skip: Set<string>): Promise<'moved' | 'busy' | 'skipped'> {
  if (!mt.lock(rec.id)) return 'busy';
  try {
    const cur = mt.store.meta.objects.get(rec.id);
    if (!cur) return 'skipped';
    const on = slicesOn(cur, source);
    if (!on.length) return 'skipped';
    if (on.length > 1) r.counters.duplicateRefs++;
    const index = on[0]!;
    const bytes = sliceSize(geometry(cur.size, cur.k, cur.m, cur.chunkSize), index);
    const holding = new Set([...cur.dataVolumes, ...cur.parityVolumes]);
    const from = fills.find((x) => x.id === source);
    if (from && from.bytesTotal > 0 && (from.bytesUsed - bytes) / from.bytesTotal < target) {
      // Moving this slice would take the source below the target: a smaller object may fit.
      skip.add(rec.id);
      return 'skipped';
    }
    const dest = chooseDestination(fills, destinations, holding, bytes, target, source);
    if (dest === null) {
      r.counters.noDest++;
      skip.add(rec.id);
      return 'skipped';
    }
    // Reserve the space now, so the batch's other moves see it taken.
    const f = fills.find((x) => x.id === dest)!;
    const s = fills.find((x) => x.id === source);
    f.bytesUsed += bytes;
    if (s) s.bytesUsed -= bytes;
    try {
      const [m] = await relocate(
        {
          store: mt.store,
          by: 'rebalance',
          onBadSource: (i, volumeId, code, message) => void mt.store.meta.recordFault({ objectId: rec.id, sliceIndex: i, volumeId, code, message }).catch(() => undefined),
          onFlip: (moved) => {
            for (const x of moved) {
              r.counters.moves++;
              if (x.how === 'copied') r.counters.copied++;
              else r.counters.reconstructed++;
              r.bytesMoved += x.bytes;
            }
            mt.saveSync();
          },
        },
        cur,
        [{ index, to: dest }],
        { avoid: mt.fleet.present(source) ? new Set() : new Set([index]) },
      );
      mt.fleet.account(dest, m!.bytes);
      mt.fleet.account(source, -m!.bytes);
      return 'moved';
    } catch (err) {
      f.bytesUsed -= bytes;
      if (s) s.bytesUsed += bytes;
      if (!(err instanceof RebuildError)) throw err;
      skip.add(rec.id);
      if (err.reason === 'insufficient-slices' || err.reason === 'reconstruction-mismatch') r.counters.unrecoverable++;
      else if (err.reason === 'target-unwritable' || err.reason === 'verify-failed') r.counters.noDest++;
      mt.log.warn({ objectId: rec.id, index, source, dest, reason: err.reason, err: err.message }, 'rebalance: a slice did not move');
      return 'skipped';
    }
  } finally {
    mt.unlock(rec.id);
  }
}

/** Run (or resume) the rebalance until it ends or is cancelled. */
export async function runRebalance(mt: Maint, r: RebalanceState): Promise<void> {
  // Objects skipped for a source (no destination, would overshoot, failed): per source, so a
  // source near its target does not hide the objects of the others.
  const skips = new Map<number, Set<string>>();
  // The biggest candidates of the current (source, tier), found by one scan of the records and
  // consumed batch by batch: a scan per batch would make a rebalance of many objects crawl.
  let queue: { key: string; recs: ObjectRecord[] } | null = null;
  while (r.running) {
    await mt.until('rebalance');
    if (!r.running) return;
    await mt.fleet.refresh();
    const fills = mt.fleet.fills();
    const plan = planRebalance(fills, r.deadband);
    r.targetFill = plan.targetFill;
    r.bytesToMove = plan.bytesToMove;
    r.sourceVolumeIds = plan.sources;
    const sources = plan.sources.filter((s) => !r.doneSources.includes(s));
    if (r.maxMoves !== null && r.counters.moves >= r.maxMoves) finish(r, 'maxMoves');
    else if (!sources.length) finish(r, 'completed');
    else if (!plan.destinations.length) finish(r, 'completed: no volume is below the target fill');
    if (!r.running) {
      await mt.save();
      mt.log.info({ outcome: r.lastOutcome, ...r.counters, bytesMoved: r.bytesMoved }, 'rebalance finished');
      mt.changed();
      return;
    }
    if (r.currentSourceVolumeId === null || !sources.includes(r.currentSourceVolumeId)) {
      r.currentSourceVolumeId = sources[0]!;
      r.currentMinObjectSize = SIZE_TIERS[0]!;
    }
    const source = r.currentSourceVolumeId;
    const room = r.maxMoves === null ? r.concurrency : Math.min(r.concurrency, r.maxMoves - r.counters.moves);
    let skip = skips.get(source);
    if (!skip) {
      skip = new Set<string>();
      skips.set(source, skip);
    }
    const key = `${source}/${r.currentMinObjectSize}`;
    if (!queue || queue.key !== key || queue.recs.length === 0) queue = { key, recs: candidates(mt, source, r.currentMinObjectSize, skip, SCAN_LIMIT) };
    const batch: ObjectRecord[] = [];
    while (batch.length < room && queue.recs.length) {
      const rec = queue.recs.shift()!;
      if (!skip.has(rec.id)) batch.push(rec);
    }
    if (!batch.length) {
      const next = nextTier(r.currentMinObjectSize);
      if (next === null) {
        r.doneSources.push(source);
        r.currentSourceVolumeId = null;
      } else r.currentMinObjectSize = next;
      await mt.save();
      continue;
    }
    const concurrency = r.concurrency;
    const moved = await Promise.all(batch.map((rec) => moveOne(mt, r, rec, source, fills, plan.destinations, plan.targetFill, skip)));
    // Objects busy with another job (a drain, a repair) are tried again at the end of the queue.
    batch.forEach((rec, i) => moved[i] === 'busy' && queue?.recs.push(rec));
    r.lastBatch = { size: batch.length, concurrency };
    await mt.save();
    // Every object of the batch is busy with another job: do not spin.
    if (moved.every((m) => m === 'busy')) await new Promise((res) => setTimeout(res, 200));
  }
}
