/**
 * The journal's files (actors/objstore/journal/journal.ts) on real directories standing for the
 * volumes' mounts: replicas, group commit, a volume that cannot take the journal, a torn tail
 * cut back at the next start, the sequence continuing across starts, segments dropped; what a
 * fresh install before its first volume says (once, at info).
 */
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { pino, type Logger } from 'pino';
import { Journal, journalDir, NO_VOLUME_YET, type JournalTarget } from '../../actors/objstore/journal/journal.js';
import { decodeSegment, type JournalOp } from '../../protocols/objstore/journal-format.js';

const log = pino({ level: 'silent' });
const policy = (n: number): JournalOp => ({ op: 'policy', bucket: `b${n}`, publicRead: false, publicWrite: false, deleteProtected: n % 2 === 0 });

function mounts(t: { teardown(fn: () => void): void }, n: number): JournalTarget[] {
  const root = mkdtempSync(join(tmpdir(), 'hostd-journal-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  return Array.from({ length: n }, (_, i) => {
    const mountPoint = join(root, `vol-${i + 1}`);
    mkdirSync(join(mountPoint, 'objstore'), { recursive: true });
    return { id: i + 1, busGroup: 'virtual', mountPoint };
  });
}

const recordsOn = (t: JournalTarget) =>
  readdirSync(journalDir(t.mountPoint))
    .sort()
    .flatMap((f) => decodeSegment(readFileSync(join(journalDir(t.mountPoint), f))).records);

test('appends go to three replicas, concurrent ones share a flush, and every replica holds every record', async (t) => {
  const targets = mounts(t, 5);
  const j = await Journal.open({ log, targets: () => targets });
  const seqs = await Promise.all(Array.from({ length: 50 }, (_, i) => j.append(policy(i))));
  t.deepEqual(seqs, Array.from({ length: 50 }, (_, i) => i + 1));
  const s = j.status();
  t.deepEqual(s.replicas, [1, 2, 3]);
  t.is(s.degraded, null);
  t.is(s.appended, 50);
  t.true(s.batches < 50, `group commit: ${s.batches} batches for 50 appends`);
  await j.close();
  for (const v of targets.slice(0, 3)) t.deepEqual(recordsOn(v).map((r) => r.seq), seqs);
  for (const v of targets.slice(3)) t.throws(() => readdirSync(journalDir(v.mountPoint)));
});

test('a volume that cannot take the journal: the others carry on, and it is shown; with fewer volumes than wanted it is degraded', async (t) => {
  const targets = mounts(t, 3);
  writeFileSync(journalDir(targets[1]!.mountPoint), 'not a directory');
  const j = await Journal.open({ log, targets: () => targets });
  await j.append(policy(1));
  const s = j.status();
  t.deepEqual(s.replicas, [1, 3]);
  t.is(s.failures.length, 1);
  t.is(s.failures[0]!.volumeId, 2);
  t.regex(s.failures[0]!.error, /EEXIST|ENOTDIR/);
  t.regex(s.degraded!, /on 2 volume\(s\) of the 3 wanted/);
  t.deepEqual(recordsOn(targets[0]!).map((r) => r.seq), [1]);
  await j.close();
});

test('no volume at all: appends still resolve, and the journal says it is degraded', async (t) => {
  const j = await Journal.open({ log, targets: () => [] });
  t.is(await j.append(policy(1)), 1);
  t.is(j.status().degraded, 'no volume takes the journal: records 1..1 are in the record database only');
  await j.close();
});

test('the sequence continues across starts, after a torn tail that is cut back; replayFrom waits for unsettled records', async (t) => {
  const targets = mounts(t, 3);
  let j = await Journal.open({ log, targets: () => targets });
  for (let i = 0; i < 3; i++) j.settle(await j.append(policy(i)));
  const pending = await j.append(policy(9));
  t.is(j.replayFrom(), pending);
  j.settle(pending);
  t.is(j.replayFrom(), 5);
  await j.close();
  const file = join(journalDir(targets[0]!.mountPoint), readdirSync(journalDir(targets[0]!.mountPoint))[0]!);
  appendFileSync(file, '{"op":"policy","bucket":"cut'); // a crash mid-append
  j = await Journal.open({ log, targets: () => targets });
  t.is(await j.append(policy(5)), 5);
  await j.close();
  t.deepEqual(readdirSync(journalDir(targets[0]!.mountPoint)).sort(), ['0000000000000001.jnl', '0000000000000005.jnl']);
  // An old segment keeps its torn tail (readers drop it); its whole records all read.
  t.true(decodeSegment(readFileSync(file)).tornTail);
  t.deepEqual(recordsOn(targets[0]!).map((r) => r.seq), [1, 2, 3, 4, 5]);
  // A crash during the first append of a segment: the next start reopens that segment, cut back.
  for (const v of targets) writeFileSync(join(journalDir(v.mountPoint), '0000000000000006.jnl'), '{"op":"pol');
  j = await Journal.open({ log, targets: () => targets });
  t.is(await j.append(policy(6)), 6);
  await j.close();
  const six = decodeSegment(readFileSync(join(journalDir(targets[2]!.mountPoint), '0000000000000006.jnl')));
  t.false(six.tornTail, 'the torn line was cut back before the append');
  t.deepEqual(six.records.map((r) => r.seq), [6]);
});

test('segments a snapshot made unnecessary are dropped; the one being written is kept', async (t) => {
  const targets = mounts(t, 3);
  for (let start = 0; start < 3; start++) {
    const j = await Journal.open({ log, targets: () => targets });
    await j.append(policy(start));
    await j.close();
  }
  const j = await Journal.open({ log, targets: () => targets });
  await j.append(policy(7));
  t.is(readdirSync(journalDir(targets[0]!.mountPoint)).length, 4);
  t.is(await j.dropBefore(3), 6); // segments 1 and 2 on three volumes
  t.deepEqual(readdirSync(journalDir(targets[0]!.mountPoint)).sort(), ['0000000000000003.jnl', '0000000000000004.jnl']);
  t.is(await j.dropBefore(100), 3);
  t.deepEqual(readdirSync(journalDir(targets[0]!.mountPoint)), ['0000000000000004.jnl']);
  await j.close();
});

/** A logger that keeps what was said, by level. */
function listening(): { log: Logger; said: Array<[string, string]> } {
  const said: Array<[string, string]> = [];
  const at = (level: string) => (a: unknown, b?: unknown) => said.push([level, typeof a === 'string' ? a : String(b)]);
  return { log: { info: at('info'), warn: at('warn'), error: at('error'), debug: () => undefined } as unknown as Logger, said };
}

test('a fresh install before its first volume: said once, at info, not warned; volumes registered but absent are warned', async (t) => {
  const fresh = listening();
  let j = await Journal.open({ log: fresh.log, targets: () => [], registered: () => 0 });
  for (let i = 0; i < 3; i++) j.settle(await j.append(policy(i)));
  t.deepEqual(fresh.said, [['info', `metadata journal: ${NO_VOLUME_YET}`]]);
  t.is(j.status().degraded, NO_VOLUME_YET);
  await j.close();

  // The store knows volumes but none is present: a real degradation, warned.
  const absent = listening();
  j = await Journal.open({ log: absent.log, targets: () => [], registered: () => 2 });
  j.settle(await j.append(policy(1)));
  t.true(absent.said.some(([level, msg]) => level === 'warn' && msg === 'metadata journal degraded: no volume carries the journal'), JSON.stringify(absent.said));
  t.false(absent.said.some(([level]) => level === 'info'));
  await j.close();

  // The first volume provisioned: the journal starts on it, said at info.
  const first = listening();
  const targets: JournalTarget[] = [];
  let registered = 0;
  j = await Journal.open({ log: first.log, targets: () => targets, registered: () => registered, replicas: 1 });
  j.settle(await j.append(policy(1)));
  targets.push(...mounts(t, 1));
  registered = 1;
  j.settle(await j.append(policy(2)));
  t.deepEqual(first.said.map(([level]) => level), ['info', 'info'], JSON.stringify(first.said));
  t.is(j.status().degraded, null);
  t.deepEqual(recordsOn(targets[0]!).map((r) => r.seq), [2]);
  await j.close();
});
