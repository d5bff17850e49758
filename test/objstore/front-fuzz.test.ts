/**
 * A bounded fuzz pass over the object store's port 80 (issue 21): requests generated from a
 * seeded PRNG (valid templates for the object and management APIs, then byte-level mutations of
 * the request line and headers: stray CR/LF/NUL/space/control and non-ASCII bytes, duplicated,
 * dropped or oversized headers, bodies cut short), each on its own connection. Every request
 * must get an answer (a status line) or a clean close within the server's own timeouts, the
 * store must still answer afterwards, and the process's memory must stay bounded. The seed and
 * the count are in the test's output (FRONT_FUZZ_SEED and FRONT_FUZZ_COUNT replay a run).
 */
import { connect } from 'node:net';
import test from 'ava';
import { startStore } from './harness.js';
import { prng } from '../helpers/prng.js';

const HEADERS_TIMEOUT_MS = 1000;
const BODY_IDLE_MS = 1500;
/** An answer or a close must come within the longest server timeout, plus scheduling slack. */
const LIMIT_MS = Math.max(HEADERS_TIMEOUT_MS, BODY_IDLE_MS) + 4000;

const METHODS = ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'POST', 'PATCH', 'TRACE', 'CONNECT', 'get', 'PUTT', 'BREW'];
const TARGETS = ['/fz/a', '/fz/b/c', '/fz/', '/$/status', '/$/volumes', '/$/volumes/1', '/$/maintenance-freeze', '/$/faults', '/$0123456789abcdef01234567', '/fz/%2e%2e/x', '/fz/%ff', '/fz/a?download_as=x.txt', 'http://h/fz/abs', '*', '/', '//x', '/fz/' + 'x'.repeat(300)];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', 'http/1.1', ''];
const EXTRA: Array<(r: () => number) => string> = [
  () => 'Content-Type: application/json',
  () => 'Content-Type: text/plain',
  () => 'Origin: https://evil.example',
  () => 'Origin: https://app.example',
  () => 'Range: bytes=0-10',
  (r) => `Range: bytes=${Math.floor(r() * 1e12)}-`,
  () => 'Expect: 100-continue',
  () => 'Transfer-Encoding: chunked',
  () => 'Connection: close',
  () => 'Connection: keep-alive',
  () => 'Content-MD5: 00000000000000000000000000000000',
  (r) => `X-Junk-${Math.floor(r() * 1000)}: ${'v'.repeat(Math.floor(r() * 200))}`,
];
const STRAY = [0x00, 0x01, 0x7f, 0x0d, 0x0a, 0x20, 0x09, 0x3a, 0x80, 0xff, 0xc3];

/** One generated request: its bytes, how much of its body it sends, and what it was. */
function generate(r: () => number, n: number): Buffer {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const method = pick(METHODS);
  const target = pick(TARGETS).replace('/fz/a', `/fz/a${n}`);
  const lines = [`${method} ${target} ${pick(VERSIONS)}`.trimEnd()];
  if (r() < 0.9) lines.push('Host: fuzz');
  const bodyLength = method === 'PUT' || method === 'POST' ? Math.floor(r() * 4096) : 0;
  if (bodyLength || r() < 0.2) lines.push(`Content-Length: ${r() < 0.1 ? pick(['-1', 'abc', '1e3', '+5', '99999999999999999999', ' 7']) : bodyLength}`);
  for (let i = Math.floor(r() * 4); i > 0; i--) lines.push(pick(EXTRA)(r));
  if (r() < 0.1) lines.push(lines[lines.length - 1]!); // a duplicated header
  if (r() < 0.03) for (let i = 0; i < 120; i++) lines.push(`X-Many-${i}: y`);
  if (r() < 0.03) lines.push(`X-Huge: ${'z'.repeat(20_000)}`);
  let head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  // Byte-level mutations of the request line and headers.
  for (let m = Math.floor(r() * 3); m > 0; m--) {
    const at = Math.floor(r() * head.length);
    const kind = r();
    if (kind < 0.5) head = Buffer.concat([head.subarray(0, at), Buffer.from([pick(STRAY)]), head.subarray(at)]);
    else if (kind < 0.8) head = Buffer.concat([head.subarray(0, at), head.subarray(at + 1)]);
    else head = head.subarray(0, at); // cut short: the server must time out on it
  }
  const body = Buffer.alloc(r() < 0.15 ? Math.floor(bodyLength * r()) : bodyLength, 0x61);
  return Buffer.concat([head, body]);
}

/** Send `bytes` on a fresh connection; how it ended, and when. */
function exchange(port: number, bytes: Buffer): Promise<{ how: 'answer' | 'close' | 'nothing'; ms: number; first: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = connect(port, '127.0.0.1');
    let got = '';
    let done = false;
    const end = (how: 'answer' | 'close' | 'nothing') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ how, ms: Date.now() - started, first: got.slice(0, 80) });
    };
    const timer = setTimeout(() => end('nothing'), LIMIT_MS);
    sock.on('data', (d) => {
      got += d.toString('latin1');
      // An answer: a final status line and its headers (a 100 Continue alone is not one).
      if (/^HTTP\/1\.1 (?!100)\d{3} [^\r\n]*\r\n/m.test(got) && got.includes('\r\n\r\n')) end('answer');
    });
    sock.on('close', () => end(got ? 'answer' : 'close'));
    sock.on('error', () => end('close'));
    sock.write(bytes);
  });
}

test('fuzzed request lines and headers: every request is answered or cleanly closed in time; memory stays bounded', async (t) => {
  t.timeout(10 * 60_000);
  const seed = Number(process.env.FRONT_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 32));
  const count = Number(process.env.FRONT_FUZZ_COUNT ?? 600);
  t.log(`seed ${seed}, count ${count} (FRONT_FUZZ_SEED=${seed} FRONT_FUZZ_COUNT=${count} replays this run)`);
  const store = await startStore(t, { volumes: 6, sizeMiB: 512, values: { headersTimeoutMs: HEADERS_TIMEOUT_MS, bodyIdleTimeoutMs: BODY_IDLE_MS, keepAliveTimeoutMs: 1000 } });
  const port = Number(new URL(store.url).port);
  const r = prng(seed);
  const requests = Array.from({ length: count }, (_, n) => generate(r, n));

  const run = async (from: number, to: number) => {
    const results: Array<{ n: number; how: string; ms: number; first: string }> = [];
    let next = from;
    const worker = async () => {
      while (next < to) {
        const n = next++;
        results.push({ n, ...(await exchange(port, requests[n]!)) });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return results;
  };
  // A warm-up tenth, then the memory baseline, then the rest.
  const warm = Math.floor(count / 10);
  const results = await run(0, warm);
  global.gc?.();
  const before = process.memoryUsage().rss;
  results.push(...(await run(warm, count)));
  await new Promise((res) => setTimeout(res, 500));
  global.gc?.();
  const after = process.memoryUsage().rss;

  const hung = results.filter((x) => x.how === 'nothing');
  t.deepEqual(hung.map((x) => `#${x.n}: ${JSON.stringify(requests[x.n]!.toString('latin1').slice(0, 120))}`), [], 'no request is left without an answer or a close');
  const badAnswers = results.filter((x) => x.how === 'answer' && !/^HTTP\/1\.1 \d{3} /.test(x.first));
  t.deepEqual(badAnswers.map((x) => `#${x.n}: ${JSON.stringify(x.first)}`), [], 'every answer begins with a status line');
  const answered = results.filter((x) => x.how === 'answer').length;
  t.log(`${answered} answered, ${results.length - answered - hung.length} closed without an answer, slowest ${Math.max(...results.map((x) => x.ms))} ms; RSS ${(before / 2 ** 20).toFixed(0)} -> ${(after / 2 ** 20).toFixed(0)} MiB`);
  for (const x of results.filter((y) => y.how === 'close').slice(0, 5)) t.log(`closed without an answer after ${x.ms} ms: #${x.n} ${JSON.stringify(requests[x.n]!.toString('latin1').slice(0, 100))}`);
  t.true(answered > count / 2, 'most requests get an answer');
  t.true(after - before < 96 * 2 ** 20, `RSS grew by ${((after - before) / 2 ** 20).toFixed(1)} MiB`);
  // The store still answers, and its status is sound.
  const status = await fetch(store.url + '/$/status');
  t.is(status.status, 200);
});
