/**
 * Writing an object's record sidecars (protocols/objstore/slice-record.ts) beside its slices: after
 * a PUT's slices are committed, and for each slice a relocation writes. The sidecars let
 * `hostd recover --from-disks` rebuild the record database when it is lost.
 *
 * A sidecar that fails to write does not fail what wrote it: the object is durable and readable
 * without it, and every sidecar carries the whole record, so recovery needs one per object. The
 * failure is logged and counted (objstore_slice_record_failures_total).
 */
import client from 'prom-client';
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import { volumeOf } from '../../../protocols/objstore/layout.js';
import type { SliceContext } from './context.js';

const failures = new client.Counter({
  name: 'objstore_slice_record_failures_total',
  help: 'Record sidecars that could not be written beside their slice, by writer (put, drain, rebalance, repair); the object stays readable, and recovery from the disks needs one sidecar per object',
  labelNames: ['by'] as const,
});

/**
 * Write the sidecar of each slice `indices` (default: every slice) of `rec` on the volume the
 * record names for it. `by`: what wrote it (put, drain, rebalance, repair). Never rejects: resolves
 * to the number of sidecars that could not be written.
 */
export async function writeSliceRecords(ctx: Pick<SliceContext, 'volume' | 'log'>, rec: ObjectRecord, by: string, indices?: readonly number[]): Promise<number> {
  const volumes = [...rec.dataVolumes, ...rec.parityVolumes];
  const which = indices ?? volumes.map((_, i) => i);
  const writer = by.split(' ')[0]!.toLowerCase().replace(/[^a-z0-9-]/g, '') || 'store';
  const results = await Promise.allSettled(
    which.map(async (index) => {
      const vol = volumeOf(rec, index);
      const ref = ctx.volume(vol);
      if (!ref) throw new Error(`volume ${vol} is not present`);
      await ref.request({
        type: 'writeRecord',
        record: { objectId: rec.id, index, path: rec.path, size: rec.size, mime: rec.mime, md5: rec.md5, createdAt: rec.createdAt, k: rec.k, m: rec.m, chunkSize: rec.chunkSize, volumes, by: writer },
      });
    }),
  );
  let failed = 0;
  results.forEach((r, i) => {
    if (r.status === 'fulfilled') return;
    failed++;
    failures.inc({ by: writer });
    ctx.log.warn({ objectId: rec.id, index: which[i], volumeId: volumeOf(rec, which[i]!), err: (r.reason as Error)?.message ?? String(r.reason) }, 'the record sidecar of a slice could not be written (the object is readable; recovery from the disks uses its other sidecars)');
  });
  return failed;
}
