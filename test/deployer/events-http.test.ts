/**
 * The deployment event stream over real HTTP. A deployment is held in `pushing` by a pre-receive
 * hook of the real IaC remote that waits for a file the test creates (the gate), so subscribers
 * can join while it runs: late subscribers get the snapshot first, 100 clients all get the
 * terminal frame, Last-Event-ID resumes without gaps, heartbeats come at the (short) interval, a
 * client that goes away frees its subscription, an unknown deployment is 404.
 */
import test, { type ExecutionContext } from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bareRemote } from '../helpers/git-remote.js';
import { takeFrames, type SseFrame } from '../helpers/sse-frames.js';
import { chart, setup, workdir, type Setup } from '../helpers/deploy-setup.js';
import { DEPLOYER_ID, type DeployerProtocol } from '../../actors/deployer/messages.js';

type Frame = SseFrame;

interface Stream {
  frames: Frame[];
  /** resolves when the server closes the stream */
  closed: Promise<void>;
  status: number;
  /** wait until `pred` holds for the frames so far */
  until(pred: (f: Frame[]) => boolean, ms?: number): Promise<void>;
  abort(): void;
}

async function subscribe(s: Setup, id: string, lastEventId?: string): Promise<Stream> {
  const ac = new AbortController();
  const res = await fetch(`${s.d.url}/api/deployments/${id}/events`, { headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId }, signal: ac.signal });
  const frames: Frame[] = [];
  const waiters: Array<() => void> = [];
  const closed = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body) {
        const taken = takeFrames(buf + decoder.decode(chunk as Uint8Array, { stream: true }));
        buf = taken.rest;
        frames.push(...taken.frames);
        if (taken.frames.length > 0) for (const w of waiters.splice(0)) w();
      }
    } catch {
      // aborted by the test
    }
    for (const w of waiters.splice(0)) w();
  })();
  return {
    frames,
    closed,
    status: res.status,
    async until(pred, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (!pred(frames)) {
        if (Date.now() > deadline) throw new Error(`timed out; frames: ${JSON.stringify(frames)}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), new Promise((r) => setTimeout(r, 100))]);
      }
    },
    abort: () => ac.abort(),
  };
}

/** A deployment held in `pushing` until `release()`. */
async function heldDeployment(t: ExecutionContext, heartbeatMs = 15_000) {
  const remote = bareRemote(t);
  const gate = join(workdir(t), 'go');
  remote.hook('pre-receive', `while [ ! -e ${gate} ]; do sleep 0.05; done\nexit 0`);
  const s = await setup(t, remote.url, { values: { heartbeatMs } });
  const { deploymentId } = (await s.deploy({ chart: chart(t) })).body;
  for (let i = 0; i < 200 && (await s.d.call('GET', `/api/deployments/${deploymentId}`)).body.status !== 'pushing'; i++) await new Promise((r) => setTimeout(r, 25));
  return { s, id: deploymentId as string, release: () => writeFileSync(gate, '') };
}

const statuses = (frames: Frame[]) => frames.filter((f) => f.event === 'status').map((f) => f.data.status);

test('a late subscriber gets the snapshot first (targets, then the status); live events follow; 100 clients all get the terminal frame', async (t) => {
  const { s, id, release } = await heldDeployment(t);
  const first = await subscribe(s, id);
  t.is(first.status, 200);
  await first.until((f) => f.length >= 2);
  t.deepEqual(first.frames.map((f) => [f.id, f.event]), [['4', 'target'], ['4', 'status']], 'snapshot at seq 4: queued (target, status), validating, pushing');
  t.deepEqual(first.frames[0]?.data.target, { id: first.frames[0]?.data.target.id, clusterId: 1, clusterName: 'swarm-a', monitorTimeoutSecs: 300, status: 'pending', message: 'waiting for the push' });
  t.is(first.frames[1]?.data.status, 'pushing');
  const many = await Promise.all(Array.from({ length: 100 }, () => subscribe(s, id)));
  await Promise.all(many.map((c) => c.until((f) => f.length >= 2)));
  release();
  await Promise.all([first, ...many].map((c) => c.closed));
  for (const c of [first, ...many]) {
    const last = c.frames[c.frames.length - 1];
    t.is(last?.event, 'status');
    t.is(last?.data.status, 'failed');
  }
  t.deepEqual(statuses(first.frames), ['pushing', 'pushed', 'monitoring', 'failed']);
  // ids after the snapshot are consecutive: nothing lost, nothing twice
  const ids = first.frames.slice(2).map((f) => Number(f.id));
  t.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => 5 + i));
  const info = await s.d.system.ref<DeployerProtocol>(DEPLOYER_ID).request({ type: 'info' });
  t.is(info.streams, 0, 'closed streams hold no subscription');
  // a terminal deployment: the snapshot, one final status, closed
  const late = await subscribe(s, id);
  await late.closed;
  t.deepEqual(late.frames.map((f) => f.event), ['target', 'status']);
  t.is(late.frames[1]?.data.status, 'failed');
  t.is(late.frames[1]?.id, ids[ids.length - 1]?.toString());
});

test('Last-Event-ID resumes exactly after the last frame seen; a finished stream with nothing missed is 204; unknown ids 404', async (t) => {
  const { s, id, release } = await heldDeployment(t);
  const a = await subscribe(s, id, '0');
  await a.until((f) => f.length >= 4);
  t.deepEqual(a.frames.map((f) => [f.id, f.event]), [['1', 'target'], ['2', 'status'], ['3', 'status'], ['4', 'status']], 'the whole log from seq 1');
  a.abort();
  release();
  const b = await subscribe(s, id, '4');
  await b.closed;
  const all = [...a.frames, ...b.frames].map((f) => Number(f.id));
  t.deepEqual(all, Array.from({ length: all.length }, (_, i) => i + 1), 'no gap, no repeat');
  t.is(b.frames[b.frames.length - 1]?.data.status, 'failed');
  const done = await fetch(`${s.d.url}/api/deployments/${id}/events`, { headers: { 'last-event-id': String(all.length) } });
  t.is(done.status, 204);
  // a Last-Event-ID ahead of the log, or not a number, is ignored: the snapshot
  const ahead = await subscribe(s, id, '999');
  await ahead.closed;
  t.deepEqual(ahead.frames.map((f) => f.event), ['target', 'status']);
  const missing = await fetch(`${s.d.url}/api/deployments/00000000-0000-4000-8000-000000000000/events`);
  t.is(missing.status, 404);
  t.deepEqual(await missing.json(), { error: { code: 'DEPLOYMENT_NOT_FOUND', message: 'no deployment "00000000-0000-4000-8000-000000000000"' } });
});

test('heartbeats come every interval while running, repeating the last id; a client that goes away frees its subscription', async (t) => {
  const { s, id, release } = await heldDeployment(t, 100);
  const c = await subscribe(s, id);
  await c.until((f) => f.filter((x) => x.event === 'heartbeat').length >= 3);
  const beats = c.frames.filter((f) => f.event === 'heartbeat');
  t.true(beats.every((b) => b.id === '4' && JSON.stringify(b.data) === '{}'));
  const ref = s.d.system.ref<DeployerProtocol>(DEPLOYER_ID);
  t.is((await ref.request({ type: 'info' })).streams, 1);
  c.abort();
  let streams = 1;
  for (let i = 0; i < 100 && streams !== 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    streams = (await ref.request({ type: 'info' })).streams;
  }
  t.is(streams, 0);
  release();
});

test('one real heartbeat: the default interval is 15 s', async (t) => {
  t.timeout(40_000);
  const { s, id, release } = await heldDeployment(t);
  const c = await subscribe(s, id);
  await c.until((f) => f.length >= 2);
  const start = Date.now();
  await c.until((f) => f.some((x) => x.event === 'heartbeat'), 25_000);
  const took = Date.now() - start;
  t.true(took >= 14_500 && took <= 16_500, `first heartbeat after ${took} ms`);
  t.deepEqual(c.frames.find((f) => f.event === 'heartbeat'), { id: '4', event: 'heartbeat', data: {} });
  release();
  await c.closed;
});
