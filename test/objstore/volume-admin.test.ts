/**
 * Volume administration on real loop devices: PUT /$/volumes/{id} (flags, label, comment, with
 * every bad input refused), DELETE /$/volumes/{id} refused with the spec's message while live
 * slices remain, tombstones, and the persisted maintenance freeze.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLoopDevices } from '../helpers/loop.js';
import { startStore } from './harness.js';

const json = (url: string, method: string, body?: unknown) =>
  fetch(url, { method, ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }) }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));

test('PUT /$/volumes/{id} sets flags, label and comment, and refuses bad input naming it', async (t) => {
  const store = await startStore(t, { volumes: 6, sizeMiB: 320 });
  const v = `${store.url}/$/volumes/1`;
  const ok = await json(v, 'PUT', { label: 'bay 3', comment: 'replaced 2026-11', isReadOnly: true });
  t.is(ok.status, 200);
  t.like(ok.body.volume, { id: 1, label: 'bay 3', comment: 'replaced 2026-11', isReadOnly: true, isEnabled: true });
  t.like((await json(v, 'GET')).body.volume, { label: 'bay 3', isReadOnly: true }, 'persisted');
  const bad: Array<[unknown, number, RegExp]> = [
    [{ isReadOnly: 'yes' }, 400, /isReadOnly must be true or false/],
    [{ label: 7 }, 400, /label must be a string/],
    [{ colour: 'red' }, 400, /unknown field\(s\): colour/],
    [{}, 400, /nothing to update/],
    [{ isDraining: true }, 409, /POST \/\$\/volumes\/1\/drain/],
  ];
  for (const [body, status, re] of bad) {
    const r = await json(v, 'PUT', body);
    t.is(r.status, status, JSON.stringify(body));
    t.regex(r.body.error.message, re);
  }
  t.like((await json(v, 'GET')).body.volume, { label: 'bay 3', isReadOnly: true, isDraining: false }, 'a refused update changed nothing');
  t.is((await json(`${store.url}/$/volumes/99`, 'PUT', { label: 'x' })).status, 404);
  // A read-only volume takes no new slices.
  const put = await fetch(`${store.url}/b/after-readonly`, { method: 'PUT', body: randomBytes(10_000) });
  t.is(put.status, 201);
  const info = (await json(`${store.url}/$/fileinfo/b/after-readonly`, 'GET')).body;
  t.false(info.slices.some((s: { volumeId: number }) => s.volumeId === 1), 'volume 1 is read-only: not chosen');
});

test('DELETE /$/volumes/{id} is refused while live slices remain, then leaves a tombstone', async (t) => {
  const store = await startStore(t, { volumes: 6, sizeMiB: 320 });
  const put = await fetch(`${store.url}/b/obj`, { method: 'PUT', body: randomBytes(50_000) });
  t.is(put.status, 201);
  const slices = (await json(`${store.url}/$/fileinfo/b/obj`, 'GET')).body.slices as Array<{ volumeId: number }>;
  const victim = slices[0]!.volumeId;
  const refused = await json(`${store.url}/$/volumes/${victim}`, 'DELETE');
  t.is(refused.status, 409);
  t.is(refused.body.error.message, `volume ${victim} still holds 1 live object slice(s); drain it first: POST /$/volumes/${victim}/drain`);
  const viaFlag = await json(`${store.url}/$/volumes/${victim}`, 'PUT', { isDeleted: true });
  t.is(viaFlag.status, 409, 'isDeleted through PUT is held to the same guard');
  t.false((await json(`${store.url}/$/volumes/${victim}`, 'GET')).body.volume.isDeleted);
  t.is((await fetch(`${store.url}/b/obj`, { method: 'DELETE' })).status, 204);
  const deleted = await json(`${store.url}/$/volumes/${victim}`, 'DELETE');
  t.is(deleted.status, 200);
  t.like(deleted.body.volume, { id: victim, isDeleted: true, isEnabled: false });
  const listed = (await json(`${store.url}/$/volumes`, 'GET')).body.volumes as Array<{ id: number }>;
  t.false(listed.some((v) => v.id === victim), 'a tombstone is not listed by default');
  const all = (await json(`${store.url}/$/volumes?includeDeleted=true`, 'GET')).body.volumes as Array<{ id: number; isDeleted: boolean }>;
  t.true(all.some((v) => v.id === victim && v.isDeleted), 'but is with includeDeleted=true');
  t.is((await json(`${store.url}/$/volumes/${victim}`, 'PUT', { isDeleted: false })).status, 409, 'no un-delete');
  t.is((await json(`${store.url}/$/volumes/${victim}`, 'DELETE')).status, 200, 'deleting a tombstone again is a no-op');
  await fetch(`${store.url}/b/next`, { method: 'PUT', body: randomBytes(20_000) });
  const next = (await json(`${store.url}/$/fileinfo/b/next`, 'GET')).body.slices as Array<{ volumeId: number }>;
  t.false(next.some((s) => s.volumeId === victim), 'new objects avoid the deleted volume');
});

test('the maintenance freeze is persisted across a restart; bad bodies are refused', async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'hostd-freeze-'));
  t.teardown(() => rmSync(stateDir, { recursive: true, force: true }));
  const devices = await withLoopDevices(t, 6, 320);
  const first = await startStore(t, { stateDir, devices });
  const f = `${first.url}/$/maintenance-freeze`;
  t.deepEqual((await json(f, 'GET')).body, { frozen: false });
  t.is((await json(f, 'PUT', { frozen: 'yes' })).status, 400);
  t.is((await json(f, 'PUT', { frozen: true, why: 'x' })).status, 400);
  t.deepEqual((await json(f, 'PUT', { frozen: true })).body, { frozen: true });
  await first.system.shutdown();
  const second = await startStore(t, { stateDir, devices, provision: false });
  t.deepEqual((await json(`${second.url}/$/maintenance-freeze`, 'GET')).body, { frozen: true }, 'still frozen after the restart');
});
