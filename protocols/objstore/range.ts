/**
 * The Range request header, as the object API supports it: one range, `bytes=a-b` or `bytes=a-`
 * (RFC 9110 §14.1.2), nothing else. Anything else is unsatisfiable (the caller answers 416 with
 * `Content-Range: bytes *\/size`), with a reason saying what was wrong.
 */

export type RangeResult =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable'; reason: string };

function checkSize(size: number): void {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`object size must be a non-negative safe integer, got ${String(size)}`);
}

function unsatisfiable(reason: string): RangeResult {
  return { kind: 'unsatisfiable', reason };
}

function show(s: string): string {
  return JSON.stringify(s.length > 80 ? s.slice(0, 80) + '...' : s);
}

export function parseRange(header: string | undefined, size: number): RangeResult {
  checkSize(size);
  if (header === undefined) return { kind: 'full' };
  // Leading and trailing whitespace is not part of an HTTP field value (RFC 9110 §5.5).
  const value = header.replace(/^[ \t]+|[ \t]+$/g, '');
  if (value === '') return { kind: 'full' };
  if (value.includes(',')) return unsatisfiable(`multiple ranges are not supported (${show(value)}); ask for one range`);
  const eq = value.indexOf('=');
  if (eq === -1) return unsatisfiable(`malformed range ${show(value)}: expected bytes=start-end or bytes=start-`);
  const unit = value.slice(0, eq);
  if (unit.toLowerCase() !== 'bytes') return unsatisfiable(`unsupported range unit ${show(unit)}: only bytes is supported`);
  const spec = value.slice(eq + 1);
  if (/^-[0-9]+$/.test(spec)) return unsatisfiable(`suffix ranges (bytes=-N) are not supported (${show(value)})`);
  const m = /^([0-9]+)-([0-9]*)$/.exec(spec);
  if (!m) return unsatisfiable(`malformed range ${show(value)}: expected bytes=start-end or bytes=start- with decimal numbers and no spaces`);
  const start = Number(m[1]);
  if (start > Number.MAX_SAFE_INTEGER) return unsatisfiable(`range start ${show(m[1] as string)} is too large (over 2^53-1)`);
  let end: number;
  if (m[2] === '') {
    end = size - 1;
  } else {
    // An end at or past the object's last byte means its last byte (RFC 9110 §14.1.2), however
    // large: digits past 2^53-1 are such an end (no object is that large).
    end = Number(m[2]);
    if (end > Number.MAX_SAFE_INTEGER) end = size - 1;
    else if (start > end) return unsatisfiable(`range start ${start} is after its end ${end}`);
  }
  if (start >= size) return unsatisfiable(`range start ${start} is at or beyond the end of the ${size}-byte object`);
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

/** The Content-Range of a 206: 'bytes start-end/size' (end inclusive). */
export function contentRange(start: number, end: number, size: number): string {
  checkSize(size);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || start > end || end >= size) {
    throw new RangeError(`not a range of a ${size}-byte object: ${String(start)}-${String(end)}`);
  }
  return `bytes ${start}-${end}/${size}`;
}

/** The Content-Range of a 416: 'bytes *\/size'. */
export function unsatisfiedRange(size: number): string {
  checkSize(size);
  return `bytes */${size}`;
}
