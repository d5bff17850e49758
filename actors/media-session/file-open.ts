/**
 * Where a file endpoint's audio comes from, before the endpoint exists: a local file read,
 * probed and decoded (file-source.ts), or a URL checked and opened as far as its final answer's
 * headers (url-source.ts), its body still to come. Every refusal here is the create command's
 * error and creates nothing; the session then makes the endpoint (file-endpoint.ts) and, for a
 * URL, loads it when the download is decoded.
 */
import type { Refusal } from './messages.js';
import { decodeFile, loadLocalFile, type LoadedFile, type LoadOutcome } from './file-source.js';
import type { SessionArgs } from './messages.js';
import { openUrl } from './url-source.js';

/** MEDIA_FILE_MAX_BYTES's default. */
export const DEFAULT_FILE_MAX_BYTES = 100 * 1024 * 1024;
/** timeout_ms's default for a URL source: the whole download. */
const DEFAULT_URL_TIMEOUT_MS = 10_000;
/** cache_ttl_secs's default. */
const DEFAULT_URL_CACHE_TTL_SECS = 300;

export interface FileParams {
  source: string;
  start_ms: number;
  gain_db: number;
  timeout_ms?: number | undefined;
  cache_ttl_secs?: number | undefined;
}

/** A local file, decoded; or a URL whose `download` resolves with the decoded file or why not. */
export type OpenedSource = { ok: true; shown: string; file: LoadedFile } | { ok: true; shown: string; download: Promise<LoadOutcome> } | Refusal;

const refuse = (code: Refusal['code'], message: string): Refusal => ({ ok: false, code, message });

export async function openFileSource(args: SessionArgs, p: FileParams): Promise<OpenedSource> {
  const maxBytes = args.fileMaxBytes ?? DEFAULT_FILE_MAX_BYTES;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p.source)) {
    const opened = await openUrl(p.source, {
      policy: args.urlPolicy ?? { origins: [], networks: [] },
      timeoutMs: p.timeout_ms ?? DEFAULT_URL_TIMEOUT_MS,
      maxBytes,
      ca: args.fileCa ?? null,
      cacheTtlSecs: p.cache_ttl_secs ?? DEFAULT_URL_CACHE_TTL_SECS,
    });
    if (!opened.ok) return refuse('ENDPOINT_ERROR', opened.message);
    const shown = shownUrl(p.source);
    const download = opened.body().then((got): LoadOutcome => {
      const decoded = got.ok ? decodeFile(got.bytes, shown, shown, p.gain_db) : got;
      if (decoded.ok && p.start_ms >= decoded.file.info.durationMs) return { ok: false, message: `start_ms ${p.start_ms} is not inside the file (${decoded.file.info.durationMs} ms long)` };
      return decoded;
    });
    return { ok: true, shown, download };
  }
  if (p.timeout_ms !== undefined || p.cache_ttl_secs !== undefined) return refuse('INVALID_PARAMS', 'timeout_ms and cache_ttl_secs apply to URL sources only; source is a local file');
  if (!args.fileDir) return refuse('ENDPOINT_ERROR', 'local file playback is off: the bridge has no media directory (MEDIA_FILE_DIR is not set)');
  const loaded = await loadLocalFile(args.fileDir, p.source, maxBytes, p.gain_db);
  if (!loaded.ok) return refuse('ENDPOINT_ERROR', loaded.message);
  const { info } = loaded.file;
  if (p.start_ms >= info.durationMs) return refuse('INVALID_PARAMS', `start_ms ${p.start_ms} is not inside the file (${info.durationMs} ms long)`);
  return { ok: true, shown: p.source, file: loaded.file };
}

/** A URL as session.info and messages show it: origin and file name, never the query or the rest of the path. */
function shownUrl(source: string): string {
  try {
    const u = new URL(source);
    const name = u.pathname.split('/').pop();
    return `${u.origin}/${name ? `…/${name}` : ''}`;
  } catch {
    return '(URL)';
  }
}
