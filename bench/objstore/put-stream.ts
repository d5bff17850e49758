/**
 * One PUT stream of large objects against a running store, and what the server spent on it: the
 * quick A/B of an HTTP front (docs/object-store.md "Before and after the switch").
 *
 *   node dist/bench/objstore/serve.js            # prints URL <url> PID <pid>
 *   node dist/bench/objstore/put-stream.js <url> <pid> [count=10]
 *
 * PUTs `count` objects of 64 MiB (random bytes made once) over one kept-alive node:http
 * connection, after one warm-up PUT; prints a table line and, last, one JSON line:
 * {"bench":"objstore-put-stream","mib_s":…,"server_core_ms_per_mib":…,"server_cores":…,"server_rss_mib":…}.
 * The server's CPU is its process's user + system time from /proc/<pid>/stat (every thread).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

const [url, pidText, countText = '10'] = process.argv.slice(2);
if (!url || !pidText || !/^\d+$/.test(pidText) || !/^\d+$/.test(countText)) {
  console.error('usage: node dist/bench/objstore/put-stream.js <store url> <server pid> [count=10]');
  process.exit(2);
}
const pid = Number(pidText);
const count = Number(countText);
const body = randomBytes(64 << 20);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const tag = Date.now();

/** The server's CPU seconds so far (user + system, all threads). */
function cpuSeconds(): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function put(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(`putbench${tag}/${name}`, url), { method: 'PUT', agent, headers: { 'Content-Length': body.length, 'Content-Type': 'application/octet-stream' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`PUT ${name}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

await put('warm-up');
const cpu0 = cpuSeconds();
const t0 = performance.now();
for (let i = 0; i < count; i++) await put(`o${i}`);
const seconds = (performance.now() - t0) / 1000;
const cpu = cpuSeconds() - cpu0;
const mib = 64 * count;
const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
const out = { bench: 'objstore-put-stream', objects: count, mib_s: +(mib / seconds).toFixed(1), server_core_ms_per_mib: +((cpu * 1000) / mib).toFixed(2), server_cores: +(cpu / seconds).toFixed(2), server_rss_mib: Math.round(rss) };
console.log(`PUT 64 MiB × ${count}, 1 stream: ${out.mib_s} MiB/s; server ${out.server_core_ms_per_mib} core-ms per MiB (${out.server_cores} cores), ${out.server_rss_mib} MiB resident`);
console.log(JSON.stringify(out));
agent.destroy();
