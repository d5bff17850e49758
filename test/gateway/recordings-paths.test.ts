/**
 * protocols/gateway/recording-paths.ts: the session and file a path names, and every traversal
 * and bad name refused with its reason (plain and percent-encoded `..`, backslashes, NUL,
 * absolute paths, empty segments, encoded slashes, bad percent-encoding, double encoding).
 */
import test from 'ava';
import { checkFileName, parseRecordingPath } from '../../protocols/gateway/recording-paths.js';

test('a session and a file are read, percent-decoded once', (t) => {
  t.deepEqual(parseRecordingPath('2b7c3f5e-8a1d-4c2e-9f00-1234567890ab'), { ok: true, sessionId: '2b7c3f5e-8a1d-4c2e-9f00-1234567890ab', file: null });
  t.deepEqual(parseRecordingPath('s1/call-a.pcap'), { ok: true, sessionId: 's1', file: 'call-a.pcap' });
  t.deepEqual(parseRecordingPath('s1/call%2Da.pcap'), { ok: true, sessionId: 's1', file: 'call-a.pcap' });
  t.deepEqual(parseRecordingPath('s1/merge'), { ok: true, sessionId: 's1', file: 'merge' });
  t.deepEqual(parseRecordingPath('s.1/a..b'), { ok: true, sessionId: 's.1', file: 'a..b' }, 'dots inside a name are not a traversal');
});

test('traversal and bad names are refused, each with its reason', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['', /names no session/],
    ['..', /"\.\." segment/],
    ['.', /"\." segment/],
    ['s1/..', /"\.\." segment/],
    ['s1/.', /"\." segment/],
    ['%2e%2e', /"\.\." segment/],
    ['%2E%2E/x.pcap', /"\.\." segment/],
    ['s1/%2e%2e', /"\.\." segment/],
    ['s1/.%2e', /"\.\." segment/],
    ['%252e%252e', /not a plain name/],
    ['s1/%252e%252e', /not a recording name/],
    ['s1/..%2fetc%2fpasswd', /encoded \//],
    ['s1%2F..', /encoded \//],
    ['s1/a\\b', /backslash/],
    ['s1/a%5cb', /backslash/],
    ['..\\..\\x', /backslash/],
    ['s1/a\0b', /NUL/],
    ['s1/a%00b', /NUL/],
    ['/etc/passwd', /no absolute path/],
    ['//etc', /no absolute path/],
    ['s1/', /empty segment/],
    ['s1//a', /at most two segments/],
    ['s1/a/b', /at most two segments/],
    ['../../etc/passwd', /at most two segments/],
    ['s1/%zz', /not valid percent-encoding/],
    ['s1/%e0%a4', /not valid percent-encoding/],
    ['s1/a%0ab', /control characters/],
    ['.hidden', /not a plain name/],
    ['s1/.hidden', /not a recording name/],
    ['s1/a b', /not a recording name/],
    ['s 1', /not a plain name/],
    ['x'.repeat(129), /not a plain name/],
    ['s1/' + 'y'.repeat(201), /not a recording name/],
  ];
  for (const [path, re] of cases) {
    const r = parseRecordingPath(path);
    t.false(r.ok, path);
    if (!r.ok) t.regex(r.error, re, `${JSON.stringify(path)}: ${r.error}`);
  }
});

test('checkFileName: the merge body\'s names follow the same rule', (t) => {
  t.is(checkFileName('a.pcap'), null);
  t.regex(checkFileName('../a.pcap') ?? '', /no '\/'/);
  t.regex(checkFileName('a\\b') ?? '', /must be a plain name/);
  t.regex(checkFileName('..') ?? '', /not a recording name/);
  t.regex(checkFileName('') ?? '', /not a recording name/);
});
