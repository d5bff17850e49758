/**
 * The real `hostd` process: start-up validation, kill -9 and restart, inspection of a live
 * daemon, metrics from every thread, ordered shutdown on SIGTERM. Serial: these are processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { CheckpointStore } from '../../runtime/system.js';
import type { HeartbeatState } from '../../runtime/system/heartbeat/messages.js';
import { runCli, startDaemon } from '../helpers/daemon.js';

function stateDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hostd-daemon-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function readHeartbeat(dir: string): HeartbeatState | undefined {
  const store = CheckpointStore.open(dir, { readOnly: true });
  try {
    return store.load<HeartbeatState>('hostd.heartbeat')?.state;
  } finally {
    void store.close();
  }
}

async function until<T>(what: string, fn: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('a bad setting stops start-up with a message naming it', (t) => {
  const dir = stateDir(t);
  const cases: Array<{ args: string[]; env?: Record<string, string>; names: string[] }> = [
    { args: ['--metrics-port', '70000'], names: ['--metrics-port', 'HOSTD_METRICS_PORT', '70000', '0 to 65535'] },
    { args: [], env: { HOSTD_REQUEST_TIMEOUT_MS: 'soon' }, names: ['HOSTD_REQUEST_TIMEOUT_MS', '--request-timeout-ms', '"soon"'] },
    { args: ['--services', 'objstore,telepathy'], names: ['--services', 'unknown: telepathy'] },
    { args: ['--state-dir', 'relative/dir'], names: ['--state-dir', 'absolute path'] },
    { args: ['--log-level', 'loud'], names: ['--log-level', 'one of fatal'] },
    { args: ['--no-such-flag'], names: ["'--no-such-flag'", 'hostd daemon --help'] },
  ];
  for (const c of cases) {
    const r = runCli(['daemon', '--state-dir', dir, '--metrics-port', '0', ...c.args], c.env);
    t.is(r.status, 2, `exit status for ${JSON.stringify(c)}`);
    for (const n of c.names) t.true(r.stderr.includes(n), `stderr names ${n}: ${r.stderr}`);
    t.false(r.stdout.includes('daemon ready'), 'nothing started');
  }
});

test.serial('a metrics port in use stops start-up, naming the setting', async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '0.0.0.0', r));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  const d = startDaemon(t, ['--state-dir', stateDir(t), '--metrics-port', String(port), '--metrics-host', '0.0.0.0']);
  const { code } = await d.exited;
  t.is(code, 2);
  t.regex(d.stderr(), new RegExp(`--metrics-port .*cannot listen on 0\\.0\\.0\\.0:${port}`));
});

test.serial('a checkpoint written before kill -9 of the daemon is there after restart', async (t) => {
  const dir = stateDir(t);
  const args = ['--state-dir', dir, '--metrics-port', '0', '--heartbeat-ms', '100'];
  const first = startDaemon(t, args);
  await first.waitFor((l) => l.msg === 'daemon ready');
  const before = await until('three heartbeats on disk', () => {
    const s = readHeartbeat(dir);
    return s && s.beats >= 3 ? s : undefined;
  });
  t.is(before.bootCount, 1);
  first.proc.kill('SIGKILL');
  const { signal } = await first.exited;
  t.is(signal, 'SIGKILL');
  const afterKill = readHeartbeat(dir);
  t.truthy(afterKill);
  t.true(afterKill!.beats >= before.beats, 'what was on disk before the kill is still there');

  const second = startDaemon(t, args);
  const started = await second.waitFor((l) => l.msg === 'heartbeat started');
  t.is(started.bootCount, 2);
  t.is(started.ns, 'heartbeat');
  t.true((started.previousLastBeatAt as number) >= before.lastBeatAt, 'the restarted actor got the checkpoint back');
  second.proc.kill('SIGINT');
  t.is((await second.exited).code, 0);
  const final = readHeartbeat(dir)!;
  t.is(final.bootCount, 2);
  t.is(final.firstBootAt, before.firstBootAt);
});

test.serial('hostd inspect shows the checkpoints of a running daemon as a table and as JSON', async (t) => {
  const dir = stateDir(t);
  const d = startDaemon(t, ['--state-dir', dir, '--metrics-port', '0', '--heartbeat-ms', '100']);
  await d.waitFor((l) => l.msg === 'daemon ready');
  await until('a beat', () => (readHeartbeat(dir)?.beats ?? 0) >= 1 || undefined);

  const table = runCli(['inspect', '--state-dir', dir]);
  t.is(table.status, 0, table.stderr);
  const [header, row] = table.stdout.split('\n');
  t.regex(header!, /^ACTOR ID\s+KIND\s+UPDATED AT\s+AGE\s+SIZE$/);
  t.regex(row!, /^hostd\.heartbeat\s+heartbeat\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+\d+s ago\s+\d+ B$/);

  const list = runCli(['inspect', '--json', '--state-dir', dir]);
  t.is(list.status, 0, list.stderr);
  const rows = JSON.parse(list.stdout) as Array<{ id: string; kind: string; updatedAt: string; size: number }>;
  const hb = rows.find((r) => r.id === 'hostd.heartbeat');
  t.truthy(hb);
  t.is(hb!.kind, 'heartbeat');
  t.true(hb!.size > 0);
  t.false(Number.isNaN(Date.parse(hb!.updatedAt)));

  const one = runCli(['inspect', 'hostd.heartbeat', '--json', '--state-dir', dir]);
  t.is(one.status, 0, one.stderr);
  const rec = JSON.parse(one.stdout) as { id: string; state: HeartbeatState };
  t.is(rec.id, 'hostd.heartbeat');
  t.is(rec.state.bootCount, 1);

  // Reading did not disturb the daemon: it keeps checkpointing.
  const beats = rec.state.beats;
  await until('more beats after inspection', () => ((readHeartbeat(dir)?.beats ?? 0) > beats + 2 ? true : undefined));
  t.is(d.proc.exitCode, null);

  const missing = runCli(['inspect', 'no.such.actor', '--state-dir', dir]);
  t.is(missing.status, 1);
  t.regex(missing.stderr, /no checkpoint for actor "no\.such\.actor"/);
  const nodir = runCli(['inspect', '--state-dir', join(dir, 'nope')]);
  t.is(nodir.status, 1);
  t.regex(nodir.stderr, /no checkpoint database at .*nope/);
});

test.serial('/metrics merges the metrics of every thread; SIGTERM stops in order and exits 0', async (t) => {
  const dir = stateDir(t);
  const d = startDaemon(t, ['--state-dir', dir, '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--heartbeat-ms', '100']);
  const listening = await d.waitFor((l) => l.msg === 'metrics endpoint listening');
  await d.waitFor((l) => l.msg === 'daemon ready');
  await until('beats', () => ((readHeartbeat(dir)?.beats ?? 0) >= 2 ? true : undefined));
  const res = await fetch(`http://127.0.0.1:${listening.port as number}/metrics`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /text\/plain/);
  const text = await res.text();
  // Written only by the heartbeat actor's worker thread:
  const m = /^hostd_checkpoints_written_total\{kind="heartbeat"\} (\d+)/m.exec(text);
  t.truthy(m, text.slice(0, 2000));
  t.true(Number(m![1]) >= 2);
  // Only the main thread's supervisor knows these:
  t.regex(text, /^hostd_actors\{kind="heartbeat"\} 1$/m);
  t.regex(text, /^hostd_worker_threads\{group="system"\} 1$/m);
  t.regex(text, /^process_cpu_user_seconds_total \d/m);

  const other = await fetch(`http://127.0.0.1:${listening.port as number}/objects`);
  t.is(other.status, 404);
  const body = (await other.json()) as { error: { code: string; message: string } };
  t.is(body.error.code, 'NOT_FOUND');

  d.proc.kill('SIGTERM');
  const { code } = await d.exited;
  t.is(code, 0);
  const msgs = d.lines.map((l) => l.msg);
  const order = ['shutting down', 'stopped'].map((m2) => msgs.indexOf(m2));
  t.true(order[0]! >= 0 && order[1]! > order[0]!, JSON.stringify(msgs));
  t.is(d.lines.find((l) => l.msg === 'stopped')!.exitCode, 0);
});

test.serial('--help on every command', (t) => {
  for (const args of [['--help'], ['daemon', '--help'], ['inspect', '--help'], ['help', 'daemon'], ['help', 'inspect']]) {
    const r = runCli(args);
    t.is(r.status, 0, args.join(' '));
    t.regex(r.stdout, /Usage:/);
  }
  t.regex(runCli(['daemon', '--help']).stdout, /--metrics-port <v>.*\n.*HOSTD_METRICS_PORT/);
  const bad = runCli(['frobnicate']);
  t.is(bad.status, 2);
  t.regex(bad.stderr, /unknown command 'frobnicate'/);
});
