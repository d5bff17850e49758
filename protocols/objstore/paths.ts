/**
 * Object paths and containers.
 *
 * An object path is '/' + segments joined by '/'; the first segment is the bucket. Containers are
 * implicit: every proper prefix of a path ('/a', '/a/b' for '/a/b/c') is a container, and the
 * root container '/' holds the bucket-level objects. A target is either a path or an object id
 * ('/$' + 24 lowercase hex). Every rule is checked on the percent-decoded segments, so an encoded
 * character ('%24' for '$', '%2E' for '.') is treated exactly like the character itself.
 */
import { createHash } from 'node:crypto';
import { OBJECT_ID_RE } from './object-id.js';

export type ObjectTarget =
  | { kind: 'id'; id: string }
  | { kind: 'path'; path: string; bucket: string; segments: string[]; trailingSlash: boolean }
  | { kind: 'invalid'; reason: string };

/** Longest segment (bucket name included), in UTF-8 bytes. */
const MAX_SEGMENT_BYTES = 255;
/** Longest decoded path ('/' + segments joined by '/', without a trailing slash), in UTF-8 bytes. */
const MAX_PATH_BYTES = 1024;

const CONTROL_RE = /[\u0000-\u001f\u007f]/;
/** A lone UTF-16 surrogate: a string that has no UTF-8 form. */
const LONE_SURROGATE_RE = /\p{Cs}/u;

function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function invalid(reason: string): ObjectTarget {
  return { kind: 'invalid', reason };
}

/** Why a decoded segment (not the first-segment '$' rule) is not acceptable, or null. */
function segmentProblem(seg: string, n: number): string | null {
  const where = `segment ${n + 1}`;
  if (seg === '') return `empty path segment (${where}): '//' is not allowed`;
  if (seg.includes('/')) return `${where} contains an encoded '/' (%2F)`;
  if (CONTROL_RE.test(seg)) return `${where} contains a control character (U+0000-U+001F or U+007F)`;
  if (LONE_SURROGATE_RE.test(seg)) return `${where} is not valid UTF-8`;
  if (seg === '.' || seg === '..') return `'${seg}' segments are not allowed (${where})`;
  const bytes = utf8Bytes(seg);
  if (bytes > MAX_SEGMENT_BYTES) return `${where} is ${bytes} bytes long; the limit is ${MAX_SEGMENT_BYTES} UTF-8 bytes per segment`;
  return null;
}

export function parseTarget(rawPath: string): ObjectTarget {
  if (typeof rawPath !== 'string' || !rawPath.startsWith('/')) return invalid("path must begin with '/'");
  if (rawPath === '/') return invalid('no bucket in path');
  let body = rawPath.slice(1);
  const trailingSlash = body.endsWith('/');
  if (trailingSlash) body = body.slice(0, -1);
  const raw = body.split('/');
  const segments: string[] = [];
  for (let n = 0; n < raw.length; n++) {
    const r = raw[n] as string;
    // Raw bytes that are not UTF-8 reach us as U+FFFD (the server decodes the target so): two
    // different byte paths would name one object. A raw U+FFFD is refused with them (a target
    // is ASCII; percent-encode it: %EF%BF%BD decodes to U+FFFD and is accepted).
    if (r.includes('\uFFFD')) return invalid(`segment ${n + 1} is not valid UTF-8 (raw bytes in a path must be UTF-8, percent-encoded)`);
    let seg: string;
    try {
      seg = decodeURIComponent(r);
    } catch {
      return invalid(`malformed percent-encoding in segment ${n + 1}: ${JSON.stringify(r.length > 64 ? r.slice(0, 64) + '...' : r)}`);
    }
    const problem = segmentProblem(seg, n);
    if (problem) return invalid(problem);
    segments.push(seg);
  }
  const first = segments[0] as string;
  if (first.startsWith('$')) {
    if (segments.length === 1) {
      if (OBJECT_ID_RE.test(first)) {
        if (trailingSlash) return invalid('not an object id: an object id names an object and takes no trailing slash');
        return { kind: 'id', id: first };
      }
      // '$' followed by hex digits only: a mistyped id (wrong length or uppercase), not a path.
      if (/^\$[0-9a-fA-F]+$/.test(first)) {
        return invalid("not an object id: '$' must be followed by exactly 24 lowercase hex characters");
      }
    }
    return invalid('path must not begin with $');
  }
  const path = '/' + segments.join('/');
  const bytes = utf8Bytes(path);
  if (bytes > MAX_PATH_BYTES) return invalid(`path is ${bytes} bytes long; the limit is ${MAX_PATH_BYTES} UTF-8 bytes`);
  return { kind: 'path', path, bucket: first, segments, trailingSlash };
}

function checkPath(path: string): void {
  if (typeof path !== 'string' || !path.startsWith('/') || path.length < 2 || path.endsWith('/') || path.includes('//')) {
    throw new TypeError(`not an object path: ${JSON.stringify(path)}`);
  }
}

/** The containers above an object path, outermost first: '/a/b/c' -> ['/a', '/a/b']; '/a' -> []. */
export function ancestors(path: string): string[] {
  checkPath(path);
  const out: string[] = [];
  for (let i = path.indexOf('/', 1); i !== -1; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}

/** The container holding an object path: '/a/b/c' -> '/a/b'; a bucket-level '/a' -> '/' (the root). */
export function containerOf(path: string): string {
  checkPath(path);
  const i = path.lastIndexOf('/');
  return i === 0 ? '/' : path.slice(0, i);
}

/** Stable opaque id of a container: the first 12 bytes of SHA-256 of its UTF-8 path, in lowercase hex. */
export function containerId(containerPath: string): string {
  return createHash('sha256').update(containerPath, 'utf8').digest().subarray(0, 12).toString('hex');
}

export function isValidBucketName(name: string): boolean {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..') return false;
  if (name.startsWith('$') || name.includes('/')) return false;
  if (CONTROL_RE.test(name) || LONE_SURROGATE_RE.test(name)) return false;
  return utf8Bytes(name) <= MAX_SEGMENT_BYTES;
}
