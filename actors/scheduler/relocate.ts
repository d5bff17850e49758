/**
 * Moving and rebuilding slices: the one engine under drain, rebalance and repair.
 *
 * Move-then-flip: (1) a move record (`copying`) is written; (2) the new slice is written on its
 * target — a data slice is copied from its volume when it reads clean (every chunk's CRC is
 * checked there), otherwise rebuilt from k good slices; a parity slice is never copied, always
 * recomputed from the data; (3) it is committed and read back, and must hash the same as what was
 * written; (4) the object record is flipped to the new volume in one transaction that also marks
 * the move `flipped` (if the object was deleted or changed meanwhile, the new slice is removed
 * instead); (5) after a grace period (reads that began before the flip may still be reading it)
 * the old slice is deleted and the move record removed. A crash anywhere is finished at boot by
 * `recoverMoves`: `copying` → the new slice is deleted (the record still names the old one);
 * `flipped` → the old slice is deleted. Nothing is lost, nothing is left twice.
 *
 * Whenever a data slice has to be rebuilt (or a repair asks for it), the whole object's MD5 is
 * recomputed from the data and compared with the record: a rebuild that does not reproduce it
 * is refused before anything is committed (`reconstruction-mismatch`).
 */
import { createHash, type Hash } from 'node:crypto';
import type { ObjectRecord } from '../../protocols/objstore/headers.js';
import { volumeOf, withSliceOn } from '../../protocols/objstore/layout.js';
import { dataChunkLength, geometry, parityChunkLength, sliceHeaderFor, sliceSize, type Geometry } from '../../protocols/objstore/stripes.js';
import { errorCode, readSliceChunks, rebuildBatch, TooFewSlices, writeSliceRecords, type MoveRecord, type SliceContext } from '../objstore/store/index.js';
import { relocationFailuresTotal, relocationsTotal } from './metrics.js';

const STRIPES_PER_BATCH = 8;

export type RebuildReason = 'insufficient-slices' | 'reconstruction-mismatch' | 'target-unwritable' | 'gone' | 'changed' | 'verify-failed';

export class RebuildError extends Error {
  readonly reason: RebuildReason;
  constructor(reason: RebuildReason, message: string) {
    super(message);
    this.name = 'RebuildError';
    this.reason = reason;
  }
}

/** A data slice's copy failed part-way: the move starts again, rebuilding and checking MD5. */
class Restart extends Error {}

export interface Target {
  index: number;
  /** the volume that gets the new slice (the same as the current one: rewrite in place) */
  to: number;
}

export interface MoveResult {
  index: number;
  from: number;
  to: number;
  how: 'copied' | 'reconstructed';
  bytes: number;
}

export interface RelocateDeps {
  store: SliceContext;
  /** the move's origin, for the record and the logs: drain, rebalance, repair */
  by: string;
  /**
   * Called inside the flip's transaction with what moved: count it there (and checkpoint with
   * Maint.saveSync), so the counts commit together with the flip.
   */
  onFlip?(moved: MoveResult[]): void;
  /** after a fault is found in a source slice while moving: record it */
  onBadSource?(index: number, volumeId: number, code: string, message: string): void;
}

const moveKey = (objectId: string, index: number) => `${objectId}/${index}`;

/**
 * Relocate slices `targets` of `rec` (each to its `to`), move-then-flip. `avoid`: slices known
 * bad (not read). `checkMd5`: always recompute the whole-object MD5 (a repair does).
 * Resolves with what was moved; rejects with a RebuildError (nothing committed is left behind).
 */
export async function relocate(deps: RelocateDeps, rec: ObjectRecord, targets: Target[], opts: { avoid?: ReadonlySet<number>; checkMd5?: boolean } = {}): Promise<MoveResult[]> {
  const avoid = new Set(opts.avoid ?? []);
  const by = deps.by.split(' ')[0]!;
  try {
    let moved: MoveResult[];
    try {
      moved = await relocateOnce(deps, rec, targets, avoid, opts.checkMd5 ?? false);
    } catch (err) {
      if (!(err instanceof Restart)) throw err;
      moved = await relocateOnce(deps, rec, targets, avoid, true);
    }
    for (const m of moved) relocationsTotal.inc({ by, how: m.how });
    return moved;
  } catch (err) {
    if (err instanceof RebuildError) relocationFailuresTotal.inc({ reason: err.reason });
    throw err;
  }
}

async function relocateOnce(deps: RelocateDeps, rec: ObjectRecord, targets: Target[], avoid: Set<number>, checkMd5: boolean): Promise<MoveResult[]> {
  const { store } = deps;
  const meta = store.meta;
  const g = geometry(rec.size, rec.k, rec.m, rec.chunkSize);
  const now = Date.now();
  const moves: MoveRecord[] = targets.map((t) => ({ objectId: rec.id, index: t.index, from: volumeOf(rec, t.index), to: t.to, bytes: sliceSize(g, t.index), phase: 'copying', by: deps.by, at: now }));
  for (const t of targets) {
    const others = [...rec.dataVolumes, ...rec.parityVolumes].filter((_, i) => i !== t.index);
    if (others.includes(t.to)) throw new RebuildError('target-unwritable', `volume ${t.to} already holds another slice of ${rec.id}`);
    if (!store.volume(t.to)) throw new RebuildError('target-unwritable', `volume ${t.to} is not present`);
  }
  // A slice whose previous move is still finishing (its old copy waits for the grace period)
  // does not move again yet: its move record would be overwritten and that old copy leaked.
  const clash = await meta.root.transaction(() => {
    const busy = moves.find((mv) => meta.moves.get(moveKey(mv.objectId, mv.index)));
    if (busy) return busy.index;
    for (const mv of moves) meta.moves.putSync(moveKey(mv.objectId, mv.index), mv);
    return null;
  });
  if (clash !== null) throw new RebuildError('changed', `slice ${clash} of ${rec.id} is still finishing an earlier move; it can move again once that is done`);
  const flushed = meta.root.flushed;
  const opened: Target[] = [];
  const abortAll = async () => {
    await Promise.allSettled(
      opened.map(async (t) => {
        const ref = store.volume(t.to);
        await ref?.request({ type: 'abort', objectId: rec.id, index: t.index });
      }),
    );
  };
  const forget = async (deleteOnTarget: boolean) => {
    if (deleteOnTarget) {
      await Promise.allSettled(
        moves.filter((m) => m.from !== m.to).map(async (m) => store.volume(m.to)?.request({ type: 'delete', objectId: rec.id, index: m.index })),
      );
    }
    await meta.root.transaction(() => {
      for (const mv of moves) meta.moves.removeSync(moveKey(mv.objectId, mv.index));
    });
  };

  const written = new Map<number, Hash>(targets.map((t) => [t.index, createHash('sha256')]));
  const how = new Map<number, 'copied' | 'reconstructed'>();
  try {
    // Open the new slices.
    for (const t of targets) {
      const ref = store.volume(t.to);
      if (!ref) throw new RebuildError('target-unwritable', `volume ${t.to} is not present`);
      try {
        await ref.request({ type: 'create', objectId: rec.id, index: t.index, replace: volumeOf(rec, t.index) === t.to, header: sliceHeaderFor(g, rec.id, t.index) });
      } catch (err) {
        throw new RebuildError('target-unwritable', `volume ${t.to} refused the new slice ${t.index}: ${(err as Error).message}`);
      }
      opened.push(t);
    }
    const md5 = await streamSlices(deps, rec, g, targets, avoid, checkMd5, written, how);
    if (md5 !== null && md5 !== rec.md5) {
      throw new RebuildError('reconstruction-mismatch', `the rebuilt object hashes to ${md5}, not to its recorded MD5 ${rec.md5}: nothing was overwritten`);
    }
    await flushed;
    for (const t of targets) {
      try {
        await store.volume(t.to)!.request({ type: 'commit', objectId: rec.id, index: t.index });
      } catch (err) {
        throw new RebuildError('target-unwritable', `volume ${t.to} failed to commit slice ${t.index}: ${(err as Error).message}`);
      }
    }
    opened.length = 0;
    // Read the new slices back: what the disk returns must be what was written.
    for (const t of targets) {
      const back = createHash('sha256');
      const moved = withSliceOn(rec, t.index, t.to);
      for (let first = 0; first < g.stripes; first += STRIPES_PER_BATCH) {
        const last = Math.min(g.stripes - 1, first + STRIPES_PER_BATCH - 1);
        let chunks: Uint8Array[];
        try {
          chunks = await readSliceChunks(store, moved, g, t.index, first, last);
        } catch (err) {
          throw new RebuildError('verify-failed', `reading back slice ${t.index} from volume ${t.to} failed: ${(err as Error).message}`);
        }
        for (const c of chunks) back.update(c);
      }
      if (back.digest('hex') !== written.get(t.index)!.digest('hex')) throw new RebuildError('verify-failed', `slice ${t.index} read back from volume ${t.to} differs from what was written`);
    }
    // The new slices' record sidecars, with the layout after the move (recovery from the disks).
    await writeSliceRecords(store, targets.reduce((r, t) => withSliceOn(r, t.index, t.to), rec), deps.by, targets.map((t) => t.index));
  } catch (err) {
    await abortAll();
    await forget(true);
    throw err;
  }

  // Flip the record, unless the object went away or changed meanwhile; the move is journalled
  // first, like every record change (a restore re-points the slices: journal-replay.ts).
  const journalled = { op: 'move' as const, id: rec.id, slices: moves.map((mv) => ({ index: mv.index, from: mv.from, to: mv.to })) };
  const flip = await meta.withJournal(journalled, () => meta.root.transaction(() => {
    const cur = meta.objects.get(rec.id);
    if (!cur) return 'gone';
    for (const mv of moves) if (volumeOf(cur, mv.index) !== mv.from) return 'changed';
    let next = cur;
    for (const mv of moves) next = withSliceOn(next, mv.index, mv.to);
    meta.objects.putSync(rec.id, next);
    for (const mv of moves) {
      meta.moves.putSync(moveKey(mv.objectId, mv.index), { ...mv, phase: 'flipped', at: Date.now() });
      meta.faults.removeSync(moveKey(mv.objectId, mv.index));
    }
    deps.onFlip?.(moves.map((mv) => ({ index: mv.index, from: mv.from, to: mv.to, how: how.get(mv.index) ?? 'reconstructed', bytes: mv.bytes })));
    return 'ok' as const;
  }));
  if (flip !== 'ok') {
    await forget(true);
    throw new RebuildError(flip, flip === 'gone' ? `object ${rec.id} was deleted while its slices moved` : `object ${rec.id} changed while its slices moved`);
  }
  await meta.root.flushed;
  return moves.map((mv) => ({ index: mv.index, from: mv.from, to: mv.to, how: how.get(mv.index) ?? 'reconstructed', bytes: sliceSize(g, mv.index) }));
}

/**
 * Stream the new slices batch by batch: copy or rebuild, append to the targets. Returns the
 * whole-object MD5 when every stripe's data was at hand (a rebuild, or checkMd5), else null.
 */
async function streamSlices(
  deps: RelocateDeps,
  rec: ObjectRecord,
  g: Geometry,
  targets: Target[],
  avoid: Set<number>,
  checkMd5: boolean,
  written: Map<number, Hash>,
  how: Map<number, 'copied' | 'reconstructed'>,
): Promise<string | null> {
  const { store } = deps;
  const { k, m } = g;
  const wanted = new Set(targets.map((t) => t.index));
  const md5 = createHash('md5');
  let md5Complete = true;
  let md5Used = false;
  const bad = (index: number, err: unknown) => {
    if (avoid.has(index)) return;
    avoid.add(index);
    deps.onBadSource?.(index, volumeOf(rec, index), errorCode(err), (err as Error).message ?? String(err));
  };
  const read = async (index: number, first: number, last: number): Promise<Uint8Array[] | null> => {
    if (avoid.has(index)) return null;
    try {
      return await readSliceChunks(store, rec, g, index, first, last);
    } catch (err) {
      bad(index, err);
      return null;
    }
  };

  for (let first = 0; first < g.stripes; first += STRIPES_PER_BATCH) {
    const last = Math.min(g.stripes - 1, first + STRIPES_PER_BATCH - 1);
    const slices: Array<Uint8Array[] | null> = new Array(k + m).fill(null);
    // Data slices that are wanted are copied from their own volume when they read clean.
    for (const t of targets) if (t.index < k && volumeOf(rec, t.index) !== t.to) slices[t.index] = await read(t.index, first, last);
    const wantedParity = targets.some((t) => t.index >= k);
    const copyFailed = targets.some((t) => t.index < k && !slices[t.index]);
    const needData = checkMd5 || wantedParity || copyFailed;
    // A copy that fails half-way: start again rebuilding from the first stripe, so the whole
    // object's MD5 can be checked.
    if (copyFailed && !md5Complete) throw new Restart();
    if (needData) {
      let missingData: number[];
      let missingParity: number[];
      try {
        ({ missingData, rebuilt: missingParity } = await rebuildBatch(store, g, first, last, slices, wanted, (i) => read(i, first, last), rec.id));
      } catch (err) {
        if (err instanceof TooFewSlices) throw new RebuildError('insufficient-slices', err.message);
        throw err;
      }
      missingParity = missingParity.filter((i) => i >= k);
      for (const i of missingData) if (wanted.has(i)) how.set(i, 'reconstructed');
      for (const i of missingParity) how.set(i, 'reconstructed');
      if (missingData.length || checkMd5) md5Used = true;
      for (let s = first; s <= last; s++) for (let i = 0; i < k; i++) {
        const len = dataChunkLength(g, s, i);
        if (len > 0) md5.update(slices[i]![s - first]!.subarray(0, len));
      }
    } else md5Complete = false;
    for (const t of targets) if (!how.has(t.index)) how.set(t.index, t.index < k ? 'copied' : 'reconstructed');
    // Append the batch's chunks to the new slices.
    for (const t of targets) {
      const ref = store.volume(t.to);
      if (!ref) throw new RebuildError('target-unwritable', `volume ${t.to} went away while slice ${t.index} was written`);
      for (let s = first; s <= last; s++) {
        const len = t.index < k ? dataChunkLength(g, s, t.index) : parityChunkLength(g, s);
        if (len === 0) continue;
        const src = slices[t.index]![s - first]!.subarray(0, len);
        const chunk = new ArrayBuffer(len);
        new Uint8Array(chunk).set(src);
        written.get(t.index)!.update(src);
        try {
          await ref.request({ type: 'append', objectId: rec.id, index: t.index, chunk: s, data: chunk }, { transfer: [chunk] });
        } catch (err) {
          throw new RebuildError('target-unwritable', `volume ${t.to} failed writing slice ${t.index}: ${(err as Error).message}`);
        }
      }
    }
  }
  return md5Complete && md5Used ? md5.digest('hex') : null;
}
