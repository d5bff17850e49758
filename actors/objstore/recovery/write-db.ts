/**
 * Recovery from the disks, the writing: a fresh record database in a temporary LMDB environment
 * beside the real one (`<stateDir>/hostd.lmdb.recovering`), filled through the store's own
 * Metadata (so paths, containers and their counts follow the same rules as a PUT's commit), closed,
 * then renamed into place. A crash or kill -9 before the rename leaves the temporary environment
 * only, which the next run removes and starts again; the rename is the one step that publishes.
 *
 * With --force, a record database already in place is kept, renamed aside to
 * `hostd.lmdb.before-recover-<time>` (it also holds the other services' checkpoints: nothing is
 * deleted; the operator removes it once satisfied).
 */
import { existsSync, openSync, fsyncSync, closeSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { ENV_FILE } from '../../../runtime/checkpoint/store.js';
import { Metadata, type VolumeRecord } from '../metadata.js';
import type { Planned, Skipped } from './assemble.js';

export const TEMP_ENV = `${ENV_FILE}.recovering`;

export interface WriteResult {
  recorded: number;
  /** objects a newer object took the path of */
  conflicts: Skipped[];
  /** where the database that was in place went (--force), or null */
  keptAs: string | null;
}

const lockOf = (env: string) => `${env}-lock`;

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Write `objects` (newest first wins a path) and `volumes` into a fresh environment and move it
 * into place. `onProgress(done)` after each batch.
 */
export async function writeDatabase(stateDir: string, objects: readonly Planned[], volumes: readonly VolumeRecord[], onProgress: (done: number) => void): Promise<WriteResult> {
  const temp = join(stateDir, TEMP_ENV);
  rmSync(temp, { force: true });
  rmSync(lockOf(temp), { force: true });
  const root = open({ path: temp, maxDbs: 64 });
  const conflicts: Skipped[] = [];
  let recorded = 0;
  try {
    const meta = new Metadata(root);
    await root.transaction(() => {
      for (const v of volumes) meta.volumes.putSync(v.id, v);
      meta.meta.putSync('nextVolumeId', Math.max(0, ...volumes.map((v) => v.id)) + 1);
    });
    const order = [...objects].sort((a, b) => b.record.createdAt - a.record.createdAt || (a.record.id < b.record.id ? -1 : 1));
    const BATCH = 500;
    for (let i = 0; i < order.length; i += BATCH) {
      const batch = order.slice(i, i + BATCH);
      // Queued together, committed together (lmdb-js batches them), applied in this order.
      const results = await Promise.all(batch.map((p) => meta.commitObject(p.record)));
      results.forEach((c, j) => {
        const rec = batch[j]!.record;
        if (!c) return void recorded++;
        const why = c.kind === 'exists' ? `its path ${rec.path} is taken by the newer object ${c.id}` : c.kind === 'ancestor-is-object' ? `${c.ancestor} is a (newer) object, so it cannot be a container of ${rec.path}` : `${rec.path} is a container of ${c.objects} newer object(s)`;
        conflicts.push({ objectId: rec.id, reason: 'path-conflict', path: rec.path, message: `${why}: not recorded (its slices are left on the disks)` });
      });
      onProgress(Math.min(order.length, i + BATCH));
    }
    await root.flushed;
  } finally {
    await root.close();
  }
  const live = join(stateDir, ENV_FILE);
  let keptAs: string | null = null;
  if (existsSync(live)) {
    keptAs = join(stateDir, `${ENV_FILE}.before-recover-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    renameSync(live, keptAs);
  }
  rmSync(lockOf(live), { force: true });
  renameSync(temp, live);
  rmSync(lockOf(temp), { force: true });
  fsyncDir(stateDir);
  return { recorded, conflicts, keptAs };
}
