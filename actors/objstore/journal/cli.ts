/**
 * The object store's own commands, run without the daemon:
 *
 *   hostd restore [--snapshot ID] [--journal-only | --snapshot-only] [--force] [--json] [--state-dir DIR]
 *   hostd backup <file> [--compact] [--state-dir DIR]
 *
 * (also reachable as `hostd objstore restore|backup`: actors/objstore/commands.ts dispatches). restore rebuilds the record database from
 * the disks (restore.ts) and prints its report; backup copies the live record database while the
 * daemon serves (LMDB's own copy, inside one read transaction: a consistent copy).
 */
import { existsSync, rmSync, statSync } from 'node:fs';
import { open } from 'lmdb';
import { join, resolve as resolvePath } from 'node:path';
import { parseArgs } from 'node:util';
import { stateDirSetting } from '../../../runtime/config/daemon-settings.js';
import { resolve } from '../../../runtime/config/settings.js';
import { ENV_FILE, openEnvironment } from '../../../runtime/checkpoint/store.js';
import { isSnapshotId } from '../../../protocols/objstore/snapshot-format.js';
import { restore, RestoreError, type RestoreResult } from './restore.js';

export const RESTORE_USAGE = `Usage: hostd restore [options]

Rebuilds the object store's record database from the disks alone: the newest snapshot that reads
(or --snapshot ID), then the metadata journal after it. Run it with the daemon stopped, when the
record database is gone or damaged. A journalled object is restored only if its slices are on
disk, a journalled delete applied only if they are gone. The database there (with --force) is
kept aside, never deleted. Prints what was restored, what was skipped and why.

Options:
  --snapshot <id>       restore this snapshot (GET /$/snapshots lists them; default: the newest)
  --snapshot-only       the snapshot alone, no journal replay (bucket policies exactly as snapshotted)
  --journal-only        no snapshot: replay the whole journal (when no snapshot was ever taken)
  --force               replace a record database that is there (kept as ${ENV_FILE}.before-restore-<time>)
  --json                print the report as one JSON document (progress goes to stderr)
  --state-dir <dir>     the daemon's state directory (env HOSTD_STATE_DIR; default /var/lib/objstore)
  -h, --help            show this help`;

export const BACKUP_USAGE = `Usage: hostd backup <file> [options]

Copies the record database (the LMDB environment: object records, bucket policies, volumes, and
the daemon's checkpoints) to <file> while the daemon serves: a consistent copy, taken in one read
transaction. To restore it: stop the daemon, copy <file> to <state-dir>/${ENV_FILE}, remove
<state-dir>/${ENV_FILE}-lock, start the daemon.

Options:
  --compact             leave out free pages (slower, smaller)
  --state-dir <dir>     the daemon's state directory (env HOSTD_STATE_DIR; default /var/lib/objstore)
  -h, --help            show this help`;

function fail(msg: string, code = 2): number {
  process.stderr.write(`hostd: ${msg}\n`);
  return code;
}

/** The report, as lines for a person. */
export function reportLines(r: RestoreResult): string[] {
  const rep = r.report;
  const others = r.volumes.skipped.filter((s) => s.reason === 'other-instance').length;
  const lines = [
    `volumes found: ${r.volumes.found.join(', ')}${others ? `; ${others} disk(s) of other instances left alone` : ''}`,
    ...r.volumes.skipped.filter((s) => s.reason !== 'other-instance').map((s) => `  left unused: ${s.device}: ${s.message}`),
    r.snapshot ? `snapshot: ${r.snapshot.id} taken ${r.snapshot.takenAt}, ${r.snapshot.objects} objects, journal replayed from ${r.snapshot.replayFrom}` : 'snapshot: none (the journal alone)',
    ...r.unreadable.map((u) => `  not usable: snapshot ${u.id}: ${u.why}`),
    `journal: ${r.journal.records} records in ${r.journal.segments} segment(s), ${r.journal.replayed} replayed; ${r.journal.tornTails} torn tail(s), ${r.journal.corruptLines} corrupt line(s)${r.journal.conflicts.length ? `, conflicting records ${r.journal.conflicts.join(', ')}` : ''}`,
    `from the snapshot: ${rep.fromSnapshot.objects} objects, ${rep.fromSnapshot.buckets} bucket policies, ${rep.fromSnapshot.volumes} volumes (${rep.fromSnapshot.dropped} objects dropped: slices gone)`,
    `replayed: ${rep.applied.put} puts, ${rep.applied.delete} deletes, ${rep.applied.policy} policies, ${rep.applied.volume} volume records, ${rep.applied.move} slice moves; ${rep.alreadyPresent} puts already in the snapshot; ${rep.relaid} re-laid by a PUT's failover; ${rep.degraded} restored with slices missing`,
    `restored: ${r.restored.objects} objects, ${r.restored.buckets} bucket policies, ${r.restored.volumes} volumes in ${(r.ms / 1000).toFixed(1)} s`,
  ];
  if (rep.policiesDeclined.length) {
    lines.push(`policy changes declined (journal replay never clears delete protection): ${rep.policiesDeclined.length}`);
    for (const d of rep.policiesDeclined.slice(0, 20)) lines.push(`  #${d.seq} bucket ${d.bucket}: ${d.field} ${d.from} -> ${d.to} declined`);
  }
  if (rep.skipped.length) {
    lines.push(`skipped: ${rep.skipped.length}`);
    for (const s of rep.skipped.slice(0, 50)) lines.push(`  ${s.seq ? `#${s.seq} ` : ''}${s.op} ${s.target}: ${s.why}`);
    if (rep.skipped.length > 50) lines.push(`  … and ${rep.skipped.length - 50} more (--json lists them all)`);
  }
  if (r.keptAside) lines.push(`the database that was there is kept as ${r.keptAside}`);
  lines.push(`the record database is at ${join(r.stateDir, ENV_FILE)}: start the daemon`);
  return lines;
}

export async function restoreCommand(args: string[], out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { snapshot: { type: 'string' }, 'snapshot-only': { type: 'boolean' }, 'journal-only': { type: 'boolean' }, force: { type: 'boolean' }, json: { type: 'boolean' }, 'state-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    out(RESTORE_USAGE);
    return 0;
  }
  if (positionals.length) return fail(`restore takes no arguments (got '${positionals.join(' ')}'); see 'hostd restore --help'`);
  if (values.snapshot !== undefined && !isSnapshotId(values.snapshot)) return fail(`--snapshot: ${JSON.stringify(values.snapshot)} is not a snapshot id (like 20261126T224501Z-abcdef; GET /$/snapshots lists them)`);
  const { stateDir } = resolve({ stateDir: stateDirSetting }, { 'state-dir': values['state-dir'] });
  const progress = values.json ? (l: string) => process.stderr.write(`${l}\n`) : (l: string) => out(`… ${l}`);
  try {
    const r = await restore({ stateDir, snapshot: values.snapshot, snapshotOnly: values['snapshot-only'], journalOnly: values['journal-only'], force: values.force, progress });
    if (values.json) out(JSON.stringify(r));
    else for (const l of reportLines(r)) out(l);
    return 0;
  } catch (err) {
    if (err instanceof RestoreError) return fail(`restore: ${err.message}`, 1);
    throw err;
  }
}

export async function backupCommand(args: string[], out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { compact: { type: 'boolean' }, 'state-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  if (values.help) {
    out(BACKUP_USAGE);
    return 0;
  }
  if (positionals.length !== 1) return fail(`backup takes one argument, the file to write (got ${positionals.length}); see 'hostd backup --help'`);
  const file = resolvePath(positionals[0]!);
  if (existsSync(file)) return fail(`backup: ${file} exists already: choose a new file (a backup never overwrites one)`, 1);
  const { stateDir } = resolve({ stateDir: stateDirSetting }, { 'state-dir': values['state-dir'] });
  if (!existsSync(join(stateDir, ENV_FILE))) return fail(`backup: there is no record database in ${stateDir} (${ENV_FILE})`, 1);
  const started = Date.now();
  const root = openEnvironment(stateDir, { readOnly: true });
  try {
    await root.backup(file, values.compact ?? false);
  } finally {
    await root.close();
  }
  // Read the copy back: it must open, and hold the store's records.
  const copy = open({ path: file, readOnly: true, maxDbs: 64 });
  let objects: number;
  try {
    objects = copy.openDB({ name: 'objstore.objects' }).getKeysCount();
  } finally {
    await copy.close();
    rmSync(`${file}-lock`, { force: true });
  }
  out(`backed up ${join(stateDir, ENV_FILE)} to ${file} (${statSync(file).size} bytes, ${objects} object records) in ${Date.now() - started} ms`);
  out(`to restore it: stop the daemon, copy ${file} to ${join(stateDir, ENV_FILE)}, remove ${join(stateDir, ENV_FILE)}-lock, start the daemon`);
  return 0;
}
