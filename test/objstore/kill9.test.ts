/**
 * kill -9 of the object store in the middle of a drain, a rebalance and a full verify: the store
 * runs in a child process (store-child.ts) over a state directory and real loop devices; the
 * test starts a job, waits until it has done some but not all of its work, SIGKILLs the child,
 * reads the scheduler's checkpoint with `hostd inspect`, starts a new child over the same state
 * directory and disks, and waits for the job to finish. It must have resumed from its checkpoint
 * (counters continue, the verify run keeps its id and is recorded once), and nothing may be lost
 * or duplicated: every object reads back byte-exact, and the slice files on the disks are
 * exactly the slices the records name (no orphan, no temp file).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import type { DrainProgress, RebalanceProgress, VerifyProgress, VerifyRun } from '../../protocols/objstore/maintenance.js';
import type { SchedulerArgs, SchedulerDebug } from '../../actors/scheduler/messages.js';
import type { SchedulerState } from '../../actors/scheduler/state.js';
import { openEnvironment } from '../../runtime/checkpoint/store.js';
import { Metadata } from '../../actors/objstore/metadata.js';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, keptStateDir, startLock } from './harness.js';
import { api, assertAllExact, assertDisksMatchRecords, putObjects, records, settled, sliceFilesOnDisk, waitFor } from './maint.js';

const CHILD = fileURLToPath(new URL('./store-child.js', import.meta.url));
const BIN = fileURLToPath(new URL('../../workers/main.js', import.meta.url));

interface Child {
  proc: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Shared {
  stateDir: string;
  devices: string[];
  child: Child | null;
  /** the scheduler settings the child runs with */
  childScheduler: string;
  bodies: Map<string, Buffer>;
  /** volume id of each provisioned device */
  ids: Map<string, number>;
}

/**
 * The tests share one store across restarts. (ava gives each test a shallow copy of t.context, so
 * the current child is kept here, not there: a child started by one test is the next test's.)
 */
let shared: Shared | null = null;
const store = (): Shared => {
  if (!shared) throw new Error('the store was not set up (test.before failed)');
  return shared;
};
const scope = new FileScope();
const live = new Set<ChildProcess>();

const running = (p: ChildProcess) => p.exitCode === null && p.signalCode === null;

/** Start a store over `stateDir` in a child process; resolves once it serves HTTP. */
function startChild(stateDir: string, scheduler: Partial<SchedulerArgs> = {}): Promise<Child> {
  // Two stores over the same disks and LMDB would be a test bug, not a finding.
  if (live.size) return Promise.reject(new Error(`a store child (pid ${[...live].map((p) => p.pid).join(', ')}) is still running`));
  const proc = spawn(process.execPath, ['--enable-source-maps', CHILD, JSON.stringify({ stateDir, scheduler })], { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(proc);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => {
      live.delete(proc);
      resolve({ code, signal });
    }),
  );
  let err = '';
  let tail: string[] = [];
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err = (err + c).slice(-8000);
    if (process.env.TEST_LOG_LEVEL) process.stderr.write(`[child ${proc.pid} stderr] ${c}`);
  });
  return new Promise<Child>((resolve, reject) => {
    let buf = '';
    let url: string | null = null;
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the store child did not come up within 120 s; stderr: ${err}; last lines: ${tail.join('\n')}`));
    }, 120_000);
    // Always read stdout (the daemon's logs go there with synchronous writes: a full pipe would stall it).
    proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (process.env.TEST_LOG_LEVEL) process.stderr.write(`[child ${proc.pid}] ${line}\n`);
        tail = [...tail.slice(-9), line];
        if (url) continue;
        try {
          const o = JSON.parse(line) as { url?: unknown };
          if (typeof o.url === 'string') {
            url = o.url;
            clearTimeout(timer);
            resolve({ proc, url, exited });
          }
        } catch {
          /* not JSON */
        }
      }
    });
    void exited.then((e) => {
      clearTimeout(timer);
      if (!url) reject(new Error(`the store child exited (${e.code ?? e.signal}) before serving; stderr: ${err}`));
    });
  });
}

/** kill -9 and wait for the process to be gone (asserted: it died of the signal). */
async function kill9(t: ExecutionContext, c: Child): Promise<void> {
  process.kill(c.proc.pid!, 'SIGKILL');
  const e = await c.exited;
  t.is(e.signal, 'SIGKILL', 'the store died of SIGKILL, with no chance to clean up');
}

/** A child with these scheduler settings is running (a test that failed half-way may have left none). */
async function ensureChild(t: ExecutionContext, ctx: Shared, scheduler: Partial<SchedulerArgs>): Promise<Child> {
  if (ctx.child && running(ctx.child.proc) && ctx.childScheduler === JSON.stringify(scheduler)) return ctx.child;
  return restart(t, ctx, scheduler);
}

/** kill -9 the running child (if any) and start a new one over the same state directory. */
async function restart(t: ExecutionContext, ctx: Shared, scheduler: Partial<SchedulerArgs>): Promise<Child> {
  if (ctx.child && running(ctx.child.proc)) await kill9(t, ctx.child);
  ctx.child = await startChild(ctx.stateDir, scheduler);
  ctx.childScheduler = JSON.stringify(scheduler);
  return ctx.child;
}

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

/** `hostd inspect objstore.scheduler --state-dir <dir>`: the checkpoint as the operator sees it. */
async function inspectScheduler(t: ExecutionContext, stateDir: string): Promise<SchedulerState> {
  const r = await run(process.execPath, [BIN, 'inspect', 'objstore.scheduler', '--state-dir', stateDir]);
  t.is(r.code, 0, `hostd inspect: ${r.stderr}`);
  const doc = JSON.parse(r.stdout) as { id: string; kind: string; state: SchedulerState };
  t.is(doc.id, 'objstore.scheduler');
  t.is(doc.kind, 'scheduler');
  return doc.state;
}

/** hostd inspect shows an epoch-ms time field as "<ISO 8601> (<ms>)": the ISO part (asserted consistent). */
function readableTime(v: unknown): string {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) \((\d+)\)$/.exec(String(v));
  if (!m || new Date(Number(m[2])).toISOString() !== m[1]) throw new Error(`not a readable time: ${JSON.stringify(v)}`);
  return m[1]!;
}

/** What the records in LMDB say (opened read-only, as hostd inspect does: safe beside a live store). */
async function offline<T>(stateDir: string, fn: (meta: Metadata) => T): Promise<T> {
  const root = openEnvironment(stateDir, { readOnly: true });
  try {
    return fn(new Metadata(root));
  } finally {
    await root.close();
  }
}

const slicesOnVolume = (recs: Array<{ dataVolumes: number[]; parityVolumes: number[] }>, v: number) =>
  recs.reduce((n, r) => n + [...r.dataVolumes, ...r.parityVolumes].filter((x) => x === v).length, 0);

async function provision(url: string, device: string): Promise<number> {
  const release = await startLock();
  try {
    const r = await api<{ volume: { id: number } }>(`${url}/$/volumes`, 'POST', { blockPath: device, wipe: Date.now() });
    if (r.status !== 201) throw new Error(`provisioning ${device}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.volume.id;
  } finally {
    release();
  }
}

async function debug(url: string): Promise<SchedulerDebug> {
  return (await api<{ scheduler: SchedulerDebug }>(`${url}/$/debug`)).body.scheduler;
}

/** one object at a time: a drain takes seconds, long enough to be killed part-way */
const SLOW: Partial<SchedulerArgs> = { drainConcurrency: 1 };
/** four objects at a time (the default): several copies in flight when the kill comes */
const WIDE: Partial<SchedulerArgs> = { drainConcurrency: 4 };

// 72 objects from 64 KiB to 1 MiB (sizes spread evenly, not random: the runs are comparable).
const SMALL = Array.from({ length: 72 }, (_, i) => 64 * 1024 + Math.floor(((i * 0.6180339887) % 1) * (1024 - 64) * 1024) + i);

test.before(async (t) => {
  const stateDir = keptStateDir(scope, 'hostd-kill9-');
  const devices = await withLoopDevices(scope, 9, 512);
  // Registered last, run first: no child outlives the file, whatever failed.
  scope.teardown(async () => {
    for (const p of [...live]) {
      const gone = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await gone;
    }
  });
  const ctx: Shared = { stateDir, devices, child: null, childScheduler: '', bodies: new Map(), ids: new Map() };
  const child = await ensureChild(t, ctx, SLOW);
  for (const d of devices.slice(0, 6)) ctx.ids.set(d, await provision(child.url, d));
  ctx.bodies = await putObjects(child.url, 'k9', SMALL);
  // Somewhere for the drained slices to go (every object has a slice on each of the six).
  ctx.ids.set(devices[6]!, await provision(child.url, devices[6]!));
  shared = ctx;
});
test.after.always(() => scope.run());

test.serial('bad input: a child without a state dir and an unknown checkpoint id are refused with a message', async (t) => {
  const bad = spawn(process.execPath, [CHILD, JSON.stringify({ scheduler: {} })], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  bad.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const code = await new Promise<number | null>((r) => bad.on('exit', (c) => r(c)));
  t.is(code, 1);
  t.regex(err, /stateDir \(a directory\) is required/);
  const r = await run(process.execPath, [BIN, 'inspect', 'objstore.nope', '--state-dir', store().stateDir]);
  t.is(r.code, 1);
  t.regex(r.stderr, /no checkpoint for actor "objstore\.nope"/);
  const r2 = await run(process.execPath, [BIN, 'inspect', 'objstore.scheduler', '--state-dir', store().stateDir, '--cursor']);
  t.is(r2.code, 2, `an unknown flag is a usage error: ${r2.stderr}`);
});

test.serial('kill -9 in the middle of a drain: the restarted store resumes it from its cursor; every slice moved once', async (t) => {
  const ctx = store();
  const child = await ensureChild(t, ctx, SLOW);
  const volumeId = ctx.ids.get(ctx.devices[1]!)!;
  const onVolume = slicesOnVolume(await records(child.url, ctx.bodies.keys()), volumeId);
  t.true(onVolume >= 60, `the volume holds a slice of most objects (${onVolume})`);

  const start = await api<{ drain: DrainProgress }>(`${child.url}/$/volumes/${volumeId}/drain`, 'POST');
  t.is(start.status, 202);
  const mid = await waitFor('the drain to be part-way', async () => {
    const r = await api<{ drain: DrainProgress }>(`${child.url}/$/volumes/${volumeId}/drain`);
    return r.body.drain.moved >= 3 && r.body.drain.remaining > 10 ? r.body.drain : null;
  }, 60_000, 30);
  await kill9(t, child);

  const cp = await inspectScheduler(t, ctx.stateDir);
  const d = cp.drains[String(volumeId)];
  t.truthy(d, 'the checkpoint holds the drain');
  t.is(d!.state, 'running');
  t.is(typeof d!.cursor, 'string', 'with its cursor (an object id)');
  t.true(d!.moved >= 1 && d!.moved < onVolume, `and its progress (${d!.moved} of ${onVolume})`);
  t.true(d!.moved >= mid.moved - 1, 'at most the batch in flight is not checkpointed');
  t.is(readableTime(d!.startedAt), mid.startedAt, 'started when the API said (shown as ISO 8601 by hostd inspect)');
  const leftAtKill = await offline(ctx.stateDir, (m) => {
    let n = 0;
    for (const { value } of m.objects.getRange()) n += slicesOnVolume([value], volumeId);
    return n;
  });
  t.log(`killed with ${d!.moved} moved in the checkpoint, ${leftAtKill} slices left on volume ${volumeId}`);

  const again = await restart(t, ctx, SLOW);
  const done = await waitFor('the resumed drain to complete', async () => {
    const r = await api<{ drain: DrainProgress }>(`${again.url}/$/volumes/${volumeId}/drain`);
    return r.body.drain.state === 'completed' ? r.body.drain : null;
  }, 60_000);
  t.is(done.startedAt, mid.startedAt, 'the same drain (not a new one)');
  t.is(done.remaining, 0);
  t.is(done.moved - d!.moved, leftAtKill, 'after the restart it moved exactly what was left (resumed, nothing twice)');
  // Held since the checkpoint store orders its writes (a save asked before a flip's checkpoint
  // never commits over it): a kill after a flip keeps the flip's count.
  t.is(done.moved, onVolume, 'moved ends equal to the slices that were on the volume');
  t.is(done.copied + done.reconstructed, done.moved);
  await settled(again.url);
  for (const r of await records(again.url, ctx.bodies.keys())) t.false([...r.dataVolumes, ...r.parityVolumes].includes(volumeId), `${r.path} has left volume ${volumeId}`);
  await assertAllExact(t, again.url, ctx.bodies);
  await assertDisksMatchRecords(t, again.url, ctx.stateDir, ctx.bodies.keys());
});

// Enough moves to kill it part-way; fewer than the new disk can take (it starts some 9 MB below
// the target fill: dozens of slices of the largest objects), so the job ends on maxMoves.
const MAX_MOVES = 14;

test.serial('kill -9 in the middle of a rebalance: it resumes with its counters, every slice moved is counted once', async (t) => {
  const ctx = store();
  const child = await ensureChild(t, ctx, SLOW);
  // An empty disk: the others are above the target fill, it is below.
  const fresh = await provision(child.url, ctx.devices[7]!);
  ctx.ids.set(ctx.devices[7]!, fresh);
  const before = await records(child.url, ctx.bodies.keys());

  const start = await api<RebalanceProgress>(`${child.url}/$/rebalance`, 'POST', { deadband: 0, concurrency: 1, maxMoves: MAX_MOVES });
  t.is(start.status, 202);
  t.true(start.body.running);
  t.is(start.body.maxMoves, MAX_MOVES);
  const mid = await waitFor('the rebalance to be part-way', async () => {
    const r = await api<RebalanceProgress>(`${child.url}/$/rebalance`);
    return r.body.running && r.body.moves >= 3 && r.body.moves <= MAX_MOVES - 4 ? r.body : null;
  }, 60_000, 30);
  t.true(mid.bytesToMove > 0, `work is left (${mid.bytesToMove} bytes to move)`);
  await kill9(t, child);

  const cp = (await inspectScheduler(t, ctx.stateDir)).rebalance;
  t.truthy(cp, 'the checkpoint holds the rebalance');
  t.true(cp!.running, 'still running');
  t.is(cp!.deadband, 0);
  t.is(cp!.maxMoves, MAX_MOVES);
  t.is(cp!.concurrency, 1);
  t.is(typeof cp!.currentSourceVolumeId, 'number', 'with the source it was shedding');
  t.true(cp!.counters.moves >= mid.moves - 1 && cp!.counters.moves >= 1, `and its counters (${cp!.counters.moves} moves)`);
  t.true(cp!.bytesMoved > 0);
  t.is(readableTime(cp!.startedAt), mid.startedAt ?? '');

  const again = await restart(t, ctx, SLOW);
  const done = await waitFor('the resumed rebalance to finish', async () => {
    const r = await api<RebalanceProgress>(`${again.url}/$/rebalance`);
    return r.body.running ? null : r.body;
  }, 60_000);
  // BUG (see the report, rebalance.ts): a candidate skipped because it would take one source below
  // the target is skipped for every source; the job then ends 'completed' after a few moves with
  // the other sources still above the target and the new disk below it.
  if (done.lastOutcome !== 'maxMoves') t.log(`ended '${done.lastOutcome}' after ${done.moves} moves (noDest ${done.noDest}); still above the target: ${done.sourceVolumeIds.join(', ')}; ${done.bytesToMove} bytes to move`);
  t.is(done.lastOutcome, 'maxMoves', 'it stopped at maxMoves, counted across the restart');
  t.is(done.moves, MAX_MOVES);
  t.is(done.startedAt, mid.startedAt, 'the same job (not a new one)');
  t.true(done.moves > cp!.counters.moves, 'the counters went on from the checkpoint');
  t.true(done.bytesMoved > cp!.bytesMoved);
  t.is(done.copied + done.reconstructed, done.moves);
  await settled(again.url);
  const after = await records(again.url, ctx.bodies.keys());
  let changed = 0;
  let toFresh = 0;
  for (const [i, r] of after.entries()) {
    const was = [...before[i]!.dataVolumes, ...before[i]!.parityVolumes];
    const now = [...r.dataVolumes, ...r.parityVolumes];
    now.forEach((v, x) => {
      if (v === was[x]) return;
      changed++;
      if (v === fresh) toFresh++;
    });
    t.is(new Set(now).size, now.length, `${r.path}: one slice per volume`);
  }
  t.true(toFresh >= 1, `the new disk took slices (${toFresh} of ${changed})`);
  // BUG (see the report): a kill between a flip and the batch's checkpoint would lose that move here.
  t.is(done.moves, changed, 'moves counted = slices whose volume changed (resumed, nothing counted twice or lost)');
  await assertAllExact(t, again.url, ctx.bodies);
  await assertDisksMatchRecords(t, again.url, ctx.stateDir, ctx.bodies.keys());
});

test.serial('kill -9 in the middle of a full verify: the run keeps its id and cursor, checks every object once, one record', async (t) => {
  const ctx = store();
  const child = await ensureChild(t, ctx, SLOW);
  // ~100 MiB to verify in all: add large objects (they also give the next test long copies).
  const big = await putObjects(child.url, 'k9big', [8, 9, 10, 11, 12, 13].map((n) => n * 1024 * 1024 + n));
  for (const [k, b] of big) ctx.bodies.set(k, b);
  const totalBytes = [...ctx.bodies.values()].reduce((n, b) => n + b.byteLength, 0);
  const recs = await records(child.url, ctx.bodies.keys());
  const totalSlices = recs.reduce((n, r) => n + r.k + r.m, 0);

  const start = await api<{ accepted: boolean; deferred?: boolean; startedAt: string }>(`${child.url}/$/verify-volumes`, 'POST', { mode: 'full' });
  t.is(start.status, 200);
  t.true(start.body.accepted);
  t.falsy(start.body.deferred);
  const mid = await waitFor('the verify to be part-way', async () => {
    const r = await api<VerifyProgress>(`${child.url}/$/verify-volumes`);
    const run = r.body.run;
    return run && run.status === 'running' && run.objectsChecked >= 8 && run.objectsChecked < r.body.objectsTotal - 8 ? r.body : null;
  }, 60_000, 30);
  t.is(mid.objectsTotal, ctx.bodies.size);
  const runId = mid.run!.id;
  await kill9(t, child);

  const cp = (await inspectScheduler(t, ctx.stateDir)).verify;
  t.truthy(cp, 'the checkpoint holds the run');
  t.is(cp!.run.id, runId);
  t.is(cp!.run.status, 'running');
  t.is(cp!.run.mode, 'full');
  t.is(typeof cp!.cursor, 'string', 'with its cursor');
  t.is(cp!.objectsTotal, ctx.bodies.size);
  t.true(cp!.run.objectsChecked >= 4 && cp!.run.objectsChecked < ctx.bodies.size, `and its progress (${cp!.run.objectsChecked} of ${ctx.bodies.size})`);

  // (the next test drains four objects at a time: the new child is started so, to save a boot)
  const again = await restart(t, ctx, WIDE);
  const run = await waitFor('the resumed run to complete', async () => {
    const r = await api<{ runs: VerifyRun[] }>(`${again.url}/$/verify-runs`);
    const mine = r.body.runs.find((x) => x.id === runId);
    return mine?.status === 'completed' ? mine : null;
  }, 60_000);
  t.is(run.startedAt, mid.run!.startedAt, 'the same run, started once');
  t.is(run.objectsChecked, cp!.objectsTotal, 'objectsChecked ends equal to objectsTotal: nothing skipped, nothing checked twice');
  t.is(run.slicesChecked, totalSlices);
  t.is(run.bytesChecked, totalBytes);
  t.deepEqual(Object.values(run.errors), [0, 0, 0, 0, 0, 0, 0], 'a clean store verifies clean');
  const runs = (await api<{ runs: VerifyRun[] }>(`${again.url}/$/verify-runs`)).body.runs;
  t.is(runs.filter((x) => x.id === runId).length, 1, 'one run record for it');
  t.is(runs.length, 1, 'and no other run was started');
  const now = await api<VerifyProgress>(`${again.url}/$/verify-volumes`);
  t.is(now.body.run, null, 'nothing is verifying any more');
  await settled(again.url);
  await assertAllExact(t, again.url, ctx.bodies);
  await assertDisksMatchRecords(t, again.url, ctx.stateDir, ctx.bodies.keys());
});

test.serial('kill -9 between a copy and its flip (drain, concurrency 4, large objects): the copy is undone at boot; nothing lost or left twice', async (t) => {
  const ctx = store();
  let child = await ensureChild(t, ctx, WIDE);
  // The large objects are on every writable volume: a ninth disk gives their slices somewhere to go.
  ctx.ids.set(ctx.devices[8]!, await provision(child.url, ctx.devices[8]!));
  const volumeId = ctx.ids.get(ctx.devices[2]!)!;
  const onVolume = slicesOnVolume(await records(child.url, ctx.bodies.keys()), volumeId);
  const start = await api<{ drain: DrainProgress }>(`${child.url}/$/volumes/${volumeId}/drain`, 'POST');
  t.is(start.status, 202);

  // Kill while a batch is part-way: some of its copies in progress (move records 'copying'), and
  // some of its relocations already flipped but the batch not checkpointed yet. Kill again (up to
  // four times) until both were seen at a kill, or the drain is over.
  let copyHit = false;
  let lagHit = false;
  let lastKillAt = 0;
  for (let attempt = 1; attempt <= 4 && !(copyHit && lagHit); attempt++) {
    const url = child.url;
    const state = await waitFor('a batch part-way', async () => {
      const [dbg, dr] = await Promise.all([debug(url), api<{ drain: DrainProgress }>(`${url}/$/volumes/${volumeId}/drain`)]);
      if (dr.body.drain.state !== 'running') return 'over';
      // Until a kill has caught a copy, any copy in progress will do (under load all four copies of a
      // batch are often in flight at once); after that, aim at a batch that has flipped some already.
      const partWay = dbg.moves.copying >= 1 && (dbg.moves.copying < 4 || !copyHit) && dr.body.drain.moved >= 1;
      return partWay ? 'part-way' : null;
    }, 60_000, 20);
    if (state === 'over') break;
    await kill9(t, child);
    lastKillAt = Date.now();
    const copying = await offline(ctx.stateDir, (m) => [...m.moves.getRange()].filter((e) => e.value.phase === 'copying').length);
    const left = await offline(ctx.stateDir, (m) => [...m.objects.getRange()].reduce((n, e) => n + slicesOnVolume([e.value], volumeId), 0));
    const temps = sliceFilesOnDisk(ctx.stateDir).temps;
    const cp = (await inspectScheduler(t, ctx.stateDir)).drains[String(volumeId)]!;
    t.is(cp.state, 'running');
    const lag = onVolume - left - cp.moved;
    t.log(`kill ${attempt}: ${copying} relocation(s) copying, ${temps} temp slice file(s); ${onVolume - left} slices flipped off the volume, ${cp.moved} counted in the checkpoint`);
    if (copying > 0) copyHit = true;
    if (lag > 0) lagHit = true;
    child = await restart(t, ctx, WIDE);
  }
  t.true(copyHit, 'a kill landed while a relocation was between its copy and its flip');
  // Right after boot: the interrupted copies were undone (the resumed drain may have started new ones).
  const stale = await offline(ctx.stateDir, (m) => [...m.moves.getRange()].filter((e) => e.value.phase === 'copying' && e.value.at < lastKillAt).length);
  t.is(stale, 0, 'no copy from before the kill is left after boot');

  const done = await waitFor('the drain to complete', async () => {
    const r = await api<{ drain: DrainProgress }>(`${child.url}/$/volumes/${volumeId}/drain`);
    return r.body.drain.state === 'completed' ? r.body.drain : null;
  }, 60_000);
  t.is(done.remaining, 0);
  t.deepEqual(done.stuck, []);
  await settled(child.url);
  const dbg = await debug(child.url);
  t.deepEqual(dbg.moves, { copying: 0, flipped: 0 }, 'GET /$/debug: no relocation pending');
  // A kill after flips keeps their counts (each flip's checkpoint commits with it, and an older
  // asynchronous save never commits over it): moved ends equal to the slices on the volume.
  t.is(done.moved, onVolume, `moved ends equal to the slices that were on the volume${lagHit ? ' (a kill landed after flips the checkpoint did not count)' : ''}`);
  await assertAllExact(t, child.url, ctx.bodies);
  await assertDisksMatchRecords(t, child.url, ctx.stateDir, ctx.bodies.keys());
});
