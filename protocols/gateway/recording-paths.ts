/**
 * The gateway's recording paths, `/recordings/{sessionId}[/{file}]` (and `…/merge`), read from
 * the raw request path before anything is touched: a recording is the object
 * `<bucket>/<sessionId>/<file>`, so a path that could name anything else is refused (400) here.
 * Refused: an empty segment (`//`, a trailing `/`, an absolute path after `/recordings/`), a
 * `.` or `..` segment whether written plainly or percent-encoded (`%2e%2e`), a backslash or a
 * NUL (raw or encoded), an encoded `/`, bad percent-encoding, and names outside the rules
 * below. Each segment is percent-decoded once; what it decodes to must itself be a plain name
 * (so `%252e%252e`, which decodes to `%2e%2e`, is refused too). Pure.
 */

/** A session id: what the media bridge hands out (a UUID), or any plain name of 1–128 characters. */
export const RECORDING_SESSION_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
/** A recording file's name: the media bridge's `file_name` rule (recording.start). */
export const RECORDING_FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

export type RecordingPath =
  | { ok: true; sessionId: string; file: string | null }
  | { ok: false; error: string };

/** Read `rest` (the raw path after `/recordings/`, no query): one or two segments. */
export function parseRecordingPath(rest: string): RecordingPath {
  if (rest === '') return { ok: false, error: 'the path names no session: /recordings/{sessionId}[/{file}]' };
  if (rest.includes('\\') || /%5c/i.test(rest)) return { ok: false, error: 'a recording path must not contain a backslash' };
  if (rest.includes('\0') || /%00/.test(rest)) return { ok: false, error: 'a recording path must not contain NUL' };
  if (rest.startsWith('/')) return { ok: false, error: 'a recording path is relative to its session: no absolute path' };
  const raw = rest.split('/');
  if (raw.length > 2) return { ok: false, error: `a recording path has at most two segments ({sessionId}/{file}); got ${raw.length}` };
  const segments: string[] = [];
  for (const s of raw) {
    const d = decodeSegment(s);
    if (!d.ok) return d;
    segments.push(d.value);
  }
  const [sessionId, file] = segments as [string, string | undefined];
  if (!RECORDING_SESSION_ID.test(sessionId)) return { ok: false, error: `session id ${JSON.stringify(sessionId.slice(0, 80))} is not a plain name (letters, digits, '.', '_', '-'; not starting with '.'; at most 128)` };
  if (file === undefined) return { ok: true, sessionId, file: null };
  const f = checkFileName(file);
  return f ? { ok: false, error: f } : { ok: true, sessionId, file };
}

/** Why `name` is not a recording file name (null when it is one). */
export function checkFileName(name: string): string | null {
  if (name.includes('\\') || name.includes('/') || name.includes('\0')) return `file ${JSON.stringify(name.slice(0, 80))} must be a plain name: no '/', '\\' or NUL`;
  if (!RECORDING_FILE_NAME.test(name)) return `file ${JSON.stringify(name.slice(0, 80))} is not a recording name (letters, digits, '.', '_', '-'; not starting with '.'; at most 200)`;
  return null;
}

function decodeSegment(s: string): { ok: true; value: string } | { ok: false; error: string } {
  if (s === '') return { ok: false, error: 'a recording path must not have an empty segment (no //, no trailing /)' };
  if (/%2f/i.test(s)) return { ok: false, error: 'a recording path segment must not contain an encoded /' };
  let value: string;
  try {
    value = decodeURIComponent(s);
  } catch {
    return { ok: false, error: `the path segment ${JSON.stringify(s.slice(0, 80))} is not valid percent-encoding` };
  }
  if (value === '.' || value === '..') return { ok: false, error: `a recording path must not contain a ${JSON.stringify(value)} segment` };
  if (/[\x00-\x1f\x7f]/.test(value)) return { ok: false, error: 'a recording path must not contain control characters' };
  return { ok: true, value };
}
