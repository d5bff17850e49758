/**
 * The client load whose cost the benchmark measures: steady GET streams, each one request after
 * another on kept-alive connections (bench/objstore/client.ts: the server's MD5 header and the
 * size are checked on every response), recorded as (start, end) times in epoch ms, so a window
 * can be cut afterwards to the spans in which a maintenance job was running.
 */
import { performance } from 'node:perf_hooks';
import { summarize } from '../lib/stats.js';
import type { Client, Obj } from '../objstore/client.js';

const MIB = 1024 * 1024;
const now = () => performance.timeOrigin + performance.now();

export interface LoadClass {
  key: string;
  label: string;
  client: Client;
  objects: Obj[];
  objectBytes: number;
  streams: number;
}

export interface ClassRecord {
  cls: LoadClass;
  /** start, end of every completed request (epoch ms), interleaved */
  spans: number[];
  errors: number;
  firstError: string | null;
}

export interface Window {
  startMs: number;
  endMs: number;
  records: ClassRecord[];
}

/** Run every class's streams together for `ms`. A failed GET is counted, not thrown. */
export async function runLoad(classes: LoadClass[], ms: number): Promise<Window> {
  const startMs = now();
  const end = startMs + ms;
  const records: ClassRecord[] = classes.map((cls) => ({ cls, spans: [], errors: 0, firstError: null }));
  await Promise.all(
    records.flatMap((rec) =>
      Array.from({ length: rec.cls.streams }, async () => {
        const objs = rec.cls.objects;
        while (now() < end) {
          const o = objs[Math.floor(Math.random() * objs.length)]!;
          const t0 = now();
          try {
            await rec.cls.client.get(o);
            rec.spans.push(t0, now());
          } catch (err) {
            rec.errors++;
            rec.firstError ??= (err as Error).message;
          }
        }
      }),
    ),
  );
  return { startMs, endMs: end, records };
}

/** Fetch `n` random objects of each class again and compare their bytes' MD5 (untimed). */
export async function checkBytes(classes: LoadClass[], n: number): Promise<void> {
  for (const c of classes) {
    for (let i = 0; i < n; i++) await c.client.get(c.objects[Math.floor(Math.random() * c.objects.length)]!, true);
  }
}

export interface ClassFigures {
  requests: number;
  p50_ms: number;
  p99_ms: number;
  /** requests per second */
  per_s: number;
  mib_s: number;
  errors: number;
}

/**
 * The figures of the requests that started inside the given spans (clipped to the window): a
 * span is a job's start..finish; the whole window when no job ran (the idle case).
 */
export function figures(w: Window, spans: Array<[number, number]> | null): { covered_s: number; byClass: Record<string, ClassFigures> } {
  const clipped = (spans ?? [[w.startMs, w.endMs]]).map(([a, b]) => [Math.max(a, w.startMs), Math.min(b, w.endMs)] as const).filter(([a, b]) => b > a);
  const covered = clipped.reduce((s, [a, b]) => s + (b - a), 0) / 1000;
  const inside = (t: number) => clipped.some(([a, b]) => t >= a && t < b);
  const byClass: Record<string, ClassFigures> = {};
  for (const rec of w.records) {
    const lat: number[] = [];
    for (let i = 0; i < rec.spans.length; i += 2) if (inside(rec.spans[i]!)) lat.push(rec.spans[i + 1]! - rec.spans[i]!);
    const s = summarize(lat);
    const per = covered > 0 ? lat.length / covered : Number.NaN;
    byClass[rec.cls.key] = { requests: lat.length, p50_ms: s.p50, p99_ms: s.p99, per_s: per, mib_s: (per * rec.cls.objectBytes) / MIB, errors: rec.errors };
  }
  return { covered_s: covered, byClass };
}
