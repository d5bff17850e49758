/**
 * `hostd recover --from-disks`: rebuild the object store's record database from the disks alone,
 * with the daemon stopped, when no snapshot is readable (the last resort; `hostd restore` is the
 * first). The steps: refuse while the daemon runs (holders.ts) or while a record database is in
 * place (unless forced); find this installation's volumes by the identity on each disk (the way
 * the daemon does: discoverVolumes); read every slice's header and record sidecar (scan.ts);
 * decide each object (assemble.ts); write a fresh database and rename it into place (write-db.ts).
 * A dry run stops before the writing. The report says what was recovered, what was skipped and
 * why, and what the disks cannot give back.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_FILE } from '../../../runtime/checkpoint/store.js';
import { decodeKeyFile, openWithKeyFile } from '../../../protocols/objstore/crypto-format.js';
import type { RecordKeyLookup } from '../../../protocols/objstore/slice-record.js';
import { describeBlockDevice, discoverVolumes, type SkippedDisk } from '../../volume/disks.js';
import { readKeySlots } from '../../volume/volume-key.js';
import { KEY_FILE } from '../keys.js';
import type { VolumeRecord } from '../metadata.js';
import { assemble, type FoundSlice, type Skipped } from './assemble.js';
import { databaseHolders } from './holders.js';
import { scanVolume } from './scan.js';
import { writeDatabase } from './write-db.js';

/** A refusal: nothing was changed, and the message says why and what to do. */
export class RecoverError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecoverError';
  }
}

export interface RecoverOptions {
  stateDir: string;
  dryRun: boolean;
  force: boolean;
  /** look at these block devices only (default: every block device) */
  devices?: string[];
  /** the installation id, when <stateDir>/instance-id is lost too */
  instanceId?: string;
  /** a line of progress (stderr), at most about once a second */
  progress: (line: string) => void;
}

export interface VolumeSeen {
  id: number;
  device: string;
  mountPoint: string;
  encrypted: boolean;
  /** why its sealed sidecars cannot be opened, when they cannot */
  keyProblem: string | null;
  sliceFiles: number;
  tempFiles: number;
  strays: number;
}

export interface RecoveryReport {
  stateDir: string;
  dryRun: boolean;
  instanceId: string;
  volumes: VolumeSeen[];
  /** disks labelled for the object store that were not used, and why */
  disksSkipped: SkippedDisk[];
  /** volume ids the records name whose disk was not found (recorded as missing volumes) */
  volumesMissing: number[];
  sliceFiles: number;
  recovered: number;
  degraded: Array<{ objectId: string; path: string; missing: number[] }>;
  duplicates: Array<{ objectId: string; index: number; volumeId: number }>;
  skipped: Skipped[];
  /** what the disks do not hold, so a recovery cannot give it back */
  notOnDisks: string[];
  database: { path: string; keptAs: string | null } | null;
  elapsedMs: number;
}

export const NOT_ON_DISKS = [
  'bucket policies (every bucket is back to the default: not public, not delete-protected; set them again)',
  'volume labels and comments, and flags set by an operator (read-only, disabled, draining: every volume found is enabled and writable)',
  'slice faults and the verify history (the next scrub finds the faults again)',
  'the fleet setting encryptNewVolumes (back to the service setting)',
];

function instanceIdOf(opts: RecoverOptions): string {
  const file = join(opts.stateDir, 'instance-id');
  const stored = existsSync(file) ? readFileSync(file, 'utf8').trim() : null;
  if (opts.instanceId && stored && opts.instanceId.toLowerCase() !== stored.toLowerCase()) {
    throw new RecoverError(`--instance-id ${opts.instanceId} differs from the installation id in ${file} (${stored}); leave the option out`);
  }
  const id = opts.instanceId ?? stored;
  if (!id) throw new RecoverError(`no installation id: ${file} is missing; pass --instance-id with the UUID of the installation the disks belong to (bytes 0x10-0x1f of objstore/.identity on each disk)`);
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw new RecoverError(`the installation id must be a UUID, got ${JSON.stringify(id)}`);
  return id.toLowerCase();
}

/** The volume key of each generation a volume holds, from its key slots and the key file. */
function keyLookup(stateDir: string, slots: Awaited<ReturnType<typeof readKeySlots>>): { lookup: RecordKeyLookup | null; problem: string | null } {
  if (!slots) return { lookup: null, problem: null };
  const file = join(stateDir, KEY_FILE);
  if (!existsSync(file)) return { lookup: null, problem: `the key file ${file} is missing: the sealed record sidecars of this encrypted volume cannot be opened` };
  try {
    const key = openWithKeyFile(slots, decodeKeyFile(new Uint8Array(readFileSync(file))));
    return { lookup: (gen) => (gen === slots.keyGen ? key : null), problem: null };
  } catch (err) {
    return { lookup: null, problem: `the key file ${file} does not open this volume's key slots: ${(err as Error).message}` };
  }
}

/** A progress line at most once a second (and the last one always). */
function throttle(progress: (line: string) => void): (line: string, force?: boolean) => void {
  let last = 0;
  return (line, force = false) => {
    const now = Date.now();
    if (!force && now - last < 1000) return;
    last = now;
    progress(line);
  };
}

export async function recoverFromDisks(opts: RecoverOptions): Promise<RecoveryReport> {
  const started = Date.now();
  if (!existsSync(opts.stateDir)) throw new RecoverError(`the state directory ${opts.stateDir} does not exist (create it, with its instance-id file or --instance-id, to recover into it)`);
  const holders = await databaseHolders(opts.stateDir);
  if (holders.length) {
    const who = holders.map((h) => `pid ${h.pid} (${h.command || 'unknown command'}) has ${h.file} open`).join('; ');
    throw new RecoverError(`the daemon is running: ${who}. Stop it first (SIGTERM, or systemctl stop hostd): recovery rewrites the record database it is using`);
  }
  const live = join(opts.stateDir, ENV_FILE);
  if (existsSync(live) && !opts.force && !opts.dryRun) {
    throw new RecoverError(`a record database exists at ${live}: recover --from-disks replaces it with what the disks say, losing what only the database holds (bucket policies, labels, faults). Try 'hostd restore' first; pass --force to recover anyway (the database in place is kept, renamed aside), or --dry-run to see what would be recovered`);
  }
  const instanceId = instanceIdOf(opts);
  const say = throttle(opts.progress);
  say('finding the volumes on the disks', true);
  const disksSkipped: SkippedDisk[] = [];
  const found = await discoverVolumes({ mountRoot: join(opts.stateDir, 'mnt'), instanceId, devices: opts.devices, onSkip: (s) => disksSkipped.push(s) });
  if (!found.length) {
    const why = disksSkipped.length ? ` (disks skipped: ${disksSkipped.map((s) => s.message).join('; ')})` : '';
    throw new RecoverError(`no volume of installation ${instanceId} was found on ${opts.devices ? `the devices ${opts.devices.join(', ')}` : 'any block device'}${why}: nothing to recover from`);
  }
  found.sort((a, b) => a.volumeId - b.volumeId);
  const slices: FoundSlice[] = [];
  const volumes: VolumeSeen[] = [];
  const records: VolumeRecord[] = [];
  for (const [n, f] of found.entries()) {
    const slots = await readKeySlots(f.mountPoint).catch(() => null);
    const { lookup, problem } = keyLookup(opts.stateDir, slots);
    let done = 0;
    const scanned = await scanVolume(f.volumeId, f.mountPoint, lookup, () => {
      done++;
      say(`scanning volume ${f.volumeId} (${n + 1} of ${found.length}, ${f.device}): ${done} slice files`);
    });
    say(`scanned volume ${f.volumeId} (${n + 1} of ${found.length}, ${f.device}): ${scanned.counts.files} slice files`, true);
    slices.push(...scanned.slices);
    volumes.push({ id: f.volumeId, device: f.device, mountPoint: f.mountPoint, encrypted: !!slots, keyProblem: problem, sliceFiles: scanned.counts.files, tempFiles: scanned.counts.tempFiles, strays: scanned.counts.strays.length });
    const dev = await describeBlockDevice(f.device).catch(() => null);
    records.push({
      id: f.volumeId,
      label: '',
      comment: `recovered from the disks (${f.device}) on ${new Date().toISOString()}`,
      isEnabled: true,
      isReadOnly: false,
      isHealthy: true,
      isDraining: false,
      isDeleted: false,
      encrypted: !!slots,
      ...(slots ? { keyGen: slots.keyGen } : {}),
      lastDevice: f.device,
      serial: dev?.serial ?? null,
      model: dev?.model ?? null,
      createdAt: f.identity.createdAt,
      wipe: 0,
      faults: 0,
    });
  }
  const plan = assemble(slices, instanceId);
  // Volumes the records name whose disk is not here: recorded as missing volumes, so their
  // objects' slices show as missing (and repair rebuilds them) rather than the layout pointing nowhere.
  const named = new Set(plan.objects.flatMap((p) => [...p.record.dataVolumes, ...p.record.parityVolumes]));
  const volumesMissing = [...named].filter((id) => !found.some((f) => f.volumeId === id)).sort((a, b) => a - b);
  for (const id of volumesMissing) {
    records.push({ id, label: '', comment: `named by slice records; its disk was not found when recovering on ${new Date().toISOString()}`, isEnabled: true, isReadOnly: false, isHealthy: true, isDraining: false, isDeleted: false, encrypted: false, lastDevice: '', serial: null, model: null, createdAt: 0, wipe: 0, faults: 0 });
  }
  const report: RecoveryReport = {
    stateDir: opts.stateDir,
    dryRun: opts.dryRun,
    instanceId,
    volumes,
    disksSkipped,
    volumesMissing,
    sliceFiles: slices.length,
    recovered: plan.objects.length,
    degraded: plan.objects.filter((p) => p.missing.length).map((p) => ({ objectId: p.record.id, path: p.record.path, missing: p.missing })),
    duplicates: plan.objects.flatMap((p) => p.duplicates.map((d) => ({ objectId: p.record.id, ...d }))),
    skipped: plan.skipped,
    notOnDisks: NOT_ON_DISKS,
    database: null,
    elapsedMs: 0,
  };
  if (!opts.dryRun) {
    say(`writing ${plan.objects.length} object records`, true);
    const w = await writeDatabase(opts.stateDir, plan.objects, records, (done) => say(`writing records: ${done} of ${plan.objects.length}`));
    report.recovered = w.recorded;
    report.skipped = [...report.skipped, ...w.conflicts];
    report.degraded = report.degraded.filter((d) => !w.conflicts.some((c) => c.objectId === d.objectId));
    report.database = { path: live, keptAs: w.keptAs };
  }
  report.elapsedMs = Date.now() - started;
  return report;
}
