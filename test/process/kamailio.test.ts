/**
 * More than one host: Kamailio's dispatcher (deploy/kamailio/dispatcher.cfg) in front of two
 * real hostd daemons (`--services gateway`), each in a network namespace of its own
 * (deploy/netns/two-hosts.sh), with an application on each host's /control answering INVITEs.
 * sipp in the root namespace sends calls to Kamailio: they spread over both hosts (counted per
 * host). Then host 1 drains (POST /drain): Kamailio's OPTIONS probe sees its 503 and takes it out
 * of the set, new calls all go to host 2, and host 1 exits 0 once its calls have ended (sipp's
 * BYEs follow Record-Route to it). The namespaces, Kamailio, the daemons and sipp are removed
 * even when the test fails (t.teardown, the script's `down`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { freePort, SCENARIOS } from '../helpers/sip.js';
import { GatewayClient } from '../../actors/gateway/client.js';
import { SDP, sleep, until } from '../helpers/gateway.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(ROOT, 'deploy/netns/two-hosts.sh');
const CONFIG = join(ROOT, 'deploy/kamailio/dispatcher.cfg');
const TOKEN = 'kamailio-hosts-token';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const PREFIX = 'hkt';
const NET = `10.78.${20 + (process.pid % 200)}`;
const ENV = { ...process.env, PREFIX, NET };

function script(arg: 'up' | 'down'): string {
  return execFileSync('sh', [SCRIPT, arg], { env: ENV, encoding: 'utf8' });
}

function tempDir(t: ExecutionContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Host {
  n: number;
  ip: string;
  base: string;
  d: Daemon;
  invites: string[];
}

/** A hostd daemon in namespace PREFIX-h<n>: SIP and the gateway on the namespace's address. */
async function startHost(t: ExecutionContext, n: number): Promise<Host> {
  const ip = `${NET}.1${n}`;
  const d = startDaemon(t, [
    '--state-dir', tempDir(t, `hostd-kam-h${n}-`), '--services', 'gateway', '--metrics-port', '0', '--metrics-host', '127.0.0.1',
    '--gateway-host', ip, '--gateway-port', '3001', '--gateway-auth-token', TOKEN,
    '--sipserver-host', ip, '--sipserver-port', '5060', '--sipserver-advertised-address', ip,
    // The gateway listens on the namespace's address, not loopback: the SIP server asks it there.
    '--sipserver-route-url', `http://${ip}:3001/sipserver/route`,
  ], {}, ['ip', 'netns', 'exec', `${PREFIX}-h${n}`]);
  await d.waitFor((l) => l.msg === 'daemon ready', 30_000);
  await d.waitFor((l) => l.msg === 'attached to the SIP server');
  const host: Host = { n, ip, base: `http://${ip}:3001`, d, invites: [] };
  // The application of this host: takes calls for "alice", answers each with SDP.
  const app = await GatewayClient.connect(`ws://${ip}:3001/control`, { token: TOKEN });
  t.teardown(() => app.close().catch(() => undefined));
  app.onRequest('sip.invite', (p: { callId: string }) => {
    host.invites.push(p.callId);
    return { action: 'answer', sdp: SDP };
  });
  await app.call('route.register', { routes: [{ match: 'exact', value: 'alice' }] });
  return host;
}

/** Kamailio with the repository's config, listening on NET.1:port, the two hosts in set 1. */
async function startKamailio(t: ExecutionContext, port: number): Promise<{ log: () => string }> {
  const dir = tempDir(t, 'hostd-kam-');
  const list = join(dir, 'dispatcher.list');
  writeFileSync(list, readFileSync(join(ROOT, 'deploy/kamailio/dispatcher.list'), 'utf8').replaceAll('10.77.0.', `${NET}.`));
  const child = spawn('kamailio', ['-f', CONFIG, '-DD', '-E', '-A', `LISTEN=udp:${NET}.1:${port}`, '-A', `DS_LIST="${list}"`, '-Y', dir, '-P', join(dir, 'pid'), '-m', '64', '-M', '16'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const done = new Promise((r) => child.once('close', r));
      // Kamailio's worker processes share its process group: signal the group.
      process.kill(-child.pid!, 'SIGTERM');
      const k = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 3000);
      await done;
      clearTimeout(k);
    }
  });
  await sleep(1500);
  if (child.exitCode !== null) throw new Error(`kamailio exited ${child.exitCode}: ${log.slice(-2000)}`);
  return { log: () => log };
}

/** sipp's caller in the root namespace, through Kamailio, the scenario uac-routed.xml. */
async function sippCalls(t: ExecutionContext, kamPort: number, args: string[]): Promise<{ code: number | null; out: string }> {
  const dir = tempDir(t, 'hostd-kam-sipp-');
  const child = spawn('sipp', [`${NET}.1:${kamPort}`, '-i', `${NET}.1`, '-p', String(await freePort()), '-sf', join(SCENARIOS, 'uac-routed.xml'), '-s', 'alice', '-timeout', '60s', '-timeout_error', '-trace_err', '-nostdin', ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-6000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-6000)));
  return new Promise((r) => child.on('close', (code) => r({ code, out })));
}

const successful = (out: string) => Number(/Successful call\s+\|\s+\d+\s+\|\s+(\d+)/.exec(out)?.[1] ?? NaN);
const calls = async (h: Host) => ((await (await fetch(`${h.base}/healthz`)).json()) as { calls: number }).calls;

test.serial('Kamailio spreads new calls over two hostd hosts in network namespaces; a draining host drops out of the set and exits 0 after its calls', async (t) => {
  script('up');
  t.teardown(() => void script('down'));
  const kamPort = await freePort();
  const kam = await startKamailio(t, kamPort);
  const [h1, h2] = [await startHost(t, 1), await startHost(t, 2)];
  await sleep(1500); // a probe round: both hosts answer OPTIONS 200

  // 10 calls of 8 s: round robin gives each host half.
  const first = sippCalls(t, kamPort, ['-m', '10', '-r', '10', '-l', '10', '-d', '8000']);
  await until(() => h1.invites.length + h2.invites.length === 10, 20_000, '10 calls up').catch((err: Error) => {
    throw new Error(`${err.message}: host 1 ${h1.invites.length}, host 2 ${h2.invites.length}; kamailio: ${kam.log().slice(-1500)}; host 2 log: ${JSON.stringify(h2.d.lines.slice(-8))}`);
  });
  t.log(`first 10 calls: host 1 ${h1.invites.length}, host 2 ${h2.invites.length}`);
  t.true(h1.invites.length >= 3 && h2.invites.length >= 3, `spread over both hosts: ${h1.invites.length} / ${h2.invites.length}`);
  const h1Calls = h1.invites.length;

  // Host 1 drains: OPTIONS 503 at once; the probe takes it out of the set.
  const drain = await fetch(`${h1.base}/drain`, { method: 'POST', headers: AUTH });
  t.is(drain.status, 202);
  const drainAt = Date.now();
  await sleep(2500);
  const dispatchedBefore = kam.log().length;
  const second = await sippCalls(t, kamPort, ['-m', '6', '-r', '10', '-l', '6', '-d', '500']);
  t.is(second.code, 0, second.out);
  t.is(successful(second.out), 6);
  t.is(h1.invites.length, h1Calls, 'no new call reached the draining host');
  t.is(h2.invites.length, 10 - h1Calls + 6, 'every new call went to host 2');
  const after = kam.log().slice(dispatchedBefore);
  t.false(after.includes(`to sip:${h1.ip}:5060`), 'Kamailio did not even try host 1 (its probe had taken it out)');
  t.false(after.includes('retried on'), 'no INVITE needed the failure route');
  t.is((await fetch(`${h1.base}/readyz`)).status, 503);
  t.is(h1.d.proc.exitCode, null, 'host 1 still runs: its calls are up');
  t.true((await calls(h1)) > 0);

  // The first calls end (BYEs through Kamailio to their hosts); host 1 then exits 0.
  const done = await first;
  const lastBye = Date.now();
  t.is(done.code, 0, done.out);
  t.is(successful(done.out), 10);
  const { code, at } = await Promise.race([h1.d.exited.then((e) => ({ code: e.code, at: Date.now() })), sleep(15_000).then(() => ({ code: -1, at: 0 }))]);
  t.is(code, 0, 'host 1 exits 0 once drained');
  t.log(`host 1: drain began, exited ${at - drainAt} ms later, ${at - lastBye} ms after sipp's last BYE`);
  t.true(at - drainAt >= 5000, 'host 1 waited for its calls');
  t.is(h2.d.proc.exitCode, null, 'host 2 still serves');
  t.is((await fetch(`${h2.base}/readyz`)).status, 200);
});
