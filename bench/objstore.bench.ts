/**
 * Object store benchmark: the bounds (MD5 on one core, the erasure coder, the disks) and PUT/GET
 * throughput and small-object rate of Ceph radosgw on an erasure-coded 2+2 pool, side by side with
 * hostd's object store, in one run.
 *
 *   npx tsc -p . && node dist/bench/objstore.bench.js [options]      (as root: loop devices, Ceph)
 *
 * Progress goes to stderr; stdout gets the tables and, as its last line, one JSON line
 * {"bench":"objstore", ...}. Everything it makes (loop devices, mounts, sparse files, the Ceph
 * cluster and its directory, the sink process, hostd objects) is removed at the end, also on an
 * error or on SIGINT/SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { median, spread } from './lib/stats.js';
import { fmt, renderTable, type Cell } from './lib/table.js';
import { CephPeer, CEPH, findCephScript } from './objstore/ceph.js';
import { Cleanup } from './objstore/cleanup.js';
import { Corpus, type Endpoint, type Obj, type TransportKind } from './objstore/client.js';
import { EncodeBench, md5Speed } from './objstore/limits.js';
import { round, scenarioTable, stallNotes, summarizeAll, targets, targetTable, ratio, type Column, type Summaries } from './objstore/report.js';
import { deleteAll, runEndpoint, SCENARIOS, type Sizes } from './objstore/scenarios.js';
import { SigV4Signer, selfTest } from './objstore/sigv4.js';
import { startSink } from './objstore/sink.js';
import { LoopVolumes, type DdFigures } from './objstore/volumes.js';

const MIB = 1024 * 1024;

const HELP = `Usage: node dist/bench/objstore.bench.js [options]

Measures, in one run (medians of the rounds; progress on stderr):
  1. Node's MD5 on one core (createHash('md5'), 64 MiB in 1 MiB updates): the bound of one PUT
     stream, since the whole-object MD5 is sequential; and erasure encode 4+2 with 256 KiB shards
     through the runtime's piscina pool (workers/tasks/erasure.ts)
  2. raw sequential write and read of 6 loop volumes (sparse files, losetup --direct-io=on,
     mkfs.xfs, mount; dd with oflag=direct / iflag=direct): one volume alone, then all 6 at once
  3. Ceph radosgw on an erasure-coded 2+2 pool (shared/peers/ceph-rgw.sh up, then down and its
     directory removed): PUT and GET of 64 MiB objects (MiB/s) and 4 KiB objects (objects/s),
     1 stream and 4 streams, S3 with SigV4 (UNSIGNED-PAYLOAD)
  4. hostd's object store at --hostd-url: the same scenarios with plain PUT (Content-Length,
     Content-MD5 hex) and GET on URL/<bucket>/<name>; the ratio hostd/Ceph per scenario, and
     the targets: one PUT stream >= 75 % of the MD5 bound, one GET stream >= 1.2 GiB/s, 4 streams
     faster than 1, 4 KiB objects >= 5x Ceph's rate (each marked met or MISSED)
  Also the load generator's ceiling: the same scenarios against a Node sink server that stores
  nothing (shows what the client and loopback can carry on this machine).

The load generator runs in this process: one kept-alive connection per stream, bodies sent from
preallocated in-memory buffers, every response's size and reported MD5 checked, and after each
GET scenario a sample fetched again (untimed) with its bytes' MD5 compared.

Options:
  --rounds N          measured rounds per scenario (default 3; 1 with --quick)
  --quick             fewer and smaller runs (a smoke run)
  --no-ceph           skip Ceph radosgw
  --no-raw            skip the loop volumes
  --no-ceiling        skip the sink server
  --hostd-url URL     hostd's object store, e.g. http://127.0.0.1:80 (skipped when not given)
  --hostd-pid PID     hostd's process, for its CPU use (default: found from the listening port)
  --bucket NAME       bucket (first path segment) to use (default objbench)
  --keep-objects      do not delete the objects written to hostd
  --dir DIR           where sparse files and the Ceph directory go (default ${tmpdir()}; not tmpfs)
  --ceph-script PATH  ceph-rgw.sh (default: shared/peers/ beside the repository, or $CEPH_RGW_SCRIPT)
  --client lean|node  the load generator's HTTP client: lean (default; net.Socket reading into one
                      fixed buffer per connection) or node (node:http with keep-alive agents, which
                      tops out near 600 MiB/s per GET stream here for a whole core)
  --help              this text

Needs root for the loop volumes and Ceph (Ceph: ~2 GB RAM, ~40 s to come up).
Output: tables on stdout, then one JSON line {"bench":"objstore", ...} as the last line.`;

interface Options {
  rounds: number;
  quick: boolean;
  ceph: boolean;
  raw: boolean;
  ceiling: boolean;
  hostdUrl: URL | null;
  hostdPid: number | null;
  bucket: string;
  keepObjects: boolean;
  dir: string;
  cephScript: string | undefined;
  client: TransportKind;
}

function parseOptions(): Options | null {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'no-ceph': { type: 'boolean', default: false },
      'no-raw': { type: 'boolean', default: false },
      'no-ceiling': { type: 'boolean', default: false },
      'hostd-url': { type: 'string' },
      'hostd-pid': { type: 'string' },
      bucket: { type: 'string', default: 'objbench' },
      'keep-objects': { type: 'boolean', default: false },
      dir: { type: 'string', default: tmpdir() },
      'ceph-script': { type: 'string' },
      client: { type: 'string', default: 'lean' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  const quick = values.quick ?? false;
  const rounds = values.rounds === undefined ? (quick ? 1 : 3) : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 50) throw new Error(`--rounds must be an integer from 1 to 50, got ${values.rounds}`);
  let hostdUrl: URL | null = null;
  if (values['hostd-url'] !== undefined) {
    try {
      hostdUrl = new URL(values['hostd-url']);
    } catch {
      throw new Error(`--hostd-url: not a URL: ${values['hostd-url']}`);
    }
    if (hostdUrl.protocol !== 'http:') throw new Error(`--hostd-url must be http://, got ${hostdUrl.protocol}`);
  }
  const pid = values['hostd-pid'] === undefined ? null : Number(values['hostd-pid']);
  if (pid !== null && !(Number.isInteger(pid) && pid > 0)) throw new Error(`--hostd-pid must be a process id, got ${values['hostd-pid']}`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{1,62}$/.test(values.bucket!)) throw new Error(`--bucket: not a plain bucket name: ${values.bucket}`);
  if (values.client !== 'lean' && values.client !== 'node') throw new Error(`--client must be lean or node, got ${values.client}`);
  return {
    client: values.client,
    rounds,
    quick,
    ceph: !values['no-ceph'],
    raw: !values['no-raw'],
    ceiling: !values['no-ceiling'],
    hostdUrl,
    hostdPid: pid,
    bucket: values.bucket!,
    keepObjects: values['keep-objects'] ?? false,
    dir: values.dir!,
    cephScript: values['ceph-script'],
  };
}

const log = (s: string) => process.stderr.write(`${s}\n`);
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/** The listening process of a local TCP port, from `ss` (best effort). */
function pidOfPort(port: number): number | null {
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  const opts = parseOptions();
  if (!opts) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  selfTest(); // the SigV4 signer reproduces AWS's published example, or we stop here
  const cleanup = new Cleanup();
  const failures: string[] = [];
  const runTag = `ob${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const sizes: Sizes = opts.quick
    ? { bigPerStream1: 2, bigPerStream4: 1, smallSeconds: 1.5, sampleBig: 1, sampleSmall: 8 }
    : { bigPerStream1: 6, bigPerStream4: 2, smallSeconds: 4, sampleBig: 1, sampleSmall: 16 };
  const raw = { count: 6, sizeGiB: opts.quick ? 1 : 4, fileMiB: opts.quick ? 64 : 256 };
  log(`objstore bench: ${opts.rounds} round(s)${opts.quick ? ', quick' : ''}, run tag ${runTag}`);

  const json: Record<string, unknown> = { bench: 'objstore', quick: opts.quick, rounds: opts.rounds, cores: availableParallelism(), loadavg_start: loadavg() };
  const limitRows: Cell[][] = [];
  let md5: number | null = null;
  let ceph: Column = { title: 'Ceph', data: null, why: 'skipped (--no-ceph)' };
  let hostd: Column = { title: 'hostd', data: null, why: 'skipped: no --hostd-url given (run with --hostd-url http://127.0.0.1:80 once the object store serves)' };
  let ceiling: Column = { title: 'ceiling', data: null, why: 'skipped (--no-ceiling)' };

  try {
    // ------------------------------------------------------------ 1. MD5 and erasure coding
    log('MD5 on one core');
    md5Speed(16); // warm-up
    const md5Rounds = Array.from({ length: Math.max(3, opts.rounds) }, () => md5Speed(64));
    md5 = median(md5Rounds);
    json.md5_mib_s = md5;
    limitRows.push(['MD5, one core (createHash, 64 MiB in 1 MiB updates)', md5, 'MiB/s', `${Math.round(spread(md5Rounds) * 100)}%`, 'the bound of one PUT stream']);

    log('erasure encode 4+2, 256 KiB shards, in the piscina pool');
    const enc = new EncodeBench();
    try {
      const total = opts.quick ? 128 : 512;
      await enc.run(4, 2, 256 * 1024, 4, 32); // warm-up: threads, contexts
      const one: number[] = [];
      const four: number[] = [];
      for (let r = 0; r < Math.max(3, opts.rounds); r++) {
        one.push((await enc.run(4, 2, 256 * 1024, 1, total)).mb_s);
        four.push((await enc.run(4, 2, 256 * 1024, 4, total)).mb_s);
      }
      json.erasure = { k: 4, m: 2, shard_kib: 256, threads: enc.threads, mb_s_1_in_flight: median(one), mb_s_4_in_flight: median(four) };
      limitRows.push([`Erasure encode 4+2, 256 KiB shards, pool of ${enc.threads}, 1 task in flight`, median(one), 'MB/s', `${Math.round(spread(one) * 100)}%`, 'data bytes encoded']);
      limitRows.push([`Erasure encode 4+2, 256 KiB shards, pool of ${enc.threads}, 4 tasks in flight`, median(four), 'MB/s', `${Math.round(spread(four) * 100)}%`, '']);
    } finally {
      await enc.close();
    }

    // ------------------------------------------------------------ 2. raw loop volumes
    if (opts.raw) {
      log(`raw volumes: ${raw.count} loop volumes of ${raw.sizeGiB} GiB (sparse), xfs, dd ${raw.fileMiB} MiB each`);
      try {
        const vols = await LoopVolumes.create({ count: raw.count, sizeGiB: raw.sizeGiB, directIo: true, parent: opts.dir }, cleanup);
        await vols.prepareSource(raw.fileMiB);
        await vols.dd([vols.volumes[0]!], Math.min(64, raw.fileMiB), 'warm'); // warm-up
        const one: DdFigures[] = [];
        const all: DdFigures[] = [];
        for (let r = 0; r < opts.rounds; r++) {
          one.push(await vols.dd([vols.volumes[r % raw.count]!], raw.fileMiB, `one${r}`));
          all.push(await vols.dd(vols.volumes, raw.fileMiB, `all${r}`));
          log(`  round ${r + 1}: one write ${fmt(one.at(-1)!.write_mib_s)} read ${fmt(one.at(-1)!.read_mib_s)}; all ${raw.count} write ${fmt(all.at(-1)!.write_mib_s)} read ${fmt(all.at(-1)!.read_mib_s)} MiB/s`);
        }
        const med = (xs: DdFigures[], k: keyof DdFigures) => median(xs.map((x) => x[k]));
        const sp = (xs: DdFigures[], k: keyof DdFigures) => `${Math.round(spread(xs.map((x) => x[k])) * 100)}%`;
        const dio = vols.directIo ? 'loop direct-io on' : 'loop direct-io off (page cache below!)';
        json.raw = {
          volumes: raw.count,
          file_mib: raw.fileMiB,
          direct_io: vols.directIo,
          one: { write_mib_s: med(one, 'write_mib_s'), read_mib_s: med(one, 'read_mib_s') },
          all: { write_mib_s: med(all, 'write_mib_s'), read_mib_s: med(all, 'read_mib_s') },
        };
        limitRows.push([`Raw volume write, 1 of ${raw.count} (dd ${raw.fileMiB} MiB, oflag=direct)`, med(one, 'write_mib_s'), 'MiB/s', sp(one, 'write_mib_s'), dio]);
        limitRows.push([`Raw volume read, 1 of ${raw.count} (iflag=direct)`, med(one, 'read_mib_s'), 'MiB/s', sp(one, 'read_mib_s'), '']);
        limitRows.push([`Raw volumes write, all ${raw.count} at once (aggregate)`, med(all, 'write_mib_s'), 'MiB/s', sp(all, 'write_mib_s'), 'one virtual disk below all']);
        limitRows.push([`Raw volumes read, all ${raw.count} at once (aggregate)`, med(all, 'read_mib_s'), 'MiB/s', sp(all, 'read_mib_s'), '']);
      } catch (err) {
        failures.push(`raw volumes: ${errText(err)}`);
        limitRows.push(['Raw volumes', null, null, null, `FAILED: ${errText(err)}`]);
        json.raw = { error: errText(err) };
      } finally {
        await cleanup.run(); // unmount, detach, remove now: the disk is quiet for what follows
      }
    } else {
      limitRows.push(['Raw volumes', null, null, null, 'skipped (--no-raw)']);
      json.raw = null;
    }

    // ------------------------------------------------------------ 3. object PUT/GET
    // Bodies: 64 MiB objects as views at 16 offsets of one buffer, 4 KiB ones at 1024 offsets.
    log('preparing object bodies and their MD5s');
    const corpus = new Corpus(64 * MIB, opts.quick ? 4 : 16, 4096, 1024);

    if (opts.ceiling) {
      log('load-generator ceiling: the scenarios against a Node sink server (stores nothing)');
      try {
        const sink = await startSink();
        cleanup.add('stop the sink', sink.stop);
        const ep: Endpoint = {
          key: 'ceiling',
          label: 'sink',
          url: new URL(`http://127.0.0.1:${sink.port}`),
          bucket: opts.bucket,
          createsBucket: false,
          sendContentMd5: true,
          md5Of: (h) => (typeof h['content-md5'] === 'string' ? h['content-md5'] : undefined),
          putOk: [201],
          verifyContent: false,
          pids: () => [sink.pid],
        };
        ceiling = { title: 'ceiling', data: summarizeAll(await runEndpoint(ep, corpus, sizes, opts.rounds, runTag, [], opts.client)) };
      } catch (err) {
        failures.push(`ceiling: ${errText(err)}`);
        ceiling = { title: 'ceiling', data: null, why: `FAILED: ${errText(err)}` };
      } finally {
        await cleanup.run();
      }
    }

    if (opts.ceph) {
      try {
        const script = findCephScript(opts.cephScript);
        log(`Ceph radosgw: ${script} up (about 35-50 s, ~2 GB RAM)`);
        const peer = await CephPeer.up(script, opts.dir, cleanup);
        log(`  Ceph up in ${peer.upSeconds.toFixed(0)} s at ${peer.endpoint.href}`);
        const ep: Endpoint = {
          key: 'ceph',
          label: 'Ceph',
          url: peer.endpoint,
          bucket: opts.bucket,
          createsBucket: true,
          signer: new SigV4Signer(CEPH),
          sendContentMd5: false,
          md5Of: (h) => (typeof h.etag === 'string' ? h.etag.replace(/"/g, '') : undefined),
          putOk: [200],
          verifyContent: true,
          pids: () => peer.pids(),
        };
        const data = summarizeAll(await runEndpoint(ep, corpus, sizes, opts.rounds, runTag, [], opts.client));
        ceph = { title: 'Ceph', data };
        json.ceph_up_s = peer.upSeconds;
      } catch (err) {
        failures.push(`Ceph: ${errText(err)}`);
        ceph = { title: 'Ceph', data: null, why: `FAILED: ${errText(err)}` };
      } finally {
        await cleanup.run(); // down and rm -rf DIR at once: 2 GB back before hostd runs
      }
    }

    if (opts.hostdUrl) {
      const url = opts.hostdUrl;
      const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
      const pid = opts.hostdPid ?? (local ? pidOfPort(Number(url.port || 80)) : null);
      const written: Obj[] = [];
      const ep: Endpoint = {
        key: 'hostd',
        label: 'hostd',
        url,
        bucket: opts.bucket,
        createsBucket: false,
        sendContentMd5: true,
        md5Of: (h) => (typeof h['content-md5'] === 'string' ? h['content-md5'] : undefined),
        putOk: [201],
        verifyContent: true,
        pids: () => (pid ? [pid] : []),
      };
      log(`hostd object store at ${url.href}${pid ? ` (pid ${pid})` : ' (pid unknown: no server CPU figure)'}`);
      try {
        hostd = { title: 'hostd', data: summarizeAll(await runEndpoint(ep, corpus, sizes, opts.rounds, runTag, written, opts.client)) };
      } catch (err) {
        failures.push(`hostd: ${errText(err)}`);
        hostd = { title: 'hostd', data: null, why: `FAILED: ${errText(err)}` };
      } finally {
        if (!opts.keepObjects && written.length) {
          log(`  deleting the ${written.length} objects written to hostd`);
          const d = await deleteAll(ep, corpus, written);
          log(`  deleted ${d.deleted}, failed ${d.failed}`);
          json.hostd_deleted = d;
        }
      }
    }
  } finally {
    await cleanup.run();
    cleanup.close();
  }

  // ------------------------------------------------------------ report
  const ts = targets(md5, hostd.data, ceph.data, hostd.data ? '' : 'hostd not run', ceph.data ? '' : 'Ceph not run');
  const out: string[] = [];
  out.push(`objstore benchmark: ${availableParallelism()} cores, medians of ${opts.rounds} round(s)${opts.quick ? ' (quick)' : ''}; load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  out.push('');
  out.push(renderTable(['limit', 'median', 'unit', '±', 'note'], limitRows));
  out.push('');
  out.push(`Object PUT/GET: 64 MiB objects in MiB/s, 4 KiB objects in objects/s; p50 ms = median request time;`);
  out.push(`± = (max - min) / median of the rounds; cpu c/s = cores used by the load generator / by the server.`);
  out.push(scenarioTable(ceph, hostd, ceiling));
  const notes = stallNotes([ceph, hostd, ceiling]);
  if (notes.length) out.push(...notes.map((n) => `note: ${n}`));
  out.push('');
  out.push(targetTable(ts));
  if (failures.length) out.push('', ...failures.map((f) => `FAILED: ${f}`));
  process.stdout.write(`${out.join('\n')}\n`);

  const scen = (c: Column) => (c.data ? pick(c.data) : null);
  Object.assign(json, {
    client: opts.client,
    sigv4: 'hand-written (node:crypto), UNSIGNED-PAYLOAD',
    ceph: ceph.data ? scen(ceph) : { skipped: ceph.why },
    hostd: hostd.data ? { url: opts.hostdUrl?.href, ...scen(hostd) } : { skipped: hostd.why },
    ceiling: ceiling.data ? scen(ceiling) : { skipped: ceiling.why },
    ratio_hostd_ceph: Object.fromEntries(SCENARIOS.map((s) => [s.key, ratio(hostd.data?.[s.key], ceph.data?.[s.key])])),
    targets: ts.map((t) => ({ name: t.name, want: t.want, measured: t.measured, met: t.met, ...(t.why ? { why: t.why } : {}) })),
    notes,
    failures,
    loadavg_end: loadavg(),
  });
  process.stdout.write(`${JSON.stringify(round(json))}\n`);
  return failures.length ? 1 : 0;
}

/** The figures of each scenario for the JSON line. */
function pick(s: Summaries): Record<string, unknown> {
  return Object.fromEntries(
    SCENARIOS.map((sc) => {
      const x = s[sc.key];
      return [sc.key, x ? { value: x.value, unit: sc.unit, p50_ms: x.p50_ms, p99_ms: x.p99_ms, client_cpu: x.client_cpu, server_cpu: x.server_cpu, spread: x.spread, rounds: x.rounds } : null];
    }),
  );
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`objstore bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
