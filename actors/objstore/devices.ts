/**
 * Disks coming and going while the store runs (hotplug), and the block-device listing of the
 * management API. Sources of a rescan: kernel and udev block events from `udevadm monitor` (the
 * kernel's uevents arrive without udevd; respawned 5 s after it exits), or a watch of /dev where
 * udevadm is not installed — neither with OBJSTORE_DISABLE_UDEV=true —, a periodic scan
 * (OBJSTORE_DEVICE_SCAN_INTERVAL_MS, 30 s: a detached loop device may make no event, and events
 * can be lost), and `POST /$/blockDevices/reload`. Events are gathered (a rescan 1 s after the
 * first of a burst) and rescans are single-flight with one coalesced rerun. Once udevadm listens
 * (its header printed) one rescan covers what changed while it was starting.
 *
 * A rescan: a present volume whose disk is gone (no block device of that name, a size of 0, or
 * its mount gone) turns missing (volumes.ts markMissing: reads rebuild from parity, writes go
 * elsewhere) with a critical notification; then, while a volume is missing and the set of block
 * devices changed (or on reload), the disks are looked for by their identity (disks.ts
 * discoverVolumes: any kernel name), and one found is mounted and served again, with an info
 * notification. Foreign and cloned disks are left alone and logged, as at start-up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, realpath } from 'node:fs/promises';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import { sortDevices, type DeviceSort } from '../../protocols/objstore/devices.js';
import { discoverVolumes, listBlockDevices, type BlockDevice } from '../volume/disks.js';
import type { DeviceEntry } from '../../protocols/objstore/volume-view.js';
import { readMounts } from '../volume/mounts.js';
import type { Notifier } from './notify.js';
import type { Volumes } from './volumes.js';

const DEBOUNCE_MS = 1000;
const RESPAWN_MS = 5000;

export interface HotplugOptions {
  volumes: Volumes;
  notifier: Notifier;
  log: Logger;
  scanIntervalMs: number;
  disableUdev: boolean;
}

/** What the block devices are, cheaply (from sysfs): a rescan looks for disks only when it changed. */
async function deviceSignature(): Promise<string> {
  const names = (await readdir('/sys/class/block').catch(() => [] as string[])).sort();
  const parts = await Promise.all(names.map(async (n) => `${n}=${(await readFile(`/sys/class/block/${n}/dev`, 'utf8').catch(() => '')).trim()}/${(await readFile(`/sys/class/block/${n}/size`, 'utf8').catch(() => '')).trim()}`));
  return parts.join(',');
}

/** Is the kernel's block device still there, with a size? */
async function diskThere(device: string): Promise<boolean> {
  const size = await readFile(`/sys/class/block/${basename(device)}/size`, 'utf8').catch(() => '0');
  return Number(size.trim()) > 0;
}

export class Hotplug {
  private readonly o: HotplugOptions;
  private running: Promise<void> | null = null;
  private again = false;
  private forceNext = false;
  private lastSignature = '';
  private debounce: NodeJS.Timeout | null = null;
  private timer: NodeJS.Timeout | null = null;
  private monitor: ChildProcess | null = null;
  private devWatch: FSWatcher | null = null;
  private closed = false;
  /** for the tests and the log: what the event source is */
  source: 'udevadm' | '/dev' | 'none' = 'none';

  constructor(o: HotplugOptions) {
    this.o = o;
  }

  async start(): Promise<void> {
    this.lastSignature = await deviceSignature();
    if (!this.o.disableUdev) this.startMonitor();
    this.timer = setInterval(() => void this.rescan('scan'), this.o.scanIntervalMs);
    this.timer.unref();
    this.o.log.info({ events: this.source, scanEveryMs: this.o.scanIntervalMs }, 'hotplug: watching block devices');
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
    this.monitor?.kill();
    this.devWatch?.close();
  }

  /** Rescan now (the `force` of a reload looks for missing disks even when no device changed). */
  rescan(why: string, force = false): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (force) this.forceNext = true;
    if (this.running) {
      this.again = true;
      return this.running.then(() => this.running ?? undefined);
    }
    this.running = (async () => {
      do {
        this.again = false;
        const f = this.forceNext;
        this.forceNext = false;
        try {
          await this.reconcile(why, f);
        } catch (err) {
          this.o.log.warn({ err: (err as Error).message, why }, 'hotplug: a rescan of the block devices failed; the next one tries again');
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * A rescan DEBOUNCE_MS after the first event of a burst; the events meanwhile are covered by it
   * (it reads the state when it runs). Not pushed back by each new event: under a steady stream of
   * block events (other disks attached and detached) the rescan would never come.
   */
  private soon(why: string): void {
    if (this.closed || this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = null;
      void this.rescan(why);
    }, DEBOUNCE_MS);
    this.debounce.unref();
  }

  private startMonitor(): void {
    const child = spawn('udevadm', ['monitor', '--kernel', '--udev', '--subsystem-match=block'], { stdio: ['ignore', 'pipe', 'ignore'] });
    this.monitor = child;
    this.source = 'udevadm';
    child.on('error', (err: NodeJS.ErrnoException) => {
      this.monitor = null;
      if (err.code === 'ENOENT' && !this.closed) this.watchDev();
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (/^(KERNEL|UDEV)\[/.test(line)) this.soon('event');
      // Its header's last line comes once it listens (the kernel monitor, set up last): what
      // changed between our start (or its respawn) and then made no event here, so rescan.
      else if (line.startsWith('KERNEL - ')) this.soon('monitor listening');
    });
    child.on('exit', () => {
      if (this.monitor !== child || this.closed) return;
      this.monitor = null;
      setTimeout(() => !this.closed && this.startMonitor(), RESPAWN_MS).unref();
    });
  }

  /** Without udevadm: devtmpfs makes and removes /dev nodes by itself, so a watch of /dev sees disks come and go. */
  private watchDev(): void {
    this.source = '/dev';
    try {
      this.devWatch = watch('/dev', () => this.soon('event'));
    } catch (err) {
      this.source = 'none';
      this.o.log.warn({ err: (err as Error).message }, 'hotplug: cannot watch /dev; only the periodic scan sees disks come and go');
    }
  }

  private async reconcile(why: string, force: boolean): Promise<void> {
    const { volumes, notifier, log } = this.o;
    const mounted = new Set((await readMounts()).map((m) => m.mountPoint));
    let lost = false;
    for (const d of volumes.presentDisks()) {
      const there = await diskThere(d.device);
      // mountinfo shows resolved paths (the state directory may be under a symlink)
      const real = await realpath(d.mountPoint).catch(() => null);
      if (there && real !== null && mounted.has(real)) continue;
      if (!(await volumes.markMissing(d.id))) continue;
      lost = true;
      const rec = volumes.records(true).find((r) => r.id === d.id);
      const what = there ? `its file system is no longer mounted at ${d.mountPoint}` : `${d.device} is gone`;
      log.error({ volumeId: d.id, device: d.device, why }, `volume ${d.id} is missing: ${what}`);
      notifier.notify({
        severity: 'critical',
        key: `disk-missing:${d.id}`,
        title: `Disk of volume ${d.id} is missing`,
        body: `Volume ${d.id}${rec?.label ? ` (${rec.label})` : ''}${rec?.serial ? `, serial ${rec.serial}` : ''}: ${what}. It is isMissing: reads of its slices rebuild from parity, writes go to the other volumes. Plugged back in (under any device name) it is mounted and served again.`,
      });
    }
    const signature = await deviceSignature();
    const changed = signature !== this.lastSignature;
    this.lastSignature = signature;
    const missing = volumes.records(false).filter((r) => !volumes.ref(r.id));
    if (!missing.length || !(changed || lost || force)) return;
    const found = await discoverVolumes({
      mountRoot: volumes.mountRoot,
      instanceId: volumes.instanceId,
      onSkip: (skip) => log.warn({ ...skip }, 'hotplug: a disk labelled for the object store was left unused'),
    });
    for (const f of found) {
      if (!missing.some((r) => r.id === f.volumeId)) continue;
      if (!(await volumes.reattach(f.volumeId, f.device, f.mountPoint))) continue;
      const rec = missing.find((r) => r.id === f.volumeId)!;
      log.info({ volumeId: f.volumeId, device: f.device, lastDevice: rec.lastDevice, mountPoint: f.mountPoint }, `volume ${f.volumeId} is back on ${f.device}: served again`);
      notifier.notify({
        severity: 'info',
        key: `disk-back:${f.volumeId}`,
        title: `Disk of volume ${f.volumeId} is back`,
        body: `Volume ${f.volumeId}${rec.label ? ` (${rec.label})` : ''} was found again on ${f.device} (last seen as ${rec.lastDevice}); it is mounted and served again. Slices written meanwhile went to other volumes; a verify run of it (POST /$/verify-volumes {"volumeIds":[${f.volumeId}]}) checks what it holds.`,
      });
    }
  }
}

export type { DeviceEntry };

/** Every block device with a size, each with the volume (present on it) it maps to, sorted (partitions too). */
export async function blockDeviceList(volumes: Volumes, by: DeviceSort): Promise<DeviceEntry[]> {
  const byDevice = new Map(volumes.presentDisks().map((d) => [d.device, d.id]));
  const labels = new Map(volumes.records(true).map((r) => [r.id, r.label]));
  const map = (d: BlockDevice): DeviceEntry => {
    const volumeId = byDevice.get(d.path) ?? null;
    return { ...d, volumeId, volumeLabel: volumeId === null ? null : (labels.get(volumeId) ?? ''), children: sortDevices(d.children.map(map), by) };
  };
  return sortDevices((await listBlockDevices()).map(map), by);
}
