/**
 * POST /$/verify-file/{objectId} on real loop devices: light checks every slice's header, full
 * reads every byte and recomputes the parity, so a parity byte changed together with its
 * checksum is found by full and not by light; a clean result clears the object's stale faults.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { crc32c } from '@node-rs/crc32';
import { startStore } from './harness.js';

const HEADER = 64;

interface Info {
  object: { id: string; chunkSize: number };
  slices: Array<{ path: string; index: number }>;
}

const dropCaches = () => execFileSync('sh', ['-c', 'sync; echo 1 > /proc/sys/vm/drop_caches']);

test('verify-file: light and full, a rewritten parity chunk, a rotten data chunk, stale faults cleared', async (t) => {
  const store = await startStore(t, { volumes: 6, sizeMiB: 320 });
  const body = randomBytes(1024 * 1024 + 333);
  t.is((await fetch(`${store.url}/v/x`, { method: 'PUT', body })).status, 201);
  const info = (await (await fetch(`${store.url}/$/fileinfo/v/x`)).json()) as Info;
  const id = info.object.id;
  const verify = async (mode?: string) => {
    const res = await fetch(`${store.url}/$/verify-file/${id}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: mode === undefined ? '' : JSON.stringify({ mode }) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const full = await verify();
  t.is(full.status, 200);
  t.like(full.body, { objectId: id, mode: 'full', clean: true, md5: { ok: true } });
  t.deepEqual(Object.values(full.body.slices).map((s: any) => s.status), ['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
  t.like((await verify('light')).body, { mode: 'light', clean: true, md5: null });

  // A parity chunk rewritten with a consistent checksum: only recomputing the parity finds it.
  const parity = info.slices.find((s) => s.index === 4)!;
  const original = readFileSync(parity.path);
  const changed = Buffer.from(original);
  const chunk = info.object.chunkSize;
  changed[HEADER + 100] = changed[HEADER + 100]! ^ 0x01;
  changed.writeUInt32BE(crc32c(changed.subarray(HEADER, HEADER + chunk)), HEADER + chunk);
  writeFileSync(parity.path, changed);
  dropCaches();
  t.like((await verify('light')).body, { clean: true }, 'light reads headers only: it does not see it');
  const caught = (await verify('full')).body;
  t.false(caught.clean);
  t.like(caught.slices['4'], { status: 'parity-mismatch', kind: 'parity' });
  t.like(caught.slices['0'], { status: 'ok' });
  t.like(caught.md5, { ok: true }, 'the data itself is intact');
  const faults = (await (await fetch(`${store.url}/$/faults`)).json()) as { faults: Array<{ objectId: string; sliceIndex: number; code: string }> };
  t.truthy(faults.faults.find((f) => f.objectId === id && f.sliceIndex === 4 && f.code === 'PARITY_MISMATCH'), 'recorded as a fault');
  t.true(Buffer.from(await (await fetch(`${store.url}/v/x`)).arrayBuffer()).equals(body), 'reads are unaffected');

  // Put it back: a clean full verify clears the stale fault.
  writeFileSync(parity.path, original);
  dropCaches();
  const healed = (await verify('full')).body;
  t.true(healed.clean);
  t.true(healed.faultsCleared >= 1);
  const after = (await (await fetch(`${store.url}/$/faults`)).json()) as { faults: Array<{ objectId: string }> };
  t.false(after.faults.some((f) => f.objectId === id));

  // Rot in a data chunk (checksum not fixed): the volume's CRC check names it.
  const data = info.slices.find((s) => s.index === 1)!;
  const rotten = readFileSync(data.path);
  rotten[HEADER + 7] = rotten[HEADER + 7]! ^ 0xff;
  writeFileSync(data.path, rotten);
  dropCaches();
  const rot = (await verify('full')).body;
  t.false(rot.clean);
  t.like(rot.slices['1'], { status: 'checksum', kind: 'data' });
  t.is(rot.md5.actual, null, 'with a data slice unreadable the MD5 is not computed from unverified bytes');
});

test('verify-file refuses bad input', async (t) => {
  const store = await startStore(t, { volumes: 6, sizeMiB: 320 });
  t.is((await fetch(`${store.url}/a/b`, { method: 'PUT', body: 'x' })).status, 201);
  const id = ((await (await fetch(`${store.url}/$/fileinfo/a/b`)).json()) as Info).object.id;
  const cases: Array<[string, string, number, RegExp]> = [
    [id, '{"mode":"deep"}', 400, /mode must be "light" or "full"/],
    [id, '{"mode":"full","fast":true}', 400, /unknown field\(s\): fast/],
    [id, '[1]', 400, /JSON object/],
    ['$000000000000000000000000', '', 404, /no object/],
    ['nope', '', 400, /not an object id/],
  ];
  for (const [target, body, status, re] of cases) {
    const res = await fetch(`${store.url}/$/verify-file/${target}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    t.is(res.status, status, `${target} ${body}`);
    t.regex(((await res.json()) as { error: { message: string } }).error.message, re);
  }
});
