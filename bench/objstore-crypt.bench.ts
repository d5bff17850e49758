/**
 * Encryption at rest, what it costs: PUT and GET through hostd's object store on plain volumes and
 * on encrypted ones, in the same run and the same store (in this process, on loop devices: the
 * maintenance bench's BenchStore). Four plain and four encrypted volumes; each pass sets the other
 * kind read-only, so it writes to and reads from its own kind only. The passes alternate, round by
 * round (plain, encrypted; encrypted, plain; ...): on a shared machine the load moves by the
 * minute, and a run of every plain round before every encrypted one measured the load as often as
 * the cipher. Each round's ratio is kept beside the medians. The scenarios are bench/objstore's
 * (64 MiB and 4 KiB objects, 1 and 4 streams), with its load generator; each pass has its warm-up.
 * Also the bound: AES-256-GCM sealing on one core (256 KiB chunks; node:crypto and the volume's chunk cipher). Target: encrypted
 * ≥ 0.9× plain for every PUT and GET scenario (64 MiB and 4 KiB, 1 and 4 streams). Five rounds by
 * default: one round's ratio moves by ±0.3 on this 2-core machine, the median of five much less.
 *
 *   npm run bench:objstore-crypt [-- --rounds N] [--quick] [--group-threads N]   (as root: loop devices)
 *
 * Progress on stderr; stdout gets the table and, last, one JSON line {"bench":"objstore-crypt",...}.
 * Everything made (loop devices, mounts, state directory) is removed at the end, also on an error.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { ChunkCipher, SliceKeys } from '../actors/volume/chunk-cipher.js';
import { SliceSealer } from '../protocols/objstore/crypto-format.js';
import { api } from '../test/objstore/maint.js';
import { startLock } from '../test/objstore/harness.js';
import { fmt, renderTable, type Cell } from './lib/table.js';
import { BenchStore } from './maintenance/store.js';
import { Cleanup } from './objstore/cleanup.js';
import { Corpus, type Endpoint } from './objstore/client.js';
import { ratio, round, summarizeAll, type Summaries } from './objstore/report.js';
import { runEndpoint, SCENARIOS, type Results, type Sizes } from './objstore/scenarios.js';

const MIB = 1024 * 1024;
const log = (s: string) => process.stderr.write(`${s}\n`);
const TARGET = 0.9;
const KINDS = ['plain', 'encrypted'] as const;
type Kind = (typeof KINDS)[number];

/**
 * MiB/s of sealing 64 MiB in 256 KiB chunks on this thread (the median of three): with node:crypto
 * (SliceSealer, a fresh output buffer per chunk) and with the volume's chunk cipher (the native
 * addon when it is built, sealing into one reused buffer).
 */
function sealSpeed(): { node: number; volume: number; native: boolean } {
  const chunk = randomBytes(256 * 1024);
  const header = { objectId: '$0123456789abcdef01234567', index: 0, k: 4, m: 2, chunkSize: chunk.length, objectSize: 1 << 30, sliceSize: 1 << 28, sealed: { keyGen: 1 } };
  const volumeKey = randomBytes(32);
  const sealer = new SliceSealer(volumeKey, header);
  const keys = new SliceKeys(volumeKey, header);
  const cipher = new ChunkCipher();
  const out = new Uint8Array(chunk.length);
  const tag = new Uint8Array(16);
  const speed = (seal: (c: number) => void) => {
    const runs: number[] = [];
    for (let r = 0; r < 3; r++) {
      const t0 = process.hrtime.bigint();
      for (let c = 0; c < 256; c++) seal(c);
      runs.push(64 / (Number(process.hrtime.bigint() - t0) / 1e9));
    }
    return runs.sort((a, b) => a - b)[1]!;
  };
  return {
    node: speed((c) => sealer.seal(c, chunk)),
    volume: speed((c) => {
      cipher.begin(keys, c, true);
      cipher.update(chunk, out);
      cipher.sealEnd(tag);
    }),
    native: cipher.isNative,
  };
}

async function provision(store: BenchStore, devices: string[], encrypt: boolean): Promise<number[]> {
  const ids: number[] = [];
  const release = await startLock();
  try {
    for (const d of devices) {
      const r = await api<{ volume: { id: number; isEncrypted: boolean } }>(`${store.url}/$/volumes`, 'POST', { blockPath: d, wipe: Date.now(), encrypt });
      if (r.status !== 201 || r.body.volume.isEncrypted !== encrypt) throw new Error(`provisioning ${d} (encrypt ${encrypt}): HTTP ${r.status} ${JSON.stringify(r.body)}`);
      ids.push(r.body.volume.id);
    }
  } finally {
    release();
  }
  return ids;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string' }, quick: { type: 'boolean' }, 'group-threads': { type: 'string' }, help: { type: 'boolean' } } });
  if (values.help) {
    process.stdout.write('Usage: node dist/bench/objstore-crypt.bench.js [--rounds N (default 5)] [--quick] [--group-threads N (default: CPUs, as the daemon)]\n');
    return;
  }
  const groupThreads = values['group-threads'] ? Number(values['group-threads']) : availableParallelism();
  if (!Number.isSafeInteger(groupThreads) || groupThreads < 1) throw new Error(`--group-threads must be a positive integer, got ${values['group-threads']}`);
  const quick = values.quick === true;
  const rounds = values.rounds ? Number(values.rounds) : quick ? 1 : 5;
  if (!Number.isSafeInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
  const sizes: Sizes = quick ? { bigPerStream1: 2, bigPerStream4: 1, smallSeconds: 1.5, sampleBig: 1, sampleSmall: 8 } : { bigPerStream1: 4, bigPerStream4: 1, smallSeconds: 3, sampleBig: 1, sampleSmall: 16 };
  const json: Record<string, unknown> = { bench: 'objstore-crypt', quick, rounds, group_threads: groupThreads, cores: availableParallelism(), loadavg_start: loadavg() };
  const cleanup = new Cleanup();
  const onSignal = () => void cleanup.run().finally(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    log('AES-256-GCM seal speed on one core (256 KiB chunks)');
    const speeds = sealSpeed();
    const seal = speeds.volume;
    json.seal_mib_s = Math.round(speeds.node);
    json.seal_volume_mib_s = Math.round(speeds.volume);
    json.seal_volume_native = speeds.native;
    log(`  node:crypto ${speeds.node.toFixed(0)} MiB/s; the volume's chunk cipher (${speeds.native ? 'native, in place' : 'node:crypto: the addon is not built'}) ${speeds.volume.toFixed(0)} MiB/s`);

    log(`store: 8 loop devices (4 plain, 4 encrypted), ${rounds} round(s), ${groupThreads} thread(s) per shared group${quick ? ', quick' : ''}`);
    const store = await BenchStore.create(8, quick ? 2048 : 4096, cleanup);
    // The daemon's thread count for shared groups (one per CPU): the volumes' thread group is where
    // sealing and opening run, so one thread there (the maintenance bench's choice) would measure
    // a machine with one core for the cipher.
    await store.start({}, groupThreads);
    const corpus = new Corpus(64 * MIB, 8, 4096, 256);
    const ep: Endpoint = {
      key: 'hostd',
      label: 'hostd',
      url: new URL(store.url),
      bucket: 'crypt',
      createsBucket: false,
      sendContentMd5: true,
      md5Of: (h) => (typeof h['content-md5'] === 'string' ? h['content-md5'] : undefined),
      putOk: [201],
      verifyContent: true,
      pids: () => [process.pid],
    };
    const ids = { plain: await provision(store, store.devices.slice(0, 4), false), encrypted: await provision(store, store.devices.slice(4), true) };
    const setReadOnly = async (list: number[], isReadOnly: boolean) => {
      for (const id of list) {
        const r = await api(`${store.url}/$/volumes/${id}`, 'PUT', { isReadOnly });
        if (r.status !== 200) throw new Error(`volume ${id} isReadOnly ${isReadOnly}: HTTP ${r.status}`);
      }
    };
    const results: Record<Kind, Results> = { plain: {}, encrypted: {} };
    const tag = Date.now().toString(36);
    for (let r = 0; r < rounds; r++) {
      for (const kind of r % 2 === 0 ? KINDS : [...KINDS].reverse()) {
        await setReadOnly(ids[kind === 'plain' ? 'encrypted' : 'plain'], true);
        await setReadOnly(ids[kind], false);
        log(`round ${r + 1}/${rounds}: ${kind} volumes, PUT and GET`);
        const got = await runEndpoint(ep, corpus, sizes, 1, `${kind}${tag}r${r}`, []);
        for (const [key, samples] of Object.entries(got)) (results[kind][key] ??= []).push(...samples);
      }
    }
    report(summarizeAll(results.plain), summarizeAll(results.encrypted), seal, json);
  } finally {
    await cleanup.run();
  }
  json.loadavg_end = loadavg();
  process.stdout.write(JSON.stringify(json) + '\n');
}

function report(plain: Summaries, encrypted: Summaries, seal: number, json: Record<string, unknown>): void {
  const rows: Cell[][] = [];
  const out: Record<string, unknown> = {};
  for (const s of SCENARIOS) {
    const p = plain[s.key];
    const e = encrypted[s.key];
    const r = ratio(e, p);
    // Round by round (the passes of one round ran back to back): how much the ratio moves.
    const perRound = p && e ? p.rounds.map((v, i) => (v > 0 && e.rounds[i] !== undefined ? Number((e.rounds[i]! / v).toFixed(2)) : null)) : [];
    rows.push([s.label, s.unit, p ? fmt(p.value) : '-', e ? fmt(e.value) : '-', r === null ? '-' : `${r.toFixed(2)}×`, perRound.join(' '), r !== null && r >= TARGET ? 'met' : 'MISSED']);
    out[s.key] = { plain: round(p), encrypted: round(e), ratio: r === null ? null : Number(r.toFixed(3)), round_ratios: perRound };
  }
  process.stdout.write(`\nEncrypted vs plain volumes (medians; AES-256-GCM seal bound on one core, the volume's cipher: ${seal.toFixed(0)} MiB/s)\n`);
  process.stdout.write(renderTable(['scenario', 'unit', 'plain', 'encrypted', 'enc/plain', 'by round', `target ≥ ${TARGET}×`], rows) + '\n');
  json.scenarios = out;
}

main().catch((err: unknown) => {
  log(`objstore-crypt bench failed: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});
