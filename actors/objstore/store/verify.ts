/**
 * Verifying one object's slices (POST /$/verify-file/{objectId}):
 * - `light`: every slice is present and its header is the one its record expects (object id,
 *   index, k, m, chunk size, sizes). Reads 64 bytes per slice: it finds missing, truncated or
 *   misplaced slices, not rot inside them.
 * - `full`: reads every byte of every slice (each chunk's CRC32C is checked by its volume),
 *   recomputes the parity of every stripe from the data and compares it with the stored parity
 *   (so parity written wrong is found even when its checksums agree), and checks the object's
 *   MD5 against its record.
 * A clean result removes the object's faults (they were stale); a bad slice is recorded as a
 * fault. Nothing on disk is changed.
 */
import { createHash } from 'node:crypto';
import type { ObjectRecord } from '../../../protocols/objstore/headers.js';
import { headerMismatch } from '../../../protocols/objstore/slice-format.js';
import { dataChunkLength, geometry, parityChunkLength, sliceHeaderFor } from '../../../protocols/objstore/stripes.js';
import { readSliceChunks } from './get.js';
import { errorCode, type SliceContext } from './context.js';

export type SliceStatus = 'ok' | 'missing' | 'bad-header' | 'unreadable' | 'checksum' | 'parity-mismatch' | 'timeout';

export interface SliceResult {
  index: number;
  kind: 'data' | 'parity';
  volumeId: number;
  status: SliceStatus;
  detail: string | null;
}

export interface VerifyResult {
  objectId: string;
  path: string;
  mode: 'light' | 'full';
  clean: boolean;
  slices: Record<string, SliceResult>;
  md5: { expected: string; actual: string | null; ok: boolean | null } | null;
  faultsCleared: number;
}

/** Stripes read per request in full mode. */
const STRIPES_PER_READ = 16;

function classify(err: unknown): { status: SliceStatus; detail: string } {
  const detail = (err as Error).message ?? String(err);
  const code = errorCode(err);
  if (code === 'MISSING' || code === 'NOT_FOUND') return { status: 'missing', detail };
  if (code === 'CHECKSUM') return { status: 'checksum', detail };
  if (code === 'TIMEOUT') return { status: 'timeout', detail };
  return { status: 'unreadable', detail: `${code}: ${detail}` };
}

export async function verifyObject(ctx: SliceContext, rec: ObjectRecord, mode: 'light' | 'full'): Promise<VerifyResult> {
  const g = geometry(rec.size, rec.k, rec.m, rec.chunkSize);
  const volumes = [...rec.dataVolumes, ...rec.parityVolumes];
  const slices: SliceResult[] = volumes.map((volumeId, index) => ({ index, kind: index < rec.k ? 'data' : 'parity', volumeId, status: 'ok', detail: null }));
  const mark = (index: number, status: SliceStatus, detail: string) => {
    if (slices[index]!.status === 'ok') Object.assign(slices[index]!, { status, detail });
  };

  // Headers (both modes).
  await Promise.all(
    slices.map(async (s) => {
      const ref = ctx.volume(s.volumeId);
      if (!ref) return mark(s.index, 'missing', `volume ${s.volumeId} is not present`);
      try {
        const h = await ref.request({ type: 'readHeader', objectId: rec.id, index: s.index }, { timeoutMs: ctx.settings.ioTimeoutMs * 2 });
        const wrong = headerMismatch(h, sliceHeaderFor(g, rec.id, s.index));
        if (wrong) mark(s.index, 'bad-header', wrong);
      } catch (err) {
        const c = classify(err);
        mark(s.index, c.status, c.detail);
      }
    }),
  );

  let md5: VerifyResult['md5'] = null;
  if (mode === 'full') {
    const hash = createHash('md5');
    let hashable = true;
    for (let first = 0; first < g.stripes; first += STRIPES_PER_READ) {
      const last = Math.min(g.stripes - 1, first + STRIPES_PER_READ - 1);
      const chunks = await Promise.all(
        slices.map((s) =>
          s.status !== 'ok'
            ? Promise.resolve(null)
            : readSliceChunks(ctx, rec, g, s.index, first, last).catch((err: unknown) => {
                const c = classify(err);
                mark(s.index, c.status, c.detail);
                return null;
              }),
        ),
      );
      const dataOk = chunks.slice(0, rec.k).every((c) => c !== null);
      if (!dataOk) {
        hashable = false;
        continue;
      }
      for (let st = first; st <= last; st++) {
        const shard = parityChunkLength(g, st);
        for (let i = 0; i < rec.k; i++) {
          const len = dataChunkLength(g, st, i);
          if (len > 0 && hashable) hash.update(chunks[i]![st - first]!.subarray(0, len));
        }
        if (rec.m === 0) continue;
        const data = new Uint8Array(rec.k * shard);
        for (let i = 0; i < rec.k; i++) data.set(chunks[i]![st - first]!.subarray(0, dataChunkLength(g, st, i)), i * shard);
        const r = await ctx.runTask('encode', { k: rec.k, m: rec.m, shardSize: shard, data: data.buffer }, [data.buffer]);
        const parity = new Uint8Array(r.parity);
        for (let j = 0; j < rec.m; j++) {
          const stored = chunks[rec.k + j];
          if (!stored) continue;
          const want = parity.subarray(j * shard, (j + 1) * shard);
          if (!Buffer.from(stored[st - first]!.subarray(0, shard)).equals(want)) {
            mark(rec.k + j, 'parity-mismatch', `stripe ${st}: the stored parity differs from the parity recomputed from the data`);
          }
        }
      }
    }
    const actual = hashable ? hash.digest('hex') : null;
    md5 = { expected: rec.md5, actual, ok: actual === null ? null : actual === rec.md5 };
  }

  const clean = slices.every((s) => s.status === 'ok') && (md5 === null || md5.ok === true);
  let faultsCleared = 0;
  if (clean) {
    await ctx.meta.root.transaction(() => {
      for (const { key } of ctx.meta.faults.getRange({ start: `${rec.id}/`, end: `${rec.id}/~` })) {
        ctx.meta.faults.removeSync(key);
        faultsCleared++;
      }
    });
  } else {
    for (const s of slices) {
      if (s.status !== 'ok') await ctx.meta.recordFault({ objectId: rec.id, sliceIndex: s.index, volumeId: s.volumeId, code: s.status.toUpperCase().replace('-', '_'), message: s.detail ?? s.status });
    }
  }
  return { objectId: rec.id, path: rec.path, mode, clean, slices: Object.fromEntries(slices.map((s) => [String(s.index), s])), md5, faultsCleared };
}
