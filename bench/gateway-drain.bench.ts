#!/usr/bin/env node
/**
 * What a drain costs: a real `hostd daemon --services gateway` under a steady sipp load (the
 * built-in `uac` at --rate calls/s, each call held --hold ms) with an application on /control
 * answering every call; after --before seconds of load, POST /drain. Per run:
 *
 *   - INVITEs admitted before the drain (they reached the application) and how many of those
 *     failed (the spec: none may),
 *   - INVITEs refused around and after the drain's start (sipp's failed calls: 503),
 *   - INVITEs that reached the application after the drain began (should be 0),
 *   - time from the last call's end (the application's last `sip.ended`, i.e. the last BYE) to
 *     the process's exit, and from the drain's start to the exit.
 *
 * Prints a table and one JSON line.
 *
 *   node dist/bench/gateway-drain.bench.js [--rate 50] [--hold 2000] [--before 3] [--after 1.5] [--runs 3]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GatewayClient } from '../actors/gateway/client.js';
import { renderTable } from './lib/table.js';
import { freeUdpPort } from './gateway/ports.js';

const MAIN = fileURLToPath(new URL('../workers/main.js', import.meta.url));
const TOKEN = 'bench-drain';
const SDP = ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', 'm=audio 40000 RTP/AVP 0', 'a=rtpmap:0 PCMU/8000', ''].join('\r\n');

const HELP = `Usage: node dist/bench/gateway-drain.bench.js [options]
  --rate N     calls per second of the steady load (default 50)
  --hold MS    how long each call stays up (default 2000)
  --before S   seconds of load before the drain (default 3)
  --after S    seconds of load after the drain's start (default 1.5; keep it under --hold: once the
               last admitted call ends the process exits and later INVITEs go unanswered)
  --runs N     runs (default 3)
  -h, --help   this text`;

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '50' },
    hold: { type: 'string', default: '2000' },
    before: { type: 'string', default: '3' },
    after: { type: 'string', default: '1.5' },
    runs: { type: 'string', default: '3' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const [rate, hold, before, after, runs] = [values.rate, values.hold, values.before, values.after, values.runs].map(Number) as [number, number, number, number, number];
if (![rate, hold, runs].every((n) => Number.isInteger(n) && n > 0) || !(before > 0) || !(after > 0) || after * 1000 >= hold) {
  console.error(`invalid option\n${HELP}`);
  process.exit(2);
}

interface Run {
  admitted: number;
  admittedFailed: number;
  refused: number;
  lateAdmitted: number;
  successful: number;
  lastByeToExitMs: number;
  drainToExitMs: number;
  exitCode: number | null;
}

async function once(): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-bench-drain-'));
  const [gwPort, sipPort, local] = [await freeUdpPort(), await freeUdpPort(), await freeUdpPort()];
  const daemon = spawn(process.execPath, [
    MAIN, 'daemon', '--services', 'gateway', '--state-dir', dir, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--log-level', 'warn',
    '--gateway-port', String(gwPort), '--sipserver-port', String(sipPort), '--gateway-auth-token', TOKEN,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let exitedAt = 0;
  const exited = new Promise<number | null>((r) => daemon.on('exit', (c) => ((exitedAt = Date.now()), r(c))));
  const sippDir = mkdtempSync(join(tmpdir(), 'hostd-bench-drain-uac-'));
  try {
    const deadline = Date.now() + 30_000;
    while (!(await fetch(`http://127.0.0.1:${gwPort}/readyz`).then((r) => r.status === 200, () => false))) {
      if (Date.now() > deadline || daemon.exitCode !== null) throw new Error('hostd did not become ready');
      await new Promise((r) => setTimeout(r, 100));
    }
    const app = await GatewayClient.connect(`ws://127.0.0.1:${gwPort}/control`, { token: TOKEN });
    const invites: number[] = [];
    let lastEnded = 0;
    let answered = 0;
    app.onRequest('sip.invite', () => {
      invites.push(Date.now());
      return { action: 'answer', sdp: SDP };
    });
    app.events$.subscribe((e) => {
      if (e.event === 'sip.confirmed') answered++;
      if (e.event === 'sip.ended') lastEnded = Date.now();
    });
    await app.call('route.register', { routes: [{ match: 'exact', value: 'service' }] });

    const calls = Math.round(rate * (before + after));
    const uac = spawn('sipp', [
      `127.0.0.1:${sipPort}`, '-sn', 'uac', '-s', 'service', '-i', '127.0.0.1', '-p', String(local), '-t', 'u1', '-nostdin',
      '-r', String(rate), '-m', String(calls), '-l', String(Math.max(100, rate * Math.ceil(hold / 1000 + 2))), '-d', String(hold),
      '-timeout', `${before + after + hold / 1000 + 60}s`, '-timeout_error',
    ], { cwd: sippDir, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    uac.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const uacDone = new Promise<void>((r) => uac.on('close', () => r()));
    await new Promise((r) => setTimeout(r, before * 1000));
    const drainAt = Date.now();
    const res = await fetch(`http://127.0.0.1:${gwPort}/drain`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
    if (res.status !== 202) throw new Error(`POST /drain answered ${res.status}`);
    await uacDone;
    const exitCode = await exited;
    await app.close().catch(() => undefined);
    const row = (name: string) => Number([...out.matchAll(new RegExp(`${name}\\s*\\|\\s*(\\d+)\\s*\\|\\s*(\\d+)`, 'g'))].at(-1)?.[2] ?? -1);
    const successful = row('Successful call');
    const failed = row('Failed call');
    return {
      admitted: invites.length,
      admittedFailed: invites.length - Math.min(invites.length, successful, answered),
      refused: failed,
      lateAdmitted: invites.filter((t) => t > drainAt).length,
      successful,
      lastByeToExitMs: exitedAt - lastEnded,
      drainToExitMs: exitedAt - drainAt,
      exitCode,
    };
  } finally {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    rmSync(sippDir, { recursive: true, force: true });
  }
}

const results: Run[] = [];
for (let i = 0; i < runs; i++) {
  const r = await once();
  process.stderr.write(`run ${i + 1}: ${JSON.stringify(r)}\n`);
  results.push(r);
}
console.log(
  renderTable(
    ['run', 'admitted before', 'admitted failed', 'refused (503)', 'admitted after start', 'last BYE → exit ms', 'drain → exit ms', 'exit code'],
    results.map((r, i) => [i + 1, r.admitted, r.admittedFailed, r.refused, r.lateAdmitted, r.lastByeToExitMs, r.drainToExitMs, r.exitCode].map(String)),
  ),
);
console.log(JSON.stringify({ bench: 'gateway-drain', rate, holdMs: hold, beforeS: before, afterS: after, runs: results }));
