/**
 * Volume administration of the management API: PUT /$/volumes/{id} (flags, label, comment) and
 * DELETE /$/volumes/{id} (soft delete). Deleting, or setting isDeleted, is refused while the
 * volume still holds live slices (committed objects, or PUTs in flight that chose it), with the
 * spec's message, so no flag ever orphans a slice. A deleted volume is a tombstone: its id is
 * never reused, it is listed only with ?includeDeleted=true, and it cannot be un-deleted (the
 * disk is provisioned again under a new id).
 */
import type { VolumeRecord } from '../metadata.js';
import { StoreError, type StoreContext } from '../store/context.js';

const FLAGS = ['isEnabled', 'isReadOnly', 'isHealthy', 'isDraining', 'isDeleted'] as const;
const TEXTS = ['label', 'comment'] as const;
const MAX_TEXT = 1024;

/** Slices on volume `id`: of committed objects, and of PUTs still in flight (their intents). */
export function liveSlices(ctx: StoreContext, id: number): number {
  let n = 0;
  for (const { value } of ctx.meta.objects.getRange()) {
    for (const v of value.dataVolumes) if (v === id) n++;
    for (const v of value.parityVolumes) if (v === id) n++;
  }
  for (const { value } of ctx.meta.intents.getRange()) for (const v of value.volumes) if (v === id) n++;
  return n;
}

function guardDelete(ctx: StoreContext, id: number): void {
  const n = liveSlices(ctx, id);
  if (n > 0) throw new StoreError(409, 'VOLUME_NOT_EMPTY', `volume ${id} still holds ${n} live object slice(s); drain it first: POST /$/volumes/${id}/drain`);
}

function existing(ctx: StoreContext, id: number): VolumeRecord {
  const rec = ctx.meta.volumes.get(id);
  if (!rec) throw new StoreError(404, 'NO_SUCH_VOLUME', `no volume ${id}`);
  return rec;
}

/** PUT /$/volumes/{id}: validate every field first, then apply them all in one write. */
export async function updateVolume(ctx: StoreContext, id: number, body: Record<string, unknown>): Promise<VolumeRecord> {
  const rec = existing(ctx, id);
  const allowed: readonly string[] = [...FLAGS, ...TEXTS];
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (allowed: ${allowed.join(', ')})`);
  if (Object.keys(body).length === 0) throw new StoreError(400, 'EMPTY_UPDATE', `nothing to update: give any of ${allowed.join(', ')}`);
  for (const f of FLAGS) if (body[f] !== undefined && typeof body[f] !== 'boolean') throw new StoreError(400, 'INVALID_FIELD', `${f} must be true or false`);
  for (const f of TEXTS) {
    const v = body[f];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new StoreError(400, 'INVALID_FIELD', `${f} must be a string`);
    if (v.length > MAX_TEXT) throw new StoreError(400, 'INVALID_FIELD', `${f} is longer than ${MAX_TEXT} characters`);
  }
  if (rec.isDeleted) throw new StoreError(409, 'VOLUME_DELETED', `volume ${id} is deleted (a tombstone); provision the disk again to use it (it gets a new id)`);
  if (body.isDraining !== undefined && body.isDraining !== rec.isDraining) {
    throw new StoreError(409, 'USE_DRAIN', `isDraining is set by POST /$/volumes/${id}/drain and cleared by DELETE /$/volumes/${id}/drain, which relocate the slices`);
  }
  if (body.isDeleted === true) guardDelete(ctx, id);
  const next: VolumeRecord = { ...rec };
  for (const f of FLAGS) if (typeof body[f] === 'boolean') next[f] = body[f] as boolean;
  for (const f of TEXTS) if (typeof body[f] === 'string') next[f] = body[f] as string;
  // Declaring an unhealthy volume healthy again starts its fault count over (else the next
  // fault would trip the threshold at once).
  if (body.isHealthy === true && !rec.isHealthy) next.faults = 0;
  // Deleting by flag is a DELETE: the tombstone is neither enabled nor draining.
  if (body.isDeleted === true) Object.assign(next, { isEnabled: false, isDraining: false });
  await ctx.meta.putVolume(next);
  await ctx.meta.root.flushed;
  return next;
}

/** DELETE /$/volumes/{id}: soft delete, refused while live slices remain. */
export async function deleteVolume(ctx: StoreContext, id: number): Promise<VolumeRecord> {
  const rec = existing(ctx, id);
  if (rec.isDeleted) return rec;
  guardDelete(ctx, id);
  const next: VolumeRecord = { ...rec, isDeleted: true, isEnabled: false, isDraining: false };
  await ctx.meta.putVolume(next);
  await ctx.meta.root.flushed;
  return next;
}

/** GET/PUT /$/maintenance-freeze: the global switch for background maintenance, persisted. */
export function frozen(ctx: StoreContext): boolean {
  return ctx.meta.meta.get('maintenanceFrozen') === true;
}

export async function setFrozen(ctx: StoreContext, body: Record<string, unknown>): Promise<boolean> {
  const unknown = Object.keys(body).filter((k) => k !== 'frozen');
  if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (the body is {"frozen": true|false})`);
  if (typeof body.frozen !== 'boolean') throw new StoreError(400, 'INVALID_FIELD', 'frozen must be true or false');
  await ctx.meta.meta.put('maintenanceFrozen', body.frozen);
  await ctx.meta.root.flushed;
  return body.frozen;
}
