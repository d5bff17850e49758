/**
 * Slice faults and their repair on real loop devices, with the repair worker on (every 500 ms):
 * a parity chunk rewritten with a valid CRC, found by a full verify, is rebuilt in place and the
 * fault goes; each of the four reasons a repair is refused (insufficient-slices, unrecoverable,
 * target-unwritable, reconstruction-mismatch) is produced for real, on an object of its own,
 * and nothing is overwritten; the health monitor makes a volume with too many faulty slices
 * read-only and unhealthy (reads go on, writes avoid it) until the operator brings it back;
 * POST /$/faults/accept-loss refuses bad input.
 *
 * A store with the repair worker on repairs a fault within a second: each blocked case is set
 * up under the maintenance freeze (the repair waits), then unfrozen.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import anyTest, { type TestFn } from 'ava';
import { startStore, FileScope, type Store } from './harness.js';
import { api, flipByte, assertAllExact, assertDisksMatchRecords, md5, putObjects, settled, sliceFilesOnDisk, waitFor, type ObjectRecordView } from './maint.js';

interface Fault {
  objectId: string;
  sliceIndex: number;
  volumeId: number;
  code: string;
  repairStatus: 'pending' | 'repairing' | 'blocked';
  repairBlockedReason: string | null;
  count: number;
}
interface FileInfo {
  object: ObjectRecordView;
  slices: Array<{ index: number; kind: 'data' | 'parity'; volumeId: number; path: string }>;
}
interface Run {
  status: string;
  startedAt: string;
  errors: Record<string, number>;
}

const test = anyTest as TestFn<{ store: Store; bodies: Map<string, Buffer> }>;
const scope = new FileScope();

const FAULT_FIELDS = ['objectId', 'sliceIndex', 'volumeId', 'code', 'repairStatus', 'repairBlockedReason'];


async function fileinfo(base: string, path: string): Promise<FileInfo> {
  const r = await api<FileInfo>(`${base}/$/fileinfo${path}`);
  if (r.status !== 200) throw new Error(`fileinfo ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function faultsOf(base: string, objectId: string): Promise<Fault[]> {
  const r = await api<{ faults: Fault[] }>(`${base}/$/faults`);
  return r.body.faults.filter((f) => f.objectId === objectId).sort((a, b) => a.sliceIndex - b.sliceIndex);
}

async function freeze(base: string, frozen: boolean): Promise<void> {
  const r = await api<{ frozen: boolean }>(`${base}/$/maintenance-freeze`, 'PUT', { frozen });
  if (r.status !== 200 || r.body.frozen !== frozen) throw new Error(`freeze ${frozen}: ${r.status} ${JSON.stringify(r.body)}`);
}

async function repairStats(base: string): Promise<{ repaired: number; blocked: number; lastRunAt: string | null }> {
  return (await api<{ scheduler: { repair: { repaired: number; blocked: number; lastRunAt: string | null } } }>(`${base}/$/debug`)).body.scheduler.repair;
}

/** Wait until the repair worker has finished a round that started after `since` (ms). */
async function repairRoundAfter(base: string, since: number): Promise<void> {
  await waitFor('a repair round', async () => {
    const s = await repairStats(base);
    return s.lastRunAt !== null && Date.parse(s.lastRunAt) > since + 600;
  }, 20_000, 100);
}

/** A full verify of the fleet, to its end; its history record. */
async function fullVerify(base: string): Promise<Run> {
  const r = await api<{ accepted: boolean; startedAt: string }>(`${base}/$/verify-volumes`, 'POST', { mode: 'full' });
  if (r.status !== 200 || !r.body.accepted) throw new Error(`verify: ${r.status} ${JSON.stringify(r.body)}`);
  await waitFor('the verify run to finish', async () => (await api<{ run: unknown }>(`${base}/$/verify-volumes`)).body.run === null, 60_000, 50);
  const [last] = (await api<{ runs: Run[] }>(`${base}/$/verify-runs`)).body.runs;
  if (last?.startedAt !== r.body.startedAt) throw new Error('the newest run is not the one just started');
  return last;
}

async function getStatus(base: string, path: string): Promise<{ status: number; md5: string | null }> {
  const res = await fetch(`${base}${path}`);
  if (res.status !== 200) {
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, md5: null };
  }
  return { status: 200, md5: md5(new Uint8Array(await res.arrayBuffer())) };
}

function assertFaultShape(t: { true(v: boolean, m?: string): void }, faults: Fault[]): void {
  for (const f of faults) for (const k of FAULT_FIELDS) t.true(k in f, `a fault has ${k}: ${JSON.stringify(f)}`);
}

test.before(async (t) => {
  const store = await startStore(scope, { volumes: 6, sizeMiB: 512, scheduler: { repairIntervalMs: 500 } });
  // One object per case, each over all six volumes (4+2).
  const sizes = { pa: 1024 * 1024 + 77, ins: 200_000, unr: 150_003, tu: 250_000, rm: 100_000, other: 3 * 1024 * 1024 + 5 };
  const bodies = new Map<string, Buffer>();
  for (const [name, size] of Object.entries(sizes)) {
    const one = await putObjects(store.url, `r-${name}`, [size]);
    for (const [, b] of one) bodies.set(`/r-${name}/o0`, b);
  }
  t.context = { store, bodies };
});
test.after.always(() => scope.run());

test.serial('accept-loss refuses bad input naming the field; an unknown object or one without faults is 404', async (t) => {
  const { store } = t.context;
  const id = (await fileinfo(store.url, '/r-pa/o0')).object.id;
  const cases: Array<[unknown, number, RegExp]> = [
    [{}, 400, /objectId/],
    [{ objectId: 'nope' }, 400, /objectId/],
    [{ objectId: `$${'g'.repeat(24)}` }, 400, /objectId/],
    [{ objectId: id.slice(0, 20) }, 400, /objectId/],
    [{ objectId: id, sliceIndex: -1 }, 400, /sliceIndex/],
    [{ objectId: id, sliceIndex: 1.5 }, 400, /sliceIndex/],
    [{ objectId: id, comment: 7 }, 400, /comment/],
    [{ objectId: id, reason: 'gone' }, 400, /reason/],
    [{ objectId: `$${'0'.repeat(24)}` }, 404, /\$0{24}/],
    [{ objectId: id, comment: 'nothing is wrong with it' }, 404, /fault/],
  ];
  for (const [body, status, re] of cases) {
    const r = await api<{ error: { message: string } }>(`${store.url}/$/faults/accept-loss`, 'POST', body);
    t.is(r.status, status, JSON.stringify(body));
    t.regex(r.body.error.message, re, JSON.stringify(body));
  }
  t.deepEqual(await faultsOf(store.url, id), [], 'no fault was made up');
});

test.serial('a parity chunk rewritten with a valid CRC, found by a full verify, is repaired: fault gone, verify clean, bytes exact', async (t) => {
  const { store, bodies } = t.context;
  const info = await fileinfo(store.url, '/r-pa/o0');
  const parity = info.slices.find((s) => s.kind === 'parity')!;
  const before = await repairStats(store.url);
  const original = flipByte(parity.path, true);
  const found = await fullVerify(store.url);
  t.is(found.errors.parityMismatch, 1, JSON.stringify(found.errors));

  // The fault record goes when the rebuilt slice is in place; the counter a moment later (after
  // the relocation returns): wait for both.
  await waitFor('the parity fault to be repaired and counted', async () => (await faultsOf(store.url, info.object.id)).length === 0 && (await repairStats(store.url)).repaired > before.repaired, 20_000, 100);
  const after = await repairStats(store.url);
  t.true(after.repaired > before.repaired, 'the repair worker repaired it');
  await settled(store.url);
  const now = await fileinfo(store.url, '/r-pa/o0');
  t.deepEqual([...now.object.dataVolumes, ...now.object.parityVolumes], [...info.object.dataVolumes, ...info.object.parityVolumes], 'rebuilt in place: every volume holds a slice');
  const rebuilt = readFileSync(now.slices.find((s) => s.index === parity.index)!.path);
  t.true(rebuilt.equals(original), 'the parity slice is recomputed to its original bytes');

  const clean = await fullVerify(store.url);
  t.is(clean.status, 'completed');
  t.deepEqual(Object.values(clean.errors).filter((n) => n !== 0), [], JSON.stringify(clean.errors));
  await assertAllExact(t, store.url, bodies);
  await assertDisksMatchRecords(t, store.url, store.stateDir, bodies.keys());
});

test.serial('insufficient-slices: three slices of a 4+2 object gone, the repair is refused and the rest stays in place', async (t) => {
  const { store } = t.context;
  const info = await fileinfo(store.url, '/r-ins/o0');
  const id = info.object.id;
  await freeze(store.url, true);
  let unfrozen = false;
  try {
    const gone = info.slices.filter((s) => [0, 1, 4].includes(s.index));
    const kept = info.slices.filter((s) => ![0, 1, 4].includes(s.index)).map((s) => ({ ...s, bytes: readFileSync(s.path) }));
    for (const s of gone) rmSync(s.path);
    const read = await getStatus(store.url, '/r-ins/o0');
    t.is(read.status, 503, 'three of six slices gone: the object cannot be read');
    const pending = await waitFor('three faults', async () => {
      const f = await faultsOf(store.url, id);
      return f.length === 3 ? f : null;
    }, 10_000, 100);
    t.deepEqual(pending.map((f) => f.sliceIndex), [0, 1, 4]);
    t.true(pending.every((f) => f.repairStatus === 'pending'), 'frozen: waiting for the repair worker');

    await freeze(store.url, false);
    unfrozen = true;
    const blocked = await waitFor('the repair to be refused', async () => {
      const f = await faultsOf(store.url, id);
      return f.length === 3 && f.every((x) => x.repairStatus === 'blocked') ? f : null;
    }, 20_000, 100);
    assertFaultShape(t, blocked);
    for (const f of blocked) {
      t.is(f.repairBlockedReason, 'insufficient-slices');
      t.is(f.volumeId, info.slices[f.sliceIndex]!.volumeId);
    }
    for (const s of kept) t.true(readFileSync(s.path).equals(s.bytes), `slice ${s.index} stays in place, unchanged`);
    for (const s of gone) t.false(existsSync(s.path), `slice ${s.index} was not made up`);
  } finally {
    if (!unfrozen) await freeze(store.url, false);
  }
});

test.serial('unrecoverable: an accepted loss is blocked and stays so (not repaired, not re-armed by a new finding)', async (t) => {
  const { store, bodies } = t.context;
  const info = await fileinfo(store.url, '/r-unr/o0');
  const id = info.object.id;
  const body = bodies.get('/r-unr/o0')!;
  const slice = info.slices[2]!;
  await freeze(store.url, true);
  let unfrozen = false;
  try {
    flipByte(slice.path, false);
    const damaged = readFileSync(slice.path);
    const read = await getStatus(store.url, '/r-unr/o0');
    t.is(read.md5, md5(body), 'read byte-exact (rebuilt from parity)');
    const [pending] = await waitFor('the fault', async () => {
      const f = await faultsOf(store.url, id);
      return f.length === 1 ? f : null;
    }, 10_000, 100);
    t.like(pending, { sliceIndex: 2, volumeId: slice.volumeId, code: 'CHECKSUM', repairStatus: 'pending', repairBlockedReason: null });

    const accept = await api(`${store.url}/$/faults/accept-loss`, 'POST', { objectId: id, comment: 'bay 3 replaced; restored from the offsite copy' });
    t.is(accept.status, 200);
    t.deepEqual(accept.body, { objectId: id, accepted: 1 });
    const [marked] = await faultsOf(store.url, id);
    t.like(marked, { sliceIndex: 2, repairStatus: 'blocked', repairBlockedReason: 'unrecoverable' });

    const since = Date.now();
    await freeze(store.url, false);
    unfrozen = true;
    await repairRoundAfter(store.url, since);
    const [still] = await faultsOf(store.url, id);
    assertFaultShape(t, [still!]);
    t.like(still, { sliceIndex: 2, repairStatus: 'blocked', repairBlockedReason: 'unrecoverable' });
    t.true(readFileSync(slice.path).equals(damaged), 'the slice was not rewritten');

    // A new finding of the same bad slice does not re-arm an accepted loss.
    t.is((await getStatus(store.url, '/r-unr/o0')).md5, md5(body));
    await waitFor('the new finding to be counted', async () => (await faultsOf(store.url, id))[0]!.count > still!.count, 10_000, 100);
    await repairRoundAfter(store.url, Date.now());
    const [later] = await faultsOf(store.url, id);
    t.like(later, { repairStatus: 'blocked', repairBlockedReason: 'unrecoverable' });
    t.true(readFileSync(slice.path).equals(damaged), 'still not rewritten');
  } finally {
    if (!unfrozen) await freeze(store.url, false);
  }
});

test.serial('target-unwritable: the bad slice has nowhere to go while its volume is read-only; once writable, the next finding repairs it', async (t) => {
  const { store, bodies } = t.context;
  const info = await fileinfo(store.url, '/r-tu/o0');
  const id = info.object.id;
  const body = bodies.get('/r-tu/o0')!;
  const slice = info.slices[1]!;
  t.is(new Set(info.slices.map((s) => s.volumeId)).size, 6, 'all six volumes hold a slice of it');
  await freeze(store.url, true);
  let unfrozen = false;
  let readOnly = false;
  try {
    const original = flipByte(slice.path, false);
    const damaged = readFileSync(slice.path);
    t.is((await getStatus(store.url, '/r-tu/o0')).md5, md5(body));
    await waitFor('the fault', async () => (await faultsOf(store.url, id)).length === 1, 10_000, 100);
    const ro = await api(`${store.url}/$/volumes/${slice.volumeId}`, 'PUT', { isReadOnly: true });
    t.is(ro.status, 200);
    readOnly = true;

    await freeze(store.url, false);
    unfrozen = true;
    const [blocked] = await waitFor('the repair to be refused', async () => {
      const f = await faultsOf(store.url, id);
      return f.length === 1 && f[0]!.repairStatus === 'blocked' ? f : null;
    }, 20_000, 100);
    assertFaultShape(t, [blocked!]);
    t.like(blocked, { sliceIndex: 1, volumeId: slice.volumeId, code: 'CHECKSUM', repairStatus: 'blocked', repairBlockedReason: 'target-unwritable' });
    t.true(readFileSync(slice.path).equals(damaged), 'nothing was written');
    t.deepEqual((await fileinfo(store.url, '/r-tu/o0')).object, info.object, 'the record is unchanged');

    t.is((await api(`${store.url}/$/volumes/${slice.volumeId}`, 'PUT', { isReadOnly: false })).status, 200);
    readOnly = false;
    t.is((await getStatus(store.url, '/r-tu/o0')).md5, md5(body), 'a read finds the bad slice again');
    await waitFor('the re-armed fault to be repaired', async () => (await faultsOf(store.url, id)).length === 0, 20_000, 100);
    await settled(store.url);
    const now = await fileinfo(store.url, '/r-tu/o0');
    t.true(readFileSync(now.slices[1]!.path).equals(original), 'the data slice is rebuilt to its original bytes');
  } finally {
    if (readOnly) await api(`${store.url}/$/volumes/${slice.volumeId}`, 'PUT', { isReadOnly: false });
    if (!unfrozen) await freeze(store.url, false);
  }
});

test.serial('reconstruction-mismatch: a rebuild that does not reproduce the MD5 is refused and no slice file changes', async (t) => {
  const { store } = t.context;
  const info = await fileinfo(store.url, '/r-rm/o0');
  const id = info.object.id;
  await freeze(store.url, true);
  let unfrozen = false;
  try {
    flipByte(info.slices[0]!.path, false); // rot: the repair must rebuild slice 0
    flipByte(info.slices[1]!.path, true); // different bytes with valid CRCs: nothing sees it but the MD5
    const check = await api<{ clean: boolean; slices: Record<string, { status: string }> }>(`${store.url}/$/verify-file/${id}`, 'POST', { mode: 'full' });
    t.is(check.status, 200);
    t.is(check.body.slices['0']!.status, 'checksum');
    t.is(check.body.slices['1']!.status, 'ok', 'its chunks verify');
    const [pending] = await faultsOf(store.url, id);
    t.like(pending, { sliceIndex: 0, repairStatus: 'pending' });
    t.is((await faultsOf(store.url, id)).length, 1);
    const snapshot = info.slices.map((s) => readFileSync(s.path));

    await freeze(store.url, false);
    unfrozen = true;
    const [blocked] = await waitFor('the repair to be refused', async () => {
      const f = await faultsOf(store.url, id);
      return f.length === 1 && f[0]!.repairStatus === 'blocked' ? f : null;
    }, 20_000, 100);
    assertFaultShape(t, [blocked!]);
    t.like(blocked, { sliceIndex: 0, volumeId: info.slices[0]!.volumeId, repairStatus: 'blocked', repairBlockedReason: 'reconstruction-mismatch' });
    await settled(store.url);
    info.slices.forEach((s, i) => t.true(readFileSync(s.path).equals(snapshot[i]!), `slice ${i} is unchanged on disk`));
    t.deepEqual((await fileinfo(store.url, '/r-rm/o0')).object, info.object, 'the record is unchanged');
    t.is(sliceFilesOnDisk(store.stateDir).temps, 0, 'no half-written slice is left');
  } finally {
    if (!unfrozen) await freeze(store.url, false);
  }
});

test.serial('health: three faulty slices on one volume make it unhealthy and read-only; reads go on, writes avoid it, PUT brings it back', async (t) => {
  const store = await startStore(t, { volumes: 6, sizeMiB: 512, healthFaultThreshold: 3 });
  const bodies = await putObjects(store.url, 'h', [40_000, 41_000, 42_000, 43_000, 44_000]);
  const infos = await Promise.all([...bodies.keys()].map(async (p) => ({ path: p, info: await fileinfo(store.url, p) })));
  // The volume holding a data slice of the most objects (5 objects x 4 data slices over 6 volumes: at least 4).
  const dataOn = new Map<number, Array<{ path: string; file: string }>>();
  for (const { path, info } of infos) {
    for (const s of info.slices.filter((x) => x.kind === 'data')) dataOn.set(s.volumeId, [...(dataOn.get(s.volumeId) ?? []), { path, file: s.path }]);
  }
  const [vol, victims] = [...dataOn.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  t.true(victims.length >= 3);
  const volume = async () => (await api<{ volume: { isHealthy: boolean; isReadOnly: boolean; faults: number } }>(`${store.url}/$/volumes/${vol}`)).body.volume;

  for (const v of victims.slice(0, 3)) flipByte(v.file, false);
  // Two faulty slices: still below the threshold.
  for (const v of victims.slice(0, 2)) {
    const r = await getStatus(store.url, v.path);
    t.is(r.md5, md5(bodies.get(v.path)!), `${v.path} reads byte-exact`);
  }
  await waitFor('two faults counted on the volume', async () => (await volume()).faults === 2, 10_000, 100);
  t.like(await volume(), { isHealthy: true, isReadOnly: false });
  // The third crosses it.
  t.is((await getStatus(store.url, victims[2]!.path)).md5, md5(bodies.get(victims[2]!.path)!));
  const sick = await waitFor('the volume to be marked unhealthy', async () => {
    const v = await volume();
    return v.isHealthy ? null : v;
  }, 10_000, 100);
  t.like(sick, { isHealthy: false, isReadOnly: true });

  // Reads go on (the volume still serves its good slices); new objects avoid it.
  await assertAllExact(t, store.url, bodies);
  const during = await putObjects(store.url, 'h-during', [30_000]);
  const [dp] = [...during.keys()];
  const d = (await fileinfo(store.url, dp!)).object;
  t.false([...d.dataVolumes, ...d.parityVolumes].includes(vol), `a new object has no slice on unhealthy volume ${vol}`);
  t.is(d.dataVolumes.length + d.parityVolumes.length, 5, 'it uses the five others');
  await assertAllExact(t, store.url, during);

  const back = await api<{ volume: { isHealthy: boolean; isReadOnly: boolean } }>(`${store.url}/$/volumes/${vol}`, 'PUT', { isHealthy: true, isReadOnly: false });
  t.is(back.status, 200);
  t.like(await volume(), { isHealthy: true, isReadOnly: false });
  const after = await putObjects(store.url, 'h-after', [30_000]);
  const a = (await fileinfo(store.url, [...after.keys()][0]!)).object;
  t.true([...a.dataVolumes, ...a.parityVolumes].includes(vol), `volume ${vol} takes new slices again`);
  await assertAllExact(t, store.url, after);
});
