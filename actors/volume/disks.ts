/**
 * Disks: finding block devices, provisioning one as a volume, finding volumes again by the
 * identity stored on them, mounting, capacity and SMART. Plain async functions over the system's
 * tools (util-linux, xfsprogs, smartmontools); they run in any thread and need root.
 *
 * A volume is a whole disk formatted as XFS with the label 'objstore', no partition table: it is a
 * single-purpose data disk (as MinIO's drives are), so a partition table would only add a layer
 * to get wrong. XFS for its large-file and parallel-write behaviour and for surviving a power cut
 * with its journal. The disk is mounted at `<mountRoot>/vol-<id>`; its service directory
 * `objstore/` holds the `.identity` file (protocols/objstore/identity.ts) and `slices/`.
 */
import { constants as fsc } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, realpath, rmdir, stat, statfs } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { decodeIdentity, encodeIdentity, IDENTITY_FILE, SERVICE_DIR, type VolumeIdentity } from '../../protocols/objstore/identity.js';
import { command } from './command.js';
import { isMountPoint, readMounts } from './mounts.js';
import type { BlockDevice, SmartAttribute, SmartInfo } from '../../protocols/objstore/volume-view.js';

export type { BlockDevice, SmartAttribute, SmartInfo };

export const VOLUME_LABEL = 'objstore';
export const SLICES_DIR = 'slices';

export type DiskErrorCode = 'NOT_BLOCK_DEVICE' | 'IN_USE' | 'NOT_FOUND' | 'FORMAT_FAILED' | 'MOUNT_FAILED' | 'UNMOUNT_FAILED';

export class DiskError extends Error {
  readonly code: DiskErrorCode;
  constructor(code: DiskErrorCode, message: string) {
    super(message);
    this.name = 'DiskError';
    this.code = code;
  }
}

interface LsblkNode {
  name: string;
  path?: string;
  'maj:min'?: string;
  size?: number | string | null;
  model?: string | null;
  serial?: string | null;
  type?: string;
  fstype?: string | null;
  label?: string | null;
  uuid?: string | null;
  mountpoints?: Array<string | null>;
  mountpoint?: string | null;
  children?: LsblkNode[];
}

const str = (v: string | null | undefined) => (typeof v === 'string' && v.trim() ? v.trim() : null);

/**
 * Every block device with a size (unattached loop devices and empty drives are left out), with
 * its partitions as children. FSTYPE and LABEL come from udev's database when udev runs, else
 * from a low-level probe of the device (`blkid -p`), so they are right on machines without udev
 * and right after a format.
 */
export async function listBlockDevices(): Promise<BlockDevice[]> {
  const { stdout } = await command('lsblk', ['-J', '-b', '-O']);
  const nodes = (JSON.parse(stdout) as { blockdevices?: LsblkNode[] }).blockdevices ?? [];
  const devices = await Promise.all(nodes.map(toDevice));
  return devices.filter((d) => d.size > 0);
}

/** One device (as listed by listBlockDevices), by path; null if it is not a block device lsblk knows. */
export async function describeBlockDevice(path: string): Promise<BlockDevice | null> {
  const r = await command('lsblk', ['-J', '-b', '-O', path], { okCodes: 'any' });
  if (r.code !== 0) return null;
  const node = (JSON.parse(r.stdout) as { blockdevices?: LsblkNode[] }).blockdevices?.[0];
  return node ? toDevice(node) : null;
}

async function toDevice(n: LsblkNode): Promise<BlockDevice> {
  const path = n.path ?? `/dev/${n.name}`;
  const dev: BlockDevice = {
    name: n.name,
    path,
    majMin: n['maj:min'] ?? '',
    sysfsPath: await realpath(`/sys/class/block/${n.name}`).catch(() => null),
    size: Number(n.size ?? 0),
    model: str(n.model),
    serial: str(n.serial),
    type: n.type ?? 'disk',
    fstype: str(n.fstype),
    label: str(n.label),
    uuid: str(n.uuid),
    mountpoints: (n.mountpoints ?? [n.mountpoint ?? null]).filter((m): m is string => typeof m === 'string' && m.length > 0),
    children: await Promise.all((n.children ?? []).map(toDevice)),
  };
  if (dev.fstype === null && dev.size > 0) Object.assign(dev, await probe(path));
  return dev;
}

/** `blkid -p`: read the signatures on the device itself, not a cache. */
async function probe(path: string): Promise<Pick<BlockDevice, 'fstype' | 'label' | 'uuid'>> {
  const r = await command('blkid', ['-p', '-o', 'export', path], { okCodes: 'any', timeoutMs: 30_000 }).catch(() => null);
  const kv = new Map<string, string>();
  for (const line of r?.code === 0 ? r.stdout.split('\n') : []) {
    const i = line.indexOf('=');
    if (i > 0) kv.set(line.slice(0, i), line.slice(i + 1));
  }
  return { fstype: str(kv.get('TYPE')), label: str(kv.get('LABEL')), uuid: str(kv.get('UUID')) };
}

function allMountpoints(d: BlockDevice): string[] {
  return [...d.mountpoints, ...d.children.flatMap(allMountpoints)];
}

/** Devices being provisioned by this process: a second request for one is refused at once. */
const provisioning = new Set<string>();

export interface ProvisionRequest {
  blockPath: string;
  volumeId: number;
  /** UUID of this hostd installation. */
  instanceId: string;
  /** Volumes are mounted at `<mountRoot>/vol-<volumeId>`. */
  mountRoot: string;
  /** ms since the epoch, stored in the identity. */
  createdAt: number;
}

/**
 * Make a block device a volume: refuse unless it is an unused block device, then wipe its
 * signatures (wipefs -a), format the whole device as XFS labelled 'objstore', mount it at
 * `<mountRoot>/vol-<volumeId>` (noatime) and write the service directory: `objstore/.identity`
 * and `objstore/slices/`, fsynced. Destroys whatever the device held. Throws DiskError.
 */
export async function provisionDisk(req: ProvisionRequest): Promise<{ mountPoint: string; device: string }> {
  // Arguments first: nothing may be destroyed for a request that cannot complete.
  const identity = encodeIdentity({ instanceId: req.instanceId, volumeId: req.volumeId, createdAt: req.createdAt });
  let real: string;
  try {
    real = await realpath(req.blockPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new DiskError('NOT_FOUND', `${req.blockPath}: no such device`);
    throw err;
  }
  const st = await stat(real);
  if (!st.isBlockDevice()) throw new DiskError('NOT_BLOCK_DEVICE', `${req.blockPath} is not a block device`);
  if (provisioning.has(real)) throw new DiskError('IN_USE', `${req.blockPath} is being provisioned already`);
  provisioning.add(real);
  try {
    const dev = await describeBlockDevice(real);
    if (!dev) throw new DiskError('NOT_BLOCK_DEVICE', `${req.blockPath}: lsblk does not know this device`);
    const mounted = allMountpoints(dev);
    if (mounted.length) throw new DiskError('IN_USE', `${req.blockPath} is in use: mounted at ${mounted.join(', ')}`);
    const holders = await readdir(`/sys/class/block/${dev.name}/holders`).catch(() => [] as string[]);
    if (holders.length) throw new DiskError('IN_USE', `${req.blockPath} is in use: held by ${holders.join(', ')}`);
    await checkExclusive(real, req.blockPath);
    const mountPoint = join(req.mountRoot, `vol-${req.volumeId}`);
    if (await isMountPoint(mountPoint)) throw new DiskError('MOUNT_FAILED', `${mountPoint} already has a file system mounted on it`);

    try {
      await command('wipefs', ['-a', real]);
      await command('mkfs.xfs', ['-f', '-q', '-L', VOLUME_LABEL, real], { timeoutMs: 600_000 });
    } catch (err) {
      throw new DiskError('FORMAT_FAILED', `formatting ${req.blockPath} failed: ${(err as Error).message}`);
    }
    await mkdir(mountPoint, { recursive: true });
    try {
      await command('mount', ['-t', 'xfs', '-o', 'noatime', real, mountPoint]);
    } catch (err) {
      throw new DiskError('MOUNT_FAILED', `mounting ${req.blockPath} at ${mountPoint} failed: ${(err as Error).message}`);
    }
    try {
      await writeServiceDir(mountPoint, identity);
    } catch (err) {
      await command('umount', [mountPoint]).catch(() => undefined);
      throw new DiskError('FORMAT_FAILED', `writing the service directory on ${req.blockPath} failed: ${(err as Error).message}`);
    }
    return { mountPoint, device: dev.path };
  } finally {
    provisioning.delete(real);
  }
}

/** Linux: an O_EXCL open of a block device fails with EBUSY while it is mounted or claimed (md, dm, swap). */
async function checkExclusive(real: string, shown: string): Promise<void> {
  try {
    const fh = await open(real, fsc.O_RDONLY | fsc.O_EXCL);
    await fh.close();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EBUSY') throw new DiskError('IN_USE', `${shown} is in use (held open exclusively by the kernel: mounted, swap, RAID or device-mapper)`);
    throw err;
  }
}

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function writeServiceDir(mountPoint: string, identity: Uint8Array): Promise<void> {
  const dir = join(mountPoint, SERVICE_DIR);
  await mkdir(dir, { mode: 0o700 });
  const fh = await open(join(dir, IDENTITY_FILE), 'wx', 0o600);
  try {
    await fh.writeFile(identity);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await mkdir(join(dir, SLICES_DIR), { mode: 0o700 });
  await fsyncPath(dir);
  await fsyncPath(mountPoint);
}

/** The identity of the volume mounted at `mountPoint`. Throws if it is missing or does not decode. */
export async function readIdentity(mountPoint: string): Promise<VolumeIdentity> {
  return decodeIdentity(new Uint8Array(await readFile(join(mountPoint, SERVICE_DIR, IDENTITY_FILE))));
}

export interface FoundVolume {
  volumeId: number;
  device: string;
  mountPoint: string;
  identity: VolumeIdentity;
}

export interface SkippedDisk {
  device: string;
  reason: 'other-instance' | 'no-identity' | 'duplicate-id' | 'mount-failed';
  message: string;
  identity?: VolumeIdentity;
}

export interface DiscoverOptions {
  mountRoot: string;
  instanceId: string;
  /** Look at these devices only (a hotplug event, tests); default: every block device. */
  devices?: string[];
  /** Told about each 'objstore' disk that is not taken, and why. */
  onSkip?: (skipped: SkippedDisk) => void;
}

/**
 * Find this instance's volumes by the identity on each disk, not by kernel name (a disk that
 * moved port, or came back as another sdX or loopN, keeps its volume id). Every block device
 * with an XFS file system labelled 'objstore' is looked at: if it is mounted already that mount
 * is used; otherwise it is mounted at a temporary directory under mountRoot, its identity read,
 * and it is moved to `<mountRoot>/vol-<id>`. Disks of other instances, disks without a readable
 * identity (a provisioning that did not finish) and a second disk claiming an id already found
 * (a cloned disk) are left unmounted and reported through `onSkip` (and the log of the caller).
 */
export async function discoverVolumes(opts: DiscoverOptions): Promise<FoundVolume[]> {
  await mkdir(opts.mountRoot, { recursive: true });
  // A discovery cut short (the daemon stopped or killed mid-boot) can leave a probe mount behind:
  // take it down, so the disk is found afresh and mounted at its proper place.
  for (const m of await readMounts()) {
    if (!m.mountPoint.startsWith(join(opts.mountRoot, '.probe-'))) continue;
    await command('umount', [m.mountPoint]).catch(() => command('umount', ['-l', m.mountPoint]).catch(() => undefined));
    await rmdir(m.mountPoint).catch(() => undefined);
  }
  const only = opts.devices ? new Set(await Promise.all(opts.devices.map((d) => realpath(d).catch(() => d)))) : null;
  const flat = (await listBlockDevices()).flatMap(function walk(d: BlockDevice): BlockDevice[] {
    return [d, ...d.children.flatMap(walk)];
  });
  // A disk being provisioned by this process (formatted, not yet mounted) is not probed.
  const candidates = flat.filter((d) => d.fstype === 'xfs' && d.label === VOLUME_LABEL && (!only || only.has(d.path)) && !provisioning.has(d.path));
  const found: FoundVolume[] = [];
  const skip = (s: SkippedDisk) => opts.onSkip?.(s);
  for (const dev of candidates) {
    const mounts = (await readMounts()).filter((m) => m.majMin === dev.majMin);
    if (mounts.length) {
      // Already mounted (by an earlier discovery, or by hand): use that mount, preferring ours.
      const mine = mounts.find((m) => m.mountPoint.startsWith(join(opts.mountRoot, 'vol-'))) ?? mounts[0]!;
      const identity = await readIdentity(mine.mountPoint).catch((err: Error) => err);
      if (identity instanceof Error) {
        skip({ device: dev.path, reason: 'no-identity', message: `${dev.path} (mounted at ${mine.mountPoint}) has no readable identity: ${identity.message}` });
        continue;
      }
      const why = refusal(identity, opts.instanceId, found);
      if (why) skip({ device: dev.path, identity, ...why });
      else found.push({ volumeId: identity.volumeId, device: dev.path, mountPoint: mine.mountPoint, identity });
      continue;
    }
    const tmp = await mkdtemp(join(opts.mountRoot, '.probe-'));
    try {
      await command('mount', ['-t', 'xfs', '-o', 'noatime', dev.path, tmp]);
    } catch (err) {
      await rmdir(tmp).catch(() => undefined);
      skip({ device: dev.path, reason: 'mount-failed', message: `mounting ${dev.path} failed: ${(err as Error).message}` });
      continue;
    }
    const identity = await readIdentity(tmp).catch((err: Error) => err);
    const why = identity instanceof Error ? { reason: 'no-identity' as const, message: `${dev.path} has no readable identity: ${identity.message}` } : refusal(identity, opts.instanceId, found);
    const final = identity instanceof Error ? '' : join(opts.mountRoot, `vol-${identity.volumeId}`);
    const taken = !why && (await isMountPoint(final));
    if (why || taken) {
      await command('umount', [tmp]).catch(() => undefined);
      await rmdir(tmp).catch(() => undefined);
      const id = identity instanceof Error ? undefined : identity;
      skip(why ? { device: dev.path, identity: id, ...why } : { device: dev.path, identity: id, reason: 'duplicate-id', message: `${final} is taken by another mount; ${dev.path} left unmounted` });
      continue;
    }
    await mkdir(final, { recursive: true });
    try {
      await moveMount(dev.path, tmp, final);
    } catch (err) {
      await command('umount', [tmp]).catch(() => undefined);
      await rmdir(tmp).catch(() => undefined);
      skip({ device: dev.path, reason: 'mount-failed', message: `mounting ${dev.path} at ${final} failed: ${(err as Error).message}` });
      continue;
    }
    await rmdir(tmp).catch(() => undefined);
    const id = identity as VolumeIdentity;
    found.push({ volumeId: id.volumeId, device: dev.path, mountPoint: final, identity: id });
  }
  return found;
}

function refusal(identity: VolumeIdentity, instanceId: string, found: FoundVolume[]): Pick<SkippedDisk, 'reason' | 'message'> | null {
  if (identity.instanceId !== instanceId.toLowerCase()) {
    return { reason: 'other-instance', message: `volume ${identity.volumeId} belongs to another hostd instance (${identity.instanceId})` };
  }
  const twin = found.find((f) => f.volumeId === identity.volumeId);
  if (twin) return { reason: 'duplicate-id', message: `volume id ${identity.volumeId} is claimed by ${twin.device} already (a cloned disk?)` };
  return null;
}

/**
 * Move the mount at `from` to `to`. `mount --move` is refused when the parent mount is shared
 * (systemd makes / shared): then mount the device a second time at `to` (XFS gives the same
 * superblock) and unmount `from`.
 */
async function moveMount(device: string, from: string, to: string): Promise<void> {
  try {
    await command('mount', ['--move', from, to]);
  } catch {
    await command('mount', ['-t', 'xfs', '-o', 'noatime', device, to]);
    await command('umount', [from]);
  }
}

/** Tries of an unmount refused as busy, and the pause after each: a holder that goes in a moment (a scan, a probe) is waited out. */
const UNMOUNT_BUSY_TRIES = 5;
const UNMOUNT_BUSY_PAUSE_MS = 200;

/**
 * Unmount a volume and remove its (now empty) mount point. Fails with UNMOUNT_FAILED while files
 * are open on it: "target is busy" is tried again for about a second first (CI once saw it right
 * after a fresh provision, from a holder that was gone a moment later), any other failure at once.
 */
export async function unmountVolume(mountPoint: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await command('umount', [mountPoint]);
      break;
    } catch (err) {
      const message = (err as Error).message;
      if (/target is busy/i.test(message) && attempt < UNMOUNT_BUSY_TRIES) {
        await new Promise((r) => setTimeout(r, UNMOUNT_BUSY_PAUSE_MS));
        continue;
      }
      throw new DiskError('UNMOUNT_FAILED', `unmounting ${mountPoint} failed${attempt > 1 ? ` (busy, ${attempt} tries)` : ''}: ${message}`);
    }
  }
  await rmdir(mountPoint).catch(() => undefined);
}

export async function volumeCapacity(mountPoint: string): Promise<{ bytesTotal: number; bytesFree: number }> {
  const s = await statfs(mountPoint);
  return { bytesTotal: s.blocks * s.bsize, bytesFree: s.bavail * s.bsize };
}

/** SMART data of a drive (`smartctl --json -a`). Loop devices and virtual disks have none: that is reported plainly. */
export async function smartInfo(device: string): Promise<SmartInfo> {
  const name = basename(await realpath(device).catch(() => device));
  if (/^loop\d+/.test(name)) return { available: false, reason: `${device} is a loop device (a file-backed virtual disk): it has no SMART data` };
  let r;
  try {
    // The exit status is a bit mask: bits 0-1 mean smartctl could not read the drive at all, the
    // others report the drive's state, with the JSON printed all the same.
    r = await command('smartctl', ['--json', '-a', device], { okCodes: 'any', timeoutMs: 60_000 });
  } catch (err) {
    return { available: false, reason: `smartctl could not run: ${(err as Error).message}` };
  }
  type J = {
    smartctl?: { messages?: Array<{ string: string; severity?: string }> };
    smart_status?: { passed?: boolean };
    model_name?: string;
    serial_number?: string;
    temperature?: { current?: number };
    power_on_time?: { hours?: number };
    ata_smart_attributes?: { table?: Array<{ id: number; name: string; value: number; worst: number; thresh: number; raw?: { value?: number } }> };
    nvme_smart_health_information_log?: Record<string, unknown>;
  };
  let j: J;
  try {
    j = JSON.parse(r.stdout) as J;
  } catch {
    return { available: false, reason: `smartctl gave no JSON (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim().slice(0, 200)}` };
  }
  const messages = (j.smartctl?.messages ?? []).map((m) => m.string);
  if ((r.code & 0b11) !== 0 || (!j.smart_status && !j.ata_smart_attributes && !j.nvme_smart_health_information_log)) {
    return { available: false, reason: messages.join('; ') || `smartctl exit status ${r.code}: no SMART data` };
  }
  return {
    available: true,
    passed: typeof j.smart_status?.passed === 'boolean' ? j.smart_status.passed : null,
    model: j.model_name ?? null,
    serial: j.serial_number ?? null,
    temperatureC: j.temperature?.current ?? null,
    powerOnHours: j.power_on_time?.hours ?? null,
    attributes: (j.ata_smart_attributes?.table ?? []).map((a) => ({ id: a.id, name: a.name, value: a.value, worst: a.worst, thresh: a.thresh, raw: a.raw?.value ?? 0 })),
    nvmeHealth: j.nvme_smart_health_information_log ?? null,
    messages,
  };
}
