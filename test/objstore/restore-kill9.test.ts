/**
 * The 1 000-object case, with kill -9: a store in a child process takes 1 000 objects of mixed
 * sizes and types, deletes and bucket policies; `hostd backup` copies its record database while it
 * serves; a snapshot is taken, more objects follow, and a second snapshot is killed (kill -9 of the
 * store) right after it starts. The record database is deleted; a `hostd restore` is killed -9
 * in the middle, which must leave no database behind (nothing half-written in its place); a
 * second restore completes. The store started again serves every object byte-exact with its
 * headers, the deleted ones stay deleted, and the policies hold.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { keptStateDir, startLock } from './harness.js';
import { withLoopDevices } from '../helpers/loop.js';
import { api } from './maint.js';
import { assertGone, assertObjects, childStore, dropDatabase, hostd, journalFiles, putOne, restoreKilledAt, type Stored } from './restore-helpers.js';

test('1 000 objects: backup online; kill -9 during a snapshot and during a restore leave something restorable; everything comes back', async (t) => {
  const stateDir = keptStateDir(t);
  const devices = await withLoopDevices(t, 6, 768);
  let store = await childStore(t, stateDir);
  const release = await startLock();
  try {
    for (const d of devices) {
      const r = await api(`${store.url}/$/volumes`, 'POST', { blockPath: d, wipe: Date.now() });
      if (r.status !== 201) throw new Error(`provisioning ${d}: ${r.status} ${JSON.stringify(r.body)}`);
    }
  } finally {
    release();
  }
  const live = new Map<string, Stored>();
  const sizes = [0, 17, 900, 4096, 20_000, 70_000, 250_000, 1_100_000];
  const types = ['text/plain', 'image/jpeg', 'application/pdf', 'audio/wav'];
  let next = 0;
  const putMany = async (count: number, bucket: (i: number) => string) => {
    const todo = Array.from({ length: count }, () => next++);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = todo.shift(); i !== undefined; i = todo.shift()) {
          const path = `/${bucket(i)}/${i % 7}/o${i}`;
          live.set(path, await putOne(store.url, path, randomBytes(sizes[i % sizes.length]!), types[i % types.length]));
        }
      }),
    );
  };
  await putMany(1000, (i) => ['calls', 'vault', 'misc'][i % 3]!);
  t.is(live.size, 1000);
  const deleted: string[] = [];
  for (const p of [...live.keys()].filter((p) => !p.startsWith('/vault/')).slice(0, 40)) {
    t.is((await fetch(`${store.url}${p}`, { method: 'DELETE' })).status, 204);
    live.delete(p);
    deleted.push(p);
  }
  t.is((await api(`${store.url}/$/buckets/vault/policy`, 'PUT', { deleteProtected: true })).status, 200);
  t.is((await api(`${store.url}/$/buckets/calls/policy`, 'PUT', { publicRead: true })).status, 200);

  // hostd backup while the store serves (a PUT stream running meanwhile).
  const backupDir = mkdtempSync(join(tmpdir(), 'hostd-backup-'));
  t.teardown(() => import('node:fs').then((fs) => fs.rmSync(backupDir, { recursive: true, force: true })));
  const during = putMany(20, () => 'misc');
  const backup = await hostd(['backup', join(backupDir, 'records.lmdb'), '--state-dir', stateDir], { lock: false });
  await during;
  t.is(backup.code, 0, backup.stderr);
  t.log(backup.stdout);
  t.regex(backup.stdout, /backed up .*hostd\.lmdb to .*records\.lmdb \(\d+ bytes, \d+ object records\)/);
  const inBackup = Number(/(\d+) object records/.exec(backup.stdout)![1]);
  t.true(inBackup >= 960 && inBackup <= 980, `the backup holds the records of its moment: ${inBackup}`);
  const twice = await hostd(['backup', join(backupDir, 'records.lmdb'), '--state-dir', stateDir], { lock: false });
  t.is(twice.code, 1);
  t.regex(twice.stderr, /exists already/);

  const first = await api<{ snapshot: { id: string; status: string; counts: { objects: number } } }>(`${store.url}/$/snapshots?wait=true`, 'POST');
  t.is(first.status, 201);
  t.is(first.body.snapshot.counts.objects, live.size);
  const listed = await api<{ snapshots: unknown[]; journal: unknown }>(`${store.url}/$/snapshots`);
  t.is(listed.status, 200);
  t.log(`GET /$/snapshots: ${JSON.stringify(listed.body, null, 1)}`);
  const seg = [...journalFiles(stateDir)].find(([, f]) => f.length);
  if (seg) t.log(`journal ${seg[0]}/${seg[1][0]}:\n${readFileSync(join(stateDir, 'mnt', seg[0], 'objstore', 'journal', seg[1][0]!), 'utf8').split('\n').slice(-3).join('\n')}`);
  await putMany(30, () => 'calls');
  for (const p of [...live.keys()].filter((p) => p.startsWith('/misc/')).slice(0, 10)) {
    t.is((await fetch(`${store.url}${p}`, { method: 'DELETE' })).status, 204);
    live.delete(p);
    deleted.push(p);
  }
  t.is((await fetch(`${store.url}${[...live.keys()].find((p) => p.startsWith('/vault/'))}`, { method: 'DELETE' })).status, 403);
  // kill -9 right after a snapshot starts
  const second = await api<{ snapshot: { id: string; status: string } }>(`${store.url}/$/snapshots`, 'POST');
  t.is(second.status, 202);
  t.is(second.body.snapshot.status, 'running');
  process.kill(store.proc.pid!, 'SIGKILL');
  t.is((await store.exited).signal, 'SIGKILL');
  dropDatabase(stateDir);

  // kill -9 of a restore in the middle: no database appears.
  const killed = await restoreKilledAt(['--state-dir', stateDir], /reading the journals/);
  t.is(killed.signal, 'SIGKILL', killed.stdout);
  t.false(existsSync(join(stateDir, 'hostd.lmdb')), `a killed restore leaves no database in place (${readdirSync(stateDir).join(', ')})`);

  const run = await hostd(['restore', '--state-dir', stateDir]);
  t.is(run.code, 0, run.stderr);
  t.log(run.stdout.split('\n').filter((l) => !l.startsWith('  ')).join('\n'));
  t.regex(run.stdout, /restored: \d+ objects/);
  t.false(existsSync(join(stateDir, 'restore-tmp')), 'the temporary database of the killed restore is gone');

  store = await childStore(t, stateDir);
  await assertObjects(t, store.url, live);
  await assertGone(t, store.url, deleted);
  const buckets = new Map((await api<{ buckets: Array<{ name: string; deleteProtected: boolean; publicRead: boolean }> }>(`${store.url}/$/buckets`)).body.buckets.map((b) => [b.name, b]));
  t.true(buckets.get('vault')!.deleteProtected);
  t.true(buckets.get('calls')!.publicRead);
  // The restored store takes snapshots again.
  const third = await api<{ snapshot: { status: string; counts: { objects: number } } }>(`${store.url}/$/snapshots?wait=true`, 'POST');
  t.is(third.status, 201);
  t.is(third.body.snapshot.status, 'good');
});
