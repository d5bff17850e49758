/**
 * Where hotplug events could be missed or put off, with the real `udevadm monitor` and the
 * periodic scan set out of reach (10 min):
 * - udevadm slow to start listening (a loaded machine): a disk detached between the store's start
 *   and the monitor's subscription makes no event the store hears, so the store rescans once the
 *   monitor says it listens (its header). udevadm is started 3 s late by a wrapper first on PATH.
 * - a steady stream of block events of another disk (here its synthetic `change` uevents every
 *   200 ms): the rescan comes 1 s after the first event of a burst, not after the last.
 * Serial: the first test changes PATH for the process.
 */
import test from 'ava';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { detachLoop, withLoopDevices } from '../helpers/loop.js';
import { startStore } from './harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function volume(url: string, id: number): Promise<{ isMissing: boolean; device: string }> {
  return ((await (await fetch(`${url}/$/volumes/${id}`)).json()) as { volume: { isMissing: boolean; device: string } }).volume;
}

test.serial('a disk detached while udevadm monitor is still starting is seen once it listens, long before a scan', async (t) => {
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

test.serial('a steady stream of another disk\'s block events does not put the rescan off', async (t) => {
  const store = await startStore(t, { volumes: 2, sizeMiB: 400, values: { disableUdev: false, deviceScanIntervalMs: 600_000 } });
  const [other] = await withLoopDevices(t, 1, 16);
  await sleep(2000); // the monitor listens (and its first rescan is done)
  let streaming = true;
  let events = 0;
  const stream = (async () => {
    while (streaming) {
      await writeFile(`/sys/block/${basename(other!)}/uevent`, 'change');
      events++;
      await sleep(200);
    }
  })();
  t.teardown(async () => {
    streaming = false;
    await stream;
  });
  await sleep(600);
  await detachLoop((await volume(store.url, 1)).device);
  const detachedAt = Date.now();
  while (!(await volume(store.url, 1)).isMissing && Date.now() - detachedAt < 8000) await sleep(100);
  const missing = (await volume(store.url, 1)).isMissing;
  streaming = false;
  await stream;
  t.true(missing, `isMissing while another disk made ${events} events, one every 200 ms`);
  t.log(`missing ${Date.now() - detachedAt} ms after the detach, ${events} events of the other disk meanwhile`);
  t.false((await volume(store.url, 2)).isMissing);
});
