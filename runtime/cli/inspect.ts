/**
 * `hostd inspect`: the checkpoint inspection tool. Opens the LMDB environment read-only, so it
 * can run beside a live daemon without disturbing it (LMDB readers take no write lock).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointStore, ENV_FILE, type CheckpointSummary } from '../checkpoint/store.js';

export class InspectError extends Error {}

function openStore(stateDir: string): CheckpointStore {
  if (!existsSync(join(stateDir, ENV_FILE))) throw new InspectError(`no checkpoint database at ${join(stateDir, ENV_FILE)} (has a daemon run with --state-dir ${stateDir}?)`);
  return CheckpointStore.open(stateDir, { readOnly: true });
}

/** JSON for any structured-clone value: Maps, Sets, Dates, binary, bigints shown plainly. */
export function toJson(value: unknown, indent = 2): string {
  return JSON.stringify(
    value,
    function (this: unknown, _k, v: unknown) {
      if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [typeof k === 'string' ? k : JSON.stringify(k), x]));
      if (v instanceof Set) return [...v];
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof ArrayBuffer) return { binaryBytes: v.byteLength };
      if (ArrayBuffer.isView(v)) return { binaryBytes: v.byteLength };
      if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) return { binaryBytes: (v as { data: unknown[] }).data.length };
      return v;
    },
    indent,
  );
}

/**
 * For people: a field named like a time (`…At`) holding epoch milliseconds (2001–2286) is shown
 * as an ISO 8601 string too, e.g. `startedAt: "2026-11-22T08:00:00.000Z (1795334400000)"`.
 */
export function readableTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(readableTimes);
  if (value instanceof Map || value instanceof Set || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return value;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = /At$/.test(k) && typeof v === 'number' && Number.isInteger(v) && v >= 1e12 && v < 1e13 ? `${new Date(v).toISOString()} (${v})` : readableTimes(v);
    }
    return out;
  }
  return value;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

export function renderTable(rows: CheckpointSummary[], now = Date.now()): string {
  const header = ['ACTOR ID', 'KIND', 'UPDATED AT', 'AGE', 'SIZE'];
  const body = rows.map((r) => [r.id, r.kind, new Date(r.updatedAt).toISOString(), formatAge(now - r.updatedAt), formatBytes(r.size)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...body.map(line)].join('\n') + `\n${rows.length} checkpoint${rows.length === 1 ? '' : 's'}`;
}

export async function inspect(opts: { stateDir: string; id?: string; json: boolean }, out: (s: string) => void): Promise<void> {
  const store = openStore(opts.stateDir);
  try {
    if (opts.id === undefined) {
      const rows = store.list().sort((a, b) => a.id.localeCompare(b.id));
      out(opts.json ? toJson(rows.map((r) => ({ ...r, updatedAt: new Date(r.updatedAt).toISOString() })), 0) : renderTable(rows));
      return;
    }
    const rec = store.load(opts.id);
    if (!rec) throw new InspectError(`no checkpoint for actor ${JSON.stringify(opts.id)} in ${opts.stateDir} (run 'hostd inspect' to list them)`);
    const size = store.list().find((r) => r.id === opts.id)?.size ?? 0;
    const full = { id: rec.id, kind: rec.kind, updatedAt: new Date(rec.updatedAt).toISOString(), size, state: rec.state };
    out(opts.json ? toJson(full, 0) : toJson({ ...full, state: readableTimes(full.state) }, 2));
  } finally {
    await store.close();
  }
}
