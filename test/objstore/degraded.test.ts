/**
 * Reads from disks that really fail: three of the six volumes are loop devices over the
 * faultyfs fixture, so the kernel returns EIO for them on command. With 4+2 slices, one or two
 * dead disks still read byte-exact (rebuilt from parity, the faults recorded); three give a
 * clean error and never a wrong byte.
 */
import { createHash, randomBytes } from 'node:crypto';
import anyTest, { type TestFn } from 'ava';
import { startFaultyDisk, type FaultyDisk } from '../helpers/faulty-disk.js';
import { withLoopDevices } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';

const test = anyTest as TestFn<{ store: Store; faulty: FaultyDisk[]; bodies: Map<string, Buffer>; order: number[] }>;
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const scope = new FileScope();

test.before(async (t) => {
  const good = await withLoopDevices(scope, 3, 512);
  const faulty: FaultyDisk[] = [];
  for (let i = 0; i < 3; i++) faulty.push(await startFaultyDisk(scope, 512));
  const store = await startStore(scope, { devices: [...faulty.map((f) => f.device), ...good] });
  const bodies = new Map<string, Buffer>();
  for (const [name, size] of [['small', 5000], ['stripes', 3 * 1024 * 1024 + 77], ['big', 24 * 1024 * 1024]] as const) {
    const body = randomBytes(size);
    const res = await fetch(`${store.url}/deg/${name}`, { method: 'PUT', body });
    if (res.status !== 201) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
    bodies.set(name, body);
  }
  t.context = { store, faulty, bodies, order: [0, 1, 2] };
});
test.after.always(() => scope.run());

async function readAll(t: { context: { store: Store; bodies: Map<string, Buffer> } }) {
  const out = new Map<string, { status: number; md5: string | null }>();
  for (const name of t.context.bodies.keys()) {
    const res = await fetch(`${t.context.store.url}/deg/${name}`);
    out.set(name, { status: res.status, md5: res.status === 200 ? md5(new Uint8Array(await res.arrayBuffer())) : (await res.text(), null) });
  }
  return out;
}

test.serial('all disks good: every object reads byte-exact', async (t) => {
  for (const [name, r] of await readAll(t)) {
    t.is(r.status, 200, name);
    t.is(r.md5, md5(t.context.bodies.get(name)!), name);
  }
});

test.serial('one disk returning EIO: objects still read byte-exact and the faults are recorded', async (t) => {
  // The failing disk first is one that holds a data slice of 'big' (volumes 1..3 are the failing
  // disks; data or parity goes by free space at the PUT, and a GET reads parity only when a data
  // slice fails). With 4 + 2 on six volumes, at least one of the three holds data.
  const info = (await (await fetch(`${t.context.store.url}/$/fileinfo/deg/big`)).json()) as { object: { dataVolumes: number[] } };
  const first = [1, 2, 3].find((v) => info.object.dataVolumes.includes(v))!;
  t.truthy(first, `a failing disk holds data of big: ${JSON.stringify(info.object)}`);
  t.context.order = [first - 1, ...[0, 1, 2].filter((i) => i !== first - 1)];
  await t.context.faulty[t.context.order[0]!]!.failAll();
  for (const [name, r] of await readAll(t)) {
    t.is(r.status, 200, name);
    t.is(r.md5, md5(t.context.bodies.get(name)!), name);
  }
  // A read records its faults beside itself (not before its answer): polled for, up to 10 s.
  type Faults = { faults: Array<{ volumeId: number; code: string; repairStatus: string }> };
  let faults: Faults = { faults: [] };
  for (const until = Date.now() + 10_000; faults.faults.length === 0 && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    faults = (await (await fetch(`${t.context.store.url}/$/faults`)).json()) as Faults;
  }
  t.true(faults.faults.length >= 1, JSON.stringify(faults));
  t.true(faults.faults.every((f) => f.repairStatus === 'pending'));
  t.true(faults.faults.some((f) => f.code === 'EIO' || f.code === 'TIMEOUT'), JSON.stringify(faults.faults.map((f) => f.code)));
});

test.serial('two disks failing with 4+2: still byte-exact', async (t) => {
  await t.context.faulty[t.context.order[1]!]!.failAll();
  for (const [name, r] of await readAll(t)) {
    t.is(r.status, 200, name);
    t.is(r.md5, md5(t.context.bodies.get(name)!), name);
  }
});

test.serial('three disks failing: a clean 503, never unverified bytes', async (t) => {
  await t.context.faulty[t.context.order[2]!]!.failAll();
  for (const name of t.context.bodies.keys()) {
    // Volumes 1..3 are the failing disks. A small object (1+2) spreads over the fleet at random:
    // with at most m of its slices on them it still reads, byte-exact.
    const info = (await (await fetch(`${t.context.store.url}/$/fileinfo/deg/${name}`)).json()) as { object: { m: number; dataVolumes: number[]; parityVolumes: number[] } };
    const onFailing = [...info.object.dataVolumes, ...info.object.parityVolumes].filter((v) => v <= 3).length;
    const res = await fetch(`${t.context.store.url}/deg/${name}`);
    if (onFailing <= info.object.m) {
      t.is(res.status, 200, name);
      t.is(md5(new Uint8Array(await res.arrayBuffer())), md5(t.context.bodies.get(name)!), name);
    } else if (res.status === 200) {
      // Headers may already be out for a later stripe; then the body must be cut short, not wrong.
      const got = await res.arrayBuffer().then((b) => new Uint8Array(b)).catch(() => null);
      t.true(got === null || got.byteLength < t.context.bodies.get(name)!.byteLength, `${name}: a failed read must not look complete`);
    } else {
      t.is(res.status, 503, name);
      const body = (await res.json()) as { error: { code: string; message: string } };
      t.is(body.error.code, 'INSUFFICIENT_SLICES');
      t.regex(body.error.message, /parity covers 2/);
    }
  }
});

test.serial('the disks healed: reads are whole again', async (t) => {
  for (const f of t.context.faulty) await f.heal();
  for (const [name, r] of await readAll(t)) {
    t.is(r.status, 200, name);
    t.is(r.md5, md5(t.context.bodies.get(name)!), name);
  }
});
