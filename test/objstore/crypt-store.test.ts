/**
 * Encryption at rest through the object store on real loop devices: a mixed fleet (two encrypted
 * volumes, two plain) where the encrypted raw devices hold none of an object's bytes while GET
 * returns them byte-exact; a flipped byte on an encrypted volume refused and rebuilt from parity;
 * drain → encrypt → rebalance of a live volume with every object intact; the passphrase shown
 * once and rotated; then the key file lost: no new one is made while encrypted disks exist, and
 * the passphrase alone opens them again. Every refusal with its error.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import anyTest, { type TestFn } from 'ava';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { withLoopDevices } from '../helpers/loop.js';
import { deviceHolds, marked } from '../volume/crypt-device.js';
import { FileScope, keptStateDir, startLock, startStore, type Store } from './harness.js';
import { api, assertAllExact, md5, records, rewrite, settled, waitFor } from './maint.js';

interface Ctx {
  store: Store;
  devices: string[];
  stateDir: string;
  bodies: Map<string, Buffer>;
  marker: Buffer;
  passphrase?: string;
}
const test = anyTest as TestFn<Ctx>;
const scope = new FileScope();
test.after.always(() => scope.run());

type Err = { error: { code: string; message: string } };
interface VolumeView {
  id: number;
  isEncrypted: boolean;
  keyGen: number | null;
  isReadOnly: boolean;
  isDraining: boolean;
  isLocked: boolean;
  lockedReason: string | null;
  mountPoint: string | null;
  device: string | null;
  encryptProgress: { phase: string; wipe?: string } | null;
}

async function provision(url: string, device: string, extra: Record<string, unknown>) {
  const release = await startLock();
  try {
    return await api<{ volume: VolumeView } & Err>(`${url}/$/volumes`, 'POST', { blockPath: device, wipe: Date.now(), ...extra });
  } finally {
    release();
  }
}

const volume = async (url: string, id: number) => (await api<{ volume: VolumeView }>(`${url}/$/volumes/${id}`)).body.volume;

/** Slice files under a mount point, with the format version and cipher of each header ('v3/sealed'). */
function sliceVersions(mountPoint: string): string[] {
  const root = join(mountPoint, 'objstore', 'slices');
  const out: string[] = [];
  for (const sub of existsSync(root) ? readdirSync(root) : []) {
    for (const f of readdirSync(join(root, sub))) {
      const b = readFileSync(join(root, sub, f));
      out.push(`v${b.readUInt16BE(4)}/${b[0x15] === 1 ? 'sealed' : 'plain'}`);
    }
  }
  return out;
}

let shared: Ctx;

test.before(async () => {
  const devices = await withLoopDevices(scope, 5, 400);
  const stateDir = keptStateDir(scope, 'hostd-crypt-store-');
  const store = await startStore(scope, { devices, stateDir, provision: false, scheduler: { repairIntervalMs: 500 } });
  for (const [i, d] of devices.slice(0, 4).entries()) {
    const r = await provision(store.url, d, i < 2 ? { encrypt: true } : {});
    if (r.status !== 201) throw new Error(`provisioning ${d}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const marker = Buffer.from(`crypt-marker-${randomBytes(10).toString('hex')}-`);
  const bodies = new Map<string, Buffer>();
  for (const [n, size] of [1_000_003, 300_000, 5000, 2 * 1024 * 1024 + 11].entries()) {
    const body = marked(marker, size);
    const path = `/enc/o${n}`;
    const res = await fetch(`${store.url}${path}`, { method: 'PUT', body });
    if (res.status !== 201) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`);
    bodies.set(path, body);
  }
  shared = { store, devices, stateDir, bodies, marker };
});
test.beforeEach((t) => {
  t.context = shared;
});

test.serial('a mixed fleet: GET is byte-exact, and the raw devices of the encrypted volumes hold none of the objects\' bytes', async (t) => {
  const { store, bodies, marker } = t.context;
  const [v1, v2, v3, v4] = await Promise.all([1, 2, 3, 4].map((id) => volume(store.url, id)));
  t.like(v1, { isEncrypted: true, keyGen: 1, isLocked: false });
  t.like(v2, { isEncrypted: true, keyGen: 1 });
  t.like(v3, { isEncrypted: false, keyGen: null });
  t.like(v4, { isEncrypted: false });
  await assertAllExact(t, store.url, bodies);
  const recs = await records(store.url, bodies.keys());
  const big = recs.filter((r) => r.size > 8192);
  t.true(big.length === 3 && big.every((r) => [...r.dataVolumes, ...r.parityVolumes].includes(1) && [...r.dataVolumes, ...r.parityVolumes].includes(2)), 'every object of 3+1 slices has slices on both encrypted volumes');
  t.true((await deviceHolds(v3!.device!, marker)) || (await deviceHolds(v4!.device!, marker)), 'a plain volume holds the marker (the search works)');
  t.false(await deviceHolds(v1!.device!, marker), 'encrypted volume 1 holds none of it');
  t.false(await deviceHolds(v2!.device!, marker), 'encrypted volume 2 holds none of it');
  t.true(sliceVersions(v1!.mountPoint!).every((v) => v === 'v3/sealed') && sliceVersions(v1!.mountPoint!).length > 0, 'its slice files are sealed (version 3, cipher 1)');
  t.true(sliceVersions(v3!.mountPoint!).every((v) => v === 'v3/plain'), 'a plain volume\'s are not');
  const enc = await api<{ keyFile: { present: boolean; keyId: string }; recoveryPassphrase: { revealedAt: string | null }; volumes: Array<{ id: number }>; encryptNewVolumes: boolean }>(`${store.url}/$/encryption`);
  t.like(enc.body, { encryptNewVolumes: false, keyFile: { present: true }, recoveryPassphrase: { revealedAt: null } });
  t.deepEqual(enc.body.volumes.map((v) => v.id), [1, 2]);
  t.is(statSync(join(t.context.stateDir, 'objstore.key')).mode & 0o777, 0o600, 'the key file is 0600');
  t.is(readFileSync(join(t.context.stateDir, 'objstore.key')).length, 32);
});

test.serial('refusals: a bad encrypt flag, an unknown or bad volume id, and encrypt of a live volume, each with its error', async (t) => {
  const { store, devices } = t.context;
  const bad = await provision(store.url, devices[4]!, { encrypt: 'yes' });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'INVALID_ENCRYPT');
  const setting = await api<Err>(`${store.url}/$/encryption`, 'PUT', { encryptNewVolumes: 'on' });
  t.is(setting.status, 400);
  t.regex(setting.body.error.message, /encryptNewVolumes must be a boolean/);
  t.is((await api<Err>(`${store.url}/$/encryption`, 'PUT', { other: true })).body.error.code, 'UNKNOWN_FIELD');
  t.is((await api(`${store.url}/$/volumes/99/encrypt`, 'POST')).status, 404);
  t.is((await api(`${store.url}/$/volumes/x1/encrypt`, 'POST')).status, 400);
  const live = await api<Err>(`${store.url}/$/volumes/3/encrypt`, 'POST');
  t.is(live.status, 409);
  t.is(live.body.error.code, 'NOT_DRAINED');
  t.regex(live.body.error.message, /^volume 3 is writable; drain it first \(POST \/\$\/volumes\/3\/drain\), then encrypt: encrypt works on a drained volume only \(read-only, no live slices, none on its disk\)$/);
  // Read-only but still holding slices: refused with the count.
  t.is((await api(`${store.url}/$/volumes/3`, 'PUT', { isReadOnly: true })).status, 200);
  const full = await api<Err>(`${store.url}/$/volumes/3/encrypt`, 'POST');
  t.is(full.status, 409);
  t.regex(full.body.error.message, /^volume 3 still holds \d+ live object slice\(s\); drain it first/);
  t.is((await api(`${store.url}/$/volumes/3`, 'PUT', { isReadOnly: false })).status, 200);
  t.like(await volume(store.url, 3), { isEncrypted: false, isReadOnly: false });
});

test.serial('a flipped byte in a sealed chunk is refused by its tag, the object reads from parity, and the repair rewrites the slice', async (t) => {
  const { store, bodies, marker } = t.context;
  // An object of its own, written while only the two encrypted volumes take new slices (3 and 4
  // read-only for the test): 1 + 1, its data slice sealed, and the repair has no other volume to
  // put the slice on but its own. (The objects stored before lie on all four volumes, data or
  // parity by free space at their PUT: an encrypted volume may hold only parity, which a GET
  // never reads.)
  const path = '/enc/flip';
  const body = marked(marker, 300_000);
  for (const id of [3, 4]) t.is((await api(`${store.url}/$/volumes/${id}`, 'PUT', { isReadOnly: true })).status, 200);
  try {
    const put = await fetch(`${store.url}${path}`, { method: 'PUT', body });
    t.is(put.status, 201, await put.text());
    bodies.set(path, body);
    const info = await api<{ object: { id: string; k: number }; slices: Array<{ index: number; volumeId: number; path: string }> }>(`${store.url}/$/fileinfo${path}`);
    t.is(info.body.object.k, 1);
    const slice = info.body.slices.find((s) => s.index === 0)!;
    t.true(slice.volumeId === 1 || slice.volumeId === 2, `its data slice is on an encrypted volume (${slice.volumeId})`);
    const original = readFileSync(slice.path);
    t.deepEqual([original.readUInt16BE(4), original[0x15]], [3, 1], 'a sealed slice (format version 3, cipher 1)');
    // Flip a byte of chunk 0's ciphertext (right after the 64-byte header).
    const damaged = Buffer.from(original);
    damaged[64 + 100] = damaged[64 + 100]! ^ 0x5a;
    rewrite(slice.path, damaged);
    const res = await fetch(`${store.url}${path}`);
    t.is(res.status, 200);
    t.is(md5(new Uint8Array(await res.arrayBuffer())), md5(body), 'byte-exact, rebuilt from parity');
    const fault = await waitFor('the CHECKSUM fault', async () => {
      const f = await api<{ faults: Array<{ objectId: string; volumeId: number; code: string; message: string }> }>(`${store.url}/$/faults`);
      return f.body.faults.find((x) => x.objectId === info.body.object.id && x.volumeId === slice.volumeId);
    }, 10_000, 100);
    t.is(fault.code, 'CHECKSUM');
    t.regex(fault.message, /AES-GCM tag does not verify/);
    await waitFor('the repair to rewrite the slice', async () => {
      const f = await api<{ faults: Array<{ objectId: string }> }>(`${store.url}/$/faults`);
      return !f.body.faults.some((x) => x.objectId === info.body.object.id) && existsSync(slice.path) && readFileSync(slice.path).equals(original);
    }, 30_000, 200);
    t.pass('the repaired slice is byte-identical to the original: same plaintext, same key, same nonce, same ciphertext');
  } finally {
    for (const id of [3, 4]) t.is((await api(`${store.url}/$/volumes/${id}`, 'PUT', { isReadOnly: false })).status, 200);
  }
});

test.serial('drain → encrypt → rebalance on a live fleet: objects intact throughout, the volume sealed after', async (t) => {
  const { store, devices, bodies, marker } = t.context;
  const spare = await provision(store.url, devices[4]!, { encrypt: false });
  t.is(spare.status, 201);
  t.false(spare.body.volume.isEncrypted);
  t.is((await api(`${store.url}/$/volumes/3/drain`, 'POST')).status, 202);
  await waitFor('the drain of volume 3', async () => {
    const d = await api<{ drain: { state: string } }>(`${store.url}/$/volumes/3/drain`);
    return d.body.drain?.state === 'completed';
  }, 120_000);
  await settled(store.url);
  await assertAllExact(t, store.url, bodies);
  const v3 = await volume(store.url, 3);
  t.true(sliceVersions(v3.mountPoint!).length === 0, 'no slice left on the drained disk');

  const enc = await api<{ volume: VolumeView }>(`${store.url}/$/volumes/3/encrypt`, 'POST');
  t.is(enc.status, 200, JSON.stringify(enc.body));
  t.like(enc.body.volume, { isEncrypted: true, keyGen: 1, isReadOnly: false, isDraining: false, encryptProgress: { phase: 'done' } });
  t.regex(enc.body.volume.encryptProgress!.wipe!, /free space (NOT )?discarded/);
  const again = await api<Err>(`${store.url}/$/volumes/3/encrypt`, 'POST');
  t.is(again.status, 409, 'encrypted and writable again: a second encrypt needs another drain');
  await assertAllExact(t, store.url, bodies);

  t.is((await api(`${store.url}/$/rebalance`, 'POST', { deadband: 0 })).status, 202);
  await waitFor('the rebalance to end', async () => !(await api<{ running: boolean }>(`${store.url}/$/rebalance`)).body.running, 120_000, 200);
  await settled(store.url);
  await assertAllExact(t, store.url, bodies);
  const recs = await records(store.url, bodies.keys());
  t.true(recs.some((r) => [...r.dataVolumes, ...r.parityVolumes].includes(3)), 'the rebalance landed slices on volume 3 again');
  const versions = sliceVersions(v3.mountPoint!);
  t.true(versions.length > 0 && versions.every((v) => v === 'v3/sealed'), `volume 3's new slices are sealed (${versions.join(',')})`);
  t.false(await deviceHolds(v3.device!, marker), `and its raw device holds none of the objects' bytes (old plaintext: ${enc.body.volume.encryptProgress!.wipe})`);
});

test.serial('the recovery passphrase is shown once, and rotated onto every encrypted volume', async (t) => {
  const { store } = t.context;
  const first = await api<{ passphrase: string; revealedAt: string }>(`${store.url}/$/encryption/recovery-passphrase/reveal`, 'POST');
  t.is(first.status, 200);
  t.regex(first.body.passphrase, /^([0-9A-HJKMNP-TV-Z]{4}-){7}[0-9A-HJKMNP-TV-Z]{4}$/);
  const twice = await api<Err>(`${store.url}/$/encryption/recovery-passphrase/reveal`, 'POST');
  t.is(twice.status, 409);
  t.is(twice.body.error.code, 'ALREADY_REVEALED');
  t.regex(twice.body.error.message, /shown once; to get a new one, rotate it: POST \/\$\/encryption\/recovery-passphrase\/rotate/);
  const rot = await api<{ volumes: number[] }>(`${store.url}/$/encryption/recovery-passphrase/rotate`, 'POST');
  t.is(rot.status, 200);
  t.deepEqual(rot.body.volumes, [1, 2, 3]);
  const second = await api<{ passphrase: string }>(`${store.url}/$/encryption/recovery-passphrase/reveal`, 'POST');
  t.is(second.status, 200);
  t.not(second.body.passphrase, first.body.passphrase);
  shared.passphrase = second.body.passphrase;
});

test.serial('the key file lost: no new one is made while encrypted disks exist; the passphrase alone opens them again', async (t) => {
  const { store, devices, stateDir, bodies, passphrase } = t.context;
  t.truthy(passphrase, 'the passphrase revealed by the test before');
  await store.system.shutdown();
  const keyFile = join(stateDir, 'objstore.key');
  rmSync(keyFile);
  // A chat webhook of the test: the key problem and each locked volume are told there (critical).
  const told: Array<{ text: string }> = [];
  const hook = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      told.push(JSON.parse(body) as { text: string });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => hook.close(() => r())));
  const chatWebhookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  const again = await startStore(scope, { devices, stateDir, provision: false, scheduler: { repairIntervalMs: 500 }, values: { chatWebhookUrl } });
  t.false(existsSync(keyFile), 'start-up made no new key file');
  for (let i = 0; i < 50 && told.length < 4; i++) await new Promise((r) => setTimeout(r, 100));
  t.true(told.some((m) => /^\S+ \*Encryption key file problem\*/.test(m.text) && /is missing and volume\(s\) 1, 2, 3 are encrypted/.test(m.text)), JSON.stringify(told));
  for (const id of [1, 2, 3]) t.true(told.some((m) => m.text.includes(`*Encrypted volume ${id} is locked*`)), `volume ${id} told as locked`);
  const enc = await api<{ keyFile: { present: boolean; problem: string }; volumes: Array<{ id: number; isLocked: boolean }> }>(`${again.url}/$/encryption`);
  t.false(enc.body.keyFile.present);
  t.regex(enc.body.keyFile.problem, /is missing and volume\(s\) 1, 2, 3 are encrypted: a new key file would orphan them, so none was made/);
  t.deepEqual(enc.body.volumes.map((v) => [v.id, v.isLocked]), [[1, true], [2, true], [3, true]]);
  t.like(await volume(again.url, 4), { isLocked: false, isEncrypted: false });
  const refused = await api<Err>(`${again.url}/$/encryption/recovery-passphrase/reveal`, 'POST');
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'KEY_FILE_MISSING');

  const wrong = await api<Err>(`${again.url}/$/encryption/recover`, 'POST', { passphrase: '0000-0000-0000-0000-0000-0000-0000-0000' });
  t.is(wrong.status, 403);
  t.is(wrong.body.error.code, 'PASSPHRASE_REFUSED');
  t.regex(wrong.body.error.message, /nothing was changed/);
  t.false(existsSync(keyFile));
  const malformed = await api<Err>(`${again.url}/$/encryption/recover`, 'POST', { passphrase: 'hello' });
  t.is(malformed.status, 400);
  t.regex(malformed.body.error.message, /not one of its characters|not 32/);

  const ok = await api<{ volumes: number[]; keyId: string }>(`${again.url}/$/encryption/recover`, 'POST', { passphrase: passphrase!.toLowerCase() });
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(ok.body.volumes, [1, 2, 3]);
  t.true(existsSync(keyFile));
  t.is(statSync(keyFile).mode & 0o777, 0o600);
  t.like(await volume(again.url, 1), { isLocked: false, isEncrypted: true });
  await assertAllExact(t, again.url, bodies);
  const twice = await api<Err>(`${again.url}/$/encryption/recover`, 'POST', { passphrase });
  t.is(twice.status, 409);
  t.is(twice.body.error.code, 'KEY_FILE_PRESENT');
});
