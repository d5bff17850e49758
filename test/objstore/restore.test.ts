/**
 * The record database lost, rebuilt from the disks: a store on six real loop devices takes
 * objects (mixed sizes and types), bucket policies and deletes, a snapshot, then more of each;
 * it is stopped, its record database deleted, and `hostd restore` (the real command, in a child
 * process) rebuilds it. The store started again over the same disks must serve every object
 * byte-exact with its headers, keep deleted objects deleted, and follow the spec's policy rules:
 * journal replay after the snapshot does not clear delete protection set on the bucket; a
 * snapshot restore (--snapshot-only) rewrites policy to the snapshot exactly, clearing it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { keptStateDir, startStore } from './harness.js';
import { withLoopDevices } from '../helpers/loop.js';
import { api } from './maint.js';
import { assertGone, assertObjects, dropDatabase, hostd, journalFiles, putOne, type Stored } from './restore-helpers.js';

interface Snap {
  id: string;
  status: string;
  counts: { objects: number; buckets: number; volumes: number };
  sha256: string;
  objectId: string;
}

const policy = async (base: string, bucket: string, flags: Record<string, boolean>) => {
  const r = await api(`${base}/$/buckets/${bucket}/policy`, 'PUT', flags);
  if (r.status !== 200) throw new Error(`policy ${bucket}: ${r.status} ${JSON.stringify(r.body)}`);
};
const policies = async (base: string) => new Map(((await api<{ buckets: Array<{ name: string; deleteProtected: boolean; publicRead: boolean }> }>(`${base}/$/buckets`)).body.buckets).map((b) => [b.name, b]));

test('journal, snapshot, then the record database deleted: hostd restore brings back every object, every delete and the policies by the rules', async (t) => {
  const stateDir = keptStateDir(t);
  const devices = await withLoopDevices(t, 6, 512);
  const store = await startStore(t, { stateDir, devices });
  const base = store.url;
  const live = new Map<string, Stored>();
  const deleted: string[] = [];
  const sizes = [0, 1, 100, 4096, 70_000, 300_000, 3_000_000];
  const types = ['text/plain', 'image/png', 'application/json', 'video/mp4'];
  let n = 0;
  const put = async (bucket: string) => {
    const path = `/${bucket}/d${n % 3}/o${n}`;
    live.set(path, await putOne(base, path, randomBytes(sizes[n % sizes.length]!), types[n % types.length]));
    n++;
    return path;
  };
  for (let i = 0; i < 14; i++) await put(i % 2 ? 'keep' : 'media');
  await policy(base, 'keep', { deleteProtected: true });
  await policy(base, 'clearme', { deleteProtected: false, publicRead: true });
  // deleted before the snapshot
  for (const p of [...live.keys()].filter((p) => p.startsWith('/media/')).slice(0, 2)) {
    t.is((await fetch(`${base}${p}`, { method: 'DELETE' })).status, 204);
    live.delete(p);
    deleted.push(p);
  }

  // The journal is on three volumes, its records in segments.
  const files = journalFiles(stateDir);
  t.is([...files.values()].filter((f) => f.length).length, 3, `journal on three volumes: ${JSON.stringify([...files])}`);

  const taken = await api<{ snapshot: Snap }>(`${base}/$/snapshots?wait=true`, 'POST');
  t.is(taken.status, 201, JSON.stringify(taken.body));
  const snap = taken.body.snapshot;
  t.is(snap.status, 'good');
  t.is(snap.counts.objects, live.size);
  t.regex(snap.sha256, /^[0-9a-f]{64}$/);
  const list = await api<{ snapshots: Snap[]; journal: { replicas: number[]; degraded: string | null; appended: number } }>(`${base}/$/snapshots`);
  t.is(list.status, 200);
  t.deepEqual(list.body.snapshots.map((s) => [s.id, s.status]), [[snap.id, 'good']]);
  t.is(list.body.journal.replicas.length, 3);
  t.is(list.body.journal.degraded, null);
  for (const f of ['vol-1', 'vol-2', 'vol-3', 'vol-4', 'vol-5', 'vol-6']) t.true(existsSync(join(stateDir, 'mnt', f, 'objstore', 'snapshot-pointer.json')), `pointer on ${f}`);
  // The reserved bucket is delete-protected: a snapshot cannot be deleted through the object API.
  t.is((await fetch(`${base}/$${snap.objectId.slice(1)}`, { method: 'DELETE' })).status, 403);

  // After the snapshot: more objects, deletes of old and new ones, policy changes.
  for (let i = 0; i < 8; i++) await put(i % 2 ? 'keep' : 'media');
  const media = [...live.keys()].filter((p) => p.startsWith('/media/'));
  for (const p of [media[0]!, media[media.length - 1]!]) {
    t.is((await fetch(`${base}${p}`, { method: 'DELETE' })).status, 204);
    live.delete(p);
    deleted.push(p);
  }
  await policy(base, 'keep', { deleteProtected: false }); // replay must not clear this
  await policy(base, 'clearme', { deleteProtected: true }); // replay sets; the snapshot alone does not have it
  await policy(base, 'fresh', { deleteProtected: true, publicRead: true });

  await store.system.shutdown();
  dropDatabase(stateDir);

  const bad = await hostd(['restore', '--state-dir', stateDir, '--snapshot', '20200101T000000Z-000000']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /unknown snapshot "20200101T000000Z-000000"; the volumes name: \d{8}T\d{6}Z-[0-9a-f]{6}/);
  t.false(existsSync(join(stateDir, 'hostd.lmdb')), 'a failed restore writes no database');
  const notAnId = await hostd(['restore', '--state-dir', stateDir, '--snapshot', '../x'], { lock: false });
  t.is(notAnId.code, 2);
  t.regex(notAnId.stderr, /--snapshot: "..\/x" is not a snapshot id/);

  const run = await hostd(['restore', '--state-dir', stateDir]);
  t.is(run.code, 0, run.stderr);
  t.log(run.stdout);
  t.regex(run.stdout, new RegExp(`snapshot: ${snap.id} taken`));
  // The object deleted after the snapshot is left out of it (its slices are gone); the one put
  // and deleted after it is never restored (its slices are gone too).
  t.regex(run.stdout, /from the snapshot: 11 objects, .*\(1 objects dropped: slices gone\)/);
  // seven objects put after the snapshot and kept, and the snapshot object itself
  t.regex(run.stdout, /replayed: 8 puts, 0 deletes/);
  t.regex(run.stdout, new RegExp(`object ${deleted[2]} .*none of its slices is on its volumes`));
  t.regex(run.stdout, new RegExp(`put ${deleted[3]} .*only 0 of its \\d+ slices are on disk`));
  t.regex(run.stdout, /#\d+ bucket keep: deleteProtected true -> false declined/);
  t.regex(run.stdout, new RegExp(`restored: ${live.size + 1} objects`)); // and the snapshot itself

  const again = await startStore(t, { stateDir, devices, provision: false });
  await assertObjects(t, again.url, live);
  await assertGone(t, again.url, deleted);
  const pol = await policies(again.url);
  t.true(pol.get('keep')!.deleteProtected, 'journal replay does not clear protection set on the bucket');
  t.true(pol.get('clearme')!.deleteProtected, 'journal replay adds protection');
  t.true(pol.get('fresh')!.deleteProtected);
  t.true(pol.get('fresh')!.publicRead);
  t.is((await fetch(`${again.url}${[...live.keys()].find((p) => p.startsWith('/keep/'))}`, { method: 'DELETE' })).status, 403);
  // The restored store takes new objects and journals them.
  const after = await putOne(again.url, '/media/after-restore', randomBytes(5000), 'text/plain');
  t.truthy(after.id);
  await again.system.shutdown();

  // A snapshot restore alone sets policy exactly as snapshotted: it clears what the journal set.
  const refused = await hostd(['restore', '--state-dir', stateDir, '--snapshot-only']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /a record database is there already .* pass --force/);
  const only = await hostd(['restore', '--state-dir', stateDir, '--snapshot-only', '--force', '--snapshot', snap.id]);
  t.is(only.code, 0, only.stderr);
  t.regex(only.stdout, /kept as .*hostd\.lmdb\.before-restore-/);
  const third = await startStore(t, { stateDir, devices, provision: false });
  const pol2 = await policies(third.url);
  t.false(pol2.get('clearme')!.deleteProtected, 'the snapshot restore clears protection the snapshot did not have');
  t.true(pol2.get('clearme')!.publicRead);
  t.true(pol2.get('keep')!.deleteProtected);
  t.false(pol2.has('fresh') && pol2.get('fresh')!.deleteProtected);
});

test('no snapshot: restore says so and how to go on; --journal-only rebuilds from the journal; every snapshot unreadable is an error naming each', async (t) => {
  const stateDir = keptStateDir(t);
  const devices = await withLoopDevices(t, 4, 512);
  const store = await startStore(t, { stateDir, devices });
  const live = new Map<string, Stored>();
  for (let i = 0; i < 6; i++) live.set(`/b/o${i}`, await putOne(store.url, `/b/o${i}`, randomBytes(1000 * i), 'text/plain'));
  await policy(store.url, 'b', { deleteProtected: true });
  await store.system.shutdown();
  dropDatabase(stateDir);

  const none = await hostd(['restore', '--state-dir', stateDir]);
  t.is(none.code, 1);
  t.regex(none.stderr, /no snapshot pointer on any of the 4 volume\(s\) found.*hostd restore --journal-only/);
  const mixed = await hostd(['restore', '--state-dir', stateDir, '--journal-only', '--snapshot-only'], { lock: false });
  t.is(mixed.code, 1);
  t.regex(mixed.stderr, /--journal-only cannot be combined/);
  const run = await hostd(['restore', '--state-dir', stateDir, '--journal-only', '--json']);
  t.is(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout) as { snapshot: null; restored: { objects: number }; report: { applied: { put: number; policy: number } } };
  t.is(report.snapshot, null);
  t.is(report.restored.objects, 6);
  t.is(report.report.applied.policy, 1);

  const again = await startStore(t, { stateDir, devices, provision: false });
  await assertObjects(t, again.url, live);
  t.true((await policies(again.url)).get('b')!.deleteProtected);
  const snap = (await api<{ snapshot: Snap }>(`${again.url}/$/snapshots?wait=true`, 'POST')).body.snapshot;
  t.is(snap.status, 'good');
  const files = (await api<{ slices: Array<{ path: string }> }>(`${again.url}/$/fileinfo/$${snap.objectId.slice(1)}`)).body;
  await again.system.shutdown();

  // Every slice of the snapshot gone: it cannot be read, and restore says why.
  const { rmSync } = await import('node:fs');
  const paths = JSON.stringify(files).match(/"\/[^"]+\/objstore\/slices\/[^"]+"/g)!.map((p) => JSON.parse(p) as string);
  t.true(paths.length >= 2, JSON.stringify(files));
  for (const p of paths) rmSync(p);
  dropDatabase(stateDir);
  const broken = await hostd(['restore', '--state-dir', stateDir]);
  t.is(broken.code, 1);
  t.regex(broken.stderr, new RegExp(`no usable snapshot: ${snap.id}: object \\$[0-9a-f]{24} .* cannot be read: 0 good slice`));
});
