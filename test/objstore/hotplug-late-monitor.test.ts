/**
 * Hotplug when `udevadm monitor` is slow to start listening (a loaded machine): a disk detached
 * between the store's start and the monitor's subscription makes no event the store hears, so the
 * store rescans once the monitor says it listens (its header). The real udevadm runs, started
 * 3 s late by a wrapper first on PATH; the periodic scan is set out of reach (10 min).
 */
import test from 'ava';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { detachLoop } from '../helpers/loop.js';
import { startStore } from './harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function volume(url: string, id: number): Promise<{ isMissing: boolean; device: string }> {
  return ((await (await fetch(`${url}/$/volumes/${id}`)).json()) as { volume: { isMissing: boolean; device: string } }).volume;
}

test('a disk detached while udevadm monitor is still starting is seen once it listens, long before a scan', async (t) => {
  const real = execFileSync('sh', ['-c', 'command -v udevadm'], { encoding: 'utf8' }).trim();
  const bin = mkdtempSync(join(tmpdir(), 'hostd-slow-udevadm-'));
  t.teardown(() => rmSync(bin, { recursive: true, force: true }));
  writeFileSync(join(bin, 'udevadm'), `#!/bin/sh\nsleep 3\nexec ${real} "$@"\n`);
  chmodSync(join(bin, 'udevadm'), 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  t.teardown(() => {
    process.env.PATH = path;
  });
  const store = await startStore(t, { volumes: 2, sizeMiB: 400, values: { disableUdev: false, deviceScanIntervalMs: 600_000 } });
  t.false((await volume(store.url, 1)).isMissing);
  await detachLoop((await volume(store.url, 1)).device); // while the wrapper still sleeps: no event for it
  const detachedAt = Date.now();
  while (!(await volume(store.url, 1)).isMissing && Date.now() - detachedAt < 12_000) await sleep(100);
  t.true((await volume(store.url, 1)).isMissing, 'isMissing once the monitor listens');
  t.log(`missing ${Date.now() - detachedAt} ms after the detach (the monitor started listening ~3 s after the store)`);
  t.false((await volume(store.url, 2)).isMissing);
});
