/**
 * Identify on real loop devices: `POST /$/volumes/{id}/identify` makes the disk's read counters
 * (/sys/block/<dev>/stat, sectors read) move; re-POSTing extends it past the first deadline; a
 * DELETE stops it at once; left alone it stops at its deadline (~3 s); the other volume is not
 * read; it never writes. And the refusals: bad id 400, unknown volume 404, a missing disk 409.
 */
import anyTest, { type TestFn } from 'ava';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { detachLoop } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';

const test = anyTest as TestFn<{ store: Store; devices: Map<number, string> }>;
const scope = new FileScope();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test.before(async (t) => {
  const store = await startStore(scope, { volumes: 3, sizeMiB: 400, values: { disableUdev: true, deviceScanIntervalMs: 500 } });
  const vols = ((await (await fetch(`${store.url}/$/volumes`)).json()) as { volumes: Array<{ id: number; device: string }> }).volumes;
  url = store.url;
  t.context = { store, devices: new Map(vols.map((v) => [v.id, v.device])) };
});
test.after.always(() => scope.run());

/** [sectors read, sectors written] of a block device. */
function counters(device: string): [number, number] {
  const f = readFileSync(`/sys/block/${basename(device)}/stat`, 'utf8').trim().split(/\s+/).map(Number);
  return [f[2]!, f[6]!];
}

/** The store's URL, set once it runs. */
let url = '';
const call = async (method: string, path: string) => {
  const res = await fetch(`${url}${path}`, { method });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: { code: string; message: string } } };
};

test.serial('POST reads the disk; re-POSTs extend it; DELETE stops it at once; no writes; the other disks are not read', async (t) => {
  const dev = t.context.devices.get(1)!;
  const other = t.context.devices.get(2)!;
  const [r0, w0] = counters(dev);
  const [o0] = counters(other);
  const first = await call('POST', '/$/volumes/1/identify');
  t.is(first.status, 200);
  t.like(first.body, { volumeId: 1, identifying: true, device: dev, extended: false });
  const deadline = Date.parse(first.body.deadline as string);
  t.true(Math.abs(deadline - Date.now() - 3000) < 500, `deadline ${first.body.deadline as string}`);
  // re-POSTed every second for 5 s: still reading at the end, well past the first deadline
  for (let i = 0; i < 5; i++) {
    await sleep(1000);
    const again = await call('POST', '/$/volumes/1/identify');
    t.like(again.body, { identifying: true, extended: true });
  }
  const [r1] = counters(dev);
  await sleep(500);
  const [r2, w2] = counters(dev);
  t.true(r1 - r0 > 2048, `sectors read while identifying: ${r1 - r0}`);
  t.true(r2 > r1, 'still reading after 5.5 s of re-POSTs');
  t.is(w2, w0, 'identify never writes');
  t.true(counters(other)[0] - o0 < 256, 'another volume is not read');
  const del = await call('DELETE', '/$/volumes/1/identify');
  t.deepEqual(del.body, { volumeId: 1, identifying: false, device: null, deadline: null, wasOn: true });
  await sleep(100);
  const [a] = counters(dev);
  await sleep(800);
  t.is(counters(dev)[0], a, 'no reads after DELETE');
  const again = await call('DELETE', '/$/volumes/1/identify');
  t.is(again.status, 200);
  t.is(again.body.wasOn, false);
});

test.serial('left alone, it stops at its deadline', async (t) => {
  const dev = t.context.devices.get(2)!;
  const [r0] = counters(dev);
  t.is((await call('POST', '/$/volumes/2/identify')).status, 200);
  await sleep(1500);
  t.true(counters(dev)[0] > r0, 'reading');
  await sleep(2000);
  const [a] = counters(dev);
  await sleep(800);
  t.is(counters(dev)[0], a, 'stopped after ~3 s');
});

test.serial('refusals: bad id, unknown volume, a missing disk', async (t) => {
  const bad = await call('POST', '/$/volumes/x1/identify');
  t.is(bad.status, 400);
  t.is(bad.body.error!.code, 'INVALID_VOLUME_ID');
  for (const m of ['POST', 'DELETE']) {
    const none = await call(m, '/$/volumes/99/identify');
    t.is(none.status, 404, m);
    t.is(none.body.error!.code, 'NO_SUCH_VOLUME');
  }
  await detachLoop(t.context.devices.get(3)!);
  const end = Date.now() + 10_000;
  let missing;
  while ((missing = await call('POST', '/$/volumes/3/identify')).status === 200 && Date.now() < end) {
    await call('DELETE', '/$/volumes/3/identify');
    await sleep(200);
  }
  t.is(missing.status, 409);
  t.is(missing.body.error!.code, 'VOLUME_MISSING');
  t.regex(missing.body.error!.message, /volume 3 has no disk present/);
});
