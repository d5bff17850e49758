/**
 * Reads an uploaded chart tarball (.tgz) as a stream and applies protocols/deploy/chart-rules.ts
 * to every entry as its header arrives, before anything is written anywhere: the reader itself
 * writes nothing, it only returns the entries (and, when asked, the files' bytes, which the rules
 * bound by maxUnpackedBytes). The inflated byte count is capped while gunzip runs, so a gzip
 * bomb stops after at most the cap plus one inflate chunk (64 KiB), whatever its headers say, and
 * backpressure keeps memory to a few chunks. Errors of the archive itself (not gzip, truncated gzip,
 * not tar, truncated tar) are 400 BAD_CHART too; an I/O error of the source is thrown, not refused.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { ChartChecker, CHART_LIMITS, type ChartEntry, type ChartLimits } from '../../protocols/deploy/chart-rules.js';
import { Refused, type Refusal } from '../../protocols/deploy/errors.js';

const INFLATE_CHUNK = 64 * 1024;

export interface ReadChartOptions {
  limits?: Partial<ChartLimits>;
  /** keep each file's bytes in `data` */
  keepContents?: boolean;
}

export interface ChartFile extends ChartEntry {
  /** the file's bytes, when keepContents was asked (directories: absent) */
  data?: Buffer;
}

export interface ReadStats {
  /** compressed bytes taken from the source */
  compressedBytes: number;
  /** bytes gunzip produced before the reader finished or stopped */
  inflatedBytes: number;
}

export type ReadChartResult =
  | { ok: true; value: { topDir: string; entries: ChartFile[] }; stats: ReadStats }
  | { ok: false; error: Refusal; stats: ReadStats };

const badChart = (message: string): Refusal => ({ status: 400, code: 'BAD_CHART', message });

/** What a zlib or tar-stream error means for the client. */
function archiveRefusal(e: Error & { code?: string }, from: 'gzip' | 'tar'): Refusal {
  if (from === 'gzip') {
    if (e.code === 'Z_BUF_ERROR' || /unexpected end/i.test(e.message)) return badChart('the chart is a truncated gzip stream');
    return badChart(`the chart is not a gzip file (${e.message})`);
  }
  if (/unexpected end/i.test(e.message)) return badChart('the chart is a truncated tar archive');
  return badChart(`the chart is not a tar archive (${e.message})`);
}

/** Read and check a chart tarball from a file path, a buffer or a stream of bytes. */
export function readChart(source: string | Uint8Array | Readable, opts: ReadChartOptions = {}): Promise<ReadChartResult> {
  const limits: ChartLimits = { ...CHART_LIMITS, ...opts.limits };
  const input = typeof source === 'string' ? createReadStream(source) : source instanceof Uint8Array ? Readable.from([Buffer.from(source)]) : source;
  const gunzip = createGunzip({ chunkSize: INFLATE_CHUNK });
  const extract = tar.extract();
  const checker = new ChartChecker(limits);
  const files: ChartFile[] = [];
  const stats: ReadStats = { compressedBytes: 0, inflatedBytes: 0 };

  return new Promise<ReadChartResult>((resolve, reject) => {
    let settled = false;
    const stop = () => {
      input.unpipe(gunzip);
      input.destroy();
      gunzip.destroy();
      extract.destroy();
    };
    const refuse = (error: Refusal) => {
      if (settled) return;
      settled = true;
      stop();
      resolve({ ok: false, error, stats });
    };
    const crash = (e: unknown) => {
      if (settled) return;
      settled = true;
      stop();
      reject(e);
    };

    input.on('data', (chunk: Buffer) => {
      stats.compressedBytes += chunk.byteLength;
    });
    input.on('error', crash);
    gunzip.on('error', (e) => refuse(archiveRefusal(e, 'gzip')));
    extract.on('error', (e: Error) => refuse(e instanceof Refused ? e.refusal : archiveRefusal(e, 'tar')));

    gunzip.on('data', (chunk: Buffer) => {
      if (settled) return;
      stats.inflatedBytes += chunk.byteLength;
      if (stats.inflatedBytes > limits.maxInflatedBytes) {
        refuse(badChart(`the chart inflates to more than ${limits.maxInflatedBytes} bytes`));
        return;
      }
      if (!extract.write(chunk)) gunzip.pause();
    });
    extract.on('drain', () => gunzip.resume());
    gunzip.on('end', () => {
      if (!settled) extract.end(undefined);
    });

    extract.on('entry', (header, stream, next) => {
      let entry: ChartEntry | null;
      try {
        entry = checker.entry({ name: header.name, type: header.type ?? null, size: header.size });
      } catch (e) {
        if (e instanceof Refused) refuse(e.refusal);
        else crash(e);
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => {
        if (opts.keepContents && entry?.type === 'file') chunks.push(c as Buffer);
      });
      stream.on('end', () => {
        if (entry !== null) files.push(opts.keepContents && entry.type === 'file' ? { ...entry, data: Buffer.concat(chunks) } : { ...entry });
        next();
      });
      stream.on('error', () => undefined); // the extract reports the cause
    });
    extract.on('finish', () => {
      if (settled) return;
      try {
        const { topDir } = checker.finish();
        settled = true;
        resolve({ ok: true, value: { topDir, entries: files }, stats });
      } catch (e) {
        if (e instanceof Refused) refuse(e.refusal);
        else crash(e);
      }
    });

    input.pipe(gunzip);
  });
}
