/**
 * The wire shapes of the volume API (`GET /$/volumes`, `GET /$/volumes/{id}`, `GET /$/blockDevices`):
 * declared once here, pure, so the server that builds them (actors/objstore/volumes.ts, devices.ts,
 * smart-cache.ts, actors/volume/disks.ts) and the web UI that reads them (ui/src) share one
 * definition. No I/O.
 */

/** A block device as lsblk shows it (actors/volume/disks.ts reads it). */
export interface BlockDevice {
  /** Kernel name, e.g. 'sdb', 'loop3', 'nvme0n1p1'. */
  name: string;
  /** '/dev/<name>' */
  path: string;
  /** 'major:minor' */
  majMin: string;
  /** Resolved /sys/class/block/<name>: the device's place on its bus. */
  sysfsPath: string | null;
  /** Bytes. */
  size: number;
  model: string | null;
  serial: string | null;
  /** lsblk's TYPE: 'disk', 'part', 'loop', 'rom', ... */
  type: string;
  fstype: string | null;
  label: string | null;
  uuid: string | null;
  mountpoints: string[];
  /** Partitions (and other devices stacked on this one). */
  children: BlockDevice[];
}

/** One entry of `GET /$/blockDevices`: the device, its partitions, and the volume it maps to. */
export interface DeviceEntry extends BlockDevice {
  volumeId: number | null;
  volumeLabel: string | null;
  children: DeviceEntry[];
}

export interface SmartAttribute {
  id: number;
  name: string;
  value: number;
  worst: number;
  thresh: number;
  raw: number;
}

/** SMART data of a drive (`smartctl --json -a`), as `GET /$/volumes/{id}` answers it. */
export type SmartInfo =
  | { available: false; reason: string }
  | {
      available: true;
      /** The drive's overall self-assessment; null when it gives none. */
      passed: boolean | null;
      model: string | null;
      serial: string | null;
      temperatureC: number | null;
      powerOnHours: number | null;
      /** ATA attributes (empty for NVMe and SCSI). */
      attributes: SmartAttribute[];
      /** The NVMe health log, as smartctl reports it. */
      nvmeHealth: Record<string, unknown> | null;
      /** smartctl's own warnings (e.g. a failing attribute). */
      messages: string[];
    };

/** The cached SMART summary of the volume list (`GET /$/volumes`). */
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

/** Progress of the in-place encrypt step (POST /$/volumes/{id}/encrypt), kept in the volume record. */
export interface EncryptProgress {
  phase: 'checking' | 'scanning' | 'wiping' | 'encrypting' | 'registering' | 'done' | 'failed';
  startedAt: string;
  updatedAt: string;
  /** what became of the old plaintext blocks in the free space (the wiping phase) */
  wipe?: string;
  error?: string;
}

/** A volume as the API shows it: its record's flags, where its disk is now, capacity, SMART. */
export interface VolumeView {
  id: number;
  label: string;
  comment: string;
  isEnabled: boolean;
  isReadOnly: boolean;
  isHealthy: boolean;
  isDraining: boolean;
  isDeleted: boolean;
  /** registered, not deleted, and its disk is not present */
  isMissing: boolean;
  isEncrypted: boolean;
  keyGen: number | null;
  isLocked: boolean;
  lockedReason: string | null;
  encryptProgress: EncryptProgress | null;
  device: string | null;
  lastDevice: string;
  mountPoint: string | null;
  bytesTotal: number | null;
  bytesFree: number | null;
  busGroup: string;
  faults: number;
  /** slices that failed while being written (a PUT's failover moved them elsewhere) */
  writeFaults: number;
  /** ISO 8601 */
  createdAt: string;
  /** the cached summary in the list; the full reading in `GET /$/volumes/{id}` */
  smartInfo: SmartSummary | SmartInfo | null;
}

/** `GET /$/volumes/{id}`: the view with SMART read afresh. */
export interface VolumeDetailView extends VolumeView {
  smartInfo: SmartInfo;
}
