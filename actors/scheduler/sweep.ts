/**
 * Finishing relocations (relocate.ts): the old copy of a flipped slice is deleted once its grace
 * period is over (reads that began before the flip may still read it), and at boot the copies a
 * crash interrupted are undone. A move whose old volume was deleted (its disk retired) is simply
 * dropped; one whose old disk is absent or failing waits for it (shown in GET /$/debug).
 */
import type { MoveRecord, SliceContext } from '../objstore/store/index.js';
import { volumeOf } from '../../protocols/objstore/layout.js';

/**
 * Delete the old slices of flipped moves (after `graceMs`). At boot (`boot`), also undo the
 * copies a crash interrupted (in a running scheduler a `copying` move is in progress). Returns
 * what it did and what is left.
 */
export async function sweepMoves(
  store: SliceContext,
  graceMs: number,
  opts: { boot?: boolean; now?: number; onDeleteFailed?: (mv: MoveRecord) => void } = {},
): Promise<{ deleted: number; undone: number; failed: number; left: number }> {
  const now = opts.now ?? Date.now();
  const meta = store.meta;
  let deleted = 0;
  let undone = 0;
  let failed = 0;
  let left = 0;
  for (const { key, value: mv } of meta.moves.getRange()) {
    if (mv.phase === 'copying') {
      if (!opts.boot) {
        left++;
        continue; // in progress in this run
      }
      const ref = store.volume(mv.to);
      if (!ref) {
        failed++;
        continue;
      }
      try {
        await ref.request({ type: 'abort', objectId: mv.objectId, index: mv.index });
        const cur = meta.objects.get(mv.objectId);
        if (mv.from !== mv.to && (!cur || volumeOf(cur, mv.index) !== mv.to)) await ref.request({ type: 'delete', objectId: mv.objectId, index: mv.index });
        await meta.moves.remove(key);
        undone++;
      } catch {
        failed++;
      }
      continue;
    }
    if (now - mv.at < graceMs) {
      left++;
      continue;
    }
    if (mv.from === mv.to) {
      await meta.moves.remove(key);
      continue;
    }
    const cur = meta.objects.get(mv.objectId);
    if (cur && volumeOf(cur, mv.index) === mv.from) {
      // The record names the old volume again (cannot happen through the scheduler): keep it.
      await meta.moves.remove(key);
      continue;
    }
    if (meta.volumes.get(mv.from)?.isDeleted !== false) {
      // The old volume was deleted (a tombstone; its disk is retired): nothing left to delete.
      await meta.moves.remove(key);
      continue;
    }
    const ref = store.volume(mv.from);
    if (!ref) {
      failed++;
      continue;
    }
    try {
      await ref.request({ type: 'delete', objectId: mv.objectId, index: mv.index });
      await meta.moves.remove(key);
      deleted++;
    } catch {
      failed++;
      // Counted once per move; the sweep keeps trying.
      if (!mv.deleteFailed) {
        await meta.moves.put(key, { ...mv, deleteFailed: true });
        opts.onDeleteFailed?.(mv);
      }
    }
  }
  return { deleted, undone, failed, left };
}
