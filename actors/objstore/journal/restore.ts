/**
 * `hostd restore`: rebuild the record database from the disks alone, with the daemon stopped.
 *
 *   1. find this instance's volumes by the identity on each disk (as the daemon's boot does) and
 *      leave them mounted where the daemon looks for them;
 *   2. read the snapshot pointers on them, pick the snapshot (the newest that reads, or --snapshot);
 *   3. read the snapshot object straight from its slices, check it (trailer, sha256, counts);
 *   4. read every journal segment on every volume, merge the replicas, replay the records after
 *      the snapshot with the rules of protocols/objstore/journal-replay.ts, asking the disks
 *      whether each object's slices are there;
 *   5. write a fresh record database in a temporary directory, and only when it is complete put
 *      it in place (rename), the old one kept aside: a kill -9 at any point leaves the state
 *      directory as it was, and restore can simply be run again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { emptyState, newReport, replay, stateFromSnapshot, containerCounts, type ReplayReport, type RestoreState } from '../../../protocols/objstore/journal-replay.js';
import { decodeSnapshot, knownSnapshots, type Pointer, type PointerEntry } from '../../../protocols/objstore/snapshot-format.js';
import { openEnvironment, ENV_FILE } from '../../../runtime/checkpoint/store.js';
import { discoverVolumes, type FoundVolume, type SkippedDisk } from '../../volume/disks.js';
import { Metadata, type VolumeRecord } from '../metadata.js';
import { countSlices, indexSlices, readJournals, readObject, type JournalRead, type Mounts } from './disk-read.js';
import { readPointer } from './pointer.js';

export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreError';
  }
}

export interface RestoreOptions {
  stateDir: string;
  /** restore this snapshot (its id); default: the newest that reads */
  snapshot?: string;
  /** no snapshot: rebuild from the whole journal (when no snapshot was ever taken) */
  journalOnly?: boolean;
  /** the snapshot alone, no journal replay (policies exactly as snapshotted) */
  snapshotOnly?: boolean;
  /** replace a record database that is there (it is kept aside, not deleted) */
  force?: boolean;
  /** progress lines (long work) */
  progress?: (line: string) => void;
}

export interface RestoreResult {
  stateDir: string;
  volumes: { found: number[]; skipped: Array<Pick<SkippedDisk, 'device' | 'reason' | 'message'>> };
  snapshot: { id: string; takenAt: string; replayFrom: number; objects: number } | null;
  /** snapshots that were tried and did not read, and why */
  unreadable: Array<{ id: string; why: string }>;
  journal: Omit<JournalRead, 'records'> & { records: number; replayed: number };
  report: ReplayReport;
  restored: { objects: number; buckets: number; volumes: number };
  /** where the database that was there went */
  keptAside: string | null;
  ms: number;
}

/** The instance id the disks must carry (kept in the state directory beside the database). */
function instanceIdOf(stateDir: string): string {
  const file = join(stateDir, 'instance-id');
  if (!existsSync(file)) throw new RestoreError(`${file} is missing: restore finds the volumes by this installation's instance id; put the file back (from a backup of the state directory) and run restore again`);
  return readFileSync(file, 'utf8').trim();
}

export async function restore(opts: RestoreOptions): Promise<RestoreResult> {
  const started = Date.now();
  const say = opts.progress ?? (() => undefined);
  if (opts.journalOnly && (opts.snapshot || opts.snapshotOnly)) throw new RestoreError('--journal-only cannot be combined with --snapshot or --snapshot-only');
  const dbPath = join(opts.stateDir, ENV_FILE);
  if (existsSync(dbPath) && !opts.force) throw new RestoreError(`a record database is there already (${dbPath}): stop the daemon, and pass --force to replace it (it is kept aside as ${ENV_FILE}.before-restore-<time>)`);
  const instanceId = instanceIdOf(opts.stateDir);
  const skipped: SkippedDisk[] = [];
  say('finding the volumes on the disks');
  const found = await discoverVolumes({ mountRoot: join(opts.stateDir, 'mnt'), instanceId, onSkip: (s) => skipped.push(s) });
  if (!found.length) throw new RestoreError(`no volume of this instance (${instanceId}) was found on the disks${skipped.length ? ` (${skipped.map((s) => s.message).join('; ')})` : ''}`);
  const mounts: Mounts = new Map(found.map((f) => [f.volumeId, f.mountPoint]));
  say(`found ${found.length} volume(s): ${found.map((f) => `${f.volumeId} (${f.device})`).join(', ')}`);
  say('listing the slices on the volumes');
  const slices = await indexSlices(mounts);
  const probe = (r: { id: string; volumes: readonly number[] }) => countSlices(slices, r);

  let state: RestoreState;
  let report = newReport();
  let chosen: PointerEntry | null = null;
  const unreadable: RestoreResult['unreadable'] = [];
  if (!opts.journalOnly) {
    const copies: Pointer[] = [];
    for (const f of found) {
      const p = await readPointer(f.mountPoint);
      if (p instanceof Error) say(`volume ${f.volumeId}: its snapshot pointer does not read (${p.message}); the others are used`);
      else if (p) copies.push(p);
    }
    const known = knownSnapshots(copies);
    if (!known.length) throw new RestoreError(`no snapshot pointer on any of the ${found.length} volume(s) found: no snapshot was ever taken (or none survived). Run 'hostd restore --journal-only' to rebuild from the journal alone`);
    const candidates = opts.snapshot ? known.filter((k) => k.id === opts.snapshot) : known;
    if (!candidates.length) throw new RestoreError(`unknown snapshot ${JSON.stringify(opts.snapshot)}; the volumes name: ${known.map((k) => k.id).join(', ')}`);
    let content: ReturnType<typeof decodeSnapshot> | null = null;
    for (const c of candidates) {
      say(`reading snapshot ${c.id} (${c.counts.objects} objects, ${c.record.size} bytes)`);
      try {
        const bytes = await readObject(mounts, c.record);
        content = decodeSnapshot(bytes);
        if (content.sha256 !== c.sha256) throw new Error(`its sha256 ${content.sha256} is not the one the pointer recorded (${c.sha256})`);
        if (content.header.id !== c.id) throw new Error(`the object holds snapshot ${content.header.id}, not ${c.id}`);
        chosen = c;
        break;
      } catch (err) {
        content = null;
        unreadable.push({ id: c.id, why: (err as Error).message });
        say(`snapshot ${c.id} is not usable: ${(err as Error).message}`);
      }
    }
    if (!content || !chosen) throw new RestoreError(`no usable snapshot: ${unreadable.map((u) => `${u.id}: ${u.why}`).join('; ')}`);
    say(`checking the slices of the snapshot's ${content.objects.length} objects`);
    ({ state, report } = stateFromSnapshot(content, probe, report));
  } else state = emptyState();

  say('reading the journals');
  const journal = await readJournals(mounts);
  const from = chosen ? chosen.replayFrom : 1;
  const after = journal.records.filter((r) => r.seq >= from);
  if (!opts.snapshotOnly) {
    say(`replaying ${after.length} journal record(s) from ${from}`);
    replay(state, after, probe, from, report);
  }
  if (journal.records.length && from > 1 && journal.records[0]!.seq > from) say(`warning: the journal starts at ${journal.records[0]!.seq}, after the snapshot's ${from}: records in between are lost`);

  addFoundVolumes(state, found);
  say(`writing the record database (${state.objects.size} objects)`);
  const keptAside = await writeDatabase(opts.stateDir, state, say);
  return {
    stateDir: opts.stateDir,
    volumes: { found: found.map((f) => f.volumeId).sort((a, b) => a - b), skipped: skipped.map(({ device, reason, message }) => ({ device, reason, message })) },
    snapshot: chosen ? { id: chosen.id, takenAt: new Date(chosen.takenAt).toISOString(), replayFrom: chosen.replayFrom, objects: chosen.counts.objects } : null,
    unreadable,
    journal: { records: journal.records.length, replayed: opts.snapshotOnly ? 0 : after.length, segments: journal.segments, tornTails: journal.tornTails, corruptLines: journal.corruptLines, conflicts: journal.conflicts },
    report,
    restored: { objects: state.objects.size, buckets: state.buckets.size, volumes: state.volumes.size },
    keptAside,
    ms: Date.now() - started,
  };
}

/** A volume on the disks that no record names (provisioned after the snapshot, its record lost): a record from its identity. */
function addFoundVolumes(state: RestoreState, found: FoundVolume[]): void {
  for (const f of found) {
    const had = state.volumes.get(f.volumeId) as Partial<VolumeRecord> | undefined;
    const rec: VolumeRecord = {
      id: f.volumeId,
      label: '',
      comment: '',
      isEnabled: true,
      isReadOnly: false,
      isHealthy: true,
      isDraining: false,
      isDeleted: false,
      encrypted: false,
      serial: null,
      model: null,
      createdAt: f.identity.createdAt,
      wipe: f.identity.createdAt,
      ...had,
      lastDevice: f.device,
      // the faults are not restored: their counts start over
      faults: 0,
    };
    state.volumes.set(f.volumeId, rec as unknown as { id: number });
  }
  for (const v of state.volumes.values()) (v as Record<string, unknown>).faults = 0;
  const top = Math.max(0, ...state.volumes.keys());
  const next = Number(state.meta.get('nextVolumeId') ?? 1);
  state.meta.set('nextVolumeId', Math.max(next, top + 1));
}

/** Records per write transaction. */
const BATCH = 5000;

/**
 * Write `state` as a fresh environment in <stateDir>/restore-tmp, then swap it in: the database
 * there (if any) is renamed aside first. Returns where it went.
 */
async function writeDatabase(stateDir: string, state: RestoreState, say: (line: string) => void): Promise<string | null> {
  const tmp = join(stateDir, 'restore-tmp');
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  const root = openEnvironment(tmp);
  try {
    const meta = new Metadata(root);
    await root.transaction(() => {
      for (const [name, p] of state.buckets) meta.buckets.putSync(name, p);
      for (const v of state.volumes.values()) meta.volumes.putSync(v.id, v as unknown as VolumeRecord);
      for (const [k, v] of state.meta) meta.meta.putSync(k, v);
      for (const [c, n] of containerCounts(state.paths.keys())) meta.containers.putSync(c, n);
    });
    const objects = [...state.objects.values()];
    let lastSaid = Date.now();
    for (let i = 0; i < objects.length; i += BATCH) {
      const batch = objects.slice(i, i + BATCH);
      await root.transaction(() => {
        for (const rec of batch) {
          meta.objects.putSync(rec.id, rec);
          meta.paths.putSync(rec.path, rec.id);
        }
      });
      if (Date.now() - lastSaid > 2000) {
        say(`  ${Math.min(i + BATCH, objects.length)} of ${objects.length} objects written`);
        lastSaid = Date.now();
      }
    }
    await root.flushed;
  } finally {
    await root.close();
  }
  const final = join(stateDir, ENV_FILE);
  let aside: string | null = null;
  if (await stat(final).then(() => true, () => false)) {
    aside = `${final}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await rename(final, aside);
    await rm(`${final}-lock`, { force: true });
  }
  await rename(join(tmp, ENV_FILE), final);
  await rm(tmp, { recursive: true, force: true });
  return aside;
}

