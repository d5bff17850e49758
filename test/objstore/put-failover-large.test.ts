/**
 * PUTs larger than the failover window (FAILOVER_WINDOW_BYTES: their body is not kept in memory)
 * that survive a failing disk, on real loop devices: six volumes, volume 1 over the faultyfs
 * fixture (the kernel really returns EIO). The body is sent by hand, paused half-way while the
 * disk is made to fail, then finished:
 * - a layout that uses every writable volume (4+2 over six): no volume is left to take the failed
 *   slice, so the object is read back from the slices written and stored again with the layout of
 *   the volumes left (3+2);
 * - a spare volume (made writable while the body is sent) and a volume detached mid-body: the
 *   missing slice is rebuilt from the slices on disk onto the spare, the layout is kept.
 * Each answers 201, reads back byte-exact, has every slice on a healthy volume, and the fault is
 * listed in GET /$/faults.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import anyTest, { type ExecutionContext, type TestFn } from 'ava';
import { FAILOVER_WINDOW_BYTES } from '../../actors/objstore/store/put.js';
import { startFaultyDisk, type FaultyDisk } from '../helpers/faulty-disk.js';
import { detachLoop, withLoopDevices } from '../helpers/loop.js';
import { FileScope, startStore, type Store } from './harness.js';
import { api, assertAllExact, md5, records, waitFor } from './maint.js';

interface Ctx {
  store: Store;
  faulty: FaultyDisk;
  good: string[];
}
const test = anyTest as TestFn<Ctx>;
const scope = new FileScope();

const SIZE = 100 * 1024 * 1024 + 12_345;

/** A volume's write faults as GET /$/faults lists them (the fields this test reads). */
type WriteFault = Record<'code' | 'message', string> & { volumeId: number };

test.before(async (t) => {
  const good = await withLoopDevices(scope, 5, 768);
  const faulty = await startFaultyDisk(scope, 768);
  // Volume 1 is the faulty disk, 2..6 the good ones. A 500 ms device scan sees a detached disk;
  // the body waits while it does (seconds, with the unmount): the idle timeout allows for it.
  const store = await startStore(scope, { devices: [faulty.device, ...good], values: { deviceScanIntervalMs: 500, bodyIdleTimeoutMs: 60_000 } });
  t.context = { store, faulty, good };
});
test.after.always(() => scope.run());

async function setFlags(store: Store, id: number, flags: Record<string, boolean>): Promise<void> {
  const r = await api(`${store.url}/$/volumes/${id}`, 'PUT', flags);
  if (r.status !== 200) throw new Error(`PUT /$/volumes/${id}: ${r.status} ${JSON.stringify(r.body)}`);
}

/**
 * PUT `body` to `path` with its Content-Length, in 1 MiB writes; once half of it is sent,
 * `midway` runs (the body waits for it), then the rest follows.
 */
function putWithPause(base: string, path: string, body: Buffer, midway: () => Promise<void>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'PUT', headers: { 'Content-Length': String(body.byteLength), 'Content-MD5': md5(body) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    void (async () => {
      const piece = 1024 * 1024;
      let paused = false;
      for (let off = 0; off < body.byteLength; off += piece) {
        if (!paused && off >= body.byteLength / 2) {
          paused = true;
          // Let what was sent reach the volumes first: the failure comes mid-slice.
          await new Promise((r) => setTimeout(r, 300));
          await midway();
        }
        if (!req.write(body.subarray(off, off + piece))) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })().catch((err: unknown) => {
      req.destroy(err as Error);
      reject(err as Error);
    });
  });
}

/** A full verify of the object: every slice reads clean from its volume, parity and MD5 match. */
async function assertClean(t: ExecutionContext, store: Store, id: string): Promise<void> {
  const v = await api<{ clean: boolean; md5: { ok: boolean } | null }>(`${store.url}/$/verify-file/${id}`, 'POST', { mode: 'full' });
  t.is(v.status, 200, JSON.stringify(v.body));
  t.true(v.body.clean, JSON.stringify(v.body));
  t.true(v.body.md5?.ok, JSON.stringify(v.body.md5));
}

async function writeFaultOf(store: Store, volumeId: number): Promise<WriteFault | undefined> {
  const faults = await api<{ writeFaults: WriteFault[] }>(`${store.url}/$/faults`);
  return faults.body.writeFaults.find((f) => f.volumeId === volumeId);
}

test.serial('a large PUT whose disk returns EIO mid-body, no spare volume: 201, stored again over the volumes left, byte-exact', async (t) => {
  const { store, faulty } = t.context;
  t.true(SIZE > FAILOVER_WINDOW_BYTES, 'beyond the in-memory failover window');
  // The same PUT on healthy disks first: what the failover costs (logged).
  const plain = randomBytes(SIZE);
  let at = performance.now();
  const ok = await putWithPause(store.url, '/big/plain', plain, async () => undefined);
  t.is(ok.status, 201, ok.text);
  const healthyMs = performance.now() - at;
  const body = randomBytes(SIZE);
  at = performance.now();
  const res = await putWithPause(store.url, '/big/eio', body, () => faulty.failAll());
  t.is(res.status, 201, res.text);
  t.log(`PUT of ${SIZE} bytes: ${healthyMs.toFixed(0)} ms on healthy disks, ${(performance.now() - at).toFixed(0)} ms with a disk failing mid-body (written again over the volumes left)`);
  const [rec] = await records(store.url, ['/big/eio']);
  t.log(JSON.stringify(rec));
  const vols = [...rec!.dataVolumes, ...rec!.parityVolumes];
  t.false(vols.includes(1), 'no slice on the failing volume');
  t.is((await fetch(`${store.url}/big/plain`)).status, 200);
  t.is(new Set(vols).size, vols.length, 'one slice per volume');
  t.is(rec!.k, 3, 'the layout of the five volumes left: 3 data slices');
  t.is(rec!.m, 2, 'and 2 parity slices');
  t.is((rec as unknown as { md5: string }).md5, md5(body), 'the record names the MD5 of the body');
  await assertAllExact(t, store.url, new Map([['/big/eio', body]]));
  await assertClean(t, store, rec!.id);
  const wf = await writeFaultOf(store, 1);
  t.truthy(wf, 'the write fault of volume 1 is listed');
  t.is(wf!.code, 'EIO', wf!.message);
});

test.serial('a large PUT with a volume detached mid-body and a spare: the slice is rebuilt from the others onto the spare', async (t) => {
  const { store, faulty, good } = t.context;
  await faulty.heal();
  // Writable: 2..5 (volume 1 out, 6 kept for a spare): 3+1 over 2..5.
  await setFlags(store, 1, { isReadOnly: true });
  await setFlags(store, 6, { isReadOnly: true });
  const body = randomBytes(SIZE);
  const at = performance.now();
  let waited = 0;
  const res = await putWithPause(store.url, '/big/detached', body, async () => {
    const from = performance.now();
    await detachLoop(good[3]!);
    await waitFor('volume 5 missing', async () => (await api<{ volumes: { missing: number[] } }>(`${store.url}/$/status`)).body.volumes.missing.includes(5));
    await setFlags(store, 6, { isReadOnly: false });
    waited = performance.now() - from;
  });
  t.is(res.status, 201, res.text);
  t.log(`PUT of ${SIZE} bytes with a slice rebuilt onto the spare: ${(performance.now() - at - waited).toFixed(0)} ms (the pause for the detach not counted)`);
  const [rec] = await records(store.url, ['/big/detached']);
  t.log(JSON.stringify(rec));
  t.like(rec, { k: 3, m: 1 }, 'the layout is kept');
  const vols = [...rec!.dataVolumes, ...rec!.parityVolumes];
  t.deepEqual([...vols].sort(), [2, 3, 4, 6], 'the detached volume\'s slice is on the spare');
  t.is((rec as unknown as { md5: string }).md5, md5(body), 'the record names the MD5 of the body');
  await assertAllExact(t, store.url, new Map([['/big/detached', body]]));
  await assertClean(t, store, rec!.id);
  const wf = await writeFaultOf(store, 5);
  t.truthy(wf, 'the failed write on the detached volume is listed');
});
