/**
 * The mount's per-file read-ahead (actors/objstore-mount/read-ahead.ts) over a real windows file
 * (window-file.ts): a fetch that, as the store does, writes a known buffer's window into the slot
 * it was given. The bytes of every read, what is fetched ahead for a sequential reader and not
 * for a random one, what is dropped behind, a failed window fetched again (its slot retired),
 * requests answered synchronously once their windows are here, every slot given back at close
 * and the file emptied; and the sweep of a killed daemon's windows files.
 */
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadAhead } from '../../actors/objstore-mount/read-ahead.js';
import { createWindowFile, removeWindowFile, sweepWindowFiles, WindowSlots } from '../../actors/objstore-mount/window-file.js';

const W = 1000;

function source(t: ExecutionContext, size: number, fail = new Set<number>(), aheadSlots = 16) {
  const base = mkdtempSync(join(tmpdir(), 'hostd-windows-test-'));
  const path = createWindowFile(base);
  const slots = new WindowSlots(path, W, aheadSlots);
  const fd = openSync(path, 'r+');
  t.teardown(() => {
    closeSync(fd);
    slots.close();
    rmSync(base, { recursive: true, force: true });
  });
  const bytes = randomBytes(size);
  const fetched: number[] = [];
  const declined: number[] = [];
  const fetch = (start: number, length: number, ahead: boolean) => {
    const offset = slots.take(ahead);
    if (offset === null) {
      declined.push(start);
      return null;
    }
    fetched.push(start);
    return fill(offset, start, length);
  };
  const fill = async (offset: number, start: number, length: number) => {
    await new Promise((r) => setImmediate(r));
    if (fail.has(start)) {
      slots.retire(offset);
      throw Object.assign(new Error('bad window'), { errno: 'EIO' });
    }
    writeSync(fd, bytes, start, length, offset);
    return slots.window(offset, length);
  };
  return { bytes, fetched, declined, fetch, slots, path };
}

test('a sequential reader gets every byte, with the next windows fetched ahead and the ones behind dropped', async (t) => {
  const s = source(t, 10_500);
  const ra = new ReadAhead(s.fetch, 10_500, W, 2);
  const got: Buffer[] = [];
  let now = 0;
  for (let pos = 0; pos < 10_500; pos += 300) {
    const buf = Buffer.alloc(300);
    let n = ra.readNow(buf, pos, 300);
    if (n === undefined) n = await ra.read(buf, pos, 300);
    else now++;
    got.push(buf.subarray(0, n));
    t.true(ra.held().length <= 5, `held ${ra.held()}`);
    t.true(s.slots.counts().inUse <= 5);
  }
  t.true(Buffer.concat(got).equals(s.bytes));
  t.true(now > 0, 'requests whose windows were here were answered at once');
  t.deepEqual([...new Set(s.fetched)].sort((a, b) => a - b), [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10_000]);
  t.is(s.fetched.length, 11, 'each window fetched once');
  // After the first read, windows 1000 and 2000 were already on their way.
  t.deepEqual(s.fetched.slice(0, 3).sort((a, b) => a - b), [0, 1000, 2000]);
  // Closed: every slot back, the shared memory given back.
  ra.close();
  t.is(s.slots.counts().inUse, 0);
  t.is(statSync(s.path).size, 0);
});

test('over the read-ahead budget a fetch ahead is declined, never one a reader waits for', async (t) => {
  const s = source(t, 6000, new Set(), 1);
  const ra = new ReadAhead(s.fetch, 6000, W, 2);
  const got: Buffer[] = [];
  for (let pos = 0; pos < 6000; pos += 500) {
    const buf = Buffer.alloc(500);
    got.push(buf.subarray(0, await ra.read(buf, pos, 500)));
  }
  t.true(Buffer.concat(got).equals(s.bytes));
  t.true(s.declined.length > 0, 'fetches ahead were declined');
  t.deepEqual([...new Set(s.fetched)].sort((a, b) => a - b), [0, 1000, 2000, 3000, 4000, 5000]);
});

test('readNow answers only when every window is here, and never fetches itself', async (t) => {
  const s = source(t, 3000);
  const ra = new ReadAhead(s.fetch, 3000, W, 0);
  const buf = Buffer.alloc(500);
  t.is(ra.readNow(buf, 800, 500), undefined);
  t.deepEqual(s.fetched, []);
  t.is(await ra.read(buf, 800, 500), 500);
  t.true(buf.equals(s.bytes.subarray(800, 1300)));
  buf.fill(0);
  t.is(ra.readNow(buf, 900, 400), 400);
  t.true(buf.subarray(0, 400).equals(s.bytes.subarray(900, 1300)));
  t.is(ra.readNow(buf, 1500, 500), 500, 'window 1000 is here');
  t.is(ra.readNow(buf, 1900, 200), undefined, 'window 2000 is not');
  t.deepEqual(s.fetched, [0, 1000]);
});

test('a read spanning windows, a read at the end, and past the end', async (t) => {
  const s = source(t, 2500);
  const ra = new ReadAhead(s.fetch, 2500, W, 1);
  const buf = Buffer.alloc(1500);
  t.is(await ra.read(buf, 700, 1500), 1500);
  t.true(buf.equals(s.bytes.subarray(700, 2200)));
  const tail = Buffer.alloc(100);
  t.is(await ra.read(tail, 2450, 100), 50);
  t.true(tail.subarray(0, 50).equals(s.bytes.subarray(2450)));
  t.is(await ra.read(tail, 2500, 100), 0);
  t.is(await ra.read(tail, 9999, 100), 0);
  t.is(await ra.read(tail, 0, 0), 0);
  t.is(ra.readNow(tail, 9999, 100), 0);
});

test('a random reader fetches only the windows it reads', async (t) => {
  const s = source(t, 100_000);
  const ra = new ReadAhead(s.fetch, 100_000, W, 2);
  const buf = Buffer.alloc(10);
  await ra.read(buf, 50_000, 10);
  s.fetched.length = 0;
  await ra.read(buf, 10_005, 10);
  await ra.read(buf, 80_000, 10);
  await ra.read(buf, 30_000, 10);
  t.deepEqual(s.fetched, [10_000, 80_000, 30_000]);
  t.true(buf.equals(s.bytes.subarray(30_000, 30_010)));
  t.true(s.slots.counts().inUse <= 2, JSON.stringify(s.slots.counts()));
});

test('a failed window fails the read (EIO) and is fetched again by the next one; its slot is never reused', async (t) => {
  const fail = new Set([1000]);
  const s = source(t, 3000, fail);
  const ra = new ReadAhead(s.fetch, 3000, W, 0);
  const buf = Buffer.alloc(100);
  await t.throwsAsync(ra.read(buf, 1100, 100), { message: 'bad window' });
  t.deepEqual(s.slots.counts(), { inUse: 0, free: 0, retired: 1, fileSlots: 1 });
  fail.clear();
  t.is(await ra.read(buf, 1100, 100), 100);
  t.true(buf.equals(s.bytes.subarray(1100, 1200)));
  t.is(s.fetched.filter((w) => w === 1000).length, 2);
  ra.close();
  // The retired slot (0) is not handed out again, so the file is not truncated.
  t.deepEqual(s.slots.counts(), { inUse: 0, free: 1, retired: 1, fileSlots: 2 });
});

test('a window dropped while a reader waits for it is fetched again, not read from a slot given to another', async (t) => {
  const s = source(t, 5000);
  const ra = new ReadAhead(s.fetch, 5000, W, 0);
  const a = Buffer.alloc(100);
  const b = Buffer.alloc(100);
  // a waits for window 1000; b, further on, drops everything more than one window behind it.
  const first = ra.read(a, 1900, 100);
  const second = ra.read(b, 3500, 100);
  t.is(await second, 100);
  t.is(await first, 100);
  t.true(a.equals(s.bytes.subarray(1900, 2000)));
  t.true(b.equals(s.bytes.subarray(3500, 3600)));
  t.is(s.fetched.filter((w) => w === 1000).length, 2, 'window 1000 fetched again');
  ra.close();
  // Every fetch, kept or dropped, gave its slot back once it arrived.
  await new Promise((r) => setImmediate(r));
  t.is(s.slots.counts().inUse, 0);
});

test('a read after close is refused (EBADF), and a fetch that lands after close gives its slot back', async (t) => {
  const s = source(t, 3000);
  const ra = new ReadAhead(s.fetch, 3000, W, 1);
  const pending = ra.read(Buffer.alloc(10), 0, 10);
  ra.close();
  await t.throwsAsync(pending, { message: /closed/ });
  await new Promise((r) => setTimeout(r, 10));
  t.is(s.slots.counts().inUse, 0);
});

test("the windows files of a killed daemon are swept; a live process's and this one's are kept", (t) => {
  const base = mkdtempSync(join(tmpdir(), 'hostd-windows-sweep-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  // A pid that is gone: a child that has exited.
  const dead = spawnSync(process.execPath, ['-e', 'process.pid'], { stdio: 'ignore' }).pid!;
  const mine = createWindowFile(base);
  mkdirSync(join(base, `hostd-mount-${dead}-abc`));
  mkdirSync(join(base, 'hostd-mount-1-init')); // pid 1 lives
  mkdirSync(join(base, 'unrelated-9999999'));
  t.deepEqual(sweepWindowFiles(base), [`hostd-mount-${dead}-abc`]);
  t.true(existsSync(mine));
  t.true(existsSync(join(base, 'hostd-mount-1-init')));
  t.true(existsSync(join(base, 'unrelated-9999999')));
  removeWindowFile(mine);
  t.false(existsSync(join(mine, '..')));
});
