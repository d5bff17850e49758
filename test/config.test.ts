import test from 'ava';
import { chooseServices } from '../runtime/cli/daemon.js';
import { daemonSchema, type ServiceName } from '../runtime/config/daemon-settings.js';
import type { ServiceDefinition } from '../runtime/service.js';
import { ConfigError, bool, describe, int, list, oneOf, resolve, str } from '../runtime/config/settings.js';

const schema = {
  port: int({ env: 'T_PORT', flag: 'port', description: 'a port', min: 0, max: 65535, default: 80 }),
  level: oneOf({ env: 'T_LEVEL', flag: 'level', description: 'a level', values: ['low', 'high'] as const, default: 'low' }),
  names: list({ env: 'T_NAMES', flag: 'names', description: 'names', values: ['a', 'b', 'c'] as const, default: () => ['a' as const] }),
  on: bool({ env: 'T_ON', flag: 'on', description: 'switch', default: false }),
  dir: str({ env: 'T_DIR', flag: 'dir', description: 'dir', expect: 'an absolute path', default: '/x', valid: (v) => v.startsWith('/') }),
};

test('defaults apply when neither flag nor environment is set', (t) => {
  t.deepEqual(resolve(schema, {}, {}), { port: 80, level: 'low', names: ['a'], on: false, dir: '/x' });
});

test('the environment overrides the default and a flag overrides the environment', (t) => {
  const env = { T_PORT: '8080', T_LEVEL: 'high', T_ON: 'true' };
  t.deepEqual(resolve(schema, {}, env), { port: 8080, level: 'high', names: ['a'], on: true, dir: '/x' });
  t.is(resolve(schema, { port: '9090' }, env).port, 9090);
  t.is(resolve(schema, { on: 'false' }, env).on, false);
});

test('an empty environment variable means unset; an empty flag is an error', (t) => {
  t.is(resolve(schema, {}, { T_PORT: '' }).port, 80);
  const e = t.throws(() => resolve(schema, { port: '' }, {}), { instanceOf: ConfigError });
  t.regex(e!.message, /--port \(T_PORT\): expected an integer from 0 to 65535, got ""/);
});

test('integers are checked for form and range', (t) => {
  for (const bad of ['abc', '1.5', '65536', '-1', '1e3', '0x10', ' ', '99999999999999999999']) {
    const e = t.throws(() => resolve(schema, { port: bad }, {}), { instanceOf: ConfigError }, bad);
    t.true(e!.message.includes(JSON.stringify(bad)), e!.message);
  }
  t.is(resolve(schema, { port: '0' }, {}).port, 0);
  t.is(resolve(schema, { port: '65535' }, {}).port, 65535);
});

test('every bad setting is reported at once, each by flag and variable', (t) => {
  const e = t.throws(() => resolve(schema, { level: 'medium' }, { T_PORT: 'x', T_ON: 'maybe' }), { instanceOf: ConfigError });
  t.is(e!.problems.length, 3);
  t.true(e!.problems.some((p) => p.startsWith('invalid setting T_PORT (--port)')));
  t.true(e!.problems.some((p) => p.startsWith('invalid setting --level (T_LEVEL): expected one of low, high, got "medium"')));
  t.true(e!.problems.some((p) => p.includes('T_ON') && p.includes('true or false')));
  t.regex(e!.message, /^3 invalid settings:/);
});

test('lists are split, trimmed, de-duplicated, and name unknown items', (t) => {
  t.deepEqual(resolve(schema, { names: ' b, a ,b' }, {}).names, ['b', 'a']);
  const e = t.throws(() => resolve(schema, { names: 'a,zz,yy' }, {}), { instanceOf: ConfigError });
  t.regex(e!.message, /unknown: zz, yy/);
  t.throws(() => resolve(schema, { names: ',' }, {}), { instanceOf: ConfigError });
});

test('a custom validity check refuses values with the expectation in the message', (t) => {
  const e = t.throws(() => resolve(schema, { dir: 'rel' }, {}), { instanceOf: ConfigError });
  t.regex(e!.message, /expected an absolute path, got "rel"/);
});

test('help lists every setting with its variable, expectation and default', (t) => {
  const text = describe(schema);
  for (const s of Object.values(schema)) {
    t.true(text.includes(s.boolean ? `--${s.flag} ` : `--${s.flag} <v>`), s.flag);
    t.true(text.includes(`env ${s.env};`));
  }
  t.regex(text, /default 80/);
});

test('the daemon schema: services default to those built; state dir must be absolute', (t) => {
  const s = daemonSchema(['objstore']);
  const v = resolve(s, {}, {});
  t.deepEqual(v.services, ['objstore']);
  t.is(v.stateDir, '/var/lib/objstore');
  t.is(v.metricsPort, 9464);
  t.throws(() => resolve(s, { 'state-dir': 'var/lib' }, {}), { message: /--state-dir .*absolute path/ });
  t.throws(() => resolve(s, {}, { HOSTD_SERVICES: 'objstore,nfs' }), { message: /HOSTD_SERVICES .*unknown: nfs/ });
});

test('a switch is true when its flag is present, and otherwise follows the environment', (t) => {
  t.is(resolve(schema, { on: true }, {}).on, true);
  t.is(resolve(schema, {}, { T_ON: 'false' }).on, false);
  t.is(resolve(schema, { on: true }, { T_ON: 'false' }).on, true);
  t.regex(describe(schema), /--on {2,}switch/);
  t.notRegex(describe(schema), /--on <v>/);
});

test('services marked stopsFirst start after the others, whatever order they are listed in', (t) => {
  const def = (name: ServiceName, stopsFirst?: boolean): ServiceDefinition => ({ name, stopsFirst, supervisor: () => ({ id: `${name}.supervisor`, children: [] }) });
  const defs = [def('gateway', true), def('objstore'), def('deployer'), def('media')];
  t.deepEqual(chooseServices(['gateway', 'media', 'objstore'], defs).map((d) => d.name), ['objstore', 'media', 'gateway']);
  t.deepEqual(chooseServices(['objstore', 'deployer'], defs).map((d) => d.name), ['objstore', 'deployer']);
  const err = t.throws(() => chooseServices(['objstore', 'gateway'], [def('objstore')]));
  t.regex(err!.message, /--services .*gateway is not built in this version \(available: objstore\)/);
});
