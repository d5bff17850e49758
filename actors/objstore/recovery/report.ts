/** The recovery report as text, for the operator (`hostd recover --from-disks`; --json prints the object). */
import type { RecoveryReport } from './recover.js';

const LIST_MAX = 50;

function listed<T>(items: readonly T[], line: (x: T) => string): string[] {
  const out = items.slice(0, LIST_MAX).map((x) => `  ${line(x)}`);
  if (items.length > LIST_MAX) out.push(`  ... and ${items.length - LIST_MAX} more (--json lists them all)`);
  return out;
}

export function formatReport(r: RecoveryReport): string {
  const lines: string[] = [];
  lines.push(`${r.dryRun ? 'DRY RUN (nothing written): ' : ''}recovery from the disks of installation ${r.instanceId}, state directory ${r.stateDir}`);
  lines.push(`volumes found: ${r.volumes.length}`);
  lines.push(...listed(r.volumes, (v) => `volume ${v.id}  ${v.device}  ${v.sliceFiles} slice files${v.tempFiles ? `, ${v.tempFiles} temp files (unfinished PUTs, ignored)` : ''}${v.strays ? `, ${v.strays} other files (ignored)` : ''}${v.encrypted ? ', encrypted' : ''}${v.keyProblem ? ` (${v.keyProblem})` : ''}`));
  if (r.disksSkipped.length) {
    lines.push(`disks not used: ${r.disksSkipped.length}`);
    lines.push(...listed(r.disksSkipped, (d) => `${d.device}: ${d.reason}: ${d.message}`));
  }
  if (r.volumesMissing.length) lines.push(`volumes named by the records but not found: ${r.volumesMissing.join(', ')} (recorded as missing; their slices are rebuilt by repair once the daemon runs)`);
  lines.push(`objects ${r.dryRun ? 'to recover' : 'recovered'}: ${r.recovered} (from ${r.sliceFiles} slice files)`);
  if (r.degraded.length) {
    lines.push(`  of which degraded (slices missing, repair rebuilds them): ${r.degraded.length}`);
    lines.push(...listed(r.degraded, (d) => `  ${d.objectId} ${d.path}: slice(s) ${d.missing.join(', ')} missing`));
  }
  lines.push(`objects skipped: ${r.skipped.length}`);
  lines.push(...listed(r.skipped, (s) => `${s.objectId}${s.path ? ` ${s.path}` : ''}: ${s.reason}: ${s.message}`));
  if (r.duplicates.length) {
    lines.push(`second copies of slices left on the disks (a move's old copy): ${r.duplicates.length}`);
    lines.push(...listed(r.duplicates, (d) => `${d.objectId} slice ${d.index} on volume ${d.volumeId}`));
  }
  lines.push('not on the disks, so not recovered:');
  for (const n of r.notOnDisks) lines.push(`  ${n}`);
  if (r.database) lines.push(`record database written: ${r.database.path}${r.database.keptAs ? ` (the one in place before is kept as ${r.database.keptAs})` : ''}`);
  lines.push(`done in ${(r.elapsedMs / 1000).toFixed(1)} s${r.dryRun ? '; run again without --dry-run to write the records' : '; start the daemon'}`);
  return lines.join('\n');
}
