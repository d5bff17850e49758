/**
 * The SMART summary of each present disk for the volume list (`GET /$/volumes`): read with
 * `smartctl --json -a` (actors/volume/disks.ts smartInfo) in the background — at start and every
 * SMART_REFRESH_MS — and answered from this cache, so the list never waits for a slow drive. The
 * single-volume read (`GET /$/volumes/{id}`) reads the full attributes afresh. A loop device has no
 * SMART data: said plainly, without running smartctl.
 */
import { basename } from 'node:path';
import { smartInfo, type SmartInfo } from '../volume/disks.js';

export const SMART_REFRESH_MS = 10 * 60_000;

export type SmartSummary =
  | { available: false; reason: string; updatedAt: string | null }
  | {
      available: true;
      passed: boolean | null;
      temperatureC: number | null;
      powerOnHours: number | null;
      /** ATA 5 Reallocated_Sector_Ct and 197 Current_Pending_Sector raw values; null when the drive has none (NVMe, SCSI) */
      reallocatedSectors: number | null;
      pendingSectors: number | null;
      /** NVMe media errors; null for others */
      mediaErrors: number | null;
      updatedAt: string;
    };

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

const isLoop = (device: string) => /^loop\d+$/.test(basename(device));

export class SmartCache {
  private readonly byDevice = new Map<string, SmartSummary>();

  summary(device: string | null): SmartSummary {
    if (!device) return { available: false, reason: 'the disk is not present', updatedAt: null };
    if (isLoop(device)) return { available: false, reason: `${device} is a loop device (a file-backed virtual disk): it has no SMART data`, updatedAt: null };
    return this.byDevice.get(device) ?? { available: false, reason: 'not read yet (smartctl runs in the background; GET /$/volumes/{id} reads it now)', updatedAt: null };
  }

  /** Read every device that is not a loop device, one at a time. */
  async refresh(devices: string[]): Promise<void> {
    for (const d of devices) {
      if (isLoop(d)) continue;
      this.byDevice.set(d, summarize(await smartInfo(d), Date.now()));
    }
    for (const d of [...this.byDevice.keys()]) if (!devices.includes(d)) this.byDevice.delete(d);
  }
}
