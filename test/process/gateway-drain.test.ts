/**
 * The drain of the real daemon (`hostd daemon --services gateway`, a token set): an
 * unauthenticated POST /drain is 401 and nothing happens; POST /drain with 20 sipp calls in
 * progress (an idle control connection open beside them) refuses new INVITEs with 503, a
 * repeated SIGTERM, SIGINT and POST /terminate keep the first deadline, and the process exits
 * 0 right after sipp's last BYE. The forced deadline with the caller stopped (SIGSTOP: its BYE
 * is never answered) exits 0 within SHUTDOWN_MAX_WAIT_MS + SHUTDOWN_CLEANUP_TIMEOUT_MS. Both
 * settings are refused at start-up unless positive integers.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { runCli, startDaemon, type Daemon } from '../helpers/daemon.js';
import { freePort, scenario, sipp } from '../helpers/sip.js';
import { GatewayClient } from '../../actors/gateway/client.js';
import { SDP, sleep, until } from '../helpers/gateway.js';

const TOKEN = 'process-drain-token';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

function stateDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-gwdrain-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(t: ExecutionContext, extra: string[] = []): Promise<{ d: Daemon; base: string; sipPort: number; gwPort: number }> {
  const [gwPort, sipPort] = [await freePort(), await freePort()];
  const d = startDaemon(t, [
    '--state-dir', stateDir(t), '--services', 'gateway', '--metrics-port', '0', '--metrics-host', '127.0.0.1',
    '--gateway-port', String(gwPort), '--sipserver-port', String(sipPort), '--gateway-auth-token', TOKEN, ...extra,
  ]);
  await d.waitFor((l) => l.msg === 'daemon ready', 30_000);
  await d.waitFor((l) => l.msg === 'attached to the SIP server');
  return { d, base: `http://127.0.0.1:${gwPort}`, sipPort, gwPort };
}

async function app(t: ExecutionContext, gwPort: number): Promise<GatewayClient> {
  const c = await GatewayClient.connect(`ws://127.0.0.1:${gwPort}/control`, { token: TOKEN });
  t.teardown(() => c.close());
  c.onRequest('sip.invite', () => ({ action: 'answer', sdp: SDP }));
  await c.call('route.register', { routes: [{ match: 'exact', value: 'alice' }] });
  return c;
}

const healthCalls = async (base: string) => ((await (await fetch(`${base}/healthz`)).json()) as { calls: number }).calls;
const deadline = async (base: string) => ((await (await fetch(`${base}/drain`, { headers: AUTH })).json()) as { deadline: string }).deadline;

test.serial('POST /drain with 20 calls up: 401 without the bearer; new INVITEs 503; repeated signals and requests keep the first deadline; exit 0 right after the last BYE, an idle connection open', async (t) => {
  const { d, base, sipPort, gwPort } = await start(t);
  const owner = await app(t, gwPort);
  const idle = await GatewayClient.connect(`ws://127.0.0.1:${gwPort}/control`, { token: TOKEN });
  t.teardown(() => idle.close());

  const calls = sipp(t, sipPort, ['-sn', 'uac', '-s', 'alice', '-m', '20', '-l', '20', '-r', '50', '-d', '5000']);
  await until(async () => (await healthCalls(base)) === 20, 20_000, '20 calls up');

  const refused = await fetch(`${base}/drain`, { method: 'POST' });
  t.is(refused.status, 401);
  t.is((await fetch(`${base}/drain`, { method: 'POST', headers: { Authorization: 'Bearer nope' } })).status, 401);
  t.is((await fetch(`${base}/readyz`)).status, 200, 'nothing happened');

  const told = owner.waitFor('gateway.draining');
  const ok = await fetch(`${base}/drain`, { method: 'POST', headers: AUTH });
  t.is(ok.status, 202);
  t.deepEqual(await ok.json(), { ok: true, draining: true });
  t.deepEqual(await told, { reason: 'POST /drain', maxWaitMs: 1_800_000 });
  t.is((await fetch(`${base}/readyz`)).status, 503);
  const first = await deadline(base);

  d.proc.kill('SIGTERM');
  await sleep(100);
  d.proc.kill('SIGINT');
  const again = await fetch(`${base}/terminate`, { method: 'POST', headers: AUTH });
  t.is(again.status, 202);
  t.deepEqual(await again.json(), { ok: true, draining: true });
  t.is(await deadline(base), first, 'the first deadline is kept');
  t.is(d.proc.exitCode, null, 'still draining: calls are up');

  const late = await sipp(t, sipPort, ['-sf', scenario(t, 'invite-refused.xml.tmpl', { STATUS: '503', MAXFWD: '70', EXTRA: 'Subject: late' }), '-m', '1', '-s', 'alice']);
  t.is(late.code, 0, late.stdout + late.errors);

  const r = await calls;
  const lastBye = Date.now();
  t.is(r.code, 0, r.stdout + r.errors);
  t.is(r.successful, 20);
  const { code } = await d.exited;
  const after = Date.now() - lastBye;
  t.is(code, 0, d.stderr());
  t.true(after < 3000, `exited ${after} ms after the last BYE`);
  t.truthy(d.lines.find((l) => l.msg === 'drain finished' && l.outcome === 'drained'));
  t.truthy(d.lines.find((l) => l.msg === 'signal during the drain: already draining'));
});

test.serial('SIGTERM with an idle control connection only: exit 0 at once', async (t) => {
  const { d, gwPort } = await start(t);
  const idle = await GatewayClient.connect(`ws://127.0.0.1:${gwPort}/control`, { token: TOKEN });
  t.teardown(() => idle.close());
  const t0 = Date.now();
  d.proc.kill('SIGTERM');
  const { code } = await d.exited;
  t.is(code, 0, d.stderr());
  t.true(Date.now() - t0 < 5000, `exited after ${Date.now() - t0} ms`);
  t.truthy(d.lines.find((l) => l.msg === 'drain finished' && l.outcome === 'drained'));
});

test.serial('the forced deadline with the caller stopped (SIGSTOP): BYE never answered, owners closed 1001, exit 0 within the deadline + the cleanup bound', async (t) => {
  const maxWait = 2000;
  const cleanup = 1500;
  const { d, base, sipPort, gwPort } = await start(t, ['--shutdown-max-wait-ms', String(maxWait), '--shutdown-cleanup-timeout-ms', String(cleanup)]);
  const owner = await app(t, gwPort);
  const local = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'hostd-sipp-'));
  const caller = spawn('sipp', [`127.0.0.1:${sipPort}`, '-i', '127.0.0.1', '-p', String(local), '-sn', 'uac', '-s', 'alice', '-m', '3', '-l', '3', '-r', '10', '-d', '120000', '-nostdin'], { cwd: dir, stdio: 'ignore' });
  t.teardown(() => {
    caller.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  await until(async () => (await healthCalls(base)) === 3, 20_000, '3 calls up');
  caller.kill('SIGSTOP');
  const t0 = Date.now();
  d.proc.kill('SIGTERM');
  const closed = await owner.closeCode;
  const { code } = await d.exited;
  const took = Date.now() - t0;
  t.is(closed, 1001);
  t.is(code, 0, d.stderr());
  t.true(took >= maxWait - 100, `exited after ${took} ms`);
  t.true(took < maxWait + cleanup + 2000, `exited after ${took} ms (deadline ${maxWait} + cleanup ${cleanup}, + the ordered shutdown)`);
  t.truthy(d.lines.find((l) => l.msg === 'drain deadline reached: ending what is left'));
  t.truthy(d.lines.find((l) => l.msg === 'drain cleanup bound reached: stopping anyway'), 'the unanswered BYEs were not waited for');
});

test.serial('SHUTDOWN_MAX_WAIT_MS and SHUTDOWN_CLEANUP_TIMEOUT_MS must be positive integers: start-up refused naming them', (t) => {
  const dir = stateDir(t);
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [['--shutdown-max-wait-ms', '0'], {}, /--shutdown-max-wait-ms/],
    [['--shutdown-cleanup-timeout-ms', '-5'], {}, /--shutdown-cleanup-timeout-ms/],
    [[], { SHUTDOWN_MAX_WAIT_MS: '1.5' }, /SHUTDOWN_MAX_WAIT_MS/],
    [[], { SHUTDOWN_CLEANUP_TIMEOUT_MS: 'soon' }, /SHUTDOWN_CLEANUP_TIMEOUT_MS/],
  ];
  for (const [args, env, re] of cases) {
    const r = runCli(['daemon', '--state-dir', dir, '--services', 'gateway', '--metrics-port', '0', ...args], env);
    t.not(r.status, 0, `${args.join(' ')} ${JSON.stringify(env)}`);
    t.regex(r.stderr, re);
  }
  const help = runCli(['daemon', '--help']);
  t.regex(help.stdout, /SHUTDOWN_MAX_WAIT_MS/);
  t.regex(help.stdout, /SHUTDOWN_CLEANUP_TIMEOUT_MS/);
});
