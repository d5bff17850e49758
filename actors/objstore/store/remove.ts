/**
 * Removing every slice of an object from its volumes: after a DELETE, when a PUT is abandoned,
 * and at boot for the intents of PUTs a crash interrupted.
 */
import type { SliceContext } from './context.js';

/**
 * Remove slice i of `objectId` from `volumes[i]`, for every i, at once. `writing`: the slices may
 * still be being written (an abandoned PUT): each is aborted before it is deleted (both are
 * idempotent). Resolves to why each slice that could not be removed was not (its volume absent
 * or failing): empty when every slice is gone.
 */
export async function removeSlices(ctx: Pick<SliceContext, 'volume'>, objectId: string, volumes: readonly number[], opts: { writing?: boolean } = {}): Promise<string[]> {
  const results = await Promise.allSettled(
    volumes.map(async (v, index) => {
      const ref = ctx.volume(v);
      if (!ref) throw new Error(`volume ${v} is not present`);
      if (opts.writing) await ref.request({ type: 'abort', objectId, index });
      await ref.request({ type: 'delete', objectId, index });
    }),
  );
  return results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error)?.message ?? r.reason)] : []));
}
