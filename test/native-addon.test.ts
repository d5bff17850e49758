/** runtime/native-addon.ts against a real addon (native/aes-gcm) and a missing one. */
import test from 'ava';
import { loadAddon } from '../runtime/native-addon.js';

const REAL = new URL('../../native/aes-gcm/build/Release/aes_gcm.node', import.meta.url);
const warnings: string[] = [];
process.on('warning', (w) => {
  if (w.name === 'HostdTestWarning') warnings.push(w.message);
});
const spec = (over: Partial<Parameters<typeof loadAddon<{ createContext(): object }>>[0]>) =>
  loadAddon<{ createContext(): object }>({ file: REAL, offEnv: 'HOSTD_TEST_ADDON', build: 'make it', warning: (why) => `test addon off: ${why}`, warningType: 'HostdTestWarning', ...over });
const nextTick = () => new Promise((r) => setImmediate(r));

test.serial('a built addon loads, passes its check, and is handed to ready', (t) => {
  let readied: unknown = null;
  const r = spec({ check: (a) => (typeof a.createContext === 'function' ? null : 'no createContext'), ready: (a) => (readied = a) });
  t.truthy(r.addon);
  t.is(r.unavailable, '');
  t.is(readied, r.addon);
});

test.serial('a missing build: null, the reason names how to build it, one warning', async (t) => {
  warnings.length = 0;
  const r = spec({ file: new URL('./no-such-addon.node', import.meta.url) });
  t.is(r.addon, null);
  t.regex(r.unavailable, /Cannot find module .*\(build it: make it\)$/);
  await nextTick();
  t.deepEqual(warnings, [`test addon off: ${r.unavailable}`]);
});

test.serial('a check that fails: null, "rebuild it", and ready is not called', async (t) => {
  warnings.length = 0;
  let readied = false;
  const r = spec({ check: () => 'layout has 3 fields, expected 4', ready: () => (readied = true) });
  t.is(r.addon, null);
  t.is(r.unavailable, 'layout has 3 fields, expected 4: rebuild it (make it)');
  t.false(readied);
  await nextTick();
  t.is(warnings.length, 1);
});

test.serial('the off switch: null without loading or warning', async (t) => {
  warnings.length = 0;
  process.env.HOSTD_TEST_ADDON = '0';
  try {
    const r = spec({ file: new URL('./no-such-addon.node', import.meta.url) });
    t.deepEqual(r, { addon: null, unavailable: 'HOSTD_TEST_ADDON=0' });
    await nextTick();
    t.deepEqual(warnings, []);
  } finally {
    delete process.env.HOSTD_TEST_ADDON;
  }
});
