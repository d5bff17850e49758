import test from 'ava';
import { formatAge, formatBytes, readableTimes, renderTable, toJson } from '../runtime/cli/inspect.js';

test('the table has a header, aligned columns and a count', (t) => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  const out = renderTable(
    [
      { id: 'volume.1', kind: 'volume', updatedAt: now - 5_000, size: 100 },
      { id: 'objstore.scheduler', kind: 'scheduler', updatedAt: now - 7_200_000, size: 5000 },
    ],
    now,
  );
  const lines = out.split('\n');
  t.is(lines.length, 4);
  t.regex(lines[0]!, /^ACTOR ID\s+KIND\s+UPDATED AT\s+AGE\s+SIZE$/);
  t.regex(lines[1]!, /^volume\.1\s+volume\s+2026-11-22T11:59:55\.000Z\s+5s ago\s+100 B$/);
  t.regex(lines[2]!, /^objstore\.scheduler\s+scheduler\s+2026-11-22T10:00:00\.000Z\s+2h ago\s+4\.9 KiB$/);
  t.is(lines[1]!.indexOf('volume '), lines[0]!.indexOf('KIND'));
  t.is(lines[3], '2 checkpoints');
  t.is(renderTable([], now), 'ACTOR ID  KIND  UPDATED AT  AGE  SIZE\n0 checkpoints');
});

test('sizes and ages are human-readable', (t) => {
  t.is(formatBytes(0), '0 B');
  t.is(formatBytes(1023), '1023 B');
  t.is(formatBytes(1536), '1.5 KiB');
  t.is(formatBytes(3 * 1024 * 1024), '3.0 MiB');
  t.is(formatAge(59_000), '59s ago');
  t.is(formatAge(61_000), '1m ago');
  t.is(formatAge(3 * 86_400_000), '3d ago');
  t.is(formatAge(-5), '0s ago');
});

test('JSON rendering shows Maps, Sets, bigints and binary plainly', (t) => {
  const v = { m: new Map<unknown, unknown>([['a', 1], [2, 'b']]), s: new Set([1, 2]), big: 10n, bin: new Uint8Array(7), ab: new ArrayBuffer(3), d: new Date(0) };
  t.deepEqual(JSON.parse(toJson(v)), { m: { a: 1, '2': 'b' }, s: [1, 2], big: '10', bin: { binaryBytes: 7 }, ab: { binaryBytes: 3 }, d: '1970-01-01T00:00:00.000Z' });
});

test('readableTimes shows epoch-millisecond …At fields as ISO 8601 too, and leaves everything else', (t) => {
  const ms = Date.UTC(2026, 10, 22, 8, 0, 0);
  const v = { startedAt: ms, finishedAt: null, at: ms, cursor: '$0196', nested: [{ requestedAt: ms, count: 3 }], smallAt: 12, floatAt: ms + 0.5 };
  t.deepEqual(readableTimes(v), {
    startedAt: `2026-11-22T08:00:00.000Z (${ms})`,
    finishedAt: null,
    at: ms,
    cursor: '$0196',
    nested: [{ requestedAt: `2026-11-22T08:00:00.000Z (${ms})`, count: 3 }],
    smallAt: 12,
    floatAt: ms + 0.5,
  });
  t.is(readableTimes(5), 5);
  t.is(readableTimes('x'), 'x');
});
