/**
 * The metadata journal's cost and the restore's speed, in one run on real loop devices:
 *
 *   1. small-object PUT rate (4 KiB objects, --streams concurrent clients) with the journal on
 *      and off (OBJSTORE_JOURNAL), the same store and disks restarted between rounds, rounds
 *      alternating on/off; the median of each and their ratio (target: on >= 0.9 x off);
 *   2. restore time for --records object records: that many small objects PUT, a snapshot, 1 %
 *      more objects after it (journal replay), the store stopped, its record database deleted,
 *      then restore() timed (find volumes, read the snapshot from its slices, read the journals,
 *      check every object's slices on disk, write the database).
 *
 *   npm run bench:objstore-journal -- [--rounds 3] [--seconds 10] [--streams 8] [--records 100000]
 *
 * Progress on stderr; stdout gets the tables and, last, one JSON line {"bench":"objstore-journal",…}.
 * Loop devices, mounts and the state directory are removed at the end, also on an error.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './lib/stats.js';
import { fmt, renderTable } from './lib/table.js';
import { ActorSystem } from '../runtime/system.js';
import type { ObjstoreProtocol } from '../actors/objstore/messages.js';
import { restore } from '../actors/objstore/journal/restore.js';
import { cleanStateDir, FileScope, testSupervisor } from '../test/objstore/harness.js';
import { withLoopDevices } from '../test/helpers/loop.js';
import { dropDatabase } from '../test/objstore/restore-helpers.js';

const { values: opts } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, streams: { type: 'string', default: '8' }, records: { type: 'string', default: '100000' }, 'skip-restore': { type: 'boolean' } },
  strict: true,
});
const ROUNDS = Number(opts.rounds);
const SECONDS = Number(opts.seconds);
const STREAMS = Number(opts.streams);
const RECORDS = Number(opts.records);
const log = (s: string) => process.stderr.write(`${s}\n`);

interface Running {
  system: ActorSystem;
  url: string;
}

async function start(stateDir: string, journal: boolean): Promise<Running> {
  const system = await ActorSystem.start({ stateDir, logLevel: 'silent', groupThreads: 1, poolThreads: 2, requestTimeoutMs: 60_000 });
  await system.start(testSupervisor(stateDir, { values: { journal, ioTimeoutMs: 30_000 } }));
  const info = await system.ref<ObjstoreProtocol>('objstore').request({ type: 'info' });
  return { system, url: `http://127.0.0.1:${info.port}` };
}

/** PUT 4 KiB objects from `streams` clients for `seconds`, or `count` in all; objects per second. */
async function putRate(url: string, prefix: string, o: { seconds?: number; count?: number; streams: number; size?: number }): Promise<number> {
  const body = randomBytes(o.size ?? 4096);
  const until = o.seconds ? Date.now() + o.seconds * 1000 : Infinity;
  let n = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.streams }, async () => {
      for (;;) {
        if (Date.now() >= until || (o.count !== undefined && n >= o.count)) return;
        const i = n++;
        const res = await fetch(`${url}/${prefix}/o${i}`, { method: 'PUT', body });
        if (res.status !== 201) throw new Error(`PUT ${prefix}/o${i}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
        if (o.count && i % 10_000 === 0 && i) log(`  ${i} objects`);
      }
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const scope = new FileScope();
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-bench-journal-'));
  scope.teardown(() => cleanStateDir(stateDir));
  const stop = () => void scope.run().finally(() => process.exit(130));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const devices = await withLoopDevices(scope, 6, 2048);
    let store = await start(stateDir, true);
    for (const d of devices) {
      const res = await fetch(`${store.url}/$/volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ blockPath: d, wipe: Date.now() }) });
      if (res.status !== 201) throw new Error(`provisioning ${d}: ${res.status} ${await res.text()}`);
    }
    await store.system.shutdown();
    const rates: Record<'on' | 'off', number[]> = { on: [], off: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of r % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        store = await start(stateDir, mode === 'on');
        await putRate(store.url, `warm-${mode}-${r}`, { count: 200, streams: STREAMS });
        const rate = await putRate(store.url, `rate-${mode}-${r}`, { seconds: SECONDS, streams: STREAMS });
        rates[mode].push(rate);
        log(`round ${r + 1}: journal ${mode}: ${rate.toFixed(0)} PUT/s`);
        await store.system.shutdown();
      }
    }
    const on = median(rates.on);
    const off = median(rates.off);
    const ratio = on / off;
    process.stdout.write(`\nSmall-object PUT rate (4 KiB, ${STREAMS} streams, ${SECONDS} s rounds, median of ${ROUNDS})\n`);
    process.stdout.write(
      renderTable(['journal', 'PUT/s (median)', 'rounds'], [
        ['on', fmt(on), rates.on.map((x) => x.toFixed(0)).join(' ')],
        ['off', fmt(off), rates.off.map((x) => x.toFixed(0)).join(' ')],
        ['on / off', ratio.toFixed(3), ratio >= 0.9 ? 'target >= 0.9: met' : 'target >= 0.9: MISSED'],
      ]) + '\n',
    );

    let restoreOut: Record<string, number> | null = null;
    if (!opts['skip-restore']) {
      store = await start(stateDir, true);
      log(`putting ${RECORDS} small objects for the restore`);
      const putS = await putRate(store.url, 'many', { count: RECORDS, streams: 16, size: 100 });
      const snap = await fetch(`${store.url}/$/snapshots?wait=true`, { method: 'POST' });
      if (snap.status !== 201) throw new Error(`snapshot: ${snap.status} ${await snap.text()}`);
      const after = Math.max(1, Math.round(RECORDS / 100));
      await putRate(store.url, 'after', { count: after, streams: 16, size: 100 });
      await store.system.shutdown();
      dropDatabase(stateDir);
      log('restoring');
      const t0 = performance.now();
      const result = await restore({ stateDir, progress: (l) => log(`  ${l}`) });
      const ms = performance.now() - t0;
      restoreOut = { records: result.restored.objects, ms: Math.round(ms), recordsPerSec: Math.round(result.restored.objects / (ms / 1000)), journalReplayed: result.journal.replayed, putRate: Math.round(putS) };
      process.stdout.write(`\nRestore of ${result.restored.objects} records (snapshot of ${RECORDS} objects + ${after} journalled after it)\n`);
      process.stdout.write(renderTable(['records', 'restore ms', 'records/s', 'journal replayed'], [[result.restored.objects, Math.round(ms), fmt(restoreOut.recordsPerSec!), result.journal.replayed]]) + '\n');
      // The restored database serves.
      store = await start(stateDir, true);
      const check = await fetch(`${store.url}/after/o0`);
      if (check.status !== 200) throw new Error(`after restore, GET /after/o0: ${check.status}`);
      await store.system.shutdown();
    }
    process.stdout.write(JSON.stringify({ bench: 'objstore-journal', putRate: { on, off, ratio, rounds: rates, streams: STREAMS, objectBytes: 4096 }, restore: restoreOut }) + '\n');
  } finally {
    await scope.run();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`objstore-journal bench: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
