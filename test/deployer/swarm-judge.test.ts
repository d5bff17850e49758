/**
 * The swarm rollout judgement (protocols/deploy/swarm-rollout.ts) on service and task objects
 * captured from a real dockerd 20.10 swarm (test/deployer/fixtures/swarm/, made with
 * `docker service create/update` of the busybox test images and `GET /services?status=true`,
 * `GET /tasks`), plus variations of them for the cases a capture cannot pin in time.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { desiredTasks, dockerTime, isCurrentSpecTask, judgeSwarmService, judgeSwarmStack, timedOutMessage, type SwarmService, type SwarmTask } from '../../protocols/deploy/swarm-rollout.js';

const FIXTURES = fileURLToPath(new URL('../../../test/deployer/fixtures/swarm/', import.meta.url));
const load = (name: string): { service: SwarmService; tasks: SwarmTask[] } => ({
  service: (JSON.parse(readFileSync(`${FIXTURES}${name}-service.json`, 'utf8')) as SwarmService[])[0] as SwarmService,
  tasks: JSON.parse(readFileSync(`${FIXTURES}${name}-tasks.json`, 'utf8')) as SwarmTask[],
});
const clone = <T>(x: T): T => structuredClone(x);
const T0 = dockerTime('2026-11-26T16:54:00Z');
const LATER = dockerTime('2026-11-26T17:30:00Z');
const judge = (name: string, revision: string, now = LATER, over: Partial<Parameters<typeof judgeSwarmService>[0]> = {}) => {
  const { service, tasks } = load(name);
  return judgeSwarmService({ service, tasks, serviceName: service.Spec.Name, revision, stabilityMs: 1000, now, appliedAfter: T0, ...over });
};

test('pickup: no service yet, or one that carries another revision, waits in pickup naming both', (t) => {
  t.deepEqual(judgeSwarmService({ service: null, tasks: [], serviceName: 'shop_web', revision: 'abc', stabilityMs: 1000, now: LATER, appliedAfter: T0 }), { status: 'waiting', phase: 'pickup', message: 'service shop_web does not exist (yet)' });
  t.deepEqual(judge('created-running', 'f00dfeed1234567890'), { status: 'waiting', phase: 'pickup', message: 'service cap_a carries revision r1; waiting for f00dfeed1234' });
  const { service, tasks } = load('created-running');
  delete service.Spec.Labels;
  t.is(judgeSwarmService({ service, tasks, serviceName: 'cap_a', revision: 'r1', stabilityMs: 1000, now: LATER, appliedAfter: T0 }).message, 'service cap_a carries revision none; waiting for r1');
});

test('a created service: tasks starting wait in converge; all running then the stability window, counted from the newest task start', (t) => {
  t.deepEqual(judge('created-pending', 'r1'), { status: 'waiting', phase: 'converge', message: '0 of 2 tasks of t/app:v1 running' });
  const lastStart = dockerTime('2026-11-26T16:54:56.844036812Z');
  t.deepEqual(judge('created-running', 'r1', lastStart + 400), { status: 'waiting', phase: 'stability', message: '2 of 2 tasks of t/app:v1 running; stable in 1 s' });
  t.deepEqual(judge('created-running', 'r1', lastStart + 1000), { status: 'deployed', at: lastStart + 1000, message: '2 of 2 tasks of t/app:v1 running' });
  // the window does not depend on when the monitor looked: a resumed monitor much later says deployed at once, with the same time
  t.deepEqual(judge('created-running', 'r1', LATER), { status: 'deployed', at: lastStart + 1000, message: '2 of 2 tasks of t/app:v1 running' });
});

test('an update in progress waits; old tasks still running hold convergence; completed counts from CompletedAt', (t) => {
  t.deepEqual(judge('update-updating', 'r2'), { status: 'waiting', phase: 'converge', message: 'updating to t/app:v2: 0 of 2 new tasks running' });
  const completed = dockerTime('2026-11-26T16:55:04.672087221Z');
  t.deepEqual(judge('update-completed', 'r2'), { status: 'deployed', at: completed + 1000, message: '2 of 2 tasks of t/app:v2 running' });
  t.is(judge('update-completed', 'r2', completed + 500).status, 'waiting');
  // the same objects, had the old task not stopped yet: not converged
  const { service, tasks } = load('update-completed');
  const old = clone(tasks.find((x) => x.Spec.ContainerSpec?.Image === 't/app:v1') as SwarmTask);
  old.Status.State = 'running';
  t.deepEqual(judgeSwarmService({ service, tasks: [...tasks, old], serviceName: 'cap_a', revision: 'r2', stabilityMs: 1000, now: LATER, appliedAfter: T0 }), { status: 'waiting', phase: 'converge', message: '2 of 2 tasks of t/app:v2 running, 1 older still running' });
});

test('paused fails with swarm\'s message and the newest task error', (t) => {
  t.deepEqual(judge('update-paused', 'r3'), {
    status: 'failed',
    phase: 'converge',
    reason: 'paused',
    message: 'update paused: update paused due to failure or early termination of task vhz6wxttezuewe4jizj44j70c; task vhz6wxttezue failed: task: non-zero exit (1)',
  });
});

test('rolled back: swarm restored the previous spec (label and all); the update started after monitoring began, so it was this revision', (t) => {
  const v = judge('update-rollback-completed', 'r2');
  t.is(v.status, 'failed');
  t.like(v, { reason: 'rolled_back', phase: 'converge' });
  t.regex(v.message, /^rolled back to t\/app:v1 \(rollback_completed\): rollback completed; task 5m280i\w+ failed: task: non-zero exit \(1\)$/);
  // an old rollback of an update that started before this target began monitoring is not this revision's: still pickup
  t.like(judge('update-rollback-completed', 'r2', LATER, { appliedAfter: LATER - 1000 }), { status: 'waiting', phase: 'pickup' });
  // a rollback still running with the revision on PreviousSpec
  const { service, tasks } = load('update-rollback-completed');
  service.UpdateStatus = { ...service.UpdateStatus, State: 'rollback_started', Message: 'update rolled back due to failure or early termination of task x' };
  service.PreviousSpec = { ...clone(service.Spec), Labels: { 'hostd.deploy/revision': 'r2' } };
  t.like(judgeSwarmService({ service, tasks, serviceName: 'cap_c', revision: 'r2', stabilityMs: 1000, now: LATER, appliedAfter: null }), { status: 'failed', reason: 'rolled_back' });
  // rollback_paused with the revision on Spec
  service.Spec.Labels = { 'hostd.deploy/revision': 'r2' };
  service.UpdateStatus.State = 'rollback_paused';
  t.like(judgeSwarmService({ service, tasks, serviceName: 'cap_c', revision: 'r2', stabilityMs: 1000, now: LATER, appliedAfter: null }), { status: 'failed', reason: 'rolled_back' });
});

test('an image that does not exist: every new task rejected, none in progress, fails early with the task error', (t) => {
  t.deepEqual(judge('created-nosuchimage', 'r1'), { status: 'failed', phase: 'converge', reason: 'tasks_failed', message: 'every new task of t/app:nope failed: task c9ruj9yhvv8h rejected: No such image: t/app:nope' });
  // while swarm has a replacement task in progress, it waits
  const { service, tasks } = load('created-nosuchimage');
  const next = clone(tasks[0] as SwarmTask);
  next.ID = 'zzzzzzzzzzzz';
  next.Status = { ...next.Status, State: 'preparing', Err: undefined as unknown as string };
  next.CreatedAt = '2026-11-26T16:55:15Z';
  t.like(judgeSwarmService({ service, tasks: [...tasks, next], serviceName: 'cap_b', revision: 'r1', stabilityMs: 1000, now: LATER, appliedAfter: T0 }), { status: 'waiting', phase: 'converge' });
  // during an update whose FailureAction is pause or rollback swarm decides: no early failure
  const updating = clone(service);
  updating.UpdateStatus = { State: 'updating', StartedAt: service.CreatedAt, Message: 'update in progress' };
  updating.Spec.UpdateConfig = { FailureAction: 'rollback' };
  t.like(judgeSwarmService({ service: updating, tasks, serviceName: 'cap_b', revision: 'r1', stabilityMs: 1000, now: LATER, appliedAfter: T0 }), { status: 'waiting', phase: 'converge' });
  // with FailureAction continue, nobody else will: early failure
  updating.Spec.UpdateConfig = { FailureAction: 'continue' };
  t.like(judgeSwarmService({ service: updating, tasks, serviceName: 'cap_b', revision: 'r1', stabilityMs: 1000, now: LATER, appliedAfter: T0 }), { status: 'failed', reason: 'tasks_failed' });
  // tasks that failed before the update started are not this update's
  updating.UpdateStatus.StartedAt = '2026-11-26T16:56:00Z';
  t.like(judgeSwarmService({ service: updating, tasks, serviceName: 'cap_b', revision: 'r1', stabilityMs: 1000, now: LATER, appliedAfter: T0 }), { status: 'waiting' });
});

test('a task of the current spec is one whose ContainerSpec (any key order) and ForceUpdate equal the template', (t) => {
  const { service, tasks } = load('update-completed');
  const v2 = tasks.find((x) => x.Spec.ContainerSpec?.Image === 't/app:v2') as SwarmTask;
  t.true(isCurrentSpecTask(service, v2));
  const reordered = clone(v2);
  reordered.Spec.ContainerSpec = Object.fromEntries(Object.entries(v2.Spec.ContainerSpec ?? {}).reverse());
  t.true(isCurrentSpecTask(service, reordered));
  t.false(isCurrentSpecTask(service, tasks.find((x) => x.Spec.ContainerSpec?.Image === 't/app:v1') as SwarmTask));
  const env = clone(v2);
  (env.Spec.ContainerSpec as Record<string, unknown>).Env = ['A=1'];
  t.false(isCurrentSpecTask(service, env));
  const forced = clone(v2);
  forced.Spec.ForceUpdate = 1;
  t.false(isCurrentSpecTask(service, forced));
});

test('desired tasks: replicas, 0 replicas, global mode from ServiceStatus', (t) => {
  const { service } = load('created-running');
  t.is(desiredTasks(service), 2);
  const zero = clone(service);
  zero.Spec.Mode = { Replicated: { Replicas: 0 } };
  t.is(desiredTasks(zero), 0);
  t.like(judgeSwarmService({ service: zero, tasks: [], serviceName: 'cap_a', revision: 'r1', stabilityMs: 0, now: LATER, appliedAfter: T0 }), { status: 'deployed' });
  const global = clone(service);
  global.Spec.Mode = { Global: {} };
  t.is(desiredTasks(global), 2);
});

test('timed-out message names the phase, the budget and what was last seen', (t) => {
  t.is(timedOutMessage('converge', 3, '0 of 1 tasks of t/app:slow running'), 'timed out in converge after 3 s: 0 of 1 tasks of t/app:slow running');
});

test('a stack: pickup with no services; waiting on the first that waits; failed naming the failed service; deployed when all are', (t) => {
  t.deepEqual(judgeSwarmStack('shop', [], 'r1', 1000, LATER, T0), { status: 'waiting', phase: 'pickup', message: 'stack shop has no services (yet)' });
  const running = load('created-running');
  const pending = load('created-pending');
  const nosuch = load('created-nosuchimage');
  t.deepEqual(judgeSwarmStack('shop', [running, pending], 'r1', 1000, LATER, T0), { status: 'waiting', phase: 'converge', message: '1 of 2 services deployed; 0 of 2 tasks of t/app:v1 running' });
  t.like(judgeSwarmStack('shop', [running, nosuch], 'r1', 1000, LATER, T0), { status: 'failed', reason: 'tasks_failed', message: 'service cap_b: every new task of t/app:nope failed: task c9ruj9yhvv8h rejected: No such image: t/app:nope' });
  const other = load('created-running');
  other.service.Spec.Name = 'cap_z';
  t.deepEqual(judgeSwarmStack('shop', [running, other], 'r1', 1000, LATER, T0), { status: 'deployed', at: dockerTime('2026-11-26T16:54:56.844036812Z') + 1000, message: 'all 2 services of stack shop deployed' });
});
