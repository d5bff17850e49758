/** The values file → swarm ServiceSpec mapping of the embedded reconciler (protocols/deploy/swarm-values.ts). */
import test from 'ava';
import { parse } from 'yaml';
import { durationNs, imageOf, serviceSpecFromValues, swarmServiceName } from '../../protocols/deploy/swarm-values.js';
import { Refused } from '../../protocols/deploy/errors.js';

const target = { deployNamespace: 'shop', deployName: 'web' };
const message = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof Refused) return err.message;
    throw err;
  }
  return 'no refusal';
};

test('a full values file maps to the ServiceSpec, stamped with the revision and the stack label', (t) => {
  const values = parse(`
image: {repository: shop/web, tag: "1.4.0"}
replicaCount: 3
env: {LOG_LEVEL: info, WORKERS: 4, DEBUG: false}
ingress: {enabled: true}   # the chart's own values are ignored
swarm:
  stopGracePeriod: 2s
  restartPolicy: {condition: on-failure, delay: 500ms, maxAttempts: 3}
  updateConfig: {parallelism: 2, delay: 1m30s, failureAction: rollback, monitor: 5s, maxFailureRatio: 0.5, order: start-first}
  rollbackConfig: {parallelism: 0, failureAction: pause, monitor: 1.5}
`);
  t.deepEqual(serviceSpecFromValues(values, target, 'c0ffee'), {
    Name: 'shop_web',
    Labels: { 'com.docker.stack.namespace': 'shop', 'hostd.deploy/revision': 'c0ffee' },
    TaskTemplate: {
      ContainerSpec: { Image: 'shop/web:1.4.0', Env: ['DEBUG=false', 'LOG_LEVEL=info', 'WORKERS=4'], StopGracePeriod: 2e9 },
      RestartPolicy: { Condition: 'on-failure', Delay: 5e8, MaxAttempts: 3 },
    },
    Mode: { Replicated: { Replicas: 3 } },
    UpdateConfig: { Parallelism: 2, Delay: 90e9, FailureAction: 'rollback', Monitor: 5e9, MaxFailureRatio: 0.5, Order: 'start-first' },
    RollbackConfig: { Parallelism: 0, FailureAction: 'pause', Monitor: 1.5e9 },
  });
});

test('the smallest values: an image string; one replica; nothing else set', (t) => {
  t.deepEqual(serviceSpecFromValues({ image: 'busybox:1.36' }, target, 'r'), {
    Name: 'shop_web',
    Labels: { 'com.docker.stack.namespace': 'shop', 'hostd.deploy/revision': 'r' },
    TaskTemplate: { ContainerSpec: { Image: 'busybox:1.36' } },
    Mode: { Replicated: { Replicas: 1 } },
  });
  t.is(imageOf({ image: { repository: 'shop/web' } }), 'shop/web');
  t.is(imageOf(parse('image: {repository: shop/web, tag: 1.5}')), 'shop/web:1.5');
  t.is(imageOf({ image: { repository: 'registry.local:5000/shop/web', tag: 'v2' } }), 'registry.local:5000/shop/web:v2');
  t.deepEqual(serviceSpecFromValues({ image: 'x', env: [{ name: 'A', value: 1 }, { name: 'B' }], replicaCount: 0 }, target, 'r').TaskTemplate.ContainerSpec.Env, ['A=1', 'B=']);
  t.is(swarmServiceName('a', 'b'), 'a_b');
});

test('durations: Go/Compose strings and seconds; anything else refused', (t) => {
  t.is(durationNs('1m30s', 'd'), 90e9);
  t.is(durationNs('250ms', 'd'), 250e6);
  t.is(durationNs('1h', 'd'), 3600e9);
  t.is(durationNs(0, 'd'), 0);
  t.is(durationNs(0.5, 'd'), 5e8);
  for (const bad of ['5', '5 s', '-1s', 's', '', '1d', -1, Number.NaN, true, null, {}]) {
    t.regex(message(() => durationNs(bad, 'values.swarm.updateConfig.delay')), /^values\.swarm\.updateConfig\.delay must be a duration/, String(bad));
  }
});

test('bad values are refused naming the key', (t) => {
  const cases: [unknown, RegExp][] = [
    [{}, /^values\.image must be a mapping \{repository, tag\} or an image reference string; got nothing/],
    [{ image: '' }, /^values\.image must be/],
    [{ image: 42 }, /^values\.image must be/],
    [{ image: { tag: 'v1' } }, /^values\.image\.repository must be an image repository/],
    [{ image: { repository: 'Shop/Web' } }, /^values\.image\.repository must be/],
    [{ image: { repository: 'shop', tag: 'a b' } }, /^values\.image\.tag must be a tag/],
    [{ image: { repository: 'shop', tag: ['v1'] } }, /^values\.image\.tag must be a tag/],
    [{ image: 'x', replicaCount: -1 }, /^values\.replicaCount must be a whole number from 0 to 100000; got number -1/],
    [{ image: 'x', replicaCount: '2' }, /^values\.replicaCount must be a whole number/],
    [{ image: 'x', replicaCount: 1.5 }, /^values\.replicaCount must be a whole number/],
    [{ image: 'x', env: 'A=1' }, /^values\.env must be a mapping or a list of \{name, value\}/],
    [{ image: 'x', env: { 'A B': '1' } }, /^values\.env key "A B" must be an environment variable name/],
    [{ image: 'x', env: { A: { b: 1 } } }, /^values\.env\.A must be a string, number or boolean/],
    [{ image: 'x', env: ['A=1'] }, /^values\.env\[0\] must be \{name, value\}/],
    [{ image: 'x', swarm: [] }, /^values\.swarm must be a mapping/],
    [{ image: 'x', swarm: { updateConfig: { failureAction: 'explode' } } }, /^values\.swarm\.updateConfig\.failureAction must be one of pause, continue, rollback/],
    [{ image: 'x', swarm: { updateConfig: { paralelism: 1 } } }, /^values\.swarm\.updateConfig\.paralelism is not a swarm update setting/],
    [{ image: 'x', swarm: { updateConfig: { maxFailureRatio: 2 } } }, /^values\.swarm\.updateConfig\.maxFailureRatio must be a number from 0 to 1/],
    [{ image: 'x', swarm: { rollbackConfig: { order: 'random' } } }, /^values\.swarm\.rollbackConfig\.order must be one of stop-first, start-first/],
    [{ image: 'x', swarm: { restartPolicy: { condition: 'always' } } }, /^values\.swarm\.restartPolicy\.condition must be one of none, on-failure, any/],
    [{ image: 'x', swarm: { stopGracePeriod: 'soon' } }, /^values\.swarm\.stopGracePeriod must be a duration/],
  ];
  for (const [values, re] of cases) t.regex(message(() => serviceSpecFromValues(values as Record<string, unknown>, target, 'r')), re, JSON.stringify(values));
});
