/**
 * The read-only FUSE mount on a real mount: a store on six loop devices (three of them the failing disk),
 * the mount actor beside it, and the files read with the real tools (ls, stat, cat, cp,
 * sha256sum) and written with them (every write refused EROFS). One file, serial: the tests share
 * one store and one mount point. The mount point is a temporary directory (OBJSTORE_MOUNT_PATH,
 * the test-only override), so a daemon or another test on this machine is never in the way;
 * the daemon's own fixed path is checked on the supervision tree the service builds.
 *
 * Before the store starts, a stale mount (a FUSE process killed with SIGKILL: ENOTCONN) is left
 * at the mount point, as a killed daemon leaves one: the start must clear it and mount.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import anyTest, { type TestFn } from 'ava';
import { startFaultyDisk, type FaultyDisk } from '../helpers/faulty-disk.js';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';
import { MOUNT_MODULE, mountArgs, objstoreArgs, objstoreSupervisor, schedulerArgs, service } from '../../actors/objstore/service.js';
import { MOUNT_ID, MOUNT_PATH, type MountProtocol } from '../../actors/objstore-mount/messages.js';
import { objectIdTime } from '../../protocols/objstore/object-id.js';
import { DEFAULT_CHUNK_SIZE } from '../../protocols/objstore/layout.js';
import { mountPointState } from '../../actors/objstore-mount/stale.js';
import { NATIVE_FUSE, nativeFuseBuilt } from '../../actors/objstore-mount/native-mount.js';
import type { ObjstoreProtocol } from '../../actors/objstore/messages.js';
import { refusalOf } from '../../runtime/index.js';

interface Obj {
  path: string;
  id: string;
  body: Buffer;
}
const test = anyTest as TestFn<{ store: Store; mnt: string; faulty: FaultyDisk[]; objects: Obj[]; scratch: string }>;
const scope = new FileScope();
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const FAULTYFS = fileURLToPath(new URL('../fixtures/faultyfs/server.js', import.meta.url));

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { maxBuffer: 64 << 20, timeout: 120_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr })),
  );
}

/** Leave a stale FUSE mount at `dir`: a file system whose process is SIGKILLed (ENOTCONN from then on). */
async function staleMountAt(dir: string): Promise<void> {
  const backing = mkdtempSync(join(tmpdir(), 'hostd-mount-stale-'));
  scope.teardown(() => rmSync(backing, { recursive: true, force: true }));
  const proc = spawn(process.execPath, [FAULTYFS, dir, join(backing, 'img'), String(1 << 20)], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.setEncoding('utf8').on('data', (c: string) => c.includes('ready') && resolve());
    proc.once('exit', (code) => reject(new Error(`faultyfs exited ${code} before mounting`)));
  });
  proc.kill('SIGKILL');
  await new Promise((r) => proc.once('exit', r));
}

/** PUT `path` (decoded: each segment is percent-encoded here, so '%20' in a name stays '%20'). */
async function put(store: Store, path: string, body: Buffer): Promise<Obj> {
  const res = await fetch(`${store.url}${path.split('/').map(encodeURIComponent).join('/')}`, { method: 'PUT', body });
  if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
  return { path, id: res.headers.get('x-object-id')!, body };
}

test.before(async (t) => {
  const mnt = join(mkdtempSync(join(tmpdir(), 'hostd-mount-')), 'data');
  const scratch = mkdtempSync(join(tmpdir(), 'hostd-mount-scratch-'));
  scope.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  scope.teardown(async () => {
    // The mount actor unmounts on shutdown; if a failed test left it mounted, clear it anyway.
    if ((await mountPointState(mnt).catch(() => 'free')) !== 'free') await run('fusermount', ['-uz', mnt]);
    rmSync(join(mnt, '..'), { recursive: true, force: true });
  });
  await staleMountAt(mnt);
  t.is(await mountPointState(mnt), 'stale');

  const faulty: FaultyDisk[] = [];
  for (let i = 0; i < 3; i++) faulty.push(await startFaultyDisk(scope, 512));
  const good = await withLoopDevices(scope, 3, 512);
  const store = await startStore(scope, { devices: [...faulty.map((f) => f.device), ...good] });
  // The mount actor, as the service's tree has it, beside the test store (harness.ts builds the tree without it).
  await store.system.start({
    id: 'test.mount',
    children: [{ id: MOUNT_ID, module: MOUNT_MODULE, args: mountArgs({ mountPath: mnt, ioTimeoutMs: 10_000 }), placement: { mode: 'dedicated' } }],
  });

  const objects: Obj[] = [];
  const sizes: Array<[string, number]> = [
    ['empty', 0],
    ['one', 1],
    ['chunk-1', DEFAULT_CHUNK_SIZE - 1],
    ['chunk', DEFAULT_CHUNK_SIZE],
    ['chunk+1', DEFAULT_CHUNK_SIZE + 1],
    ['stripes', 5 * 1024 * 1024 + 77],
  ];
  for (const [name, size] of sizes) objects.push(await put(store, `/mnt/sizes/${name}`, randomBytes(size)));
  objects.push(await put(store, '/mnt/big', randomBytes(200 * 1024 * 1024)));
  objects.push(await put(store, '/mnt/deep/a/b/leaf.txt', Buffer.from('leaf\n')));
  objects.push(await put(store, '/other/top.bin', randomBytes(1000)));
  objects.push(await put(store, '/mnt/odd name %20 ü.txt', Buffer.from('odd\n')));
  t.context = { store, mnt, faulty, objects, scratch };
});
test.after.always(() => scope.run());

const obj = (t: { context: { objects: Obj[] } }, path: string) => t.context.objects.find((o) => o.path === path)!;

test.serial('the start cleared the stale mount and serves the store at the mount point', async (t) => {
  const status = await t.context.store.system.ref<MountProtocol>(MOUNT_ID).request({ type: 'status' });
  t.true(status.mounted);
  t.is(status.mounts, 1);
  t.is(status.path, t.context.mnt);
  // npm run build makes native/objstore-fuse (Debian libfuse3-dev): the mount is served by it.
  t.true(nativeFuseBuilt(), `${NATIVE_FUSE} is built`);
  t.is(status.engine, 'libfuse3');
  t.is(await mountPointState(t.context.mnt), 'live');
  const line = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => l.split(' ')[4] === t.context.mnt)!;
  t.regex(line, / - fuse\.objstore objstore /);
});

test.serial('ls lists buckets and containers; $<id> paths are reachable but not listed', async (t) => {
  const { mnt } = t.context;
  const root = await run('ls', ['-1', mnt]);
  t.is(root.code, 0, root.stderr);
  t.deepEqual(root.stdout.trim().split('\n'), ['mnt', 'other']);
  t.deepEqual((await run('ls', ['-1', join(mnt, 'mnt')])).stdout.trim().split('\n'), ['big', 'deep', 'odd name %20 ü.txt', 'sizes']);
  t.deepEqual((await run('ls', ['-1', join(mnt, 'mnt/sizes')])).stdout.trim().split('\n'), ['chunk', 'chunk+1', 'chunk-1', 'empty', 'one', 'stripes']);
  t.deepEqual((await run('ls', ['-1', join(mnt, 'mnt/deep/a/b')])).stdout.trim().split('\n'), ['leaf.txt']);
  // Through the mount, asynchronously only: a synchronous call would block this thread, which
  // the runtime's actor connections are brokered on (see 'the FUSE process killed').
  const dirStat = await stat(join(mnt, 'mnt/deep'));
  t.true(dirStat.isDirectory());
  t.is(dirStat.mode & 0o777, 0o555);
  const leaf = obj(t, '/mnt/deep/a/b/leaf.txt');
  t.is(await readFile(join(mnt, leaf.id), 'utf8'), 'leaf\n');
  t.true((await stat(join(mnt, leaf.id))).isFile());
  const missing = await run('ls', [join(mnt, 'mnt/nope')]);
  t.not(missing.code, 0);
  t.regex(missing.stderr, /No such file or directory/);
  await t.throwsAsync(stat(join(mnt, '$000000000000000000000000')), { code: 'ENOENT' });
  await t.throwsAsync(stat(join(mnt, 'mnt', 'x'.repeat(300))), { code: 'ENAMETOOLONG' });
});

test.serial('stat: exact sizes, read-only modes, times from the object id', async (t) => {
  for (const o of t.context.objects) {
    const out = await run('stat', ['-c', '%s %a %Y %F', join(t.context.mnt, o.path)]);
    t.is(out.code, 0, out.stderr);
    const [size, mode, mtime] = out.stdout.trim().split(' ');
    t.is(Number(size), o.body.byteLength, o.path);
    t.is(mode, '444', o.path);
    t.is(Number(mtime), Math.floor(objectIdTime(o.id) / 1000), o.path);
  }
});

test.serial('cat, cp and sha256sum give every object its bytes (0 B, 1 B, chunk ± 1, 200 MiB), by path and by $<id>', async (t) => {
  const { mnt, scratch } = t.context;
  for (const o of t.context.objects) {
    for (const file of [join(mnt, o.path), join(mnt, o.id)]) {
      const sum = await run('sha256sum', [file]);
      t.is(sum.code, 0, sum.stderr);
      t.is(sum.stdout.split(' ')[0], sha256(o.body), file);
    }
    const copy = join(scratch, 'copy');
    const cp = await run('cp', [join(mnt, o.path), copy]);
    t.is(cp.code, 0, cp.stderr);
    t.is(sha256(readFileSync(copy)), sha256(o.body), `cp ${o.path}`);
    rmSync(copy);
  }
  const cat = await run('cat', [join(mnt, 'mnt/sizes/chunk+1')]);
  t.is(Buffer.from(cat.stdout, 'latin1').byteLength, cat.stdout.length);
  const small = await run('cat', [join(mnt, 'mnt/deep/a/b/leaf.txt')]);
  t.is(small.stdout, 'leaf\n');
});

test.serial('ls -l of a container: every entry its exact size and time (the attributes a listing carries), no other container\'s', async (t) => {
  const { mnt } = t.context;
  const long = await run('ls', ['-ln', '--time-style=+%s', join(mnt, 'mnt/sizes')]);
  t.is(long.code, 0, long.stderr);
  const rows = long.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/));
  t.is(rows.length, 6);
  for (const r of rows) {
    const o = obj(t, `/mnt/sizes/${r[6]}`);
    t.is(r[0], '-r--r--r--', r.join(' '));
    t.is(Number(r[4]), o.body.length, r.join(' '));
    t.is(Number(r[5]), Math.floor(objectIdTime(o.id) / 1000), r.join(' '));
  }
  // Right after, a file of another container and the container itself are their own, not a neighbour's.
  const top = obj(t, '/other/top.bin');
  t.is((await stat(join(mnt, top.path))).size, top.body.length);
  t.true((await stat(join(mnt, 'mnt/sizes'))).isDirectory());
  t.is((await stat(join(mnt, 'mnt/sizes/stripes'))).size, obj(t, '/mnt/sizes/stripes').body.length);
});

test.serial('random-offset reads equal the object bytes; a read past the end gives nothing', async (t) => {
  const o = obj(t, '/mnt/big');
  const fh = await fsp.open(join(t.context.mnt, o.path), 'r');
  t.teardown(() => fh.close());
  for (const [pos, len] of [[0, 10], [o.body.byteLength - 5, 100], [123_456_789, 1 << 20], [DEFAULT_CHUNK_SIZE * 4 - 3, 7], [50_000_000, 300_000]] as const) {
    const buf = Buffer.alloc(len);
    const { bytesRead: n } = await fh.read(buf, 0, len, pos);
    const want = o.body.subarray(pos, pos + len);
    t.is(n, want.byteLength, `at ${pos}`);
    t.true(buf.subarray(0, n).equals(want), `at ${pos}`);
  }
  t.is((await fh.read(Buffer.alloc(10), 0, 10, o.body.byteLength + 10)).bytesRead, 0);
});

test.serial('every write fails with EROFS: write, create, mkdir, rm, mv, truncate, chmod, ln, open O_RDWR', async (t) => {
  const { mnt } = t.context;
  const file = join(mnt, 'mnt/sizes/one');
  const before = sha256(await readFile(file));
  const refused: Array<[string, () => Promise<unknown>]> = [
    ['overwrite', () => fsp.writeFile(file, 'x')],
    ['create', () => fsp.writeFile(join(mnt, 'mnt/new'), 'x')],
    ['open O_RDWR', () => fsp.open(file, 'r+')],
    ['mkdir', () => fsp.mkdir(join(mnt, 'mnt/newdir'))],
    ['mkdir bucket', () => fsp.mkdir(join(mnt, 'newbucket'))],
    ['unlink', () => fsp.unlink(file)],
    ['rmdir', () => fsp.rmdir(join(mnt, 'mnt/deep/a/b'))],
    ['rename', () => fsp.rename(file, join(mnt, 'mnt/sizes/moved'))],
    ['truncate', () => fsp.truncate(file, 0)],
    ['chmod', () => fsp.chmod(file, 0o644)],
    ['chown', () => fsp.chown(file, 1, 1)],
    ['utimes', () => fsp.utimes(file, 1, 1)],
    ['symlink', () => fsp.symlink('one', join(mnt, 'mnt/sizes/link'))],
    ['link', () => fsp.link(file, join(mnt, 'mnt/sizes/hard'))],
  ];
  for (const [what, fn] of refused) await t.throwsAsync(fn(), { code: 'EROFS' }, what);
  for (const [cmd, args] of [
    ['touch', [join(mnt, 'mnt/touched')]],
    ['mkdir', [join(mnt, 'mnt/d')]],
    ['rm', ['-f', file]],
    ['mv', [file, join(mnt, 'mnt/moved')]],
    ['truncate', ['-s', '0', file]],
    ['chmod', ['600', file]],
  ] as Array<[string, string[]]>) {
    const r = await run(cmd, args);
    t.not(r.code, 0, `${cmd} succeeded`);
    t.regex(r.stderr, /Read-only file system/, `${cmd}: ${r.stderr}`);
  }
  t.is(sha256(await readFile(file)), before);
  t.deepEqual((await run('ls', ['-1', join(mnt, 'mnt/sizes')])).stdout.trim().split('\n'), ['chunk', 'chunk+1', 'chunk-1', 'empty', 'one', 'stripes']);
});

test.serial('an object deleted over HTTP goes from the mount; a new object at the path shows its own bytes', async (t) => {
  const { store, mnt } = t.context;
  const first = await put(store, '/mnt/replaced', Buffer.from('first\n'));
  t.is(await readFile(join(mnt, 'mnt/replaced'), 'utf8'), 'first\n');
  t.is((await fetch(`${store.url}/mnt/replaced`, { method: 'DELETE' })).status, 204);
  await new Promise((r) => setTimeout(r, 1200)); // the attribute timeout (1 s)
  await t.throwsAsync(stat(join(mnt, 'mnt/replaced')), { code: 'ENOENT' });
  await t.throwsAsync(stat(join(mnt, first.id)), { code: 'ENOENT' });
  await put(store, '/mnt/replaced', Buffer.from('second, longer\n'));
  await new Promise((r) => setTimeout(r, 1200));
  t.is(await readFile(join(mnt, 'mnt/replaced'), 'utf8'), 'second, longer\n');
});

test.serial('an object with a slice on a disk that returns EIO reads byte-exact through the mount', async (t) => {
  const { mnt } = t.context;
  // A failing disk (volumes 1..3) that holds a data slice of /mnt/big: data or parity goes by free
  // space at the PUT, and only a failing data slice makes a read record a fault (4 + 2 on six
  // volumes: at least one of the three holds data).
  const info = (await (await fetch(`${t.context.store.url}/$/fileinfo/mnt/big`)).json()) as { object: { dataVolumes: number[] } };
  const volume = [1, 2, 3].find((v) => info.object.dataVolumes.includes(v))!;
  t.truthy(volume, `a failing disk holds data of /mnt/big: ${JSON.stringify(info.object)}`);
  const faulty = t.context.faulty[volume - 1]!;
  await faulty.failAll();
  t.teardown(() => faulty.heal());
  await new Promise((r) => setTimeout(r, 1200)); // nothing served from the kernel's cache of the files
  for (const path of ['/mnt/big', '/mnt/sizes/stripes', '/mnt/sizes/chunk+1']) {
    const o = obj(t, path);
    const sum = await run('sha256sum', [join(mnt, o.path)]);
    t.is(sum.code, 0, sum.stderr);
    t.is(sum.stdout.split(' ')[0], sha256(o.body), path);
  }
  // a fault is recorded beside the read (the read does not wait for it): under load it may come just after
  let faults = { faults: [] as unknown[] };
  for (let i = 0; i < 100 && faults.faults.length === 0; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    faults = (await (await fetch(`${t.context.store.url}/$/faults`)).json()) as { faults: unknown[] };
  }
  t.true(faults.faults.length >= 1, 'the bad slices were recorded as faults');
});

test.serial('more disks failing than parity covers: reads answer EIO, never unverified bytes', async (t) => {
  const { mnt, faulty } = t.context;
  for (const f of faulty) await f.failAll();
  t.teardown(async () => {
    for (const f of faulty) await f.heal();
  });
  await new Promise((r) => setTimeout(r, 1200));
  for (const path of ['/mnt/big', '/mnt/sizes/stripes']) {
    const o = obj(t, path);
    const out = await run('cat', [join(mnt, o.path)]);
    t.not(out.code, 0, `${path} read with 3 of 6 slices bad`);
    t.regex(out.stderr, /Input\/output error/, path);
    const got = Buffer.from(out.stdout, 'latin1');
    t.true(got.byteLength < o.body.byteLength, `${path}: a failed read must not look complete`);
  }
  await t.throwsAsync(readFile(join(mnt, obj(t, '/mnt/sizes/stripes').id)), { code: 'EIO' });
});

test.serial('mountRead writes into a mount windows file only: any other path or offset is refused, nothing written or created', async (t) => {
  const store = t.context.store.system.ref<ObjstoreProtocol>('objstore');
  const o = obj(t, '/mnt/sizes/stripes');
  const victim = join(t.context.scratch, 'victim');
  writeFileSync(victim, 'keep');
  const refused: Array<[string, number]> = [
    [victim, 0],
    ['relative/hostd-mount-1-x/windows', 0],
    [`${t.context.scratch}/hostd-mount-1-x/../../victim/windows`, 0],
    [`${t.context.scratch}/hostd-mount-x-1/windows`, 0],
    [`${t.context.scratch}/hostd-mount-1-x/windows`, -1],
    [`${t.context.scratch}/hostd-mount-1-x/windows`, 0.5],
  ];
  for (const [file, offset] of refused) {
    const err = await t.throwsAsync(store.request({ type: 'mountRead', id: o.id, start: 0, length: 100, file, offset }));
    t.is(refusalOf<ObjstoreProtocol>(err), 'EINVAL', `${file} at ${offset}`);
  }
  t.is(readFileSync(victim, 'utf8'), 'keep');
  // The right form, but no such file: never created (EIO: the mount that made it is gone).
  const gone = join(t.context.scratch, 'hostd-mount-1-gone', 'windows');
  const err = await t.throwsAsync(store.request({ type: 'mountRead', id: o.id, start: 0, length: 100, file: gone, offset: 0 }));
  t.is(refusalOf<ObjstoreProtocol>(err), 'EIO');
  t.false(existsSync(gone));
  // And a real one gets the object's bytes at the offset asked.
  const dir = join(t.context.scratch, 'hostd-mount-1-real');
  mkdirSync(dir);
  writeFileSync(join(dir, 'windows'), '');
  t.is(await store.request({ type: 'mountRead', id: o.id, start: 1000, length: 5000, file: join(dir, 'windows'), offset: 777 }), 5000);
  t.true(readFileSync(join(dir, 'windows')).subarray(777).equals(o.body.subarray(1000, 6000)));
});

test.serial('the FUSE process killed: the actor clears the stale mount and mounts again', async (t) => {
  const ref = t.context.store.system.ref<MountProtocol>(MOUNT_ID);
  const before = await ref.request({ type: 'status' });
  // The libfuse 3 program, a child of the FUSE process: it sees its stdin close and unmounts.
  const program = Number(readFileSync(`/proc/${before.pid}/task/${before.pid}/children`, 'utf8').trim().split(' ')[0]);
  t.true(readFileSync(`/proc/${program}/cmdline`, 'utf8').startsWith(NATIVE_FUSE), 'the program serves the mount');
  process.kill(before.pid!, 'SIGKILL');
  const deadline = Date.now() + 20_000;
  let now = before;
  while (Date.now() < deadline) {
    now = await ref.request({ type: 'status' });
    if (now.mounted && now.mounts === before.mounts + 1) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.true(now.mounted, JSON.stringify(now));
  t.is(now.mounts, before.mounts + 1);
  t.not(now.pid, before.pid);
  for (let i = 0; i < 50 && existsSync(`/proc/${program}`); i++) await new Promise((r) => setTimeout(r, 100));
  t.false(existsSync(`/proc/${program}`), 'the old program exited, not left serving');
  const o = obj(t, '/mnt/sizes/stripes');
  t.is(sha256(await readFile(join(t.context.mnt, o.path))), sha256(o.body));
});

test.serial('the mount actor stopped: the FUSE process unmounts and exits; a new instance mounts afresh (the fuse-native fallback)', async (t) => {
  const { store, mnt } = t.context;
  const before = await store.system.ref<MountProtocol>(MOUNT_ID).request({ type: 'status' });
  await store.system.stopChild(MOUNT_ID);
  t.is(await mountPointState(mnt), 'free');
  t.throws(() => process.kill(before.pid!, 0), { code: 'ESRCH' }, 'the FUSE process is gone');
  const shm = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  t.deepEqual(readdirSync(shm).filter((n) => n.startsWith(`hostd-mount-${process.pid}-`)), [], 'its windows file is removed');
  await store.system.start({
    id: 'test.mount.again',
    // fuse-native (libfuse 2), the engine used where native/objstore-fuse is not built
    children: [{ id: MOUNT_ID, module: MOUNT_MODULE, args: { ...mountArgs({ mountPath: mnt, ioTimeoutMs: 10_000 }), engine: 'fuse-native' }, placement: { mode: 'dedicated' } }],
  });
  const now = await store.system.ref<MountProtocol>(MOUNT_ID).request({ type: 'status' });
  t.true(now.mounted);
  t.is(now.mounts, 1);
  t.is(now.engine, 'fuse-native');
  t.is(readFileSync(`/proc/${now.pid}/task/${now.pid}/children`, 'utf8').trim(), '', 'no program: fuse-native serves in the FUSE process');
  const err = await writeFile(join(mnt, 'mnt/new.txt'), 'x').catch((e: NodeJS.ErrnoException) => e);
  t.is((err as NodeJS.ErrnoException | undefined)?.code, 'EROFS');
  const big = obj(t, '/mnt/big');
  t.is(sha256(await readFile(join(mnt, big.path))), sha256(big.body), 'a read over many windows, through fuse-native');
  // Async: a new actor's first message to the store is routed through this (the main) thread,
  // which a synchronous read of the mount would block (a test artifact: the daemon's main thread
  // never reads the mount).
  const o = obj(t, '/mnt/sizes/chunk');
  t.is(sha256(await readFile(join(mnt, o.path))), sha256(o.body));
});

test.serial("the daemon's tree mounts at the spec's fixed path, after the store", (t) => {
  t.is(MOUNT_PATH, '/run/objstore/data');
  const spec = objstoreSupervisor(objstoreArgs('/tmp/x', {}), schedulerArgs('/tmp/x', {}), mountArgs({}));
  const ids = spec.children.map((c) => c.id);
  t.true(ids.indexOf(MOUNT_ID) > ids.indexOf('objstore'));
  const child = spec.children.find((c) => c.id === MOUNT_ID)!;
  t.deepEqual((child as { args: unknown }).args, { path: '/run/objstore/data', store: 'objstore', ioTimeoutMs: 10_000 });
  t.deepEqual((child as { placement: unknown }).placement, { mode: 'dedicated' });
  t.false(objstoreSupervisor(objstoreArgs('/tmp/x', {}), schedulerArgs('/tmp/x', {})).children.some((c) => c.id === MOUNT_ID));
  t.is(service.settings?.mountPath?.default, MOUNT_PATH);
});
