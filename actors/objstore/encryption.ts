/**
 * The store's encryption operations on top of Volumes and Keys: the in-place encrypt step of the
 * drain → encrypt → rebalance flow, the recovery passphrase's rotation (every encrypted volume's
 * passphrase slot rewrapped), and recovery of a lost key file with the passphrase. One of these runs
 * at a time per store (claimed before the first await).
 *
 * Encrypt, in order (docs/object-store.md, "Encryption at rest"): refused unless the volume is
 * drained — read-only, no live slices in the records, no slice file left on its disk (the walk
 * fails closed) — then: checking → scanning → wiping (fstrim: the free space, where the old
 * plaintext of deleted slices lies, is discarded; on a loop device that punches holes in its file)
 * → encrypting (the actor stops, new key slots with a new volume key go onto the disk) →
 * registering (the record says encrypted, isReadOnly and isDraining are cleared so a rebalance
 * fills it again, the actor starts sealed). Each phase is written to the volume record.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readKeySlots, writeKeySlots } from '../volume/volume-key.js';
import { SlicePaths } from '../volume/slice-paths.js';
import { normalizePassphrase, type KeySlots } from '../../protocols/objstore/crypto-format.js';
import type { EncryptProgress, VolumeRecord } from './metadata.js';
import { liveSlices } from './http/volume-admin.js';
import { StoreError, type StoreContext } from './store/context.js';
import type { Volumes } from './volumes.js';

const run = promisify(execFile);
const busy = new WeakSet<Volumes>();

/** Claim the store's one encryption operation (synchronously), or refuse. */
function claim(volumes: Volumes, what: string): void {
  if (busy.has(volumes)) throw new StoreError(409, 'ENCRYPTION_BUSY', `another encryption operation is running; ${what} one at a time`);
  busy.add(volumes);
}

/** Files left under a volume's slice directory (temp files included); stops at `limit`. */
async function filesUnder(dir: string, limit = 3): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      if (out.length >= limit) return;
      if (e.isDirectory()) await walk(join(d, e.name));
      else out.push(join(d, e.name));
    }
  };
  await walk(dir);
  return out;
}

/** POST /$/volumes/{id}/encrypt. Answers the volume record, encrypted. */
export async function encryptVolume(ctx: StoreContext, volumes: Volumes, id: number): Promise<VolumeRecord> {
  const rec = ctx.meta.volumes.get(id);
  if (!rec || rec.isDeleted) throw new StoreError(404, 'NO_SUCH_VOLUME', `no volume ${id}`);
  const disk = volumes.diskOf(id);
  if (!disk || volumes.locked.has(id)) throw new StoreError(409, 'VOLUME_MISSING', `volume ${id} is ${disk ? `locked (${volumes.locked.get(id)!.reason})` : 'not present'}: its disk must be attached and open to be encrypted`);
  const drainFirst = `drain it first (POST /$/volumes/${id}/drain), then encrypt: encrypt works on a drained volume only (read-only, no live slices, none on its disk)`;
  if (!rec.isReadOnly) throw new StoreError(409, 'NOT_DRAINED', `volume ${id} is writable; ${drainFirst}`);
  const live = liveSlices(ctx, id);
  if (live > 0) throw new StoreError(409, 'NOT_DRAINED', `volume ${id} still holds ${live} live object slice(s); ${drainFirst}`);
  if (!volumes.keys.ready) throw new StoreError(409, 'KEY_FILE_MISSING', volumes.keys.problem ?? 'there is no key file');
  claim(volumes, 'volumes are encrypted');
  const startedAt = new Date().toISOString();
  let stopped = false;
  const progress = async (phase: EncryptProgress['phase'], extra: Partial<EncryptProgress> = {}, fields: Partial<VolumeRecord> = {}) => {
    const now = ctx.meta.volumes.get(id)!;
    await ctx.meta.volumes.put(id, { ...now, ...fields, encryptProgress: { ...now.encryptProgress, phase, startedAt, updatedAt: new Date().toISOString(), ...extra } });
  };
  try {
    await progress('checking', { wipe: undefined, error: undefined });
    await progress('scanning');
    const left = await filesUnder(new SlicePaths(disk.mountPoint).root);
    if (left.length) throw new StoreError(409, 'SLICES_ON_DISK', `volume ${id} has slice files on its disk though the records hold none (first: ${left.join(', ')}); they are kept (a file may be the only copy of something): verify, then remove them or drain again`);
    await progress('wiping');
    const wipe = await run('fstrim', ['-v', disk.mountPoint], { timeout: 600_000 }).then(
      ({ stdout }) => `free space discarded (fstrim: ${stdout.trim()})`,
      (err: Error) => `free space NOT discarded (fstrim failed: ${err.message.split('\n')[0]}): old plaintext blocks of deleted slices may remain until overwritten`,
    );
    await progress('encrypting', { wipe });
    const keyGen = (rec.keyGen ?? 0) + 1;
    await volumes.stopActor(id);
    stopped = true;
    await writeKeySlots(disk.mountPoint, volumes.keys.newSlots(id, keyGen));
    await progress('registering', {}, { encrypted: true, keyGen });
    await progress('done', {}, { isReadOnly: false, isDraining: false });
    const done = ctx.meta.volumes.get(id)!;
    await volumes.start(done, disk.device, disk.mountPoint);
    stopped = false;
    ctx.log.info({ volumeId: id, keyGen, wipe }, 'volume encrypted; a rebalance fills it again');
    return done;
  } catch (err) {
    await progress('failed', { error: (err as Error).message }).catch(() => undefined);
    if (stopped) await volumes.start(ctx.meta.volumes.get(id)!, disk.device, disk.mountPoint).catch((e: Error) => ctx.log.error({ volumeId: id, err: e.message }, 'volume could not be started again after a failed encrypt'));
    throw err;
  } finally {
    busy.delete(volumes);
  }
}

/** The key slots of every encrypted volume, read from the disks; refused while one is not open. */
async function everySlots(ctx: StoreContext, volumes: Volumes, what: string, allowLocked: boolean): Promise<Array<{ rec: VolumeRecord; slots: KeySlots; mountPoint: string; device: string }>> {
  const out = [];
  const absent: number[] = [];
  for (const rec of volumes.records(false).filter((r) => r.encrypted)) {
    const disk = volumes.diskOf(rec.id);
    if (!disk || (!allowLocked && volumes.locked.has(rec.id))) {
      absent.push(rec.id);
      continue;
    }
    const slots = await readKeySlots(disk.mountPoint);
    if (!slots) throw new StoreError(409, 'NO_KEY_SLOTS', `volume ${rec.id} is recorded as encrypted and its disk holds no key slots`);
    out.push({ rec, slots, ...disk });
  }
  if (absent.length) throw new StoreError(409, 'VOLUME_MISSING', `encrypted volume(s) ${absent.join(', ')} are not present${allowLocked ? '' : ' or not open'}: ${what} needs every encrypted disk, so that none misses it`);
  return out;
}

/** POST /$/encryption/recovery-passphrase/rotate: a new passphrase, rewrapped onto every encrypted disk. */
export async function rotatePassphrase(ctx: StoreContext, volumes: Volumes): Promise<{ volumes: number[] }> {
  claim(volumes, 'rotations run');
  try {
    const all = await everySlots(ctx, volumes, 'a rotation', false);
    const r = volumes.keys.rotate(all.map((a) => a.slots));
    r.commit();
    for (let i = 0; i < all.length; i++) await writeKeySlots(all[i]!.mountPoint, r.slots[i]!);
    return { volumes: all.map((a) => a.rec.id) };
  } finally {
    busy.delete(volumes);
  }
}

/**
 * POST /$/encryption/recover {passphrase}: the key file is lost; the passphrase opens every
 * attached encrypted disk, a new key file is made and the disks are rewrapped under it, and the
 * volumes are served again.
 */
export async function recoverKeyFile(ctx: StoreContext, volumes: Volumes, passphrase: unknown): Promise<{ volumes: number[]; keyId: string | null }> {
  if (typeof passphrase !== 'string') throw new StoreError(400, 'INVALID_PASSPHRASE', 'passphrase must be a string: the recovery passphrase, as revealed (8 groups of 4 characters)');
  try {
    normalizePassphrase(passphrase);
  } catch (err) {
    throw new StoreError(400, 'INVALID_PASSPHRASE', `${(err as Error).message}: give the recovery passphrase as revealed (8 groups of 4 characters)`);
  }
  claim(volumes, 'recoveries run');
  try {
    const all = await everySlots(ctx, volumes, 'recovery', true);
    const r = volumes.keys.recover(passphrase, all.map((a) => a.slots));
    for (let i = 0; i < all.length; i++) await writeKeySlots(all[i]!.mountPoint, r.slots[i]!);
    r.commit();
    for (const a of all) await volumes.start(ctx.meta.volumes.get(a.rec.id)!, a.device, a.mountPoint);
    return { volumes: all.map((a) => a.rec.id), keyId: volumes.keys.view().keyFile.keyId };
  } finally {
    busy.delete(volumes);
  }
}
