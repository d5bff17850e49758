/**
 * Rollouts on the real swarm (test/helpers/swarm.ts), through the whole service: a deploy of an
 * image tag is pushed, applied by the embedded reconciler to the target's service, and monitored
 * to its outcome, every SSE frame in order.
 */
import test from 'ava';
import { swarmSetup, values } from '../helpers/swarm-deploy.js';
import { inspectService, IMAGE } from '../helpers/swarm.js';

test('a new image tag rolls out and reaches deployed, every SSE frame in order, then the stream closes', async (t) => {
  const s = await swarmSetup(t, [{ name: 'web' }]);
  const first = await s.deploy(values('v1'));
  const firstFrames = await s.events(first);
  t.is(firstFrames.at(-1)?.data.status, 'deployed', JSON.stringify(firstFrames.at(-1)));
  const id = await s.deploy(values('v2', { replicas: 2 }), 'v1.1.0');
  const frames = await s.events(id);
  const seq = frames.map((f) => (f.event === 'target' ? `target:${f.data.target.status}` : `${f.event}:${f.data.status}`));
  t.deepEqual(seq.slice(-4), ['target:monitoring', 'status:monitoring', 'target:deployed', 'status:deployed']);
  t.is(frames[0]?.event, 'target', 'targets are replayed before the status');
  const svc = await inspectService(`${s.ns}_web`);
  t.is(svc.Spec.TaskTemplate.ContainerSpec.Image, `${IMAGE}:v2`);
  t.is(svc.Spec.Mode.Replicated.Replicas, 2);
  t.is(svc.Spec.Labels['hostd.deploy/revision'], (await s.get(id)).commit ?? svc.Spec.Labels['hostd.deploy/revision']);
  t.is(svc.ServiceStatus.RunningTasks, 2);
});
