/**
 * Disks coming and going, on real loop devices, with the periodic rescan as the only source
 * (OBJSTORE_DISABLE_UDEV=true, a 500 ms scan): a volume's loop device is unmounted and detached
 * under the running store → the volume turns isMissing, a critical notification reaches the
 * loopback webhook, objects read back byte-exact (rebuilt from parity) and a PUT goes to the
 * other volumes; its backing file attached again under another loop name + `POST
 * /$/blockDevices/reload` → the same volume id is served again on the new device, with an info
 * notification. And `GET /$/blockDevices`: every sort, each entry's volumeId, bad sorts refused.
 */
import anyTest, { type TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import { attachLoop, backingFileOf, detachLoop, sh } from '../helpers/loop.js';
import { FileScope, startLock, startStore, type Store } from './harness.js';
import { startSink, type Sink } from './notify-sink.js';

interface Ctx {
  store: Store;
  sink: Sink;
}
const test = anyTest as TestFn<Ctx>;
const scope = new FileScope();

test.before(async (t) => {
  const sink = await startSink(scope);
  const store = await startStore(scope, { volumes: 6, sizeMiB: 400, values: { chatWebhookUrl: sink.url, disableUdev: true, deviceScanIntervalMs: 500 } });
  t.context = { store, sink };
});
test.after.always(() => scope.run());

interface Vol {
  id: number;
  device: string | null;
  lastDevice: string;
  isMissing: boolean;
  label: string;
}
interface Dev {
  name: string;
  path: string;
  sysfsPath: string | null;
  size: number;
  model: string | null;
  serial: string | null;
  volumeId: number | null;
  volumeLabel: string | null;
  children: Dev[];
}

async function json<T>(res: Response | Promise<Response>): Promise<T> {
  return (await (await res).json()) as T;
}

/**
 * Attach `file` to a free loop device other than `old` (other test processes take free devices
 * too: if the first free one is `old`, a placeholder holds it while the file is attached).
 */
async function attachElsewhere(file: string, old: string): Promise<string> {
  const dev = await attachLoop(file);
  if (dev !== old) return dev;
  const placeholder = `${file}.hold`;
  await sh('truncate', ['-s', '1M', placeholder]);
  await sh('losetup', ['-d', dev]);
  const held = await attachLoop(placeholder);
  try {
    return await attachLoop(file);
  } finally {
    await sh('losetup', ['-d', held]).catch(() => undefined);
    await sh('rm', ['-f', placeholder]);
  }
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.serial('GET /$/blockDevices: each volume maps to its device; every sort orders, ties by name; bad sorts are 400', async (t) => {
  const { store } = t.context;
  const vols = (await json<{ volumes: Vol[] }>(fetch(`${store.url}/$/volumes`))).volumes;
  const list = (await json<{ blockDevices: Dev[] }>(fetch(`${store.url}/$/blockDevices`))).blockDevices;
  for (const v of vols) {
    const e = list.find((d) => d.path === v.device);
    t.truthy(e, `volume ${v.id} on ${v.device}`);
    t.is(e!.volumeId, v.id);
    t.is(e!.volumeLabel, v.label);
    for (const k of ['name', 'size', 'model', 'serial', 'volumeId'] as const) t.true(k in e!, k);
    t.deepEqual((v as unknown as { smartInfo: unknown }).smartInfo, { available: false, reason: `${v.device} is a loop device (a file-backed virtual disk): it has no SMART data`, updatedAt: null });
  }
  t.true(list.filter((d) => d.volumeId !== null).length === vols.length);
  const norm = (v: unknown) => (v === '' ? null : v);
  const natural = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
  const cmp = (a: unknown, b: unknown) => {
    [a, b] = [norm(a), norm(b)];
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    return typeof a === 'string' ? natural(a, b as string) : (a as number) - (b as number);
  };
  for (const by of ['name', 'sysfsPath', 'size', 'volumeId', 'volumeLabel'] as const) {
    const got = (await json<{ blockDevices: Dev[] }>(fetch(`${store.url}/$/blockDevices?sort=${by}`))).blockDevices;
    t.is(got.length, list.length, by);
    for (let i = 1; i < got.length; i++) {
      const c = cmp(got[i - 1]![by], got[i]![by]);
      t.true(c < 0 || (c === 0 && natural(got[i - 1]!.name, got[i]!.name) <= 0), `${by}: ${got[i - 1]!.name} before ${got[i]!.name}`);
    }
  }
  const ids = (await json<{ blockDevices: Dev[] }>(fetch(`${store.url}/$/blockDevices?sort=volumeId`))).blockDevices.slice(0, vols.length).map((d) => d.volumeId);
  t.deepEqual(ids, [...vols.map((v) => v.id)].sort((a, b) => a - b));
  for (const [q, naming] of [
    ['sort=bogus', '"bogus"'],
    ['sort=name&sort=size', '2 times'],
    ['sort=', '""'],
  ] as const) {
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${store.url}/$/blockDevices${method === 'POST' ? '/reload' : ''}?${q}`, { method });
      t.is(res.status, 400, `${method} ${q}`);
      const e = (await res.json()) as { error: { code: string; message: string } };
      t.is(e.error.code, 'INVALID_SORT');
      t.true(e.error.message.includes(naming), e.error.message);
    }
  }
});

test.serial('a volume whose loop device is detached turns isMissing at once; back under another name it is served again; both notified', async (t) => {
  const { store, sink } = t.context;
  const bodies = new Map<string, Buffer>();
  for (let i = 0; i < 4; i++) {
    const b = randomBytes(300_000 + i * 7777);
    const res = await fetch(`${store.url}/hp/obj${i}`, { method: 'PUT', body: b });
    t.is(res.status, 201);
    bodies.set(`/hp/obj${i}`, b);
  }
  const vol = (await json<{ volume: Vol }>(fetch(`${store.url}/$/volumes/1`))).volume;
  const old = vol.device!;
  const file = backingFileOf(old);
  // pulled: the file system goes, then the device
  await detachLoop(old);
  const seen = Date.now();
  const missing = await until('isMissing', async () => {
    const v = (await json<{ volume: Vol }>(fetch(`${store.url}/$/volumes/1`))).volume;
    return v.isMissing ? v : null;
  });
  t.true(Date.now() - seen < 5000, `missing after ${Date.now() - seen} ms`);
  t.is(missing.device, null);
  const status = await json<{ volumes: { missing: number[]; writable: number[] } }>(fetch(`${store.url}/$/status`));
  t.deepEqual(status.volumes.missing, [1]);
  t.false(status.volumes.writable.includes(1));
  await sink.waitFor(1);
  t.regex(sink.bodies[0]!.text, /^\[CRITICAL\] \*Disk of volume 1 is missing\*/);
  // reads rebuild from parity; writes go to the other volumes
  for (const [p, b] of bodies) {
    const res = await fetch(`${store.url}${p}`);
    t.is(res.status, 200, p);
    t.true(Buffer.from(await res.arrayBuffer()).equals(b), p);
  }
  const during = randomBytes(200_000);
  t.is((await fetch(`${store.url}/hp/during`, { method: 'PUT', body: during })).status, 201);
  const info = await json<{ dataSliceVolumes?: number[]; parityVolumes?: number[] } & Record<string, unknown>>(fetch(`${store.url}/$/fileinfo/hp/during`));
  t.false(JSON.stringify(info).includes('vol-1/'), 'no slice of a new object on the missing volume');

  // back, under another kernel name (under the start lock: the rescan mounts disks to read them)
  const release = await startLock();
  let now: string;
  let list: Dev[];
  try {
    now = await attachElsewhere(file, old);
    list = (await json<{ blockDevices: Dev[] }>(fetch(`${store.url}/$/blockDevices/reload`, { method: 'POST' }))).blockDevices;
  } finally {
    release();
  }
  t.not(now, old);
  t.is(list.find((d) => d.path === now)?.volumeId, 1, 'the reload answers with the device mapped to volume 1');
  const back = (await json<{ volume: Vol }>(fetch(`${store.url}/$/volumes/1`))).volume;
  t.false(back.isMissing);
  t.is(back.device, now);
  t.is(back.lastDevice, now);
  await sink.waitFor(2);
  t.regex(sink.bodies[1]!.text, new RegExp(`^\\[info\\] \\*Disk of volume 1 is back\\*.*\\n.*found again on ${now}`));
  const status2 = await json<{ volumes: { missing: number[]; writable: number[] } }>(fetch(`${store.url}/$/status`));
  t.deepEqual(status2.volumes.missing, []);
  t.true(status2.volumes.writable.includes(1));
  bodies.set('/hp/during', during);
  for (const [p, b] of bodies) {
    const res = await fetch(`${store.url}${p}`);
    t.true(Buffer.from(await res.arrayBuffer()).equals(b), p);
  }
  // the disk serves its own slices again: a light verify of it finds nothing wrong
  const v = await json<{ accepted: boolean }>(fetch(`${store.url}/$/verify-volumes`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"volumeIds":[1],"mode":"full"}' }));
  t.true(v.accepted);
  const run = await until('verify run', async () => {
    const runs = await json<{ runs?: Array<{ status: string; errors: Record<string, number> }> } | Array<{ status: string; errors: Record<string, number> }>>(fetch(`${store.url}/$/verify-runs`));
    const r = (Array.isArray(runs) ? runs : (runs.runs ?? []))[0];
    return r && r.status === 'completed' ? r : null;
  }, 60_000);
  t.deepEqual(Object.values(run.errors).filter((n) => n > 0), []);
});
