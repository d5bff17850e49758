/**
 * Encryption at rest at the volume alone: what a plain and an encrypted volume cost to write and
 * read slices, in CPU per MiB and in MiB/s, without the store, HTTP or erasure coding around them
 * (bench/objstore-crypt measures those). Volume instances are driven directly (volume.ts), in this
 * process, on loop devices: SLICES slices of CHUNKS chunks of 256 KiB each written at once (8 appends
 * in flight per slice, as the store sends them), then read back in 16-chunk reads.
 *
 * CPU per MiB is the figure to trust on a shared machine: the throughput follows the share of the
 * cores the run gets, the CPU a MiB takes much less so. Kinds (and builds) alternate round by
 * round. `--compare DIR` also loads another build's volume code (its dist directory, e.g. a worktree
 * of main built beside this one) and runs it interleaved with this one, on volumes of its own: an
 * A/B in one process and the same minutes.
 *
 *   node dist/bench/objstore-crypt-volume.bench.js [--rounds N] [--compare ../base/dist]   (as root)
 *
 * Progress on stderr; stdout gets the table and, last, one JSON line {"bench":"objstore-crypt-volume",...}.
 * Loop devices, mounts and files are removed at the end, also on an error or a signal.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { provisionDisk } from '../actors/volume/disks.js';
import { writeKeySlots } from '../actors/volume/volume-key.js';
import type { Volume as VolumeClass } from '../actors/volume/volume.js';
import { formatPassphrase, makeKeySlots } from '../protocols/objstore/crypto-format.js';
import { attachLoop, createSparseFile, detachLoop, loopDir, mountRoot, sweepStale } from '../test/helpers/loop.js';
import { FileScope } from '../test/objstore/harness.js';
import { median } from './lib/stats.js';
import { fmt, renderTable, type Cell } from './lib/table.js';
import { Cleanup } from './objstore/cleanup.js';

const MIB = 1024 * 1024;
const CHUNK = 256 * 1024;
const CHUNKS = 84;
const SLICES = 3;
const IN_FLIGHT = 8;
const READ_CHUNKS = 16;
const KINDS = ['plain', 'encrypted'] as const;
type Kind = (typeof KINDS)[number];
const log = (s: string) => process.stderr.write(`${s}\n`);
const quiet = { warn() {}, info() {}, error() {}, debug() {}, child: () => quiet } as unknown as Logger;

interface Sample {
  cpuMsPerMiB: number;
  mibPerSec: number;
}
interface Build {
  label: string;
  Volume: typeof VolumeClass;
  volumes: Partial<Record<Kind, VolumeClass>>;
  write: Record<Kind, Sample[]>;
  read: Record<Kind, Sample[]>;
}

let nextObject = 0;
const objectId = () => '$' + (Date.now() * 1000 + nextObject++).toString(16).padStart(24, '0').slice(-24);

/** Run `fn` and measure it: the process's CPU per MiB of `mib` and the MiB per second. */
async function measure(mib: number, fn: () => Promise<void>): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { cpuMsPerMiB: (cpu.user + cpu.system) / 1000 / mib, mibPerSec: mib / secs };
}

async function writeSlices(v: VolumeClass, data: Uint8Array): Promise<string[]> {
  return Promise.all(
    Array.from({ length: SLICES }, async (_, index) => {
      const id = objectId();
      const ref = { objectId: id, index };
      await v.create(ref, { objectId: id, index, k: SLICES, m: 1, chunkSize: CHUNK, objectSize: CHUNK * CHUNKS * SLICES, sliceSize: CHUNK * CHUNKS });
      const inflight: Promise<unknown>[] = [];
      for (let c = 0; c < CHUNKS; c++) {
        inflight.push(v.append(ref, c, new Uint8Array(data.subarray(c * CHUNK, (c + 1) * CHUNK)).buffer));
        if (inflight.length >= IN_FLIGHT) await inflight.shift();
      }
      await Promise.all(inflight);
      await v.commit(ref);
      return id;
    }),
  );
}

async function readSlices(v: VolumeClass, ids: string[]): Promise<void> {
  await Promise.all(ids.map(async (id, index) => {
    for (let c = 0; c < CHUNKS; c += READ_CHUNKS) await v.read({ objectId: id, index }, c, Math.min(READ_CHUNKS, CHUNKS - c));
  }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string' }, compare: { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write('Usage: node dist/bench/objstore-crypt-volume.bench.js [--rounds N] [--compare OTHER_DIST_DIR]\n');
    return;
  }
  const rounds = values.rounds ? Number(values.rounds) : 4;
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  const builds: Build[] = [{ label: 'this build', Volume: (await import('../actors/volume/volume.js')).Volume, volumes: {}, write: { plain: [], encrypted: [] }, read: { plain: [], encrypted: [] } }];
  if (values.compare) {
    const url = pathToFileURL(join(resolve(values.compare), 'actors/volume/volume.js')).href;
    const other = (await import(url)) as { Volume: typeof VolumeClass };
    builds.push({ label: values.compare, Volume: other.Volume, volumes: {}, write: { plain: [], encrypted: [] }, read: { plain: [], encrypted: [] } });
  }
  const json: Record<string, unknown> = { bench: 'objstore-crypt-volume', rounds, slices: SLICES, chunks: CHUNKS, chunk_bytes: CHUNK, loadavg_start: loadavg() };
  const cleanup = new Cleanup();
  try {
    await sweepStale();
    const scope = new FileScope();
    cleanup.add('remove the loop devices and mounts', () => scope.run());
    const files = loopDir(scope.t);
    const devices: string[] = [];
    scope.t.teardown(async () => {
      for (const d of devices.splice(0).reverse()) await detachLoop(d).catch((err: Error) => log(`clean-up: ${d}: ${err.message}`));
    });
    const mounts = mountRoot(scope.t);
    const volumesToClose: VolumeClass[] = [];
    scope.t.teardown(async () => {
      for (const v of volumesToClose) await v.close();
    });
    let volumeId = 900;
    for (const b of builds) {
      for (const kind of KINDS) {
        const id = volumeId++;
        const file = join(files, `vol${id}.img`);
        await createSparseFile(file, 400);
        const dev = await attachLoop(file, { directIo: 'on' });
        devices.push(dev);
        const instanceId = randomUUID();
        const { mountPoint, device } = await provisionDisk({ blockPath: dev, volumeId: id, instanceId, mountRoot: mounts, createdAt: Date.now() });
        const keyFile = join(files, `vol${id}.key`);
        const kek = randomBytes(32);
        writeFileSync(keyFile, kek, { mode: 0o600 });
        if (kind === 'encrypted') {
          const slots = makeKeySlots({ volumeId: id, instanceId, keyGen: 1, volumeKey: randomBytes(32), kek, passphrase: formatPassphrase(randomBytes(20)), ivK: randomBytes(12), ivR: randomBytes(12), salt: randomBytes(16), scrypt: { logN: 10, r: 8, p: 1 } });
          await writeKeySlots(mountPoint, slots);
        }
        const v = await b.Volume.open({ volumeId: id, mountPoint, device, readOnly: false, ioTimeoutMs: 30_000, maxInflight: 16, keyFile }, quiet);
        volumesToClose.push(v);
        b.volumes[kind] = v;
      }
    }
    const data = randomBytes(CHUNK * CHUNKS);
    const mib = (SLICES * CHUNKS * CHUNK) / MIB;
    // Warm-up, not measured: the code paths, the stage and read buffers, XFS's first allocations.
    for (const b of builds) {
      for (const kind of KINDS) {
        const v = b.volumes[kind]!;
        const ids = await writeSlices(v, data);
        await readSlices(v, ids);
        for (const [index, id] of ids.entries()) await v.delete({ objectId: id, index });
      }
    }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? builds : [...builds].reverse();
      for (const b of order) {
        for (const kind of r % 2 === 0 ? KINDS : [...KINDS].reverse()) {
          const v = b.volumes[kind]!;
          let ids: string[] = [];
          b.write[kind].push(await measure(mib, async () => void (ids = await writeSlices(v, data))));
          b.read[kind].push(await measure(mib, () => readSlices(v, ids)));
          for (const [index, id] of ids.entries()) await v.delete({ objectId: id, index });
        }
      }
      log(`round ${r + 1}/${rounds} done (load ${loadavg()[0]!.toFixed(1)})`);
    }
    report(builds, json);
  } finally {
    await cleanup.run();
  }
  json.loadavg_end = loadavg();
  process.stdout.write(JSON.stringify(json) + '\n');
}

function report(builds: Build[], json: Record<string, unknown>): void {
  const rows: Cell[][] = [];
  const out: Record<string, unknown> = {};
  const med = (s: Sample[], f: (x: Sample) => number) => median(s.map(f));
  for (const b of builds) {
    const figures: Record<string, unknown> = {};
    for (const op of ['write', 'read'] as const) {
      const p = b[op].plain;
      const e = b[op].encrypted;
      const cpuP = med(p, (x) => x.cpuMsPerMiB);
      const cpuE = med(e, (x) => x.cpuMsPerMiB);
      rows.push([b.label, op, fmt(cpuP), fmt(cpuE), `${(cpuE / cpuP).toFixed(2)}×`, fmt(med(p, (x) => x.mibPerSec)), fmt(med(e, (x) => x.mibPerSec))]);
      figures[op] = { plain_cpu_ms_per_mib: cpuP, encrypted_cpu_ms_per_mib: cpuE, plain_mib_s: med(p, (x) => x.mibPerSec), encrypted_mib_s: med(e, (x) => x.mibPerSec) };
    }
    out[b.label] = figures;
  }
  process.stdout.write('\nOne volume, plain vs encrypted (medians of the rounds; CPU of the whole process per MiB)\n');
  process.stdout.write(renderTable(['build', 'op', 'plain ms/MiB', 'encrypted ms/MiB', 'enc/plain CPU', 'plain MiB/s', 'encrypted MiB/s'], rows) + '\n');
  json.builds = out;
}

main().catch((err: unknown) => {
  log(`objstore-crypt-volume bench failed: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});
