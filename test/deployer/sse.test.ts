import test from 'ava';
import { eventFrame, formatFrame, heartbeatFrame, liveStep, openStream, parseLastEventId, snapshotEvents, type LoggedEvent } from '../../protocols/deploy/sse.js';
import { applyChange, queueDeployment, type Change, type DeploymentState } from '../../protocols/deploy/status.js';

test('frames: id, event, one data line per line, a blank line to end', (t) => {
  t.is(formatFrame({ id: '7', event: 'status', data: '{"status":"pushing","message":""}' }), 'id: 7\nevent: status\ndata: {"status":"pushing","message":""}\n\n');
  t.is(formatFrame({ data: 'a\nb\r\nc\rd' }), 'data: a\ndata: b\ndata: c\ndata: d\n\n');
  t.is(formatFrame({ data: '' }), 'data: \n\n');
  t.is(formatFrame({ id: '1', data: 'x', retry: 3000 }), 'id: 1\nretry: 3000\ndata: x\n\n');
  t.throws(() => formatFrame({ id: 'a\nb', data: '' }), { instanceOf: TypeError });
  t.throws(() => formatFrame({ id: 'a\u0000', data: '' }), { instanceOf: TypeError });
  t.throws(() => formatFrame({ event: 'x\ny', data: '' }), { instanceOf: TypeError });
  t.throws(() => formatFrame({ event: '', data: '' }), { instanceOf: TypeError });
  t.throws(() => formatFrame({ data: '', retry: -1 }), { instanceOf: TypeError });
});

test('a heartbeat is event heartbeat with data {} and repeats the last id', (t) => {
  t.is(heartbeatFrame(12), 'id: 12\nevent: heartbeat\ndata: {}\n\n');
});

const ID = '0193a4b2-7c1d-7e2f-8a3b-4c5d6e7f8091';
const CLUSTERS = [
  { id: 1, name: 'swarm-a', kind: 'swarm' as const },
  { id: 2, name: 'swarm-b', kind: 'swarm' as const },
];
const TARGETS = [
  { id: 't1', clusterId: 1, deployType: 'swarm-service' as const, deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: null },
  { id: 't2', clusterId: 2, deployType: 'swarm-service' as const, deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: 30 },
];

/** A deployment driven through `changes`, with its log numbered 1, 2, 3… as the actor would. */
function history(changes: Change[]): { d: DeploymentState; log: LoggedEvent[] } {
  const q = queueDeployment(ID, TARGETS, CLUSTERS, 300);
  if (!q.ok) throw new Error(q.error.message);
  let d = q.value.deployment;
  const log: LoggedEvent[] = [];
  const append = (events: typeof q.value.events) => events.forEach((event) => log.push({ seq: log.length + 1, event }));
  append(q.value.events);
  for (const c of changes) {
    const r = applyChange(d, c, 1000);
    if (!r.ok) throw new Error(r.error.message);
    d = r.value.deployment;
    append(r.value.events);
  }
  return { d, log };
}
const UP_TO_MONITORING: Change[] = [
  { kind: 'advance', to: 'validating', message: 'checking' },
  { kind: 'advance', to: 'pushing', message: 'pushing' },
  { kind: 'advance', to: 'pushed', message: 'pushed' },
  { kind: 'advance', to: 'monitoring', message: 'watching' },
];
const DONE: Change[] = [...UP_TO_MONITORING, { kind: 'target', targetId: 't1', to: 'deployed', message: 'ok' }, { kind: 'target', targetId: 't2', to: 'deployed', message: 'ok' }];

/** Parse frames back into [id, event, data] for readable assertions. */
function parsed(frames: string[]): [string, string, unknown][] {
  return frames.map((f) => {
    const id = /^id: (.*)$/m.exec(f)?.[1] ?? '';
    const event = /^event: (.*)$/m.exec(f)?.[1] ?? '';
    const data = JSON.parse([...f.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).join('\n'));
    return [id, event, data];
  });
}

test('a new subscriber to a running deployment: every target, then the parent status, then live', (t) => {
  const { d, log } = history(UP_TO_MONITORING);
  const plan = openStream(d, log);
  if (plan.kind !== 'stream') return t.fail();
  t.is(plan.then, 'live');
  t.is(plan.lastSeq, log.length);
  const last = String(log.length);
  t.deepEqual(parsed(plan.frames), [
    [last, 'target', { target: { id: 't1', clusterId: 1, clusterName: 'swarm-a', monitorTimeoutSecs: 300, status: 'monitoring', message: 'waiting for the rollout' } }],
    [last, 'target', { target: { id: 't2', clusterId: 2, clusterName: 'swarm-b', monitorTimeoutSecs: 30, status: 'monitoring', message: 'waiting for the rollout' } }],
    [last, 'status', { status: 'monitoring', message: 'watching' }],
  ]);
});

test('a terminal deployment: the target snapshot, one final status, then close', (t) => {
  const { d, log } = history(DONE);
  const plan = openStream(d, log);
  if (plan.kind !== 'stream') return t.fail();
  t.is(plan.then, 'close');
  t.deepEqual(parsed(plan.frames).map(([, e, data]) => [e, e === 'status' ? (data as { status: string }).status : (data as { target: { status: string } }).target.status]), [
    ['target', 'deployed'],
    ['target', 'deployed'],
    ['status', 'deployed'],
  ]);
  t.is(plan.frames.filter((f) => f.includes('event: status')).length, 1);
});

test('Last-Event-ID resumes with exactly the missed events, in order, without gaps', (t) => {
  const { d, log } = history(DONE);
  for (let n = 0; n < log.length; n++) {
    const plan = openStream(d, log, String(n));
    if (plan.kind !== 'stream') return t.fail(String(n));
    t.deepEqual(plan.frames, log.slice(n).map((e) => eventFrame(e.seq, e.event)), String(n));
    t.is(plan.then, 'close');
  }
  const running = history(UP_TO_MONITORING);
  const caughtUp = openStream(running.d, running.log, String(running.log.length));
  t.deepEqual(caughtUp, { kind: 'stream', frames: [], lastSeq: running.log.length, then: 'live' }, 'nothing missed on a running deployment: stay for live events');
});

test('a terminal deployment with nothing missed answers 204 so EventSource stops reconnecting', (t) => {
  const { d, log } = history(DONE);
  t.deepEqual(openStream(d, log, String(log.length)), { kind: 'no-content' });
});

test('an unusable Last-Event-ID gets the snapshot: not a number, ahead of the log, negative, padded', (t) => {
  const { d, log } = history(UP_TO_MONITORING);
  const snapshot = openStream(d, log);
  for (const bad of ['abc', String(log.length + 1), '-1', '01', '1.5', '', '99999999999999999999']) t.deepEqual(openStream(d, log, bad), snapshot, bad);
  t.is(parseLastEventId(' 7 '), 7);
  t.is(parseLastEventId(undefined), null);
  t.is(parseLastEventId('0'), 0);
});

test('live events: sent once above the last sent id, the stream closes after the terminal status', (t) => {
  const { d, log } = history(UP_TO_MONITORING);
  const plan = openStream(d, log);
  if (plan.kind !== 'stream') return t.fail();
  let last = plan.lastSeq;
  // an event already covered by the snapshot (published while it was being read) is dropped
  t.deepEqual(liveStep(last, log[log.length - 1]!), { frame: null, lastSentSeq: last, close: false });
  const r1 = applyChange(d, { kind: 'target', targetId: 't1', to: 'deployed', message: 'ok' }, 2000);
  if (!r1.ok) return t.fail();
  const s1 = liveStep(last, { seq: last + 1, event: r1.value.events[0]! });
  t.false(s1.close);
  t.regex(s1.frame ?? '', /^id: \d+\nevent: target\n/);
  last = s1.lastSentSeq;
  const r2 = applyChange(r1.value.deployment, { kind: 'target', targetId: 't2', to: 'failed', message: 'timed out' }, 3000);
  if (!r2.ok) return t.fail();
  const steps = r2.value.events.map((event, i) => liveStep(last + i, { seq: last + 1 + i, event }));
  t.deepEqual(steps.map((s) => s.close), [false, true]);
  t.regex(steps[1]?.frame ?? '', /event: status\ndata: \{"status":"failed","message":"1 of 2 cluster targets failed: swarm-b: timed out"\}/);
});

test('snapshotEvents: targets in their order, then status', (t) => {
  const { d } = history([]);
  t.deepEqual(snapshotEvents(d).map((e) => e.event), ['target', 'target', 'status']);
});
