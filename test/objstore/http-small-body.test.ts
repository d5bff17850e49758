/**
 * A management request's small body (respond.ts collectBody) that stalls is answered 408
 * BODY_TIMEOUT at the front's body idle timeout and the connection closed; one sent slowly but
 * steadily is read whole. (Found by front-fuzz: a PUT to /$/volumes/1 promising 4003 bytes and
 * sending fewer held its handler with no answer and no close.)
 */
import test from 'ava';
import { exchange, startFront, statuses } from './front-server.js';

const IDLE_MS = 400;
const head = (length: number) => `PUT /$/buckets/b/policy HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

test('a small body that stalls: 408 BODY_TIMEOUT after the idle timeout, naming what came, and the connection closed', async (t) => {
  const front = await startFront(undefined, { bodyIdleTimeoutMs: IDLE_MS });
  t.teardown(() => front.close());
  const r = await exchange(front.port, head(100) + '{"publicRead"', { ms: 5000, quietMs: 3000 });
  t.deepEqual(statuses(r.text), ['408 Request Timeout']);
  t.regex(r.text, /"code":"BODY_TIMEOUT","message":"received 13 bytes of the body, then nothing for 400 ms"/);
  t.true(r.closed, 'the server closed the connection');
  t.true(r.ms >= IDLE_MS - 50 && r.ms < IDLE_MS + 2000, `answered after ${r.ms} ms`);
});

test('a small body sent in pieces, each gap under the idle timeout, is read whole (here: bad JSON, 400, not 408)', async (t) => {
  const front = await startFront(undefined, { bodyIdleTimeoutMs: IDLE_MS });
  t.teardown(() => front.close());
  const pieces = ['{no', 't js', 'on at', ' all}'];
  const r = await exchange(front.port, [head(pieces.join('').length), ...pieces], { gapMs: IDLE_MS / 2, ms: 5000 });
  t.deepEqual(statuses(r.text), ['400 Bad Request']);
  t.regex(r.text, /INVALID_JSON/);
});
