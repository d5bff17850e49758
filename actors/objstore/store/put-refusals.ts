/**
 * A PUT's refusals and the volumes it keeps away from: the 409 of a path conflict, the 507s when
 * too few volumes take new slices (each volume named with why, this PUT's write failures
 * included), the 503 of a volume gone mid-PUT, and the volumes whose slice write failed lately
 * (left out of new PUTs for WRITE_SUSPECT_MS). The write path itself is put.ts.
 */
import type { PathConflict } from '../metadata.js';
import { StoreError, type StoreContext } from './context.js';

/** A volume whose slice write failed is left out of new PUTs this long (while two others remain). */
export const WRITE_SUSPECT_MS = 30_000;

/** Per store: volumes whose slice write failed lately (id → when and why). */
const suspects = new WeakMap<StoreContext, Map<number, { at: number; why: string }>>();

export function suspectsOf(ctx: StoreContext): Map<number, { at: number; why: string }> {
  let m = suspects.get(ctx);
  if (!m) suspects.set(ctx, (m = new Map()));
  const now = Date.now();
  for (const [id, s] of m) if (now - s.at > WRITE_SUSPECT_MS) m.delete(id);
  return m;
}

export function conflictError(path: string, c: PathConflict): StoreError {
  switch (c.kind) {
    case 'exists':
      return new StoreError(409, 'PATH_EXISTS', `${path} already names object ${c.id}; objects are immutable: DELETE it first`);
    case 'ancestor-is-object':
      return new StoreError(409, 'PARENT_IS_OBJECT', `${c.ancestor} is an object, so it cannot also be a container of ${path}`);
    case 'is-container':
      return new StoreError(409, 'PATH_IS_CONTAINER', `${path} is a container of ${c.objects} object(s), so it cannot also be an object`);
  }
}

/**
 * The 507 of a PUT when no volume takes new slices: "no volume at all" (provision one) is told
 * apart from "volumes exist, none writable", which names each volume and why.
 */
export function noWritableVolume(ctx: StoreContext, failed: ReadonlyMap<number, string> = new Map()): StoreError {
  const why = withWriteFailures(ctx.unwritable(), failed);
  if (!why.length) return new StoreError(507, 'NO_WRITABLE_VOLUMES', 'no writable volume: none is registered; provision one with POST /$/volumes');
  const each = why.map((v) => `volume ${v.id}: ${v.why.join(', ') || 'no room'}`).join('; ');
  return new StoreError(507, 'NO_WRITABLE_VOLUMES', `${why.length} volume${why.length > 1 ? 's are' : ' is'} registered but none takes new objects (${each}); see GET /$/volumes and /$/faults`);
}

/** The registered volumes with why each takes no new slices, the ones that failed this PUT included. */
function withWriteFailures(why: Array<{ id: number; why: string[] }>, failed: ReadonlyMap<number, string>): Array<{ id: number; why: string[] }> {
  return why.map((v) => (failed.has(v.id) ? { id: v.id, why: [...v.why, `its slice write failed during this PUT (${failed.get(v.id)})`] } : v));
}

/**
 * The 507 of a PUT on a fleet of several volumes with fewer than two that take new slices: which
 * volume is left, and why every other one takes no new slices.
 */
export function tooFewWritable(ctx: StoreContext, left: number[], failed: ReadonlyMap<number, string>, rule: string): StoreError {
  const others = withWriteFailures(ctx.unwritable(), failed).filter((v) => !left.includes(v.id));
  const each = others.map((v) => `volume ${v.id}: ${v.why.join(', ') || 'no room'}`).join('; ');
  return new StoreError(507, 'TOO_FEW_WRITABLE_VOLUMES', `${rule}: only volume ${left.join(', ')} is writable (${each}); nothing was stored; see GET /$/volumes and /$/faults`);
}

/** A chosen volume whose actor is gone (its disk went missing, say). */
export function gone(volume: number): StoreError {
  return new StoreError(503, 'VOLUME_UNAVAILABLE', `volume ${volume} went offline during the PUT`);
}
