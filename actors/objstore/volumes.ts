/**
 * The volumes as the object store sees them: records in LMDB, the disks found by their
 * identity file, one volume actor per present disk, and provisioning of new disks. Encryption
 * (the key file, a volume's key slots, the in-place encrypt step) is in encryption.ts, on top.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { command } from '../volume/command.js';
import { SmartCache } from './smart-cache.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ActorRef, ChildSpec } from '../../runtime/index.js';
import { ActorError } from '../../runtime/index.js';
import { discoverVolumes, listBlockDevices, provisionDisk, smartInfo, unmountVolume, volumeCapacity, type SmartInfo } from '../volume/disks.js';
import type { VolumeDetailView, VolumeView } from '../../protocols/objstore/volume-view.js';
import { volumeActorId, type VolumeArgs, type VolumeProtocol } from '../volume/messages.js';
import { readKeySlots, writeKeySlots } from '../volume/volume-key.js';
import type { KeySlots } from '../../protocols/objstore/crypto-format.js';
import { Keys } from './keys.js';
import type { Metadata, VolumeRecord } from './metadata.js';
import { takesNewSlices, whyNoNewSlices } from '../../protocols/objstore/layout.js';
import { StoreError } from './store/context.js';

const VOLUME_MODULE = new URL('../volume/actor.js', import.meta.url).href;
export const WIPE_WINDOW_MS = 10_000;

interface Present {
  ref: ActorRef<VolumeProtocol>;
  device: string;
  mountPoint: string;
  bytesTotal: number;
  bytesFree: number;
}

export interface VolumeDeps {
  meta: Metadata;
  log: Logger;
  stateDir: string;
  ioTimeoutMs: number;
  maxInflight: number;
  /** the default of the fleet setting encryptNewVolumes (a value set by PUT /$/encryption wins) */
  encryptNewVolumes?: boolean;
  ref(id: string): ActorRef<VolumeProtocol>;
  spawn(spec: ChildSpec): Promise<unknown>;
  stop(id: string): Promise<void>;
}

export class Volumes {
  readonly mountRoot: string;
  readonly instanceId: string;
  private readonly deps: VolumeDeps;
  private readonly present = new Map<number, Present>();
  readonly keys: Keys;
  /** Encrypted disks found whose key slots do not open with the key file: not served, and why. */
  readonly locked = new Map<number, { device: string; mountPoint: string; reason: string }>();
  /** Told before a volume's disk is unmounted (retired or gone): what holds files on it lets go (the journal). */
  onRelease: (id: number) => Promise<void> = async () => undefined;
  /** SMART summaries for the list, read in the background (smart-cache.ts) */
  readonly smart = new SmartCache();

  constructor(deps: VolumeDeps) {
    this.deps = deps;
    this.mountRoot = join(deps.stateDir, 'mnt');
    mkdirSync(this.mountRoot, { recursive: true });
    this.instanceId = loadInstanceId(deps.stateDir);
    this.keys = new Keys(deps.stateDir, this.instanceId, deps.log);
  }

  /** Find the registered disks by identity and start an actor for each one present. */
  async boot(): Promise<{ present: number[]; missing: number[] }> {
    const found = await discoverVolumes({
      mountRoot: this.mountRoot,
      instanceId: this.instanceId,
      onSkip: (skip) => this.deps.log.warn({ ...skip }, 'a disk labelled for the object store was left unused'),
    });
    const present: number[] = [];
    const missing: number[] = [];
    // The disk of a deleted volume (a tombstone) is not used: unmounted, so it can be provisioned again.
    for (const f of found) {
      if (this.deps.meta.volumes.get(f.volumeId)?.isDeleted) {
        await unmountVolume(f.mountPoint).catch((err: Error) => this.deps.log.warn({ volumeId: f.volumeId, device: f.device, err: err.message }, 'the disk of a deleted volume could not be unmounted'));
      }
    }
    // The disks say which volumes are encrypted (their key slots); the records add the missing ones.
    const slotsOf = new Map<number, KeySlots | Error>();
    for (const f of found) {
      const rec = this.deps.meta.volumes.get(f.volumeId);
      if (!rec || rec.isDeleted) continue;
      const slots = await readKeySlots(f.mountPoint).catch((err: Error) => err);
      if (slots) slotsOf.set(f.volumeId, slots);
    }
    const encrypted = new Set([...slotsOf.keys(), ...this.records(false).filter((r) => r.encrypted).map((r) => r.id)]);
    this.keys.init([...encrypted].sort((a, b) => a - b));
    for (const rec of this.records(false)) {
      const disk = found.find((f) => f.volumeId === rec.id);
      if (!disk) {
        missing.push(rec.id);
        continue;
      }
      const slots = slotsOf.get(rec.id);
      if (!slots && rec.encrypted) {
        this.locked.set(rec.id, { device: disk.device, mountPoint: disk.mountPoint, reason: 'the record says encrypted and the disk holds no key slots (objstore/.keyslots): restore them from a copy of the disk, or drain and re-provision it' });
        this.deps.log.error({ volumeId: rec.id, device: disk.device }, 'an encrypted volume lost its key slots: it is not served');
        missing.push(rec.id);
        continue;
      }
      if (slots) {
        const reason = slots instanceof Error ? `its key slots do not read: ${slots.message}` : this.keys.whyLocked(slots);
        if (reason) {
          this.locked.set(rec.id, { device: disk.device, mountPoint: disk.mountPoint, reason });
          this.deps.log.error({ volumeId: rec.id, device: disk.device, reason }, 'an encrypted volume does not open: it is not served');
          missing.push(rec.id);
          continue;
        }
        if (!(slots instanceof Error) && (!rec.encrypted || rec.keyGen !== slots.keyGen)) await this.deps.meta.putVolume({ ...rec, encrypted: true, keyGen: slots.keyGen });
      }
      await this.start(this.deps.meta.volumes.get(rec.id)!, disk.device, disk.mountPoint);
      present.push(rec.id);
    }
    return { present, missing };
  }

  /**
   * A deleted volume's disk is retired: its actor stops (closing its files) and the disk is
   * unmounted, so it can be provisioned again (under a new id). An unmount that fails (a process
   * holds files open on it) is logged and retried at the next start.
   */
  async retire(id: number): Promise<void> {
    const p = this.present.get(id);
    if (!p) return;
    this.present.delete(id);
    await this.onRelease(id).catch(() => undefined);
    await this.deps.stop(volumeActorId(id)).catch(() => undefined);
    try {
      await unmountVolume(p.mountPoint);
      this.deps.log.info({ volumeId: id, device: p.device }, 'deleted volume retired: its disk is unmounted');
    } catch (err) {
      this.deps.log.warn({ volumeId: id, device: p.device, err: (err as Error).message }, 'the disk of a deleted volume could not be unmounted; it is tried again at the next start');
    }
  }

  records(includeDeleted: boolean): VolumeRecord[] {
    const out: VolumeRecord[] = [];
    for (const { value } of this.deps.meta.volumes.getRange()) if (includeDeleted || !value.isDeleted) out.push(value);
    return out;
  }

  ref(id: number): ActorRef<VolumeProtocol> | null {
    return this.present.get(id)?.ref ?? null;
  }

  /** Volumes that take new slices now: present, enabled, writable, healthy, not draining. */
  writable(): Array<{ id: number; bytesFree: number }> {
    const out: Array<{ id: number; bytesFree: number }> = [];
    for (const rec of this.records(false)) {
      const p = this.present.get(rec.id);
      if (p && takesNewSlices(rec)) out.push({ id: rec.id, bytesFree: p.bytesFree });
    }
    return out;
  }

  /** Why each registered volume takes no new slices (the 507 of a PUT names them). */
  unwritable(): Array<{ id: number; why: string[] }> {
    return this.records(false).map((rec) => ({ id: rec.id, why: [...(this.present.has(rec.id) ? [] : ['not present']), ...whyNoNewSlices(rec)] }));
  }

  async refreshCapacity(): Promise<void> {
    for (const p of this.present.values()) {
      try {
        Object.assign(p, await volumeCapacity(p.mountPoint));
      } catch (err) {
        this.deps.log.warn({ mountPoint: p.mountPoint, err: (err as Error).message }, 'cannot read volume capacity');
      }
    }
  }

  /** The volume as the API shows it. */
  view(rec: VolumeRecord, detail = false): VolumeView {
    const p = this.present.get(rec.id);
    return {
      id: rec.id,
      label: rec.label,
      comment: rec.comment,
      isEnabled: rec.isEnabled,
      isReadOnly: rec.isReadOnly,
      isHealthy: rec.isHealthy,
      isDraining: rec.isDraining,
      isDeleted: rec.isDeleted,
      isMissing: !rec.isDeleted && !p,
      isEncrypted: rec.encrypted,
      keyGen: rec.keyGen ?? null,
      isLocked: this.locked.has(rec.id),
      lockedReason: this.locked.get(rec.id)?.reason ?? null,
      encryptProgress: rec.encryptProgress ?? null,
      device: p?.device ?? null,
      lastDevice: rec.lastDevice,
      mountPoint: p?.mountPoint ?? null,
      bytesTotal: p?.bytesTotal ?? null,
      bytesFree: p?.bytesFree ?? null,
      busGroup: busGroup(p?.device ?? rec.lastDevice),
      faults: rec.faults,
      writeFaults: rec.writeFaults?.count ?? 0,
      createdAt: new Date(rec.createdAt).toISOString(),
      smartInfo: detail ? null : this.smart.summary(p?.device ?? null),
    };
  }

  async detail(rec: VolumeRecord): Promise<VolumeDetailView> {
    const device = this.present.get(rec.id)?.device;
    const info: SmartInfo = device ? await smartInfo(device) : { available: false, reason: 'the disk is not present' };
    return { ...this.view(rec, true), smartInfo: info };
  }

  /** POST /$/volumes: check the request, format and mount the disk, start its actor. */
  async provision(body: Record<string, unknown>): Promise<VolumeRecord> {
    const allowed = new Set(['blockPath', 'wipe', 'encrypt', 'label', 'comment']);
    if ('replace' in body) throw new StoreError(400, 'REPLACE_NOT_SUPPORTED', 'there is no replace option: to re-provision a registered disk, DELETE its volume first');
    const unknown = Object.keys(body).filter((k) => !allowed.has(k));
    if (unknown.length) throw new StoreError(400, 'UNKNOWN_FIELD', `unknown field(s): ${unknown.join(', ')} (allowed: ${[...allowed].join(', ')})`);
    const { blockPath, wipe, encrypt } = body;
    if (typeof blockPath !== 'string' || !blockPath.startsWith('/dev/')) throw new StoreError(400, 'INVALID_BLOCK_PATH', 'blockPath must be a string naming a block device, like /dev/sdb');
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(blockPath)) throw new StoreError(400, 'INVALID_BLOCK_PATH', `blockPath must not contain control characters (NUL, newline...): got ${JSON.stringify(blockPath)}`);
    if (typeof wipe === 'boolean') throw new StoreError(400, 'INVALID_WIPE', 'wipe is a timestamp in milliseconds since the epoch (Date.now()), not a boolean');
    if (typeof wipe !== 'number' || !Number.isSafeInteger(wipe)) throw new StoreError(400, 'INVALID_WIPE', 'wipe must be an integer: the current time in milliseconds since the epoch');
    const skew = Math.abs(Date.now() - wipe);
    if (skew > WIPE_WINDOW_MS) throw new StoreError(400, 'STALE_WIPE', `wipe is ${skew} ms away from now; it must be within ${WIPE_WINDOW_MS} ms (a replayed or delayed request is refused)`);
    if (encrypt !== undefined && typeof encrypt !== 'boolean') throw new StoreError(400, 'INVALID_ENCRYPT', 'encrypt must be a boolean');
    const sealed = encrypt ?? this.encryptNewVolumes();
    if (sealed && !this.keys.ready) throw new StoreError(409, 'KEY_FILE_MISSING', `cannot provision an encrypted volume: ${this.keys.problem ?? 'there is no key file'}${encrypt === undefined ? ' (encrypt defaulted to the fleet setting encryptNewVolumes; pass encrypt: false for a plain volume)' : ''}`);
    for (const k of ['label', 'comment'] as const) if (body[k] !== undefined && typeof body[k] !== 'string') throw new StoreError(400, 'INVALID_FIELD', `${k} must be a string`);
    for (const p of this.present.values()) {
      if (p.device === blockPath) throw new StoreError(409, 'ALREADY_A_VOLUME', `${blockPath} is already a registered volume; DELETE it first to re-provision`);
    }
    const id = await this.deps.meta.nextVolumeId();
    const createdAt = Date.now();
    let disk: { mountPoint: string; device: string };
    try {
      disk = await provisionDisk({ blockPath, volumeId: id, instanceId: this.instanceId, mountRoot: this.mountRoot, createdAt });
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'PROVISION_FAILED';
      const status = code === 'IN_USE' ? 409 : code === 'NOT_FOUND' || code === 'NOT_BLOCK_DEVICE' ? 400 : 500;
      throw new StoreError(status, code, `cannot provision ${blockPath}: ${(err as Error).message}`);
    }
    if (sealed) await writeKeySlots(disk.mountPoint, this.keys.newSlots(id, 1));
    const devices = await listBlockDevices().catch(() => []);
    const dev = devices.find((d) => d.path === disk.device);
    const rec: VolumeRecord = {
      id,
      label: typeof body.label === 'string' ? body.label : '',
      comment: typeof body.comment === 'string' ? body.comment : '',
      isEnabled: true,
      isReadOnly: false,
      isHealthy: true,
      isDraining: false,
      isDeleted: false,
      encrypted: sealed,
      ...(sealed ? { keyGen: 1 } : {}),
      lastDevice: disk.device,
      serial: dev?.serial ?? null,
      model: dev?.model ?? null,
      createdAt,
      wipe,
      faults: 0,
    };
    await this.deps.meta.putVolume(rec);
    await this.start(rec, disk.device, disk.mountPoint);
    this.deps.log.info({ volumeId: id, device: disk.device, mountPoint: disk.mountPoint, encrypted: sealed }, 'volume provisioned');
    return rec;
  }

  /** The fleet setting encryptNewVolumes: the value PUT /$/encryption set, else the service setting. */
  encryptNewVolumes(): boolean {
    const set = this.deps.meta.meta.get('encryptNewVolumes');
    return typeof set === 'boolean' ? set : this.deps.encryptNewVolumes === true;
  }

  /** Where a present (or locked) volume's disk is mounted. */
  diskOf(id: number): { device: string; mountPoint: string } | null {
    return this.present.get(id) ?? this.locked.get(id) ?? null;
  }

  /** Stop a volume's actor (its key slots are about to change); start() serves it again. */
  async stopActor(id: number): Promise<void> {
    this.present.delete(id);
    await this.deps.stop(volumeActorId(id)).catch(() => undefined);
  }


  /** The present volumes' disks (for hotplug, actors/objstore/devices.ts). */
  presentDisks(): Array<{ id: number; device: string; mountPoint: string }> {
    return [...this.present].map(([id, p]) => ({ id, device: p.device, mountPoint: p.mountPoint }));
  }

  /**
   * A present volume's disk is gone (hotplug): its actor stops, it is no longer present (so it is
   * `isMissing`, takes no writes, and reads rebuild its slices from parity), and what is left of
   * its mount is taken down lazily (the disk is gone: nothing can be flushed to it).
   */
  async markMissing(id: number): Promise<boolean> {
    const p = this.present.get(id);
    if (!p) return false;
    this.present.delete(id);
    await this.onRelease(id).catch(() => undefined);
    await this.deps.stop(volumeActorId(id)).catch(() => undefined);
    await unmountVolume(p.mountPoint).catch(() => command('umount', ['-l', p.mountPoint]).catch(() => undefined));
    await rmdir(p.mountPoint).catch(() => undefined);
    return true;
  }

  /** A registered, not deleted, missing volume's disk was found again (hotplug): start serving it. */
  async reattach(id: number, device: string, mountPoint: string): Promise<boolean> {
    const rec = this.deps.meta.volumes.get(id);
    if (!rec || rec.isDeleted || this.present.has(id)) return false;
    await this.start(rec, device, mountPoint);
    return true;
  }

  async start(rec: VolumeRecord, device: string, mountPoint: string): Promise<void> {
    const actorId = volumeActorId(rec.id);
    const ref = this.deps.ref(actorId);
    this.locked.delete(rec.id);
    const args: VolumeArgs = { volumeId: rec.id, mountPoint, device, readOnly: rec.isReadOnly, ioTimeoutMs: this.deps.ioTimeoutMs, maxInflight: this.deps.maxInflight, keyFile: this.keys.keyFile };
    try {
      await ref.request({ type: 'info' }, { timeoutMs: 5000 });
    } catch (err) {
      if (!(err instanceof ActorError) || err.code !== 'NO_SUCH_ACTOR') throw err;
      await this.deps.spawn({ id: actorId, module: VOLUME_MODULE, args, placement: { mode: 'shared', group: 'volumes' } });
    }
    const cap = await volumeCapacity(mountPoint);
    this.present.set(rec.id, { ref, device, mountPoint, ...cap });
    if (rec.lastDevice !== device) await this.deps.meta.putVolume({ ...rec, lastDevice: device });
  }
}

/** Disks on the same controller share a bus group; loop devices are 'virtual'. */
export function busGroup(device: string): string {
  if (/\/loop\d+$/.test(device)) return 'virtual';
  const m = /\/(sd|vd|hd|nvme\d+n|xvd)[a-z]*/.exec(device);
  return m ? m[1]!.replace(/\d+n$/, '') : 'unknown';
}

/** The installation's identity: created once, kept in the state directory (back it up). */
function loadInstanceId(stateDir: string): string {
  const file = join(stateDir, 'instance-id');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const id = randomUUID();
  writeFileSync(file, id + '\n', { mode: 0o600 });
  return id;
}
