/**
 * `hostd recover --from-disks` on real loop devices: objects of mixed sizes (empty, one chunk, many
 * stripes) on four volumes, one of them encrypted, a fifth volume added and another drained onto it
 * (moved slices carry their record sidecars), an old-format (version 1) slice put on a disk by
 * hand; then the store is stopped, its record database deleted, and the records rebuilt from the
 * disks by the real command. Every object reads back byte-exact with its headers; the old slice
 * is reported; a running store, a database in place, no volumes and bad options are refused.
 *
 * The store runs in a child process (store-child.ts): the recover command must see no other
 * process holding the record database, and this test process never opens it.
 */
import test from 'ava';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32c } from '@node-rs/crc32';
import { encodeSliceHeader } from '../../protocols/objstore/slice-format.js';
import type { RecoveryReport } from '../../actors/objstore/recovery/recover.js';
import { attachLoop, createSparseFile, loopDir, withLoopDevices } from '../helpers/loop.js';
import { FileScope, keptStateDir, startLock } from './harness.js';
import { api, settled, waitFor } from './maint.js';

const CHILD = fileURLToPath(new URL('./store-child.js', import.meta.url));
const BIN = fileURLToPath(new URL('../../workers/main.js', import.meta.url));
const scope = new FileScope();

interface Expected {
  body: Buffer;
  type: string;
  md5: string;
  id: string;
}

interface Shared {
  stateDir: string;
  devices: string[];
  objects: Map<string, Expected>;
  /** the object id of the version-1 slice put on volume 3 by hand */
  oldId: string;
  moved: number;
}
let shared: Shared | null = null;
const ctx = () => {
  if (!shared) throw new Error('set-up failed (test.before)');
  return shared;
};

const children = new Set<ChildProcess>();
test.after.always(async () => {
  await Promise.all([...children].map((c) => new Promise((r) => (c.once('exit', r), c.kill('SIGKILL')))));
  await scope.run();
});

/** A store in a child process over `stateDir`; resolves with its URL and a stop function. */
function startChild(stateDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = spawn(process.execPath, ['--enable-source-maps', CHILD, JSON.stringify({ stateDir, scheduler: { moveGraceMs: 300 } })], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  const exited = new Promise<void>((r) => proc.on('exit', () => (children.delete(proc), r())));
  let err = '';
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err = (err + c).slice(-4000);
    if (process.env.TEST_LOG_LEVEL) process.stderr.write(`[child ${proc.pid} stderr] ${c}`);
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    let done = false;
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => {
      if (process.env.TEST_LOG_LEVEL) process.stderr.write(`[child ${proc.pid}] ${c}`);
      buf += c;
      const m = /\{"url":"([^"]+)"\}/.exec(buf);
      if (m && !done) {
        done = true;
        resolve({ url: m[1]!, stop: async () => (proc.kill('SIGKILL'), await exited) });
      }
      if (buf.length > 100_000) buf = buf.slice(-1000);
    });
    void exited.then(() => done || reject(new Error(`the store child exited before serving: ${err}`)));
  });
}

function hostd(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 300_000, maxBuffer: 64 << 20 }, (e, stdout, stderr) => resolve({ code: e ? ((e as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

/** The recover command, under the harness's start lock (it may mount disks to read their identity). */
async function recover(args: string[]) {
  const release = await startLock();
  try {
    return await hostd(['recover', ...args]);
  } finally {
    release();
  }
}

async function provision(url: string, device: string, encrypt = false): Promise<number> {
  const release = await startLock();
  try {
    const r = await api<{ volume: { id: number } }>(`${url}/$/volumes`, 'POST', { blockPath: device, wipe: Date.now(), encrypt });
    if (r.status !== 201) throw new Error(`provisioning ${device}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.volume.id;
  } finally {
    release();
  }
}

/** Files below `dir` (none when it does not exist). */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const envFiles = (stateDir: string) => [join(stateDir, 'hostd.lmdb'), join(stateDir, 'hostd.lmdb-lock')];

test.before(async () => {
  const devices = await withLoopDevices(scope, 5, 400);
  const stateDir = keptStateDir(scope, 'hostd-recover-');
  const store = await startChild(stateDir);
  try {
    await provision(store.url, devices[0]!, true);
    for (const d of devices.slice(1, 4)) await provision(store.url, d);
    const objects = new Map<string, Expected>();
    const kinds: Array<[string, number, string]> = [
      ['/rec/empty', 0, 'application/x-empty'],
      ['/rec/one-byte', 1, 'text/plain'],
      ['/rec/small.json', 4000, 'application/json'],
      ['/rec/dir/one-chunk.bin', 200_000, 'application/octet-stream'],
      ['/rec/dir/deep/many-stripes.wav', 3 * 1024 * 1024 + 17, 'audio/wav'],
      ['/rec2/naïve name.txt', 9000, 'text/plain; charset=utf-8'],
    ];
    for (const [path, size, type] of kinds) {
      const body = randomBytes(size);
      const res = await fetch(`${store.url}${encodeURI(path)}`, { method: 'PUT', body, headers: { 'Content-Type': type } });
      if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
      const info = await fetch(`${store.url}${encodeURI(path)}`, { method: 'HEAD' });
      objects.set(path, { body, type, md5: md5(body), id: info.headers.get('x-object-id')! });
    }
    // A fifth volume, then volume 2 drained onto it: its slices move (with new sidecars).
    await provision(store.url, devices[4]!);
    const start = await api(`${store.url}/$/volumes/2/drain`, 'POST');
    if (start.status !== 202 && start.status !== 200) throw new Error(`drain: ${start.status} ${JSON.stringify(start.body)}`);
    const drain = await waitFor('the drain of volume 2', async () => {
      const r = await api<{ drain: { state: string; copied: number; reconstructed: number } }>(`${store.url}/$/volumes/2/drain`);
      return r.body.drain?.state === 'completed' ? r.body.drain : null;
    }, 120_000);
    await settled(store.url);
    const moved = drain.copied + drain.reconstructed;
    // An old-format slice, as a build before sidecars wrote it: version 1, no record sidecar.
    const mounts = await api<{ volumes: Array<{ id: number; mountPoint: string }> }>(`${store.url}/$/volumes`);
    const v3 = mounts.body.volumes.find((v) => v.id === 3)!.mountPoint;
    const oldId = '$00000000000000000000abcd';
    const payload = Buffer.from('hello');
    const header = encodeSliceHeader({ objectId: oldId, index: 0, k: 1, m: 0, chunkSize: 8, objectSize: 5, sliceSize: 5, legacy: 1 });
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32c(payload));
    mkdirSync(join(v3, 'objstore/slices/cd'), { recursive: true });
    writeFileSync(join(v3, 'objstore/slices/cd', '00000000000000000000abcd.0'), Buffer.concat([header, payload, crc]));
    shared = { stateDir, devices, objects, oldId, moved };
  } finally {
    await store.stop();
  }
});

test.serial('refused while a store has the record database open, naming the process', async (t) => {
  const { stateDir } = ctx();
  const store = await startChild(stateDir);
  t.teardown(() => store.stop());
  const r = await recover(['--from-disks', '--state-dir', stateDir, '--force']);
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /hostd recover: the daemon is running: pid \d+ \(.*store-child.*\) has .*hostd\.lmdb.* open\. Stop it first/);
  t.true(existsSync(join(stateDir, 'hostd.lmdb')), 'nothing was touched');
  t.log(`$ hostd recover --from-disks --state-dir ${stateDir} --force\n${r.stderr}`);
});

test.serial('refused while a record database is in place without --force; bad options refused', async (t) => {
  const { stateDir } = ctx();
  const r = await recover(['--from-disks', '--state-dir', stateDir]);
  t.is(r.code, 1);
  t.regex(r.stderr, /a record database exists at .*hostd\.lmdb: recover --from-disks replaces it.*pass --force/);
  t.log(`$ hostd recover --from-disks --state-dir ${stateDir}\n${r.stderr}`);
  const noSource = await hostd(['recover', '--state-dir', stateDir]);
  t.is(noSource.code, 2);
  t.regex(noSource.stderr, /say where to recover from: --from-disks/);
  const unknown = await hostd(['recover', '--from-disks', '--bogus']);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /Unknown option '--bogus'.*hostd recover --help/);
  const devs = await hostd(['recover', '--from-disks', '--state-dir', stateDir, '--devices', 'sdb']);
  t.is(devs.code, 2);
  t.regex(devs.stderr, /--devices must list block devices like \/dev\/sdb/);
  const missing = await hostd(['recover', '--from-disks', '--state-dir', join(stateDir, 'nope')]);
  t.is(missing.code, 1);
  t.regex(missing.stderr, /the state directory .*nope does not exist/);
  const help = await hostd(['recover', '--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /Usage: hostd recover --from-disks/);
});

test.serial('no volume on the devices given: refused, nothing written', async (t) => {
  const { stateDir } = ctx();
  const file = join(loopDir(scope), 'blank.img');
  await createSparseFile(file, 64);
  const blank = await attachLoop(file);
  scope.teardown(() => void execFile('losetup', ['-d', blank], () => undefined));
  const empty = keptStateDir(scope, 'hostd-recover-empty-');
  writeFileSync(join(empty, 'instance-id'), '0b7e2c1a-1234-4abc-8def-0123456789ab\n');
  const r = await recover(['--from-disks', '--state-dir', empty, '--devices', blank]);
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /no volume of installation 0b7e2c1a-1234-4abc-8def-0123456789ab was found on the devices \/dev\/loop\d+: nothing to recover from/);
  t.false(existsSync(join(empty, 'hostd.lmdb')));
  t.log(`$ hostd recover --from-disks --state-dir ${empty} --devices ${blank}\n${r.stderr}`);
  t.truthy(stateDir);
});

test.serial('the record database deleted: a dry run reports, the recovery rebuilds every object byte-exact with its headers', async (t) => {
  const { stateDir, devices, objects, oldId, moved } = ctx();
  t.true(moved > 0, 'the drain moved slices');
  for (const f of envFiles(stateDir)) rmSync(f, { force: true });

  const dry = await recover(['--from-disks', '--state-dir', stateDir, '--devices', devices.join(','), '--dry-run']);
  t.is(dry.code, 0, dry.stderr);
  t.regex(dry.stdout, /^DRY RUN \(nothing written\)/);
  t.regex(dry.stdout, new RegExp(`objects to recover: ${objects.size} `));
  t.false(existsSync(join(stateDir, 'hostd.lmdb')), 'a dry run writes nothing');
  t.log(`$ hostd recover --from-disks --dry-run\n${dry.stderr}${dry.stdout}`);

  // Without the key file the encrypted volume's sealed sidecars do not open: said, and its objects
  // still come back from the sidecars on the other volumes.
  renameSync(join(stateDir, 'objstore.key'), join(stateDir, 'objstore.key.aside'));
  const nokey = await recover(['--from-disks', '--state-dir', stateDir, '--devices', devices.join(','), '--dry-run', '--json']);
  renameSync(join(stateDir, 'objstore.key.aside'), join(stateDir, 'objstore.key'));
  t.is(nokey.code, 0, nokey.stderr);
  const nk = JSON.parse(nokey.stdout) as RecoveryReport;
  t.regex(nk.volumes[0]!.keyProblem ?? '', /the key file .*objstore\.key is missing: the sealed record sidecars of this encrypted volume cannot be opened/);
  t.is(nk.recovered, objects.size);

  const r = await recover(['--from-disks', '--state-dir', stateDir, '--devices', devices.join(','), '--json']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /finding the volumes on the disks\n/);
  t.regex(r.stderr, /scanned volume 5 \(5 of 5, \/dev\/loop\d+\): \d+ slice files/);
  const report = JSON.parse(r.stdout) as RecoveryReport;
  t.is(report.recovered, objects.size);
  t.deepEqual(report.volumes.map((v) => v.id), [1, 2, 3, 4, 5]);
  t.true(report.volumes[0]!.encrypted && report.volumes[0]!.keyProblem === null, 'the encrypted volume\'s sealed sidecars opened with the key file');
  t.is(report.volumes[1]!.sliceFiles, 0, 'the drained volume holds no slice');
  t.deepEqual(report.degraded, []);
  t.deepEqual(report.duplicates, []);
  t.is(report.skipped.length, 1);
  t.like(report.skipped[0], { objectId: oldId, reason: 'no-record-info-old-format' });
  t.regex(report.skipped[0]!.message, /^no record info \(format v1\): cannot restore path\/mime\/md5 \(1 slice file\(s\) on volume\(s\) 3; left on the disks\)$/);
  t.true(existsSync(join(stateDir, 'hostd.lmdb')));
  t.false(existsSync(join(stateDir, 'hostd.lmdb.recovering')), 'the temporary database was renamed into place');

  const store = await startChild(stateDir);
  t.teardown(() => store.stop());
  for (const [path, e] of objects) {
    const res = await fetch(`${store.url}${encodeURI(path)}`);
    t.is(res.status, 200, path);
    const got = Buffer.from(await res.arrayBuffer());
    t.is(got.byteLength, e.body.byteLength, `${path} size`);
    t.is(md5(got), e.md5, `${path} bytes`);
    t.is(res.headers.get('content-type'), e.type, `${path} Content-Type`);
    t.is(res.headers.get('content-md5'), e.md5, `${path} Content-MD5`);
    t.is(res.headers.get('etag'), `"${e.md5}"`, `${path} ETag`);
    t.is(res.headers.get('x-object-id'), e.id, `${path} keeps its object id`);
    t.false((res.headers.get('x-data-slice-volumes') + ',' + res.headers.get('x-parity-slice-volumes')).split(',').includes('2'), `${path}: no slice on the drained volume`);
  }
  const vols = await api<{ volumes: Array<{ id: number; isMissing: boolean; isEncrypted: boolean }> }>(`${store.url}/$/volumes`);
  t.deepEqual(vols.body.volumes.map((v) => [v.id, v.isMissing, v.isEncrypted]), [[1, false, true], [2, false, false], [3, false, false], [4, false, false], [5, false, false]]);
  // Sidecars go with their slices: none left on the drained volume, none after a DELETE.
  const mounts = new Map((await api<{ volumes: Array<{ id: number; mountPoint: string }> }>(`${store.url}/$/volumes`)).body.volumes.map((v) => [v.id, v.mountPoint]));
  t.deepEqual(filesUnder(join(mounts.get(2)!, 'objstore/records')), [], 'the drained volume kept no sidecar of the slices moved off it');
  // The store writes again after a recovery (volume 2 too: an operator's drain flag is not on the disks).
  const put = await fetch(`${store.url}/rec/after`, { method: 'PUT', body: 'after' });
  t.is(put.status, 201);
  const gone = objects.get('/rec/small.json')!.id.slice(1);
  const sidecarsOf = () => [...mounts.values()].flatMap((m) => filesUnder(join(m, 'objstore/records'))).filter((f) => f.includes(gone));
  t.true(sidecarsOf().length >= 2, 'the object has a sidecar beside each slice');
  t.is((await fetch(`${store.url}/rec/small.json`, { method: 'DELETE' })).status, 204);
  t.deepEqual(sidecarsOf(), [], 'DELETE removed its sidecars with its slices');
  objects.delete('/rec/small.json');
  // One sidecar as it is on a plain volume (docs/object-store.md shows it).
  const plain = filesUnder(join(mounts.get(3)!, 'objstore/records'))[0]!;
  const bytes = readFileSync(plain);
  t.log(`${plain}: ${bytes.subarray(0x1c, bytes.byteLength - 4).toString('utf8')}`);
});

test.serial('with --force, a database in place is kept aside and replaced', async (t) => {
  const { stateDir, devices, objects } = ctx();
  const r = await recover(['--from-disks', '--state-dir', stateDir, '--devices', devices.join(','), '--force']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, new RegExp(`objects recovered: ${objects.size + 1} `), 'the object PUT after the first recovery is there too (and the one deleted is not)');
  const kept = /the one in place before is kept as (\S+)\)/.exec(r.stdout);
  t.truthy(kept, r.stdout);
  t.true(existsSync(kept![1]!));
  t.log(`$ hostd recover --from-disks --force\n${r.stderr}${r.stdout}`);
  t.regex(r.stdout, /not on the disks, so not recovered:\n {2}bucket policies/);
});
