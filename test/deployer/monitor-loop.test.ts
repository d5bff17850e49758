/**
 * The monitor loop (actors/deployer/monitor.ts watchTarget) with probes written here: the pinned
 * deadline wins over a probe that does not answer, an unreachable endpoint is a reason to wait
 * named in the timeout, a deployed verdict stable only after the deadline is a timeout, a target
 * whose deadline already passed fails at once, and the instance's signal stops it without an outcome.
 */
import test from 'ava';
import { watchTarget, type Probe } from '../../actors/deployer/monitor.js';
import type { DeploymentTarget } from '../../protocols/deploy/status.js';

function target(budgetSecs: number, deadlineAt: number): DeploymentTarget {
  return { id: 't1', clusterId: 1, clusterName: 'swarm-a', deployType: 'swarm-service', deployNamespace: 'shop', deployName: 'web', monitorTimeoutSecs: budgetSecs, status: 'monitoring', message: 'waiting for the rollout', monitorStartedAt: deadlineAt - budgetSecs * 1000, deadlineAt, completedAt: null };
}
const never = new AbortController().signal;

test('waiting verdicts until the deadline: failed at the deadline with the phase and the last message', async (t) => {
  let polls = 0;
  const probe: Probe = async () => {
    polls++;
    return { status: 'waiting', phase: 'converge', message: `0 of 1 tasks running (poll ${polls})` };
  };
  const started = Date.now();
  const out = await watchTarget(target(1, started + 600), probe, 100, never, 'dockerd');
  t.deepEqual(out, { to: 'failed', message: `timed out in converge after 1 s: 0 of 1 tasks running (poll ${polls})` });
  t.true(Date.now() - started >= 550 && Date.now() - started < 1000);
  t.true(polls >= 4);
});

test('a probe that never answers does not push the deadline back', async (t) => {
  const started = Date.now();
  const out = await watchTarget(target(1, started + 300), () => new Promise(() => undefined), 100, never, 'dockerd at unix:///var/run/docker.sock');
  t.deepEqual(out, { to: 'failed', message: 'timed out in pickup after 1 s: no answer from dockerd at unix:///var/run/docker.sock yet' });
  t.true(Date.now() - started < 700);
});

test('an unreachable endpoint is waited on and named in the timeout', async (t) => {
  const out = await watchTarget(target(1, Date.now() + 300), async () => Promise.reject(new Error('connect ENOENT /var/run/docker.sock')), 50, never, 'dockerd at unix:///var/run/docker.sock');
  t.deepEqual(out, { to: 'failed', message: 'timed out in pickup after 1 s: cannot reach dockerd at unix:///var/run/docker.sock: connect ENOENT /var/run/docker.sock' });
});

test('deployed and failed verdicts end the watch; deployed only if stable before the deadline', async (t) => {
  const deadline = Date.now() + 10_000;
  t.deepEqual(await watchTarget(target(10, deadline), async () => ({ status: 'deployed', message: '1 of 1 tasks running', at: deadline - 1 }), 50, never, 'd'), { to: 'deployed', message: '1 of 1 tasks running' });
  t.deepEqual(await watchTarget(target(10, deadline), async () => ({ status: 'failed', message: 'update paused' }), 50, never, 'd'), { to: 'failed', message: 'update paused' });
  // resumed after the deadline: a rollout that became stable only after it is a timeout
  const past = Date.now() - 1000;
  t.deepEqual(await watchTarget(target(3, past), async () => ({ status: 'deployed', message: '1 of 1 tasks running', at: past + 500 }), 50, never, 'd'), { to: 'failed', message: 'timed out in stability after 3 s: 1 of 1 tasks running, stable only after the deadline' });
  t.deepEqual(await watchTarget(target(3, past), async () => ({ status: 'deployed', message: '1 of 1 tasks running', at: past - 500 }), 50, never, 'd'), { to: 'deployed', message: '1 of 1 tasks running' });
});

test('the signal stops the watch without an outcome', async (t) => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 150);
  const started = Date.now();
  t.is(await watchTarget(target(60, Date.now() + 60_000), async () => ({ status: 'waiting', phase: 'pickup', message: 'x' }), 1000, ac.signal, 'd'), null);
  t.true(Date.now() - started < 1000);
});

test('resumed after its deadline: one look is still taken, and its answer decides (deployed in time, or what it was doing)', async (t) => {
  const past = Date.now() - 2000;
  const slowly = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), 100));
  t.deepEqual(await watchTarget(target(3, past), () => slowly({ status: 'deployed' as const, message: '1 of 1 tasks running', at: past - 10 }), 50, never, 'd'), { to: 'deployed', message: '1 of 1 tasks running' });
  t.deepEqual(await watchTarget(target(3, past), () => slowly({ status: 'waiting' as const, phase: 'converge', message: '0 of 1 tasks of app:slow running' }), 50, never, 'd'), { to: 'failed', message: 'timed out in converge after 3 s: 0 of 1 tasks of app:slow running' });
});
