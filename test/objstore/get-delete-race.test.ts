/**
 * Issue 21 item 1: a DELETE while a GET of the same object is reading. The GET then finds the
 * object's slices gone: that is not a fault of the disks, so it must not count toward volume
 * health. Repeated 100 times (three times the default health threshold), every volume stays
 * healthy and writable, no fault is left behind, and a PUT still lands.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { FileScope, startStore } from './harness.js';

/** Three read batches (16 MiB each with 4+2 and 256 KiB chunks): the third is read after the DELETE. */
const SIZE = 34 * 1024 * 1024;

test('a DELETE during a GET of the same object, 100 times: every volume stays healthy and writable', async (t) => {
  t.timeout(300_000);
  const scope = new FileScope();
  t.teardown(() => scope.run());
  const store = await startStore(scope, { volumes: 6, sizeMiB: 512 });
  const body = randomBytes(SIZE);
  let cut = 0;
  for (let i = 0; i < 100; i++) {
    const path = `${store.url}/race/obj-${i}`;
    // A PUT refused (507) may be cut before its body is sent: that is a failure too, named.
    const put = await fetch(path, { method: 'PUT', body }).catch((err: Error) => ({ status: 0, text: async () => `${err.message}: ${String(err.cause)}` }));
    if (put.status !== 201) return t.fail(`PUT ${i}: ${put.status} ${await put.text()}`);
    const get = await fetch(path);
    t.is(get.status, 200);
    const reader = get.body!.getReader();
    // Read the first piece, then leave the rest unread while the object is deleted.
    await reader.read();
    const del = await fetch(path, { method: 'DELETE' });
    t.is(del.status, 204, `DELETE ${i}`);
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch {
      cut++; // the GET was cut: the object is gone
    }
  }
  t.log(`${cut} of 100 GETs were cut by their DELETE`);
  t.true(cut > 0, 'the race happened at least once');
  const { volumes } = (await (await fetch(`${store.url}/$/volumes`)).json()) as { volumes: Array<{ id: number; isHealthy: boolean; isReadOnly: boolean; faults: number }> };
  t.is(volumes.length, 6);
  for (const v of volumes) t.like(v, { isHealthy: true, isReadOnly: false }, `volume ${v.id}`);
  const { faults } = (await (await fetch(`${store.url}/$/faults`)).json()) as { faults: unknown[] };
  t.deepEqual(faults, [], 'no fault is left for objects that no longer exist');
  const after = await fetch(`${store.url}/race/after`, { method: 'PUT', body: body.subarray(0, 1000) });
  t.is(after.status, 201, await after.text());

  // With every volume made read-only, a PUT's 507 says volumes exist and why none is writable.
  for (const v of volumes) t.is((await fetch(`${store.url}/$/volumes/${v.id}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ isReadOnly: true }) })).status, 200);
  const refused = await fetch(`${store.url}/race/refused`, { method: 'PUT', body: 'x' });
  t.is(refused.status, 507);
  const err = ((await refused.json()) as { error: { code: string; message: string } }).error;
  t.is(err.code, 'NO_WRITABLE_VOLUMES');
  t.regex(err.message, /^6 volumes are registered but none takes new objects \(volume \d+: read-only; /);
});
