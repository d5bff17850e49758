#!/usr/bin/env node
/**
 * What the SIP server keeps per finished call: its core (actors/sipserver/core.ts) on a real
 * UDP transport in this thread, a gateway stand-in that answers each INVITE 200 at once, and
 * sipp's built-in `uac` placing `--calls` calls (INVITE, 200, ACK, BYE, 200). The transactions
 * of a finished call live on for 64·T1 (32 s) to absorb retransmissions — RFC 6026's accepted
 * INVITE and the completed BYE —, so a server at R calls a second holds ~64·R of them; this
 * measures what each call leaves on the heap (after a full GC) while they are held. The heap
 * is what the garbage collector copies and marks: per call, it is CPU as well as memory.
 * Prints a table and one JSON line. No peer is measured (Kamailio's transactions live in its
 * own shared-memory allocator).
 *
 *   node dist/bench/gateway-memory.bench.js [--calls 10000] [--rate 2000] [--rounds 3]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pino from 'pino';
import { SipCore } from '../actors/sipserver/core.js';
import { Transport } from '../actors/sipserver/transport.js';
import { sipserverArgs, sipserverSettings } from '../actors/sipserver/service-spec.js';
import type { SipServerEvent } from '../actors/sipserver/gateway-messages.js';
import { resolve } from '../runtime/config/settings.js';
import { renderTable } from './lib/table.js';
import { runUac } from './gateway/sipp.js';
import { freeUdpPort } from './gateway/ports.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '10000' }, rate: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' }, child: { type: 'boolean', default: false } } });
const calls = Number(values.calls);
const rate = Number(values.rate);
const rounds = Number(values.rounds);
if (!Number.isInteger(calls) || calls < 100 || !Number.isInteger(rate) || rate < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error('--calls (≥ 100), --rate and --rounds must be positive integers');
  process.exit(2);
}
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';

async function round(): Promise<{ completed: number; perCall: number; held: number }> {
  const args = sipserverArgs({ ...resolve(sipserverSettings, {}, {}), port: 0, host: '127.0.0.1' });
  // the stand-in gateway: every new INVITE answered 200 on the next turn (as a gateway thread would)
  const answer = (ev: SipServerEvent) => {
    if (ev.type === 'sip.request' && !ev.dialog) core.respond({ key: ev.key, status: 200, body: SDP, contentType: 'application/sdp' });
  };
  const core = new SipCore(args, pino({ level: 'warn' }), (_gateway, ev) => setImmediate(() => answer(ev)), (fn, ms) => setTimeout(fn, ms));
  core.lookup = async () => ({ action: 'route', tag: 'gw' });
  core.attach('gw', 'gw');
  const transport = await Transport.open({ host: '127.0.0.1', port: 0, maxMessageBytes: 65535, maxConnections: 16, tcpIdleMs: 60_000 }, {
    message: (bytes, source) => core.onMessage(bytes, source),
    framingError: () => undefined,
  });
  core.transport = transport;
  try {
    gc();
    const before = process.memoryUsage().heapUsed;
    const run = await runUac(`127.0.0.1:${transport.port}`, await freeUdpPort(), rate, calls, 120_000);
    await new Promise((r) => setTimeout(r, 500)); // the last BYE answered
    gc();
    const after = process.memoryUsage().heapUsed;
    return { completed: run.successful, perCall: (after - before) / Math.max(1, run.successful), held: core.table.size };
  } finally {
    core.close();
    await transport.close();
  }
}

// Each round in a process of its own: a finished round's core is not collected at once (its
// sockets close asynchronously), and the next round's count would take it off.
if (values.child) {
  console.log(JSON.stringify(await round()));
  process.exit(0);
}
const rows: Array<{ completed: number; perCall: number; held: number }> = [];
for (let i = 0; i < rounds; i++) {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', '--calls', String(calls), '--rate', String(rate)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  rows.push(JSON.parse(out.trim().split('\n').at(-1) as string));
}
const sorted = rows.map((r) => r.perCall).sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)] as number;
console.log(renderTable(
  ['round', 'calls completed', 'transactions held', 'heap kept per call (bytes)'],
  rows.map((r, i) => [String(i + 1), String(r.completed), String(r.held), r.perCall.toFixed(0)]),
));
console.log(`median ${median.toFixed(0)} bytes a call; at ${rate} calls/s a server holds ~${((median * rate * 32) / 2 ** 20).toFixed(0)} MiB for 64·T1`);
console.log(JSON.stringify({ bench: 'gateway-memory', calls, rate, rounds: rows, medianBytesPerCall: Math.round(median) }));
