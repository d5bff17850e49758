/**
 * The PUT/GET scenarios, run the same way against every endpoint (Ceph radosgw, hostd, the sink):
 * 64 MiB objects and 4 KiB objects, one stream and four, each stream issuing its requests one
 * after another over its own kept-alive connection.
 */
import { summarize } from '../lib/stats.js';
import { Client, type Corpus, type Endpoint, type Obj, type TransportKind } from './client.js';
import { CpuMeter } from './proc.js';

const MIB = 1024 * 1024;
const log = (s: string) => process.stderr.write(`${s}\n`);

export interface ScenarioSpec {
  key: string;
  label: string;
  op: 'PUT' | 'GET';
  kind: Obj['kind'];
  streams: number;
  /** metric name of the figure: MiB/s for large objects, objects/s for small ones */
  unit: 'MiB/s' | 'obj/s';
}

export const SCENARIOS: readonly ScenarioSpec[] = [
  { key: 'put_64m_1', label: 'PUT 64 MiB, 1 stream', op: 'PUT', kind: 'big', streams: 1, unit: 'MiB/s' },
  { key: 'put_64m_4', label: 'PUT 64 MiB, 4 streams', op: 'PUT', kind: 'big', streams: 4, unit: 'MiB/s' },
  { key: 'get_64m_1', label: 'GET 64 MiB, 1 stream', op: 'GET', kind: 'big', streams: 1, unit: 'MiB/s' },
  { key: 'get_64m_4', label: 'GET 64 MiB, 4 streams', op: 'GET', kind: 'big', streams: 4, unit: 'MiB/s' },
  { key: 'put_4k_1', label: 'PUT 4 KiB, 1 stream', op: 'PUT', kind: 'small', streams: 1, unit: 'obj/s' },
  { key: 'put_4k_4', label: 'PUT 4 KiB, 4 streams', op: 'PUT', kind: 'small', streams: 4, unit: 'obj/s' },
  { key: 'get_4k_1', label: 'GET 4 KiB, 1 stream', op: 'GET', kind: 'small', streams: 1, unit: 'obj/s' },
  { key: 'get_4k_4', label: 'GET 4 KiB, 4 streams', op: 'GET', kind: 'small', streams: 4, unit: 'obj/s' },
];

/** One measured run of one scenario. */
export interface Sample {
  /** MiB/s or objects/s */
  value: number;
  objects: number;
  p50_ms: number;
  p99_ms: number;
  /** cores used on average by this process (the load generator) */
  client_cpu: number;
  /** cores used on average by the server's processes, when known */
  server_cpu: number | null;
}

export interface Sizes {
  /** 64 MiB objects per stream: with one stream, with four */
  bigPerStream1: number;
  bigPerStream4: number;
  /** seconds each small-object scenario runs */
  smallSeconds: number;
  /** objects whose bytes are fetched again and hashed after each GET scenario (untimed) */
  sampleBig: number;
  sampleSmall: number;
}

export type Results = Record<string, Sample[]>;

/**
 * Runs a warm-up (discarded) and then `rounds` rounds of every scenario in order. GET scenarios
 * read what the PUT scenario with the same object size and stream count wrote in the same round.
 * Every object written is returned in `written` (for deletion afterwards).
 */
export async function runEndpoint(ep: Endpoint, corpus: Corpus, sizes: Sizes, rounds: number, runTag: string, written: Obj[], transport: TransportKind = 'lean'): Promise<Results> {
  const client = new Client(ep, corpus, transport);
  const meter = new CpuMeter(() => ep.pids());
  const results: Results = Object.fromEntries(SCENARIOS.map((s) => [s.key, [] as Sample[]]));
  let variant = 0;
  const newObj = (kind: Obj['kind'], name: string): Obj => {
    const o: Obj = { name, kind, variant: variant++ % corpus.variants(kind) };
    written.push(o);
    return o;
  };

  try {
    if (ep.createsBucket) await client.createBucket();
    // Warm-up: connections, server caches, code paths; not measured.
    const t0 = performance.now();
    const warmBig = newObj('big', `${runTag}-warm-big`);
    await client.put(warmBig);
    await client.get(warmBig, ep.verifyContent);
    const warmSmall = Array.from({ length: 32 }, (_, i) => newObj('small', `${runTag}-warm-small-${i}`));
    await Promise.all([0, 1, 2, 3].map(async (s) => {
      for (let i = s; i < warmSmall.length; i += 4) await client.put(warmSmall[i]!);
      for (let i = s; i < warmSmall.length; i += 4) await client.get(warmSmall[i]!, ep.verifyContent);
    }));
    log(`  ${ep.label}: warm-up done (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

    for (let r = 0; r < rounds; r++) {
      const tr = performance.now();
      const put = new Map<string, Obj[]>();
      for (const sc of SCENARIOS) {
        const pairKey = `${sc.kind}/${sc.streams}`;
        let sample: Sample;
        if (sc.op === 'PUT') {
          const objs: Obj[] = [];
          const name = (s: number, i: number) => `${runTag}-r${r}-${sc.key}-${s}-${i}`;
          sample = await measure(meter, sc, corpus, sizes, async (s, i) => {
            const o = newObj(sc.kind, name(s, i));
            objs.push(o);
            await client.put(o);
          });
          put.set(pairKey, objs);
        } else {
          const objs = put.get(pairKey) ?? [];
          if (!objs.length) throw new Error(`${ep.label}: ${sc.label}: nothing was written to read`);
          // stream s reads its share of the objects, in turn, again from the start if time is left
          const share = Array.from({ length: sc.streams }, (_, s) => objs.filter((_, i) => i % sc.streams === s));
          sample = await measure(meter, sc, corpus, sizes, async (s, i) => {
            const mine = share[s]!.length ? share[s]! : objs;
            await client.get(mine[i % mine.length]!);
          }, sc.kind === 'big' ? objs.length : undefined);
          // Untimed: fetch a sample again and compare its bytes' MD5 with what was sent.
          if (ep.verifyContent) {
            const n = sc.kind === 'big' ? sizes.sampleBig : sizes.sampleSmall;
            const step = Math.max(1, Math.floor(objs.length / n));
            for (let j = 0; j < Math.min(n, objs.length); j++) await client.get(objs[(j * step + r) % objs.length]!, true);
          }
        }
        results[sc.key]!.push(sample);
      }
      log(`  ${ep.label}: round ${r + 1}/${rounds} done (${((performance.now() - tr) / 1000).toFixed(1)} s): ${SCENARIOS.map((s) => `${s.key}=${results[s.key]!.at(-1)!.value.toFixed(0)}`).join(' ')}`);
    }
  } finally {
    client.close();
  }
  return results;
}

/**
 * Runs `op(stream, i)` on `sc.streams` concurrent streams: for large objects a fixed count per
 * stream (or `total` spread over the streams), for small ones as many as fit in the time window.
 */
async function measure(
  meter: CpuMeter,
  sc: ScenarioSpec,
  corpus: Corpus,
  sizes: Sizes,
  op: (stream: number, i: number) => Promise<void>,
  total?: number,
): Promise<Sample> {
  const perStream = (s: number): number => {
    if (sc.kind === 'small') return Number.POSITIVE_INFINITY;
    if (total !== undefined) return Math.floor(total / sc.streams) + (s < total % sc.streams ? 1 : 0);
    return sc.streams === 1 ? sizes.bigPerStream1 : sizes.bigPerStream4;
  };
  const lat: number[] = [];
  let count = 0;
  meter.start();
  const t0 = performance.now();
  const deadline = t0 + sizes.smallSeconds * 1000;
  await Promise.all(
    Array.from({ length: sc.streams }, async (_, s) => {
      const n = perStream(s);
      for (let i = 0; i < n; i++) {
        if (sc.kind === 'small' && performance.now() >= deadline) break;
        const ts = performance.now();
        await op(s, i);
        lat.push(performance.now() - ts);
        count++;
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  const cpu = meter.stop();
  const lats = summarize(lat);
  const value = sc.kind === 'big' ? (count * corpus.sizes.big) / MIB / secs : count / secs;
  return { value, objects: count, p50_ms: lats.p50, p99_ms: lats.p99, client_cpu: cpu.client, server_cpu: cpu.server };
}

/** Deletes what a run wrote (hostd keeps objects; a PUT to an existing name is 409 there). */
export async function deleteAll(ep: Endpoint, corpus: Corpus, objs: Obj[], streams = 4): Promise<{ deleted: number; failed: number }> {
  const client = new Client(ep, corpus);
  let deleted = 0;
  let failed = 0;
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: streams }, async () => {
        while (next < objs.length) {
          const o = objs[next++]!;
          try {
            if (await client.del(o)) deleted++;
            else failed++;
          } catch {
            failed++;
          }
        }
      }),
    );
  } finally {
    client.close();
  }
  return { deleted, failed };
}
