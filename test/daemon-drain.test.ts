/**
 * The runtime's generic drain hook (ServiceDefinition.drain), in-process with runDaemon: a
 * service's `requested` that answers null keeps being asked; once it gives a reason the daemon
 * stops: `run` of every service with a hook is awaited while the actors still serve (the
 * heartbeat answers during it), then the ordered shutdown, then the exit code 0. A service
 * without a hook is stopped in order as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runDaemon } from '../runtime/cli/daemon.js';
import { daemonSchema } from '../runtime/config/daemon-settings.js';
import { resolve } from '../runtime/config/settings.js';
import type { ServiceDefinition } from '../runtime/service.js';
import { HEARTBEAT_ID, type HeartbeatProtocol } from '../runtime/system/heartbeat/messages.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a service asks to stop: its drain runs while the daemon serves, then the ordered shutdown, exit 0', async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-drainhook-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const settings = resolve(daemonSchema(['media', 'objstore']), { 'state-dir': stateDir, 'metrics-port': '0', 'metrics-host': '127.0.0.1', 'log-level': 'silent', 'group-threads': '1', 'pool-threads': '1' }, {});
  const events: string[] = [];
  let asked = 0;
  const draining: ServiceDefinition = {
    name: 'media',
    supervisor: () => ({ id: 'media.supervisor', children: [] }),
    drain: {
      async requested(_h, signal) {
        asked++;
        await sleep(100);
        if (signal.aborted) return null;
        return asked < 3 ? null : 'asked by the service';
      },
      async run(h, reason) {
        events.push(`drain ${reason} ${(h.values as { marker: string }).marker}`);
        await sleep(300);
        const beat = await h.ref<HeartbeatProtocol>(HEARTBEAT_ID).request({ type: 'status' });
        events.push(`heartbeat served during the drain: ${beat.bootCount >= 1}`);
        events.push('drained');
      },
    },
  };
  const plain: ServiceDefinition = { name: 'objstore', supervisor: () => ({ id: 'objstore.supervisor', children: [] }) };
  const code = await runDaemon(settings, [
    { def: plain, values: {} },
    { def: draining, values: { marker: 'values passed' } },
  ]);
  events.push('daemon returned');
  t.is(code, 0);
  t.is(asked, 3, 'asked again after each null');
  t.deepEqual(events, ['drain asked by the service values passed', 'heartbeat served during the drain: true', 'drained', 'daemon returned']);
});

test('a drain that fails does not stop the shutdown', async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-drainhook-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const settings = resolve(daemonSchema(['media']), { 'state-dir': stateDir, 'metrics-port': '0', 'metrics-host': '127.0.0.1', 'log-level': 'silent', 'group-threads': '1', 'pool-threads': '1' }, {});
  let ran = false;
  const failing: ServiceDefinition = {
    name: 'media',
    supervisor: () => ({ id: 'media.supervisor', children: [] }),
    drain: {
      requested: async () => 'now',
      async run() {
        ran = true;
        throw new Error('the service could not drain');
      },
    },
  };
  t.is(await runDaemon(settings, [{ def: failing, values: {} }]), 0);
  t.true(ran);
});
