/**
 * Hotplug's event source and OBJSTORE_DISABLE_UDEV, with the periodic scan set out of reach
 * (10 min): with events on, a volume's loop device unmounted and detached is seen through
 * `udevadm monitor` (the kernel's uevents; this machine has no udevd) within seconds; with
 * OBJSTORE_DISABLE_UDEV=true it is not seen until a scan — here `POST /$/blockDevices/reload`.
 */
import test from 'ava';
import { detachLoop } from '../helpers/loop.js';
import { startStore } from './harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function missing(url: string, id: number): Promise<boolean> {
  const v = ((await (await fetch(`${url}/$/volumes/${id}`)).json()) as { volume: { isMissing: boolean } }).volume;
  return v.isMissing;
}

async function device(url: string, id: number): Promise<string> {
  return ((await (await fetch(`${url}/$/volumes/${id}`)).json()) as { volume: { device: string } }).volume.device;
}

test('events on: a detached disk is seen through udevadm monitor, long before a scan', async (t) => {
  const store = await startStore(t, { volumes: 2, sizeMiB: 400, values: { disableUdev: false, deviceScanIntervalMs: 600_000 } });
  t.false(await missing(store.url, 1));
  await detachLoop(await device(store.url, 1));
  const started = Date.now();
  while (!(await missing(store.url, 1)) && Date.now() - started < 8000) await sleep(100);
  t.true(await missing(store.url, 1), 'isMissing from the event');
  t.false(await missing(store.url, 2));
});

test('OBJSTORE_DISABLE_UDEV=true: no event is taken; the next scan (a reload) sees it', async (t) => {
  const store = await startStore(t, { volumes: 2, sizeMiB: 400, values: { disableUdev: true, deviceScanIntervalMs: 600_000 } });
  await detachLoop(await device(store.url, 1));
  await sleep(3000);
  t.false(await missing(store.url, 1), 'no rescan without events or a scan');
  const res = await fetch(`${store.url}/$/blockDevices/reload`, { method: 'POST' });
  t.is(res.status, 200);
  t.true(await missing(store.url, 1), 'the reload rescan sees it');
});
