/**
 * The read-only mount against GET: sequential read throughput of the same objects through the
 * FUSE mount (`dd bs=1M`) and over HTTP (`curl`), both external processes reading to /dev/null,
 * alternating, medians of the rounds (target: the mount at ≥ 0.7× GET), with the CPU each costs
 * per MiB (this process's worker threads, and the FUSE process for the mount; not dd's or curl's), which
 * a busy machine moves less than the rates; and `ls` of a container
 * with 100 000 objects (names, then `ls -l`), and of its parent, which the key-range listing
 * answers without walking the 100 000 below it.
 *
 * Setup: six loop volumes, the real supervision tree with the mount (at a temporary path), objects
 * PUT over HTTP for the reads. The 100 000 listed objects are metadata records only, written to
 * LMDB before the store starts (a listing reads nothing else; 100 000 PUTs would take the bench
 * minutes of disk work that measure PUT, not ls): their bytes are never read.
 *
 *   npm run bench:objstore-mount [-- --rounds 3 --objects 3 --object-mib 256 --listed 100000 --engine libfuse3|fuse-native]
 *   (--listed 0: the reads only, no listing)
 */
import '../workers/threadpool.js';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ActorSystem } from '../runtime/system.js';
import { openEnvironment } from '../runtime/checkpoint/store.js';
import { Metadata } from '../actors/objstore/metadata.js';
import type { ObjstoreProtocol } from '../actors/objstore/messages.js';
import { mountArgs, objstoreArgs, objstoreSupervisor, schedulerArgs } from '../actors/objstore/service.js';
import { MOUNT_ID, type MountEngine, type MountProtocol } from '../actors/objstore-mount/messages.js';
import { newObjectId } from '../protocols/objstore/object-id.js';
import { FileScope } from '../test/helpers/scope.js';
import { withLoopDevices } from '../test/helpers/loop.js';
import { median } from './lib/stats.js';
import { renderTable } from './lib/table.js';

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    objects: { type: 'string', default: '3' },
    'object-mib': { type: 'string', default: '256' },
    listed: { type: 'string', default: '100000' },
    engine: { type: 'string' },
  },
});
const ROUNDS = Number(opt.rounds);
const OBJECTS = Number(opt.objects);
const OBJECT_BYTES = Number(opt['object-mib']) * 1024 * 1024;
const LISTED = Number(opt.listed);
if (opt.engine !== undefined && opt.engine !== 'libfuse3' && opt.engine !== 'fuse-native') throw new Error(`--engine is libfuse3 or fuse-native, not ${opt.engine}`);
const ENGINE = opt.engine as MountEngine | undefined;

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => execFile(cmd, args, { maxBuffer: 256 << 20 }, (err, out, stderr) => (err ? reject(new Error(`${cmd}: ${stderr || err.message}`)) : resolve(out))));
}

/** utime + stime (ms) from a /proc/.../stat file (fields 14 and 15, in clock ticks: 100 per second here). */
function statCpuMs(file: string): number {
  const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time (ms) of the store's side: every thread of this process but the main one (the store,
 * the mount actor, the volumes; the main thread spawns dd and curl, whose fork of this large
 * process would be counted otherwise), and the FUSE process.
 */
function cpuMs(fusePid: number): number {
  let ms = statCpuMs(`/proc/${fusePid}/stat`);
  // the libfuse 3 engine's program (native/objstore-fuse), a child of the FUSE process
  for (const child of readFileSync(`/proc/${fusePid}/task/${fusePid}/children`, 'utf8').split(' ').filter(Boolean)) ms += statCpuMs(`/proc/${child}/stat`);
  for (const tid of readdirSync('/proc/self/task')) if (Number(tid) !== process.pid) ms += statCpuMs(`/proc/self/task/${tid}/stat`);
  return ms;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** The listed container's records, straight into LMDB (see the header). */
async function seedListing(stateDir: string, n: number): Promise<void> {
  const meta = new Metadata(openEnvironment(stateDir));
  const now = Date.now();
  for (let from = 0; from < n; from += 10_000) {
    const to = Math.min(n, from + 10_000);
    await meta.root.transaction(() => {
      for (let i = from; i < to; i++) {
        const id = newObjectId(now, randomBytes(6));
        const path = `/list/many/object-${String(i).padStart(6, '0')}.bin`;
        meta.objects.putSync(id, { id, path, size: 1000 + i, mime: 'application/octet-stream', md5: '0'.repeat(32), k: 4, m: 2, chunkSize: 262_144, dataVolumes: [1, 2, 3, 4], parityVolumes: [5, 6], createdAt: now });
        meta.paths.putSync(path, id);
      }
      meta.containers.putSync('/list', (meta.containers.get('/list') ?? 0) + (to - from));
      meta.containers.putSync('/list/many', (meta.containers.get('/list/many') ?? 0) + (to - from));
    });
  }
  // A sibling container, so the parent lists two entries.
  await meta.root.transaction(() => {
    const id = newObjectId(now, randomBytes(6));
    meta.objects.putSync(id, { id, path: '/list/few/one.bin', size: 1, mime: 'application/octet-stream', md5: '0'.repeat(32), k: 4, m: 2, chunkSize: 262_144, dataVolumes: [1, 2, 3, 4], parityVolumes: [5, 6], createdAt: now });
    meta.paths.putSync('/list/few/one.bin', id);
    meta.containers.putSync('/list', (meta.containers.get('/list') ?? 0) + 1);
    meta.containers.putSync('/list/few', 1);
  });
}

const scope = new FileScope();
const dir = mkdtempSync(join(tmpdir(), 'hostd-bench-mount-'));
scope.teardown(() => rmSync(dir, { recursive: true, force: true }));
const stateDir = join(dir, 'state');
const mnt = join(dir, 'mnt');
let system: ActorSystem | null = null;

try {
  const devices = await withLoopDevices(scope, 6, Math.max(1024, Math.ceil((OBJECTS * OBJECT_BYTES * 1.6) / 6 / 1024 / 1024) + 512));
  system = await ActorSystem.start({ stateDir, logLevel: 'warn' });
  if (LISTED > 0) await seedListing(stateDir, LISTED);
  const values = { ioTimeoutMs: 10_000, bodyIdleTimeoutMs: 30_000, maxObjectBytes: 1024 ** 4, scrubIntervalDays: 0, mountPath: mnt };
  await system.start(objstoreSupervisor(objstoreArgs(stateDir, values, 0, '127.0.0.1'), schedulerArgs(stateDir, values), { ...mountArgs(values), engine: ENGINE }));
  const { port } = await system.ref<ObjstoreProtocol>('objstore').request({ type: 'info' });
  const url = `http://127.0.0.1:${port}`;
  for (const d of devices) {
    const res = await fetch(`${url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ blockPath: d, wipe: Date.now() }) });
    if (res.status !== 201) throw new Error(`provisioning ${d}: ${res.status} ${await res.text()}`);
  }
  const status = await system.ref<MountProtocol>(MOUNT_ID).request({ type: 'status' });
  if (!status.mounted) throw new Error(`the mount is not served: ${status.lastError}`);

  const body = randomBytes(OBJECT_BYTES);
  const paths: string[] = [];
  for (let i = 0; i < OBJECTS; i++) {
    const path = `/bench/read-${i}.bin`;
    // On a loaded machine an upload is now and then cut (EPIPE): tried again, up to three times.
    for (let attempt = 1; ; attempt++) {
      const res = await fetch(`${url}${path}`, { method: 'PUT', body }).catch((err: Error) => err);
      if (!(res instanceof Error) && res.status === 201) break;
      const why = res instanceof Error ? `${res.message} (${(res.cause as Error | undefined)?.message})` : `${res.status} ${await res.text()}`;
      if (attempt === 3) throw new Error(`PUT ${path}: ${why}`);
      console.error(`PUT ${path} failed (${why}); again`);
    }
    paths.push(path);
  }

  const fuseRates: number[] = [];
  const getRates: number[] = [];
  const fuseCpu: number[] = [];
  const getCpu: number[] = [];
  const fusePid = status.pid!;
  const mib = OBJECT_BYTES / 1024 / 1024;
  for (let r = 0; r < ROUNDS; r++) {
    for (const path of paths) {
      const viaFuse = () => run('dd', [`if=${join(mnt, path)}`, 'of=/dev/null', 'bs=1M']);
      const viaGet = () => run('curl', ['-sf', '-o', '/dev/null', `${url}${path}`]);
      // Alternate which goes first, so neither always meets the disks' caches warmer.
      const [a, b] = r % 2 ? [viaGet, viaFuse] : [viaFuse, viaGet];
      const c0 = cpuMs(fusePid);
      const ta = await timed(a);
      const c1 = cpuMs(fusePid);
      const tb = await timed(b);
      const c2 = cpuMs(fusePid);
      const [tf, tg] = r % 2 ? [tb, ta] : [ta, tb];
      const [cf, cg] = r % 2 ? [c2 - c1, c1 - c0] : [c1 - c0, c2 - c1];
      fuseRates.push(mib / (tf / 1000));
      getRates.push(mib / (tg / 1000));
      fuseCpu.push(cf / mib);
      getCpu.push(cg / mib);
    }
  }

  const many = join(mnt, 'list/many');
  const lsNames: number[] = [];
  const lsLong: number[] = [];
  const lsParent: number[] = [];
  let listed = 0;
  for (let r = 0; r < (LISTED > 0 ? ROUNDS : 0); r++) {
    await new Promise((res) => setTimeout(res, 1100)); // past the mount's listing cache
    lsNames.push(await timed(async () => (listed = (await run('ls', ['-1', '-f', many])).split('\n').filter((l) => l && l !== '.' && l !== '..').length)));
    lsLong.push(await timed(() => run('ls', ['-l', many])));
    lsParent.push(await timed(() => run('ls', ['-1', join(mnt, 'list')])));
  }
  if (LISTED > 0 && listed !== LISTED) throw new Error(`ls listed ${listed} entries, ${LISTED} expected`);

  const fuse = median(fuseRates);
  const get = median(getRates);
  console.log(`objstore mount bench (${status.engine}): ${OBJECTS} objects of ${mib} MiB, ${ROUNDS} rounds; a container of ${LISTED} objects`);
  console.log(
    renderTable(
      ['scenario', 'median', 'unit', 'min', 'max'],
      [
        ['sequential read, FUSE (dd bs=1M)', fuse, 'MiB/s', Math.min(...fuseRates), Math.max(...fuseRates)],
        ['sequential read, GET (curl)', get, 'MiB/s', Math.min(...getRates), Math.max(...getRates)],
        ['FUSE / GET', fuse / get, '×', null, null],
        ['CPU per MiB, FUSE (daemon + FUSE process)', median(fuseCpu), 'core-ms', Math.min(...fuseCpu), Math.max(...fuseCpu)],
        ['CPU per MiB, GET (daemon)', median(getCpu), 'core-ms', Math.min(...getCpu), Math.max(...getCpu)],
        ...(LISTED > 0
          ? [
              [`ls -1 of ${LISTED} objects`, median(lsNames), 'ms', Math.min(...lsNames), Math.max(...lsNames)],
              [`ls -l of ${LISTED} objects`, median(lsLong), 'ms', Math.min(...lsLong), Math.max(...lsLong)],
              [`ls of their parent (2 entries, ${LISTED} below)`, median(lsParent), 'ms', Math.min(...lsParent), Math.max(...lsParent)],
            ]
          : []),
      ],
    ),
  );
  console.log(JSON.stringify({ bench: 'objstore-mount', engine: status.engine, objects: OBJECTS, objectMiB: mib, rounds: ROUNDS, fuseMiBs: fuse, getMiBs: get, ratio: fuse / get, fuseCpuMsPerMiB: median(fuseCpu), getCpuMsPerMiB: median(getCpu), listed: LISTED, lsNamesMs: median(lsNames), lsLongMs: median(lsLong), lsParentMs: median(lsParent) }));
} finally {
  await system?.shutdown().catch(() => undefined);
  await scope.run();
}
