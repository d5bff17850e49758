/**
 * The object store in the real `hostd daemon` process, on port 80, over demo volumes (six sparse
 * files attached as loop devices, XFS, mounted under the state directory): kill -9 in the middle
 * of a PUT, clean restarts, a disk that comes back under another loop name, and a daemon with no
 * volume at all. Each test has its own state directory; everything it mounts and attaches is
 * undone after it, pass or fail (helpers/demo-store.ts). Serial: one port 80.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import { attachLoop, createSparseFile, sh } from '../helpers/loop.js';
import {
  DEMO_ARGS,
  STORE_PORT,
  STORE_URL,
  detachUnder,
  getObject,
  loopsUnder,
  mountsUnder,
  putObject,
  sliceFiles,
  startStore,
  stop,
  storeStateDir,
  unmountUnder,
  volumes,
  type SliceFile,
} from '../helpers/demo-store.js';

const MiB = 1024 * 1024;
const IDS = [1, 2, 3, 4, 5, 6];
const md5 = (b: Uint8Array) => createHash('md5').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const total = (files: SliceFile[]) => files.reduce((a, f) => a + f.size, 0);

async function until<T>(what: string, fn: () => T | undefined, ms = 30_000, every = 20): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(every);
  }
}

/**
 * A PUT of `size` bytes (Content-Length) over a raw socket, its body written a piece at a time
 * (256 KiB every few ms) so that the daemon can be killed while part of it has been received.
 */
function slowPut(path: string, size: number) {
  const socket = connect(STORE_PORT, '127.0.0.1');
  const piece = randomBytes(256 * 1024);
  let sent = 0;
  let stopped = false;
  let response = '';
  let error: Error | null = null;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (response += d));
  socket.on('error', (err) => (error = err));
  const closed = new Promise<void>((r) => socket.on('close', () => r()));
  const done = (async () => {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.write(`PUT ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-test\r\nContent-Length: ${size}\r\n\r\n`);
    while (!stopped && !socket.destroyed && sent < size) {
      const n = Math.min(piece.byteLength, size - sent);
      sent += n;
      if (!socket.write(piece.subarray(0, n))) await Promise.race([new Promise((r) => socket.once('drain', r)), closed]);
      await sleep(4);
    }
  })();
  return {
    sent: () => sent,
    /** what the server answered so far, and the socket's error (both empty while it is receiving) */
    answer: () => `${response}${error ? ` (socket: ${(error as Error).message})` : ''}`,
    finished: () => socket.destroyed || response.length > 0,
    async stop() {
      stopped = true;
      socket.destroy();
      await done.catch(() => undefined);
      await closed;
    },
  };
}

test.serial('kill -9 in the middle of a PUT leaves no object and no orphan slices after restart; an object stored before is intact', async (t) => {
  t.timeout(180_000);
  const s = await storeStateDir(t);
  const first = await startStore(t, s, DEMO_ARGS);
  t.deepEqual(first.listening.present, IDS, 'six demo volumes');

  // An object stored completely before the kill.
  const keep = randomBytes(3 * MiB + 12_345);
  const kept = await putObject('/crash/kept', keep);
  t.is(kept.status, 201, kept.text);
  const keptStem = kept.id!.slice(1);
  const keptSlices = sliceFiles(s.dir);
  t.is(keptSlices.length, 6, JSON.stringify(keptSlices));
  t.true(keptSlices.every((f) => f.stem === keptStem && !f.temp));

  // A 256 MiB PUT, killed once its temporary slices exist on all six volumes and have grown.
  const SIZE = 256 * MiB;
  const up = slowPut('/crash/big', SIZE);
  const temps = () => sliceFiles(s.dir).filter((f) => f.temp);
  const check = () => {
    if (up.finished()) throw new Error(`the PUT ended before the kill: ${up.answer()}`);
    if (up.sent() > 128 * MiB) throw new Error(`${up.sent()} bytes sent and the temporary slices did not grow: ${JSON.stringify(temps())}`);
  };
  const seen = await until('temporary slices on all six volumes', () => {
    check();
    const tmp = temps();
    return tmp.length === 6 && tmp.every((f) => f.size > 0) ? tmp : undefined;
  });
  const grown = await until('the temporary slices to grow', () => {
    check();
    const tmp = temps();
    return tmp.length === 6 && total(tmp) >= total(seen) + 3 * MiB ? tmp : undefined;
  });
  const sentAtKill = up.sent();
  t.true(sentAtKill < SIZE, 'the body was not complete when the daemon was killed');
  const bigStem = grown[0]!.stem;
  t.true(grown.every((f) => f.stem === bigStem), 'the temporary slices are those of one object');
  t.not(bigStem, keptStem);
  t.is((await stop(first.d, 'SIGKILL')).signal, 'SIGKILL');
  await up.stop();
  t.log(`killed after ${(sentAtKill / MiB).toFixed(1)} MiB of ${SIZE / MiB} MiB sent, ${(total(grown) / MiB).toFixed(1)} MiB of temporary slices seen`);

  // The premise: the kill left the PUT's temporary slices on the disks.
  const orphans = sliceFiles(s.dir).filter((f) => f.stem === bigStem);
  t.is(orphans.length, 6, JSON.stringify(orphans));
  t.true(orphans.every((f) => f.temp));

  // Restart over the same state directory, with the same flags.
  const second = await startStore(t, s, DEMO_ARGS);
  t.deepEqual(second.listening.present, IDS);
  t.deepEqual(second.listening.missing, []);
  const cleaned = await second.d.waitFor((l) => l.msg === 'removed the slices of an unfinished PUT', 5000);
  t.is(cleaned.path, '/crash/big');
  t.is(cleaned.objectId, `$${bigStem}`);
  t.false(second.d.lines.some((l) => l.msg === 'volume provisioned'), 'the demo volumes were found again, not provisioned anew');

  const big = await fetch(`${STORE_URL}/crash/big`);
  t.is(big.status, 404);
  t.is(((await big.json()) as { error: { code: string } }).error.code, 'NOT_FOUND');
  t.is((await fetch(`${STORE_URL}/$/fileinfo/crash/big`)).status, 404);
  t.is((await fetch(`${STORE_URL}/$${bigStem}`)).status, 404, 'nor by its id');
  const after = sliceFiles(s.dir);
  t.deepEqual(
    after.filter((f) => f.stem === bigStem || f.temp),
    [],
    'no slice of the killed PUT, temporary or committed, and no temporary file at all',
  );
  t.deepEqual(
    after.map((f) => f.path),
    keptSlices.map((f) => f.path),
    'only the slices of the object stored before the kill',
  );

  const got = await getObject('/crash/kept');
  t.is(got.status, 200);
  t.is(got.body.byteLength, keep.byteLength);
  t.true(got.body.equals(keep), 'the object stored before the kill reads byte-exact');
  t.is(got.headers.get('content-md5'), md5(keep));
  const info = (await (await fetch(`${STORE_URL}/$/fileinfo/crash/kept`)).json()) as { object: { id: string }; slices: Array<{ path: string }> };
  t.is(info.object.id, kept.id!);
  t.deepEqual(info.slices.map((x) => x.path).sort(), keptSlices.map((f) => f.path).sort());

  // The path is free again: nothing of the killed PUT holds it.
  const again = randomBytes(MiB + 3);
  const re = await putObject('/crash/big', again);
  t.is(re.status, 201, re.text);
  t.true((await getObject('/crash/big')).body.equals(again));

  // The intent is gone: another restart has nothing to clean.
  t.is((await stop(second.d)).code, 0);
  const third = await startStore(t, s, DEMO_ARGS);
  t.false(third.d.lines.some((l) => l.msg === 'removed the slices of an unfinished PUT'), 'the clean-up is not repeated');
  t.true((await getObject('/crash/kept')).body.equals(keep));
  t.true((await getObject('/crash/big')).body.equals(again));
  t.deepEqual(sliceFiles(s.dir).filter((f) => f.temp), []);
  t.is((await stop(third.d)).code, 0);
});

test.serial('the demo store comes back after SIGTERM and restart, and a disk back under another loop name keeps its volume id', async (t) => {
  t.timeout(180_000);
  const s = await storeStateDir(t);
  const first = await startStore(t, s, DEMO_ARGS);
  t.deepEqual(first.listening.present, IDS);
  t.truthy(first.d.lines.find((l) => l.msg.startsWith('no volume was registered: made 6 demo volumes')));

  const objects = new Map<string, Buffer>();
  for (const size of [0, 1, 256 * 1024 + 1, 3 * MiB + 7]) {
    const body = randomBytes(size);
    const path = `/keep/o-${size}`;
    const r = await putObject(path, body);
    t.is(r.status, 201, r.text);
    objects.set(path, body);
  }
  const readAll = async (when: string) => {
    for (const [path, body] of objects) {
      const got = await getObject(path);
      t.is(got.status, 200, `${when}: GET ${path}`);
      t.true(got.body.equals(body), `${when}: ${path} byte-exact`);
      t.is(got.headers.get('content-md5'), md5(body));
    }
  };

  // Each volume's disk: its loop device now, and the demo file behind it.
  const fileOf = (device: string | null) => loopsUnder(s.dir).find(([dev]) => dev === device)?.[1];
  const before = await volumes();
  t.deepEqual(before.map((v) => v.id), IDS);
  const files = new Map(before.map((v) => [v.id, fileOf(v.device)]));
  for (const [id, file] of files) t.regex(file ?? '', new RegExp(`^${s.dir}/demo/disk-\\d\\.img$`), `volume ${id} is a demo file`);
  t.is(new Set(files.values()).size, 6);

  // 1. A clean stop and a restart: the same volumes, the same objects.
  t.is((await stop(first.d)).code, 0);
  const second = await startStore(t, s, DEMO_ARGS);
  t.deepEqual(second.listening.present, IDS);
  t.deepEqual(second.listening.missing, []);
  t.false(second.d.lines.some((l) => l.msg === 'volume provisioned' || l.msg.startsWith('no volume was registered')), 'nothing provisioned anew');
  const same = await volumes();
  t.deepEqual(
    same.map((v) => [v.id, v.device, v.isMissing]),
    before.map((v) => [v.id, v.device, false]),
  );
  await readAll('after a restart');

  // 2. Stop, unmount, detach the six demo disks; hold their loop names with other files, so
  // that the disks come back under other names; restart.
  t.is((await stop(second.d)).code, 0);
  await unmountUnder(s.dir);
  t.deepEqual(mountsUnder(s.dir), []);
  const oldDevices = before.map((v) => v.device!);
  await detachUnder(s.dir);
  t.deepEqual(loopsUnder(s.dir), []);
  mkdirSync(join(s.dir, 'other'));
  for (const [i, dev] of oldDevices.entries()) {
    const file = join(s.dir, 'other', `other-${i}.img`);
    await createSparseFile(file, 1);
    // Taken meanwhile by another process: still not free for the daemon, which is what counts.
    await attachLoop(file, { device: dev }).catch(async (err: Error) => {
      if (!(await sh('losetup', [dev]).then(() => true, () => false))) throw err;
    });
  }
  const third = await startStore(t, s, DEMO_ARGS);
  t.deepEqual(third.listening.present, IDS);
  t.deepEqual(third.listening.missing, []);
  t.false(third.d.lines.some((l) => l.msg === 'volume provisioned' || l.msg.startsWith('no volume was registered')), 'nothing provisioned anew');
  const moved = await volumes();
  t.deepEqual(moved.map((v) => v.id), IDS, 'the same volume ids');
  for (const v of moved) {
    const old = before.find((b) => b.id === v.id)!;
    t.truthy(v.device);
    t.not(v.device, old.device, `volume ${v.id} came back under another loop name`);
    t.is(fileOf(v.device), files.get(v.id), `volume ${v.id} is the same disk (demo file) as before`);
    t.is(v.lastDevice, v.device!);
    t.is(v.mountPoint, join(s.dir, 'mnt', `vol-${v.id}`));
    t.false(v.isMissing);
  }
  t.log(`devices before: ${oldDevices.join(' ')}; after: ${moved.map((v) => v.device).join(' ')}`);
  await readAll('after the disks came back under other names');
  t.is((await stop(third.d)).code, 0);
});

test.serial('without --demo-volumes a fresh daemon provisions nothing: no volumes, and a PUT gets 507', async (t) => {
  t.timeout(120_000);
  const s = await storeStateDir(t);
  const { d, listening } = await startStore(t, s);
  t.deepEqual(listening.present, []);
  t.deepEqual(listening.missing, []);
  t.deepEqual(await volumes(), []);

  const r = await putObject('/nothing/here', randomBytes(1024));
  t.is(r.status, 507, r.text);
  const body = JSON.parse(r.text) as { error: { code: string; message: string } };
  t.is(body.error.code, 'NO_WRITABLE_VOLUMES');
  t.regex(body.error.message, /no writable volume.*POST \/\$\/volumes/);
  t.is((await fetch(`${STORE_URL}/nothing/here`)).status, 404, 'nothing was stored');

  t.false(existsSync(join(s.dir, 'demo')), 'no demo file was made');
  t.deepEqual(loopsUnder(s.dir), [], 'no loop device was attached');
  t.deepEqual(mountsUnder(s.dir), [], 'nothing was mounted');
  t.false(d.lines.some((l) => l.msg === 'volume provisioned' || l.msg.startsWith('no volume was registered')));
  t.is((await stop(d)).code, 0);
});

// npm start's own command line: `hostd daemon --demo-volumes`, the switch alone (last, with the
// default size of 4096 MiB per sparse file).
test.serial('npm start: `hostd daemon --demo-volumes` (the switch alone) starts the demo store', async (t) => {
  t.timeout(120_000);
  const s = await storeStateDir(t);
  const { d, listening } = await startStore(t, s, ['--demo-volumes']);
  t.deepEqual(listening.present, IDS);
  const vols = await volumes();
  t.deepEqual(vols.map((v) => [v.id, v.label]), IDS.map((id) => [id, 'demo']));
  const body = randomBytes(MiB);
  t.is((await putObject('/npm/start', body)).status, 201);
  t.true((await getObject('/npm/start')).body.equals(body));
  t.is((await stop(d)).code, 0);
});
