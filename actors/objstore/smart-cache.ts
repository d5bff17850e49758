/**
 * The SMART summary of each present disk for the volume list (`GET /$/volumes`): read with
 * `smartctl --json -a` (actors/volume/disks.ts smartInfo) in the background — at start and every
 * SMART_REFRESH_MS — and answered from this cache, so the list never waits for a slow drive. The
 * single-volume read (`GET /$/volumes/{id}`) reads the full attributes afresh. A loop device has no
 * SMART data: said plainly, without running smartctl. A pending-sector count that rises is
 * reported to the caller (the `pending` signal of the kernel-log watcher).
 */
import { basename } from 'node:path';
import { smartInfo, type SmartInfo } from '../volume/disks.js';
import type { SmartSummary } from '../../protocols/objstore/volume-view.js';

export const SMART_REFRESH_MS = 10 * 60_000;

export type { SmartSummary };

export function summarize(info: SmartInfo, at: number): SmartSummary {
  const updatedAt = new Date(at).toISOString();
  if (!info.available) return { available: false, reason: info.reason, updatedAt };
  const raw = (id: number) => info.attributes.find((a) => a.id === id)?.raw ?? null;
  const media = info.nvmeHealth?.media_errors;
  return {
    available: true,
    passed: info.passed,
    temperatureC: info.temperatureC,
    powerOnHours: info.powerOnHours,
    reallocatedSectors: raw(5),
    pendingSectors: raw(197),
    mediaErrors: typeof media === 'number' ? media : null,
    updatedAt,
  };
}

/**
 * Did the pending-sector count rise? Against the highest count seen before on this device (the
 * first reading only sets the mark: a drive that had pending sectors when the store started is
 * not news). Pure.
 */
export function pendingRise(highWater: number | undefined, now: SmartSummary): { from: number; to: number } | null {
  if (!now.available || now.pendingSectors === null || highWater === undefined) return null;
  return now.pendingSectors > highWater ? { from: highWater, to: now.pendingSectors } : null;
}

const isLoop = (device: string) => /^loop\d+$/.test(basename(device));

export class SmartCache {
  private readonly byDevice = new Map<string, SmartSummary>();
  /** the highest pending-sector count seen per device (in memory: a restart sets it afresh) */
  private readonly pendingHigh = new Map<string, number>();

  summary(device: string | null): SmartSummary {
    if (!device) return { available: false, reason: 'the disk is not present', updatedAt: null };
    if (isLoop(device)) return { available: false, reason: `${device} is a loop device (a file-backed virtual disk): it has no SMART data`, updatedAt: null };
    return this.byDevice.get(device) ?? { available: false, reason: 'not read yet (smartctl runs in the background; GET /$/volumes/{id} reads it now)', updatedAt: null };
  }

  /**
   * Read every device that is not a loop device, one at a time. Returns the devices whose
   * pending-sector count rose since the last reading (the kernel-log watcher arms a verify run
   * with the signal `pending` for each).
   */
  async refresh(devices: string[]): Promise<Array<{ device: string; from: number; to: number }>> {
    const rises: Array<{ device: string; from: number; to: number }> = [];
    for (const d of devices) {
      if (isLoop(d)) continue;
      const s = summarize(await smartInfo(d), Date.now());
      this.byDevice.set(d, s);
      const rise = pendingRise(this.pendingHigh.get(d), s);
      if (rise) rises.push({ device: d, ...rise });
      if (s.available && s.pendingSectors !== null) this.pendingHigh.set(d, Math.max(s.pendingSectors, this.pendingHigh.get(d) ?? 0));
    }
    for (const d of [...this.byDevice.keys()]) if (!devices.includes(d)) this.byDevice.delete(d);
    return rises;
  }
}
