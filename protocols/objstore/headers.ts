/**
 * The object API's response headers: the object's record as headers (GET, HEAD, and the subset a
 * PUT answers with), Content-Disposition for `download_as`, and the CORS headers of OPTIONS.
 */
import { containerId, containerOf } from './paths.js';

export interface ObjectRecord {
  id: string;
  path: string;
  size: number;
  mime: string;
  md5: string;
  k: number;
  m: number;
  chunkSize: number;
  dataVolumes: number[];
  parityVolumes: number[];
  createdAt: number;
}

const DEFAULT_MIME = 'application/octet-stream';

/** The headers of every GET and HEAD answer, in this order (the spec's list, then caching headers). */
export function objectHeaders(rec: ObjectRecord): Array<[string, string]> {
  const modified = new Date(rec.createdAt);
  if (Number.isNaN(modified.getTime())) throw new RangeError(`object ${rec.id} has no valid creation time: ${String(rec.createdAt)}`);
  return [
    ['X-Object-Id', rec.id],
    ['X-Container-Id', containerId(containerOf(rec.path))],
    ['Content-MD5', rec.md5],
    ['Content-Type', rec.mime === '' ? DEFAULT_MIME : rec.mime],
    ['X-Data-Slice-Count', String(rec.k)],
    ['X-Data-Slice-Volumes', rec.dataVolumes.join(',')],
    ['X-Parity-Slice-Count', String(rec.m)],
    ['X-Parity-Slice-Volumes', rec.parityVolumes.join(',')],
    ['X-Chunk-Size', String(rec.chunkSize)],
    ['Accept-Ranges', 'bytes'],
    ['Last-Modified', modified.toUTCString()],
    ['ETag', `"${rec.md5}"`],
  ];
}

const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE_RE = /\p{Cs}/u;

/**
 * `attachment; filename="<ascii>"; filename*=UTF-8''<pct>` (RFC 6266, RFC 5987). The quoted
 * fallback replaces '"', '\' and every non-ASCII character (per code point) by '_'; the extended
 * form percent-encodes everything outside RFC 5987's attr-char set. Throws a TypeError on an empty
 * name, a name with '/', '\' or a control character, or one that is not valid Unicode.
 */
export function contentDisposition(name: string): string {
  if (typeof name !== 'string' || name === '') throw new TypeError('download name must not be empty');
  if (name.includes('/') || name.includes('\\')) throw new TypeError(`download name must not contain '/' or '\\': ${JSON.stringify(name)}`);
  if (CONTROL_RE.test(name)) throw new TypeError(`download name must not contain control characters: ${JSON.stringify(name)}`);
  if (LONE_SURROGATE_RE.test(name)) throw new TypeError(`download name is not valid Unicode: ${JSON.stringify(name)}`);
  let ascii = '';
  for (const ch of name) {
    const c = ch.codePointAt(0) as number;
    ascii += c < 0x20 || c > 0x7e || ch === '"' || ch === '\\' ? '_' : ch;
  }
  // encodeURIComponent leaves A-Z a-z 0-9 - _ . ! ~ * ' ( ) as they are; of those, * ' ( ) are not
  // RFC 5987 attr-chars and must be encoded too.
  const ext = encodeURIComponent(name).replace(/[*'()]/g, (c) => '%' + (c.charCodeAt(0) as number).toString(16).toUpperCase());
  return `attachment; filename="${ascii}"; filename*=UTF-8''${ext}`;
}

export const ALLOWED_METHODS = 'GET, HEAD, PUT, DELETE, OPTIONS';

const EXPOSED_HEADERS = [
  'X-Object-Id',
  'X-Container-Id',
  'X-Data-Slice-Count',
  'X-Data-Slice-Volumes',
  'X-Parity-Slice-Count',
  'X-Parity-Slice-Volumes',
  'X-Chunk-Size',
  'Content-MD5',
  'Content-Range',
  'Accept-Ranges',
  'ETag',
].join(', ');

/** The CORS headers of an OPTIONS answer. An absent or empty Origin gets '*' and no Vary. */
export function corsHeaders(origin: string | undefined): Array<[string, string]> {
  const given = origin !== undefined && origin !== '';
  const out: Array<[string, string]> = [
    ['Access-Control-Allow-Origin', given ? origin : '*'],
    ['Access-Control-Allow-Methods', ALLOWED_METHODS],
    ['Access-Control-Allow-Headers', 'Content-Type, Content-MD5, Range'],
    ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
    ['Access-Control-Max-Age', '86400'],
  ];
  if (given) out.push(['Vary', 'Origin']);
  return out;
}
